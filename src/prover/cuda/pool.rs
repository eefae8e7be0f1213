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
use crate::prover::vram::{self, AbcAt, Footprint, Plan};
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

/// SRS sections page-locked in host memory for streamed proofs. One registration per section for
/// the whole process (page-locking is process-wide and serves every device), shared by the
/// devices' cached copies that read from it; undone when the last of them goes.
pub struct PinnedSrs {
    key: [usize; 5],
    // Declared before the vectors: the registrations are undone before the memory can be freed.
    // Per section: None = not asked for yet; Some(None) = left pageable (locking failed).
    pins: Mutex<[Option<Option<ffi::HostPinned>>; 5]>,
    g1: [Arc<Vec<G1Affine>>; 4],
    g2: Arc<Vec<G2Affine>>,
}

impl PinnedSrs {
    /// The registry entry of `srs`, with the sections not in `resident` (`sec` bits) page-locked.
    fn of(srs: &Srs, resident: u32) -> Result<Arc<PinnedSrs>> {
        static PINNED: Mutex<Vec<Weak<PinnedSrs>>> = Mutex::new(Vec::new());
        let key = srs_key(srs);
        let p = &srs.params;
        let entry = {
            let mut reg = PINNED.lock().unwrap_or_else(|e| e.into_inner());
            reg.retain(|w| w.strong_count() > 0);
            match reg.iter().find_map(|w| w.upgrade().filter(|e| e.key == key)) {
                Some(e) => e,
                None => {
                    let e = Arc::new(PinnedSrs {
                        key,
                        pins: Mutex::default(),
                        g1: [p.h.clone(), p.l.clone(), p.a.clone(), p.b_g1.clone()],
                        g2: p.b_g2.clone(),
                    });
                    reg.push(Arc::downgrade(&e));
                    e
                }
            }
        };
        let mut pins = entry.pins.lock().unwrap_or_else(|e| e.into_inner());
        for i in (0..5).filter(|i| resident & (1 << i) == 0) {
            if pins[i].is_some() {
                continue;
            }
            let t = Instant::now();
            let what = format!("SRS {} section {i}", srs.path.display());
            let pin = if i < 4 { ffi::HostPinned::lock_or_pageable(&entry.g1[i][..], &what) } else { ffi::HostPinned::lock_or_pageable(&entry.g2[..], &what) };
            if let Some(pin) = &pin {
                log::info!("{what}: {} MiB page-locked in host memory in {:.2} s (streamed to the GPU)", pin.bytes() >> 20, t.elapsed().as_secs_f64());
            }
            pins[i] = Some(pin);
        }
        drop(pins);
        Ok(entry)
    }
}

struct CachedSrs {
    key: [usize; 5],
    /// The sections on the device (`sec` bits); the others are read from `pinned`.
    resident: u32,
    /// Device bytes of its bases.
    bytes: u64,
    alive: ([Weak<Vec<G1Affine>>; 4], Weak<Vec<G2Affine>>),
    dev: Arc<ffi::DeviceSrs>,
    // After `dev`: the device handle (which reads host sections) goes first.
    pinned: Option<Arc<PinnedSrs>>,
}

impl CachedSrs {
    fn alive(&self) -> bool {
        match &self.pinned {
            // The registry holds the vectors itself: alive while someone else does too.
            Some(p) => Arc::strong_count(&p.g1[0]) > 1,
            None => self.alive.0.iter().all(|w| w.strong_count() > 0) && self.alive.1.strong_count() > 0,
        }
    }
}

pub(super) fn srs_key(srs: &Srs) -> [usize; 5] {
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
    /// Device bytes it holds (a streamed circuit: its coefficients only).
    bytes: u64,
    alive: Weak<R1cs>,
    dev: Arc<ffi::DeviceR1cs>,
}

impl CachedR1cs {
    fn alive(&self) -> bool {
        // A streamed circuit's handle holds the circuit itself: alive while someone else does too.
        self.alive.strong_count() > usize::from(self.dev.streamed())
    }

    fn is(&self, r: &Arc<R1cs>, streamed: bool) -> bool {
        std::ptr::eq(self.alive.as_ptr(), Arc::as_ptr(r)) && self.dev.streamed() == streamed
    }
}

