//! The CUDA devices a backend proves on: each device's lanes (workspaces), the VRAM copies of
//! SRSes and recorded circuits its lanes share, a process-wide MSM gate per device, and its
//! health. A proof holds one lane through both GPU stages but the gate only for the sparse
//! stage (the MSMs), so with two lanes one partition's stage H (witness upload, a·b·c from the
//! recorded circuit, NTTs: the copy engine and memory bandwidth) runs under another's MSMs
//! (arithmetic). After a failed call the device is checked (`ffi::device_check`); one whose
//! context is lost (a sticky error such as an illegal address: nothing can run on it again in
//! this process) is marked unusable, its handles are released, and it is skipped from then on.
//! A recoverable error (out of memory, a bad argument) fails only the proof that hit it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use blstrs::{G1Affine, G2Affine};

use super::ffi::{self, DeviceInfo};
use crate::prover::vram::{self, Footprint, Plan};
use crate::busy::BusyClock;
use crate::error::Result;
use crate::prover::{DeviceStatus, PhaseTimings};
use crate::srs::Srs;
use crate::synth::R1cs;

/// Most lanes per device: two cover stage H under the MSMs (a third would only queue for the gate).
pub const MAX_LANES: usize = 2;

/// One gate per device ordinal for the whole process: sppark's MSM kernels keep work counters
/// in device globals, so two MSMs on one device must never overlap, even from two backends
/// (which may have chosen different subsets of the devices). `n`: the process's device count.
fn gates(n: usize) -> &'static [Mutex<()>] {
    static GATES: OnceLock<Vec<Mutex<()>>> = OnceLock::new();
    GATES.get_or_init(|| (0..n).map(|_| Mutex::new(())).collect())
}

struct CachedSrs {
    key: [usize; 5],
    /// Device bytes of its bases.
    bytes: u64,
    alive: ([Weak<Vec<G1Affine>>; 4], Weak<Vec<G2Affine>>),
    dev: Arc<ffi::DeviceSrs>,
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
    bytes: u64,
    alive: Weak<R1cs>,
    dev: Arc<ffi::DeviceR1cs>,
}

/// The SRSes and recorded circuits resident in a device's memory, shared by its lanes (a proof
/// keeps the handles it uses alive, so an eviction frees their VRAM once no proof needs them).
#[derive(Default)]
struct Resident {
    srs: Vec<CachedSrs>,
    r1cs: Vec<CachedR1cs>,
}

/// What one proof uses on a device.
pub struct OnDevice {
    pub srs: Arc<ffi::DeviceSrs>,
    pub r1cs: Option<Arc<ffi::DeviceR1cs>>,
}

impl Resident {
    /// `srs`'s bases (and `r1cs`'s matrices, when given) on this device, uploaded through `ws`
    /// first if needed (evicting the other SRSes or circuits when the device is out of memory,
    /// or when keeping them would put the device over `room`: the bytes the budget leaves for
    /// resident SRSes and circuits beside this proof's workspaces and scratch). Pushes the
    /// upload times when it uploads.
    fn get(&mut self, ws: &mut ffi::Workspace, srs: &Srs, r1cs: Option<&Arc<R1cs>>, mine: &Footprint, room: u64, t: &mut PhaseTimings) -> Result<OnDevice> {
        self.srs.retain(CachedSrs::alive);
        self.r1cs.retain(|c| c.alive.strong_count() > 0);
        let key = srs_key(srs);
        let others: u64 = self.srs.iter().filter(|e| e.key != key).map(|e| e.bytes).sum::<u64>()
            + self.r1cs.iter().filter(|c| r1cs.is_none_or(|r| !std::ptr::eq(c.alive.as_ptr(), Arc::as_ptr(r)))).map(|c| c.bytes).sum::<u64>();
        if others > 0 && others + mine.srs + mine.r1cs > room {
            log::info!(
                "the VRAM budget holds {} MiB of SRS and circuits for {} beside its proof: evicting {} MiB of others",
                room >> 20,
                srs.path.display(),
                others >> 20
            );
            self.srs.retain(|e| e.key == key);
            self.r1cs.retain(|c| r1cs.is_some_and(|r| std::ptr::eq(c.alive.as_ptr(), Arc::as_ptr(r))));
        }
        let i = match self.srs.iter().position(|e| e.key == key) {
            Some(i) => i,
            None => self.upload(ws, srs, key, t)?,
        };
        let j = match r1cs {
            None => None,
            Some(r) => match self.r1cs.iter().position(|c| std::ptr::eq(c.alive.as_ptr(), Arc::as_ptr(r))) {
                Some(j) => Some(j),
                None => Some(self.upload_r1cs(ws, r, t)?),
            },
        };
        Ok(OnDevice { srs: self.srs[i].dev.clone(), r1cs: j.map(|j| self.r1cs[j].dev.clone()) })
    }

