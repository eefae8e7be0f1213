//! `BELLMAN_NO_GPU` (which storage providers set to keep a process off the GPU, as bellperson
//! and filecoin-ffi honour it) keeps `"auto"` on the CPU; naming devices with it set is a
//! contradiction, refused. (Its own test binary: it sets a process-wide variable.)

use cuzk::engine::{Engine, EngineConfig};
use cuzk::error::Status;

#[test]
fn bellman_no_gpu_keeps_auto_on_the_cpu() {
    std::env::set_var("BELLMAN_NO_GPU", "1");
    let auto = EngineConfig { backend: "auto".into(), ..Default::default() };
    assert_eq!(Engine::new(auto.clone()).unwrap().backend_name(), "cpu");
    let e = Engine::new(EngineConfig { devices: Some(vec![0]), ..auto }).err().expect("devices with BELLMAN_NO_GPU");
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("BELLMAN_NO_GPU"), "{}", e.message);
}