/// The SRSes and recorded circuits resident in a device's memory, shared by its lanes (a proof
/// keeps the handles it uses alive, so an eviction frees their VRAM once no proof needs them).
#[derive(Default)]
struct Resident {
    srs: Vec<CachedSrs>,
    r1cs: Vec<CachedR1cs>,
}

/// What one proof uses on a device, and how (the device's plan for its circuit).
pub struct OnDevice {
    pub srs: Arc<ffi::DeviceSrs>,
    pub r1cs: Option<Arc<ffi::DeviceR1cs>>,
    pub plan: Plan,
    // After `srs`: the host sections it reads stay page-locked while the proof runs.
    _pinned: Option<Arc<PinnedSrs>>,
}

impl Resident {
    /// `srs`'s sections in `resident` (`sec` bits; the others read from `pinned`) and `r1cs`'s
    /// matrices, when given — on the device, or with `r1cs_tile_rows` > 0 page-locked in host
    /// memory for a streamed proof to copy by tiles — for this device, through `ws` first if
    /// needed (evicting the
    /// other SRSes or circuits when the device is out of memory, or when keeping them would put
    /// the device over `room`: the bytes the budget leaves for resident SRSes and circuits beside
    /// this proof's workspaces and scratch; `mine`: the bytes this proof keeps there). Pushes the
    /// upload times when it uploads.
    #[allow(clippy::too_many_arguments)]
    fn get(&mut self, ws: &mut ffi::Workspace, srs: &Srs, r1cs: Option<(&Arc<R1cs>, u64)>, resident: u32, pinned: Option<Arc<PinnedSrs>>, mine: u64, room: u64, plan: Plan, t: &mut PhaseTimings) -> Result<OnDevice> {
        self.srs.retain(CachedSrs::alive);
        self.r1cs.retain(CachedR1cs::alive);
        let key = srs_key(srs);
        let mine_r1cs = |c: &CachedR1cs| r1cs.is_some_and(|(r, tile_rows)| c.is(r, tile_rows != 0));
        // A copy of this SRS with other sections on the device (another plan) is another's.
        let others: u64 = self.srs.iter().filter(|e| e.key != key || e.resident != resident).map(|e| e.bytes).sum::<u64>()
            + self.r1cs.iter().filter(|c| !mine_r1cs(c)).map(|c| c.bytes).sum::<u64>();
        if others > 0 && others + mine > room {
            log::info!(
                "the VRAM budget holds {} MiB of SRS and circuits for {} beside its proof: evicting {} MiB of others",
                room >> 20,
                srs.path.display(),
                others >> 20
            );
            self.srs.retain(|e| e.key == key && e.resident == resident);
            self.r1cs.retain(mine_r1cs);
        }
        let i = match self.srs.iter().position(|e| e.key == key && e.resident == resident) {
            Some(i) => i,
            None => self.upload(ws, srs, key, resident, pinned.clone(), t)?,
        };
        let j = match r1cs {
            None => None,
            Some((r, tile_rows)) => match self.r1cs.iter().position(|c| c.is(r, tile_rows != 0)) {
                Some(j) => Some(j),
                None => Some(self.upload_r1cs(ws, r, tile_rows, t)?),
            },
        };
        Ok(OnDevice { srs: self.srs[i].dev.clone(), r1cs: j.map(|j| self.r1cs[j].dev.clone()), plan, _pinned: pinned })
    }

    fn upload_r1cs(&mut self, ws: &mut ffi::Workspace, r: &Arc<R1cs>, tile_rows: u64, t: &mut PhaseTimings) -> Result<usize> {
        let wall = Instant::now();
        let up = match ws.upload_r1cs(r, tile_rows) {
            Err(e) if e.code == ffi::E_CUDA_OOM && !self.r1cs.is_empty() => {
                log::warn!("GPU out of memory for a recorded circuit: evicting {} other(s)", self.r1cs.len());
                self.r1cs.clear();
                ws.upload_r1cs(r, tile_rows)
            }
            res => res,
        };
        let (dev, ms) = up.map_err(|e| err!(Prover, "uploading the recorded circuit to the GPU: {e}"))?;
        t.push("gpu_r1cs_upload", Duration::from_secs_f64(ms as f64 / 1e3));
        t.push("gpu_r1cs_upload_wall", wall.elapsed());
        let bytes = if dev.streamed() {
            log::info!(
                "recorded {} circuit: {} MiB page-locked in host memory in {:.2} s, streamed to the GPU in tiles of {tile_rows} rows",
                r.circuit.name(),
                dev.pinned_bytes() >> 20,
                wall.elapsed().as_secs_f64()
            );
            32 * r.coefficients().len() as u64
        } else {
            log::info!("recorded {} circuit uploaded to the GPU in {ms:.1} ms", r.circuit.name());
            r.stats().bytes as u64
        };
        self.r1cs.push(CachedR1cs { bytes, alive: Arc::downgrade(r), dev: Arc::new(dev) });
        Ok(self.r1cs.len() - 1)
    }

