//! `RAYON_NUM_THREADS` (which storage providers set to share a host between proving processes,
//! as filecoin-ffi's rayon pools honour it) sizes the engine: its automatic synthesis workers are
//! half of it. (Its own test binary: the variable must be set before rayon's pool starts.)

use cuzk::engine::{Engine, EngineConfig};

#[test]
fn rayon_num_threads_sizes_the_engine() {
    std::env::set_var("RAYON_NUM_THREADS", "6");
    let e = Engine::new(EngineConfig { backend: "cpu".into(), ..Default::default() }).unwrap();
    assert_eq!(rayon::current_num_threads(), 6);
    let status: serde_json::Value = serde_json::from_str(&e.status_json()).unwrap();
    assert_eq!(status["synthesis_workers"], 3, "{status}");
}