    fn upload_r1cs(&mut self, ws: &mut ffi::Workspace, r: &Arc<R1cs>, t: &mut PhaseTimings) -> Result<usize> {
        let wall = Instant::now();
        let up = match ws.upload_r1cs(r) {
            Err(e) if e.code == ffi::E_CUDA_OOM && !self.r1cs.is_empty() => {
                log::warn!("GPU out of memory for a recorded circuit: evicting {} other(s)", self.r1cs.len());
                self.r1cs.clear();
                ws.upload_r1cs(r)
            }
            res => res,
        };
        let (dev, ms) = up.map_err(|e| err!(Prover, "uploading the recorded circuit to the GPU: {e}"))?;
        t.push("gpu_r1cs_upload", Duration::from_secs_f64(ms as f64 / 1e3));
        t.push("gpu_r1cs_upload_wall", wall.elapsed());
        log::info!("recorded {:?} circuit uploaded to the GPU in {ms:.1} ms", r.proof);
        self.r1cs.push(CachedR1cs { bytes: r.stats().bytes as u64, alive: Arc::downgrade(r), dev: Arc::new(dev) });
        Ok(self.r1cs.len() - 1)
    }

    fn upload(&mut self, ws: &mut ffi::Workspace, srs: &Srs, key: [usize; 5], t: &mut PhaseTimings) -> Result<usize> {
        let p = &srs.params;
        let wall = Instant::now();
        let up = match ws.upload_srs(&p.h, &p.l, &p.a, &p.b_g1, &p.b_g2) {
            Err(e) if e.code == ffi::E_CUDA_OOM && !self.srs.is_empty() => {
                log::warn!(
                    "GPU out of memory for the SRS of {}: evicting {} other SRS(es)",
                    srs.path.display(),
                    self.srs.len()
                );
                self.srs.clear();
                ws.upload_srs(&p.h, &p.l, &p.a, &p.b_g1, &p.b_g2)
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
        let bytes = Footprint::of_srs(srs, None).srs;
        self.srs.push(CachedSrs { key, bytes, alive, dev: Arc::new(dev) });
        Ok(self.srs.len() - 1)
    }
}

#[derive(Default)]
struct Health {
    /// Why the device can no longer be used (its context is lost), once it is.
    lost: Option<String>,
    proofs: u64,
    failures: u64,
    /// Time with at least one lane held.
    busy: BusyClock,
}

pub struct Device {
    pub index: i32,
    pub info: DeviceInfo,
    /// Device bytes the backend may use (`vram_budget_mib`, or what was free at open less 2 %).
    pub budget: u64,
    /// Whether the budget was configured: then the plan's lane count is a limit. An automatic
    /// budget (the whole device) only decides whether a circuit fits at all; its lanes are
    /// learnt from the device (a second workspace that does not fit drops it to one lane).
    strict: bool,
    /// Each lane's workspace (stream, events, pinned staging, scratch), created on first use.
    lanes: Vec<Mutex<Option<ffi::Workspace>>>,
    /// Lanes proofs may take: drops to 1 once a second workspace did not fit in VRAM.
    lanes_usable: AtomicUsize,
    resident: Mutex<Resident>,
    health: Mutex<Health>,
}

impl Device {
    fn health(&self) -> MutexGuard<'_, Health> {
        self.health.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn usable(&self) -> bool {
        self.health().lost.is_none()
    }

    fn resident(&self) -> MutexGuard<'_, Resident> {
        self.resident.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lane(&self, k: usize) -> MutexGuard<'_, Option<ffi::Workspace>> {
        self.lanes[k].lock().unwrap_or_else(|e| e.into_inner())
    }

    fn try_lane(&self, k: usize) -> Option<MutexGuard<'_, Option<ffi::Workspace>>> {
        match self.lanes[k].try_lock() {
            Ok(g) => Some(g),
            Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    fn lanes_usable(&self) -> usize {
        self.lanes_usable.load(Ordering::Relaxed).clamp(1, self.lanes.len())
    }

    /// Lanes a circuit of footprint `f` may use on this device within its budget (0: it does
    /// not fit at all).
    pub fn lanes_for(&self, f: &Footprint) -> usize {
        match vram::plan(f, self.budget, self.lanes_usable()) {
            Plan::Resident { lanes, .. } if self.strict => lanes,
            Plan::Resident { .. } => self.lanes_usable(),
            Plan::TooSmall { .. } => 0,
        }
    }
}

/// One lane of a device held for one proof: its workspace. The device's MSM gate is taken
/// separately, for the sparse stage only ([`Held::gate`]).
pub struct Held<'a> {
    pub dev: &'a Device,
    pub lane: usize,
    ws: MutexGuard<'a, Option<ffi::Workspace>>,
    visible: usize,
}

impl<'a> Held<'a> {
    fn new(dev: &'a Device, lane: usize, ws: MutexGuard<'a, Option<ffi::Workspace>>, visible: usize) -> Self {
        dev.health().busy.enter();
        Held { dev, lane, ws, visible }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.dev.health().busy.leave();
    }
}

impl Held<'_> {
    /// The lane's workspace, created on first use.
    pub fn workspace(&mut self) -> Result<&mut ffi::Workspace> {
        if self.ws.is_none() {
            *self.ws = Some(ffi::Workspace::new(self.dev.index)?);
        }
        Ok(self.ws.as_mut().expect("initialized above"))
    }