    fn upload(&mut self, ws: &mut ffi::Workspace, srs: &Srs, key: [usize; 5], resident: u32, pinned: Option<Arc<PinnedSrs>>, t: &mut PhaseTimings) -> Result<usize> {
        let p = &srs.params;
        let wall = Instant::now();
        let up = match ws.upload_srs(&p.h, &p.l, &p.a, &p.b_g1, &p.b_g2, resident) {
            Err(e) if e.code == ffi::E_CUDA_OOM && !self.srs.is_empty() => {
                log::warn!(
                    "GPU out of memory for the SRS of {}: evicting {} other SRS(es)",
                    srs.path.display(),
                    self.srs.len()
                );
                self.srs.clear();
                ws.upload_srs(&p.h, &p.l, &p.a, &p.b_g1, &p.b_g2, resident)
            }
            r => r,
        };
        let (dev, ms) = up.map_err(|e| err!(Prover, "uploading the SRS {} to the GPU: {e}", srs.path.display()))?;
        t.push("gpu_srs_upload", Duration::from_secs_f64(ms as f64 / 1e3));
        t.push("gpu_srs_upload_wall", wall.elapsed());
        if resident == vram::sec::ALL {
            log::info!("SRS {} uploaded to the GPU in {:.1} ms", srs.path.display(), ms);
        } else {
            log::info!(
                "SRS {}: sections {} uploaded to the GPU in {:.1} ms; {} streamed from page-locked host memory",
                srs.path.display(),
                vram::sec::names(resident),
                ms,
                vram::sec::names(!resident & vram::sec::ALL)
            );
        }
        let alive = (
            [Arc::downgrade(&p.h), Arc::downgrade(&p.l), Arc::downgrade(&p.a), Arc::downgrade(&p.b_g1)],
            Arc::downgrade(&p.b_g2),
        );
        let bytes = Footprint::of_srs(srs, None).kept(resident, AbcAt::Cpu);
        self.srs.push(CachedSrs { key, resident, bytes, alive, dev: Arc::new(dev), pinned });
        Ok(self.srs.len() - 1)
    }
}

#[derive(Default)]
struct Health {
    /// Why the device can no longer be used (its context is lost), once it is.
    lost: Option<String>,
    proofs: u64,
    failures: u64,
    /// Partitions whose sums a pass of another proof made here (riders served).
    shared_passes: u64,
    /// Proofs' large copies over PCIe, each way, and the time they moved data.
    h2d_bytes: u64,
    d2h_bytes: u64,
    pcie_busy: Duration,
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

    /// How this device runs a circuit of footprint `f` within its budget.
    pub fn plan_for(&self, f: &Footprint) -> Plan {
        vram::plan(f, self.budget, self.lanes_usable())
    }

