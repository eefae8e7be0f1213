//! Frees big buffers off the critical path. A proof's witness, a/b/c vectors and density
//! bitmaps run to gigabytes for 32 GiB sectors; dropping them synchronously after the prover
//! cost cuzk 10 s per proof. Producers send them here; the bytes stay counted until freed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

type Item = (Box<dyn Send>, u64);

pub struct Deallocator {
    tx: Mutex<Option<Sender<Item>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    stats: Arc<DeallocStats>,
}

#[derive(Default)]
pub struct DeallocStats {
    pub pending_bytes: AtomicU64,
    pub freed_bytes: AtomicU64,
    pub free_nanos: AtomicU64,
}

impl Deallocator {
    pub fn start() -> std::io::Result<Self> {
        let (tx, rx) = channel::<Item>();
        let stats = Arc::new(DeallocStats::default());
        let st = stats.clone();
        let thread = std::thread::Builder::new().name("cuzk-dealloc".into()).spawn(move || {
            for (item, bytes) in rx {
                let t = Instant::now();
                drop(item);
                st.free_nanos.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
                st.pending_bytes.fetch_sub(bytes, Ordering::Relaxed);
                st.freed_bytes.fetch_add(bytes, Ordering::Relaxed);
            }
        })?;
        Ok(Deallocator { tx: Mutex::new(Some(tx)), thread: Mutex::new(Some(thread)), stats })
    }

    /// Hand `item` (accounted as `bytes`) to the deallocator thread.
    pub fn free<T: Send + 'static>(&self, item: T, bytes: u64) {
        self.stats.pending_bytes.fetch_add(bytes, Ordering::Relaxed);
        let tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
        match tx.as_ref() {
            Some(tx) => {
                if let Err(e) = tx.send((Box::new(item), bytes)) {
                    drop(e); // thread gone: drop here
                    self.stats.pending_bytes.fetch_sub(bytes, Ordering::Relaxed);
                }
            }
            None => {
                drop(item);
                self.stats.pending_bytes.fetch_sub(bytes, Ordering::Relaxed);
            }
        }
    }

    pub fn stats(&self) -> &DeallocStats {
        &self.stats
    }

    /// Free everything queued, then stop the thread.
    pub fn shutdown(&self) {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(t) = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = t.join();
        }
    }
}

impl Drop for Deallocator {
    fn drop(&mut self) {
        self.shutdown();
    }
}