    /// `srs` (and `r1cs`) resident on the device, uploaded through this lane if needed, within
    /// the device's budget for proofs of footprint `f` (other circuits' copies go first when it
    /// cannot hold them all).
    pub fn resident(&mut self, srs: &Srs, r1cs: Option<&Arc<R1cs>>, f: &Footprint, t: &mut PhaseTimings) -> Result<OnDevice> {
        let dev = self.dev;
        let room = dev.budget.saturating_sub(f.resident(dev.lanes_for(f).max(1)) - f.srs - f.r1cs);
        let ws = self.workspace()?;
        dev.resident().get(ws, srs, r1cs, f, room, t)
    }

    /// Whether this is the device's only held lane (of this pool) right now.
    pub fn alone(&self) -> bool {
        self.dev.health().busy.holders() == 1
    }

    /// The device's MSM gate (process-wide): held around each sparse stage.
    pub fn gate(&self) -> &'static Mutex<()> {
        &gates(self.visible)[self.dev.index as usize]
    }

    /// A proof on this device ran out of memory while it had more than one lane: from now on
    /// proofs use the first lane only, and the other lanes' workspaces are released (waiting
    /// for a proof still running on one). True when the caller should retry the proof; false
    /// when the device already had one lane (the error stands).
    pub fn shrink_to_one_lane(&mut self) -> bool {
        if self.dev.lanes_usable.swap(1, Ordering::Relaxed) <= 1 {
            return false;
        }
        log::warn!(
            "CUDA device {} ({}): out of memory with {} workspaces; proving one partition at a time on it from now on",
            self.dev.index,
            self.dev.info.name,
            self.dev.lanes.len()
        );
        if self.lane != 0 {
            *self.ws = None;
        } else {
            // Lanes in order: the other lanes' holders never wait for lane 0.
            for k in 1..self.dev.lanes.len() {
                *self.dev.lane(k) = None;
            }
        }
        true
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
        // Each free on a lost context returns an error the C++ side ignores; none throws. A
        // lane busy with another proof drops its workspace when that proof fails in turn.
        *self.ws = None;
        *self.dev.resident() = Resident::default();
        for k in (0..self.dev.lanes.len()).filter(|&k| k != self.lane) {
            if let Some(mut ws) = self.dev.try_lane(k) {
                *ws = None;
            }
        }
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
    /// `CUDA_VISIBLE_DEVICES`), or all of them, with `lanes` lanes each (at most
    /// [`MAX_LANES`]). `Unsupported` naming why when there is no device; `InvalidArgument` for
    /// an ordinal that does not exist.
    pub fn open(only: Option<&[usize]>, lanes: usize, budget: Option<u64>) -> Result<Pool> {
        let n = ffi::device_count().map_err(|e| err!(Unsupported, "no usable CUDA device: {}", e.message))?;
        let chosen: Vec<usize> = only.map_or_else(|| (0..n).collect(), <[usize]>::to_vec);
        if let Some(&bad) = chosen.iter().find(|&&d| d >= n) {
            return Err(err!(InvalidArgument, "devices: there is no CUDA device {bad} (this process sees {n}, numbered from 0)"));
        }
        let lanes = lanes.clamp(1, MAX_LANES);
        let budget_configured = budget.is_some();
        let mut devices = Vec::with_capacity(chosen.len());
        for i in chosen {
            let info = ffi::device_info(i as i32)?;
            let budget = vram::budget(budget, info.total_bytes, info.free_bytes);
            log::info!(
                "CUDA device {i}: {} ({} MiB, {} MiB free; VRAM budget {} MiB{})",
                info.name,
                info.total_bytes >> 20,
                info.free_bytes >> 20,
                budget >> 20,
                if budget_configured { ", vram_budget_mib" } else { "" }
            );
            devices.push(Device {
                index: i as i32,
                info,
                budget,
                strict: budget_configured,
                lanes: (0..lanes).map(|_| Mutex::new(None)).collect(),
                lanes_usable: AtomicUsize::new(lanes),
                resident: Mutex::default(),
                health: Mutex::default(),
            });
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

    /// Whether a usable device's budget holds a circuit of footprint `f`.
    pub fn fits(&self, f: &Footprint) -> bool {
        self.devices.iter().any(|d| d.usable() && d.lanes_for(f) > 0)
    }

    /// Lanes proofs can run on at once, over the usable devices.
    pub fn lanes(&self) -> usize {
        self.devices.iter().filter(|d| d.usable()).map(Device::lanes_usable).sum()
    }

    /// Device `i` of the pool held whole (its MSM gate and every lane: nothing else runs on it),
    /// for `f`.
    pub fn with_device<T>(&self, i: usize, f: impl FnOnce(&Device) -> T) -> Option<T> {
        let dev = self.devices.get(i)?;
        // Lanes before the gate, as a proof takes them (a proof holds one lane, then the gate).
        let _lanes: Vec<_> = (0..dev.lanes.len()).map(|k| dev.lane(k)).collect();
        let _gate = gates(self.visible)[dev.index as usize].lock().unwrap_or_else(|e| e.into_inner());
        Some(f(dev))
    }

    /// Upload `srs` (and `circuit`, a recorded circuit of its proof) to every usable device whose
    /// budget holds them now (through its first lane, waiting for it), so no proof pays for the upload
    /// (`Resident::get` logs each upload; what is resident already is not uploaded again).
    pub fn preload(&self, srs: &Srs, circuit: Option<&Arc<R1cs>>) -> Result<()> {
        let f = Footprint::of_srs(srs, circuit.map(|c| &**c));
        for dev in self.devices.iter().filter(|d| d.usable() && d.lanes_for(&f) > 0) {
            let mut held = Held::new(dev, 0, dev.lane(0), self.visible);
            let res = held.resident(srs, circuit, &f, &mut PhaseTimings::default()).map(drop);
            if res.is_err() {
                held.record(&res); // a failed upload counts like a failed proof: the device is checked
            }
            res?;
        }
        Ok(())
    }

    /// An idle lane of a usable device if there is one (devices in turn), else a lane of the
    /// next usable device (waiting for that one: the engine runs one prover thread per lane, so
    /// its provers always find an idle one). None once every device is unusable.
    ///
    /// Only devices whose budget holds a circuit of footprint `f`, and only the lanes it allows
    /// there (`vram::plan`); None when no usable device holds it.
    pub fn hold(&self, f: &Footprint) -> Option<Held<'_>> {
        let n = self.devices.len();
        loop {
            let first = self.next.fetch_add(1, Ordering::Relaxed) % n;
            let order: Vec<usize> =
                (0..n).map(|k| (first + k) % n).filter(|&i| self.devices[i].usable() && self.devices[i].lanes_for(f) > 0).collect();
            let idle = order.iter().find_map(|&i| {
                let dev = &self.devices[i];
                (0..dev.lanes_for(f)).find_map(|k| dev.try_lane(k).map(|ws| (i, k, ws)))
            });
            let (i, lane, ws) = match idle {
                Some(held) => held,
                None => {
                    let &i = order.first()?;
                    let dev = &self.devices[i];
                    let k = self.next.load(Ordering::Relaxed) % dev.lanes_for(f).max(1);
                    (i, k, dev.lane(k))
                }
            };
            let dev = &self.devices[i];
            if dev.usable() && lane < dev.lanes_for(f) {
                return Some(Held::new(dev, lane, ws, self.visible));
            } // lost (or down to fewer lanes) while we waited for it: choose again
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
                    lanes: d.lanes_usable(),
                    budget_bytes: Some(d.budget),
                    busy: h.busy.busy(),
                }
            })
            .collect()
    }

    /// Device memory held by the workspaces of idle lanes (not counting SRS bases; a lane
    /// busy with a proof is not waited for).
    pub fn workspace_bytes(&self) -> u64 {
        let idle = |d: &Device, k: usize| d.try_lane(k).and_then(|g| g.as_ref().map(ffi::Workspace::bytes));
        self.devices.iter().flat_map(|d| (0..d.lanes.len()).filter_map(move |k| idle(d, k))).sum()
    }

    /// Drop every SRS and recorded-circuit copy held in VRAM (freed once no proof uses them).
    pub fn evict_srs(&self) {
        for d in &self.devices {
            *d.resident() = Resident::default();
        }
    }
}
