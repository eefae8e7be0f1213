//! The hand-off from the synthesis workers to the prover thread: a bounded channel that hands
//! out the highest-priority partition first (then the oldest job, then partition order), so a
//! WinningPoSt synthesized behind a queue of C2 partitions is the next one proved. Bounded like
//! `sync_channel(depth)`: a sender returns once at most `depth` partitions wait, or once its own
//! has been taken.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Priority, then older job (smaller id) first, then lower partition first.
pub(crate) type Key = (i32, Reverse<u64>, Reverse<usize>);

struct Entry<T> {
    key: Key,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, o: &Self) -> bool {
        (self.key, Reverse(self.seq)) == (o.key, Reverse(o.seq))
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for Entry<T> {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.key, Reverse(self.seq)).cmp(&(o.key, Reverse(o.seq)))
    }
}

struct State<T> {
    heap: BinaryHeap<Entry<T>>,
    senders: usize,
    receiver_gone: bool,
    next_seq: u64,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    changed: Condvar,
    depth: usize,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub(crate) struct Sender<T>(Arc<Shared<T>>);
pub(crate) struct Receiver<T>(Arc<Shared<T>>);

pub(crate) fn channel<T>(depth: usize) -> (Sender<T>, Receiver<T>) {
    let state = State { heap: BinaryHeap::new(), senders: 1, receiver_gone: false, next_seq: 0 };
    let shared = Arc::new(Shared { state: Mutex::new(state), changed: Condvar::new(), depth });
    (Sender(shared.clone()), Receiver(shared))
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.0.lock().senders += 1;
        Sender(self.0.clone())
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.0.lock().senders -= 1;
        self.0.changed.notify_all();
    }
}

impl<T> Sender<T> {
    /// Hand `item` over; Err(item) when the receiver is gone.
    pub fn send(&self, key: Key, item: T) -> Result<(), T> {
        let mut g = self.0.lock();
        if g.receiver_gone {
            return Err(item);
        }
        let seq = g.next_seq;
        g.next_seq += 1;
        g.heap.push(Entry { key, seq, item });
        self.0.changed.notify_all();
        while !g.receiver_gone && g.heap.len() > self.0.depth && g.heap.iter().any(|e| e.seq == seq) {
            g = self.0.changed.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        Ok(())
    }
}

impl<T> Receiver<T> {
    /// The highest-priority item; None once every sender is gone and nothing is left.
    pub fn recv(&self) -> Option<T> {
        self.recv_if(|_| true)
    }

    /// The highest-priority item once its key passes `take` (the urgent prover: only work
    /// above the default priority); None once every sender is gone and nothing it would take
    /// is left.
    pub fn recv_if(&self, take: impl Fn(&Key) -> bool) -> Option<T> {
        let mut g = self.0.lock();
        loop {
            if g.heap.peek().is_some_and(|e| take(&e.key)) {
                let e = g.heap.pop().expect("peeked above");
                self.0.changed.notify_all();
                return Some(e.item);
            }
            if g.senders == 0 {
                return None;
            }
            g = self.0.changed.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let left = {
            let mut g = self.0.lock();
            g.receiver_gone = true;
            std::mem::take(&mut g.heap)
        };
        self.0.changed.notify_all();
        drop(left);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn key(priority: i32, job: u64, partition: usize) -> Key {
        (priority, Reverse(job), Reverse(partition))
    }

    #[test]
    fn highest_priority_first_then_oldest_job_then_partition() {
        let (tx, rx) = channel::<&str>(8);
        tx.send(key(0, 1, 0), "c2 job 1 p0").unwrap();
        tx.send(key(0, 1, 1), "c2 job 1 p1").unwrap();
        tx.send(key(0, 2, 0), "c2 job 2 p0").unwrap();
        tx.send(key(2000, 3, 0), "winning").unwrap();
        drop(tx);
        let order: Vec<_> = std::iter::from_fn(|| rx.recv()).collect();
        assert_eq!(order, ["winning", "c2 job 1 p0", "c2 job 1 p1", "c2 job 2 p0"]);
    }

    #[test]
    fn the_urgent_receiver_takes_only_what_passes_and_waits_for_it() {
        let (tx, rx) = channel::<&str>(8);
        let rx = std::sync::Arc::new(rx);
        tx.send(key(0, 1, 0), "c2").unwrap();
        let urgent = {
            let rx = rx.clone();
            std::thread::spawn(move || rx.recv_if(|k| k.0 > 0))
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!urgent.is_finished(), "a C2 partition is not urgent work");
        tx.send(key(2000, 2, 0), "winning").unwrap();
        assert_eq!(urgent.join().unwrap(), Some("winning"));
        assert_eq!(rx.recv(), Some("c2"));
        drop(tx);
        assert_eq!(rx.recv_if(|k| k.0 > 0), None, "no sender left: the urgent receiver ends");
    }

    /// Bounded: with depth 1, a second sender waits until something is taken.
    #[test]
    fn a_full_handoff_holds_the_sender_back() {
        let (tx, rx) = channel::<u32>(1);
        tx.send(key(0, 1, 0), 1).unwrap();
        let tx2 = tx.clone();
        let t = std::thread::spawn(move || tx2.send(key(0, 2, 0), 2).unwrap());
        std::thread::sleep(Duration::from_millis(100));
        assert!(!t.is_finished(), "the second send waits while two are queued at depth 1");
        assert_eq!(rx.recv(), Some(1));
        t.join().unwrap();
        assert_eq!(rx.recv(), Some(2));
        drop(tx);
        assert_eq!(rx.recv(), None);
    }

    #[test]
    fn a_gone_receiver_refuses_and_releases_senders() {
        let (tx, rx) = channel::<u32>(0);
        let tx2 = tx.clone();
        let t = std::thread::spawn(move || tx2.send(key(0, 1, 0), 1));
        std::thread::sleep(Duration::from_millis(50));
        drop(rx);
        assert!(t.join().unwrap().is_ok(), "the waiting sender is released");
        assert_eq!(tx.send(key(0, 2, 0), 2), Err(2));
    }
}
