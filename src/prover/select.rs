//! Which backend proves: the CPU, or CUDA where it is compiled in and a device is usable.

use super::{Backend, CpuBackend};
use crate::error::Result;

/// What the engine's configuration asks of the backend.
pub struct BackendChoice<'a> {
    /// "auto", "cpu" or "cuda".
    pub name: &'a str,
    /// CUDA device ordinals (None: every device).
    pub devices: Option<&'a [usize]>,
    pub gpu_lanes: usize,
    pub cpu_lanes: usize,
    /// Device-memory budget in bytes (None: from each device's free memory).
    pub vram_budget: Option<u64>,
}

/// "cpu"; "cuda" (an `Unsupported` error naming why when it cannot be used); "auto": CUDA when
/// compiled in and a device is present, else the CPU. `devices` narrows the CUDA devices; an
/// ordinal that does not exist is an error under "auto" too, also where there is no CUDA at
/// all (a typo, or a missing driver, must not quietly mean the CPU).
pub fn select_backend(config: &BackendChoice<'_>) -> Result<Box<dyn Backend>> {
    let only = config.devices;
    let no_such_devices = |why: &str| err!(InvalidArgument, "devices {:?}: no such CUDA device ({why})", only.unwrap_or_default());
    // Storage providers set BELLMAN_NO_GPU to keep a proving process off the GPU (bellperson
    // and filecoin-ffi honour it): "auto" does too; an explicit "cuda" overrides it.
    let no_gpu = std::env::var_os("BELLMAN_NO_GPU").is_some();
    match config.name {
        "cpu" => Ok(Box::new(CpuBackend::with_lanes(config.cpu_lanes))),
        "auto" if no_gpu && only.is_some() => Err(err!(
            InvalidArgument,
            "devices {:?} names CUDA devices, but BELLMAN_NO_GPU is set (it keeps \"auto\" off the GPU; use \"cuda\" to prove on them anyway)",
            only.unwrap_or_default()
        )),
        "auto" if no_gpu => {
            log::info!("backend auto: BELLMAN_NO_GPU is set; proving on the CPU");
            Ok(Box::new(CpuBackend::with_lanes(config.cpu_lanes)))
        }
        #[cfg(feature = "cuda")]
        "cuda" => Ok(Box::new(super::CudaBackend::with_budget(only, config.gpu_lanes, config.vram_budget)?)),
        #[cfg(feature = "cuda")]
        "auto" => match super::CudaBackend::with_budget(only, config.gpu_lanes, config.vram_budget) {
            Ok(b) => {
                log::info!("backend auto: proving on CUDA ({} device(s))", b.device_count());
                Ok(Box::new(b))
            }
            Err(e) if e.status == crate::error::Status::Unsupported && only.is_some() => Err(no_such_devices(&e.message)),
            Err(e) if e.status == crate::error::Status::Unsupported => {
                log::info!("backend auto: not using CUDA ({}); proving on the CPU", e.message);
                Ok(Box::new(CpuBackend::with_lanes(config.cpu_lanes)))
            }
            Err(e) => Err(e),
        },
        #[cfg(not(feature = "cuda"))]
        "auto" if only.is_some() => Err(no_such_devices("this build has no CUDA backend: compiled without the `cuda` feature")),
        #[cfg(not(feature = "cuda"))]
        "auto" => {
            log::info!("backend auto: this build has no CUDA backend (compiled without the `cuda` feature); proving on the CPU");
            Ok(Box::new(CpuBackend::with_lanes(config.cpu_lanes)))
        }
        #[cfg(not(feature = "cuda"))]
        "cuda" => Err(err!(Unsupported, "backend \"cuda\" is not available: this build was compiled without the `cuda` feature")),
        other => Err(err!(Unsupported, "backend {other:?} is not available in this build")),
    }
}