    /// Lanes a circuit of footprint `f` may use on this device within its budget (0: it does
    /// not fit at all).
    pub fn lanes_for(&self, f: &Footprint) -> usize {
        match self.plan_for(f) {
            Plan::Resident { lanes, .. } if self.strict => lanes,
            Plan::Resident { .. } => self.lanes_usable(),
            p => p.lanes(),
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

    /// What the device's plan for footprint `f` keeps of `srs` (and `r1cs`) on the device,
    /// uploaded through this lane if needed, within the device's budget (other circuits' copies
    /// go first when it cannot hold them all); in a streamed plan the other sections are
    /// page-locked in host memory first.
    pub fn resident(&mut self, srs: &Srs, r1cs: Option<&Arc<R1cs>>, f: &Footprint, t: &mut PhaseTimings) -> Result<OnDevice> {
        let dev = self.dev;
        let plan = dev.plan_for(f);
        let (resident, r1cs, pinned, mine, need) = match plan {
            Plan::Streamed(p) => {
                let pinned = if p.resident == vram::sec::ALL { None } else { Some(PinnedSrs::of(srs, p.resident)?) };
                let r1cs = match p.abc {
                    AbcAt::Cpu => None,
                    AbcAt::CircuitTiles | AbcAt::CircuitTilesParked => r1cs.map(|r| (r, vram::r1cs_tile_rows(r.constraints() as u64))),
                    AbcAt::CircuitOnDevice => r1cs.map(|r| (r, 0)),
                };
                (p.resident, r1cs, pinned, f.kept(p.resident, p.abc), p.need)
            }
            _ => (vram::sec::ALL, r1cs.map(|r| (r, 0)), None, f.srs + f.r1cs, f.resident(dev.lanes_for(f).max(1))),
        };
        let room = dev.budget.saturating_sub(need - mine);
        if let Plan::Streamed(p) = plan {
            log::debug!(
                "CUDA device {}: {} streamed within its {} MiB VRAM budget: ~{} MiB planned, kept {}; a, b, c {}; {}; tiles of {} bases",
                dev.index,
                srs.circuit.name(),
                dev.budget >> 20,
                p.need >> 20,
                vram::sec::names(p.resident),
                p.abc.name(),
                p.sigma_h(),
                p.tile
            );
        }
        let ws = self.workspace()?;
        if let (Plan::Streamed(p), Some(_)) = (plan, r1cs) {
            if p.abc == AbcAt::CircuitTilesParked {
                ws.spill(f.sizes.domain() as usize); // here, so that a preload takes it
            }
        }
        dev.resident().get(ws, srs, r1cs, resident, pinned, mine, room, plan, t)
    }

    /// `n` riders' sums made by this proof's passes over the tiles.
    pub fn served(&self, n: usize) {
        self.dev.health().shared_passes += n as u64;
    }

    /// A proof's PCIe traffic: bytes each way, and the time its copies moved data.
    pub fn moved(&self, h2d: u64, d2h: u64, busy: Duration) {
        let mut h = self.dev.health();
        h.h2d_bytes += h2d;
        h.d2h_bytes += d2h;
        h.pcie_busy += busy;
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

    /// Whether the usable devices that prove circuits of footprint `f` evaluate a, b, c from its
    /// recorded circuit (kept on the device or streamed in tiles): false when one takes them
    /// from CPU threads.
    pub fn keeps_r1cs(&self, f: &Footprint) -> bool {
        let mut plans = self.devices.iter().filter(|d| d.usable()).map(|d| d.plan_for(f)).filter(|p| p.lanes() > 0).peekable();
        plans.peek().is_some() && plans.all(|p| !matches!(p, Plan::Streamed(s) if s.abc == AbcAt::Cpu))
    }

    /// Lanes proofs can run on at once, over the usable devices.
    pub fn lanes(&self) -> usize {
        self.devices.iter().filter(|d| d.usable()).map(Device::lanes_usable).sum()
    }

    /// Device `i` of the pool held whole (its MSM gate and every lane: nothing else runs on it),
    /// for `f` (the tools' benchmarks).
    #[cfg(feature = "tools")]
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

    /// Whether a usable device that holds a circuit of footprint `f` is idle now: no lane held,
    /// its MSM gate free (a proof started on it at once runs without waiting).
    pub fn idle_for(&self, f: &Footprint) -> bool {
        self.devices.iter().any(|d| {
            d.usable()
                && d.lanes_for(f) > 0
                && d.health().busy.holders() == 0
                && !matches!(gates(self.visible)[d.index as usize].try_lock(), Err(std::sync::TryLockError::WouldBlock))
        })
    }

    /// Whether some usable device streams a circuit of footprint `f` (its budget does not hold
    /// the resident mode).
    pub fn streams(&self, f: &Footprint) -> bool {
        self.devices.iter().any(|d| d.usable() && matches!(d.plan_for(f), Plan::Streamed(_)))
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
                    shared_passes: h.shared_passes,
                    h2d_bytes: h.h2d_bytes,
                    d2h_bytes: h.d2h_bytes,
                    pcie_busy: h.pcie_busy,
                    lanes: d.lanes_usable(),
                    budget_bytes: Some(d.budget),
                    pinned_host_bytes: Some(ffi::pinned_host_bytes()),
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
