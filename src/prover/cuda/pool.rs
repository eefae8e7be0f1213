//! The CUDA devices a backend proves on: a process-wide lock per device, each device's
//! workspace and VRAM copies of SRSes, and its health. After a failed call the device is
//! checked (`ffi::device_check`); one whose context is lost (a sticky error such as an illegal
//! address: nothing can run on it again in this process) is marked unusable, its handles are
//! released, and it is skipped from then on. A recoverable error (out of memory, a bad
//! argument) fails only the proof that hit it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use blstrs::{G1Affine, G2Affine};

use super::ffi::{self, DeviceInfo};
use crate::error::Result;
use crate::prover::{DeviceStatus, PhaseTimings};
use crate::srs::Srs;
use crate::synth::R1cs;

/// One lock per device ordinal for the whole process: sppark's MSM kernels keep work counters
/// in device globals, so two MSMs on one device must never overlap, even from two backends
/// (which may have chosen different subsets of the devices). `n`: the process's device count.
fn gates(n: usize) -> &'static [Mutex<()>] {
    static GATES: OnceLock<Vec<Mutex<()>>> = OnceLock::new();
    GATES.get_or_init(|| (0..n).map(|_| Mutex::new(())).collect())
}

struct CachedSrs {
    key: [usize; 5],
    alive: ([Weak<Vec<G1Affine>>; 4], Weak<Vec<G2Affine>>),
    dev: ffi::DeviceSrs,
}

impl CachedSrs {
    fn alive(&self) -> bool {
        self.alive.0.iter().all(|w| w.strong_count() > 0) && self.alive.1.strong_count() > 0
    }
}

fn srs_key(srs: &Srs) -> [usize; 5] {
    let p = &srs.params;
    [
        Arc::as_ptr(&p.h) as usize,
        Arc::as_ptr(&p.l) as usize,
        Arc::as_ptr(&p.a) as usize,
        Arc::as_ptr(&p.b_g1) as usize,
        Arc::as_ptr(&p.b_g2) as usize,
    ]
}

struct CachedR1cs {
    alive: Weak<R1cs>,
    dev: ffi::DeviceR1cs,
}

/// A device's workspace and the SRSes and recorded circuits resident in its memory.
pub struct DeviceState {
    pub ws: ffi::Workspace,
    srs: Vec<CachedSrs>,
    r1cs: Vec<CachedR1cs>,
}

/// What one proof uses on a held device.
pub struct Resident<'a> {
    pub srs: &'a ffi::DeviceSrs,
    pub r1cs: Option<&'a ffi::DeviceR1cs>,
    pub ws: &'a mut ffi::Workspace,
}

impl DeviceState {
    /// `srs`'s bases (and `r1cs`'s matrices, when given) on this device, uploaded first if
    /// needed (evicting the other SRSes or circuits when the device is out of memory). Pushes
    /// the upload times when it uploads.
    pub fn resident(&mut self, srs: &Srs, r1cs: Option<&Arc<R1cs>>, t: &mut PhaseTimings) -> Result<Resident<'_>> {
        self.srs.retain(CachedSrs::alive);
        self.r1cs.retain(|c| c.alive.strong_count() > 0);
        let key = srs_key(srs);
        let i = match self.srs.iter().position(|e| e.key == key) {
            Some(i) => i,
            None => self.upload(srs, key, t)?,
        };
        let j = match r1cs {
            None => None,
            Some(r) => match self.r1cs.iter().position(|c| std::ptr::eq(c.alive.as_ptr(), Arc::as_ptr(r))) {
                Some(j) => Some(j),
                None => Some(self.upload_r1cs(r, t)?),
            },
        };
        Ok(Resident { srs: &self.srs[i].dev, r1cs: j.map(|j| &self.r1cs[j].dev), ws: &mut self.ws })
    }

    fn upload_r1cs(&mut self, r: &Arc<R1cs>, t: &mut PhaseTimings) -> Result<usize> {
        let wall = Instant::now();
        let up = match self.ws.upload_r1cs(r) {
            Err(e) if e.code == ffi::E_CUDA_OOM && !self.r1cs.is_empty() => {
                log::warn!("GPU out of memory for a recorded circuit: evicting {} other(s)", self.r1cs.len());
                self.r1cs.clear();
                self.ws.upload_r1cs(r)
            }
            res => res,
        };
        let (dev, ms) = up.map_err(|e| err!(Prover, "uploading the recorded circuit to the GPU: {e}"))?;
        t.push("gpu_r1cs_upload", Duration::from_secs_f64(ms as f64 / 1e3));
        t.push("gpu_r1cs_upload_wall", wall.elapsed());
        log::info!("recorded {:?} circuit uploaded to the GPU in {ms:.1} ms", r.proof);
        self.r1cs.push(CachedR1cs { alive: Arc::downgrade(r), dev });
        Ok(self.r1cs.len() - 1)
    }

    fn upload(&mut self, srs: &Srs, key: [usize; 5], t: &mut PhaseTimings) -> Result<usize> {
        let p = &srs.params;
        let wall = Instant::now();
        let up = match self.ws.upload_srs(&p.h, &p.l, &p.a, &p.b_g1, &p.b_g2) {
            Err(e) if e.code == ffi::E_CUDA_OOM && !self.srs.is_empty() => {
                log::warn!(
                    "GPU out of memory for the SRS of {}: evicting {} other SRS(es)",
                    srs.path.display(),
                    self.srs.len()
                );
                self.srs.clear();
                self.ws.upload_srs(&p.h, &p.l, &p.a, &p.b_g1, &p.b_g2)
            }
            r => r,
        };
        let (dev, ms) = up.map_err(|e| err!(Prover, "uploading the SRS {} to the GPU: {e}", srs.path.display()))?;
        t.push("gpu_srs_upload", Duration::from_secs_f64(ms as f64 / 1e3));
        t.push("gpu_srs_upload_wall", wall.elapsed());
        log::info!("SRS {} uploaded to the GPU in {:.1} ms", srs.path.display(), ms);
        let alive = (
            [Arc::downgrade(&p.h), Arc::downgrade(&p.l), Arc::downgrade(&p.a), Arc::downgrade(&p.b_g1)],
            Arc::downgrade(&p.b_g2),
        );
        self.srs.push(CachedSrs { key, alive, dev });
        Ok(self.srs.len() - 1)
    }
}

#[derive(Default)]
struct Health {
    /// Why the device can no longer be used (its context is lost), once it is.
    lost: Option<String>,
    proofs: u64,
    failures: u64,
}

pub struct Device {
    pub index: i32,
    pub info: DeviceInfo,
    state: Mutex<Option<DeviceState>>,
    health: Mutex<Health>,
}

impl Device {
    fn health(&self) -> MutexGuard<'_, Health> {
        self.health.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn usable(&self) -> bool {
        self.health().lost.is_none()
    }
}

/// A device held for one proof: the process-wide gate and the device's state.
pub struct Held<'a> {
    pub dev: &'a Device,
    state: MutexGuard<'a, Option<DeviceState>>,
    _gate: MutexGuard<'static, ()>,
}

impl Held<'_> {
    /// The device's workspace and SRS cache, the workspace created on first use.
    pub fn state(&mut self) -> Result<&mut DeviceState> {
        if self.state.is_none() {
            *self.state = Some(DeviceState { ws: ffi::Workspace::new(self.dev.index)?, srs: Vec::new(), r1cs: Vec::new() });
        }
        Ok(self.state.as_mut().expect("initialized above"))
    }

    /// Record how a proof on this device went. After a failure the device is checked: if its
    /// context is lost it is marked unusable (with the check's error and the proof's) and its
    /// handles are released, so the next proof goes elsewhere.
    pub fn record<T>(&mut self, res: &Result<T>) {
        let mut h = self.dev.health();
        let Err(e) = res else {
            h.proofs += 1;
            return;
        };
        h.failures += 1;
        let Err(lost) = ffi::device_check(self.dev.index) else {
            log::warn!("CUDA device {} ({}): a proof failed, the device still works: {e}", self.dev.index, self.dev.info.name);
            return;
        };
        let why = format!("context lost after a failed proof ({}); device check: {lost}", e.message);
        log::error!(
            "CUDA device {} ({}) is unusable from now on: {why}. Restart the process to use it again.",
            self.dev.index,
            self.dev.info.name
        );
        h.lost = Some(why);
        drop(h);
        // Each free on a lost context returns an error the C++ side ignores; none throws.
        *self.state = None;
    }
}

/// The devices of one backend.
pub struct Pool {
    devices: Vec<Device>,
    next: AtomicUsize,
    /// CUDA devices in the process (the gates are per ordinal, not per pool position).
    visible: usize,
}

impl Pool {
    /// The CUDA devices `only` names (ordinals as CUDA numbers them, after
    /// `CUDA_VISIBLE_DEVICES`), or all of them. `Unsupported` naming why when there is no
    /// device; `InvalidArgument` for an ordinal that does not exist.
    pub fn open(only: Option<&[usize]>) -> Result<Pool> {
        let n = ffi::device_count().map_err(|e| err!(Unsupported, "no usable CUDA device: {}", e.message))?;
        let chosen: Vec<usize> = only.map_or_else(|| (0..n).collect(), <[usize]>::to_vec);
        if let Some(&bad) = chosen.iter().find(|&&d| d >= n) {
            return Err(err!(InvalidArgument, "devices: there is no CUDA device {bad} (this process sees {n}, numbered from 0)"));
        }
        let mut devices = Vec::with_capacity(chosen.len());
        for i in chosen {
            let info = ffi::device_info(i as i32)?;
            log::info!("CUDA device {i}: {} ({} MiB)", info.name, info.total_bytes >> 20);
            devices.push(Device { index: i as i32, info, state: Mutex::new(None), health: Mutex::default() });
        }
        Ok(Pool { devices, next: AtomicUsize::new(0), visible: n })
    }

    pub fn len(&self) -> usize {
        self.devices.len()
    }

    pub fn device(&self, i: usize) -> Option<&Device> {
        self.devices.get(i)
    }

    /// Whether any device can still prove.
    pub fn any_usable(&self) -> bool {
        self.devices.iter().any(Device::usable)
    }

    /// Device `i` of the pool, held (waiting until no proof runs on it).
    pub fn hold_device(&self, i: usize) -> Option<Held<'_>> {
        let dev = self.devices.get(i)?;
        let gate = gates(self.visible)[dev.index as usize].lock().unwrap_or_else(|e| e.into_inner());
        let state = dev.state.lock().unwrap_or_else(|e| e.into_inner());
        Some(Held { dev, state, _gate: gate })
    }

    /// Upload `srs` to every usable device now (each waits for its device to be free), so no
    /// proof pays for the upload (`resident` logs each upload).
    pub fn preload(&self, srs: &Srs) -> Result<()> {
        for i in (0..self.devices.len()).filter(|&i| self.devices[i].usable()) {
            let Some(mut held) = self.hold_device(i) else { continue };
            let res = held.state().and_then(|st| st.resident(srs, None, &mut PhaseTimings::default()).map(|_| ()));
            if res.is_err() {
                held.record(&res); // a failed upload counts like a failed proof: the device is checked
            }
            res?;
        }
        Ok(())
    }

    /// An idle usable device if there is one, else the next usable one in turn (waiting for
    /// it). None once every device is unusable.
    pub fn hold(&self) -> Option<Held<'_>> {
        let n = self.devices.len();
        let gates = gates(self.visible);
        loop {
            let first = self.next.fetch_add(1, Ordering::Relaxed) % n;
            let order = (0..n).map(|k| (first + k) % n).filter(|&i| self.devices[i].usable());
            let gate_of = |i: usize| &gates[self.devices[i].index as usize];
            let idle = order.clone().find_map(|i| gate_of(i).try_lock().ok().map(|g| (i, g)));
            let (i, gate) = match idle {
                Some(held) => held,
                None => {
                    let i = order.clone().next()?;
                    (i, gate_of(i).lock().unwrap_or_else(|e| e.into_inner()))
                }
            };
            let dev = &self.devices[i];
            if dev.usable() {
                let state = dev.state.lock().unwrap_or_else(|e| e.into_inner());
                return Some(Held { dev, state, _gate: gate });
            } // lost while we waited for it: choose again
        }
    }

    /// Each device's health, for the engine's status.
    pub fn status(&self) -> Vec<DeviceStatus> {
        self.devices
            .iter()
            .map(|d| {
                let h = d.health();
                DeviceStatus {
                    index: d.index as usize,
                    name: d.info.name.clone(),
                    total_bytes: d.info.total_bytes,
                    // cudaMemGetInfo: no lock, so a status read never waits for a proof.
                    free_bytes: if h.lost.is_none() { ffi::device_info(d.index).ok().map(|i| i.free_bytes) } else { None },
                    usable: h.lost.is_none(),
                    error: h.lost.clone(),
                    proofs: h.proofs,
                    failures: h.failures,
                }
            })
            .collect()
    }

    /// Device memory held by the workspaces (not counting SRS bases).
    pub fn workspace_bytes(&self) -> u64 {
        self.devices.iter().filter_map(|d| d.state.lock().ok().and_then(|g| g.as_ref().map(|s| s.ws.bytes()))).sum()
    }

    /// Drop every SRS and recorded-circuit copy held in VRAM.
    pub fn evict_srs(&self) {
        for d in &self.devices {
            if let Some(s) = d.state.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                s.srs.clear();
                s.r1cs.clear();
            }
        }
    }
}
