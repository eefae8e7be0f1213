//! Device memory: how much one circuit's proofs need on a GPU, and what a device's budget lets
//! the backend run. In the resident mode the CUDA backend keeps a circuit's SRS bases and
//! recorded circuit on the device, a workspace per lane (stage H's a/b/c slots, the copy of h the
//! folded ΣH reads, the witness, the sparse queries), and borrows its MSM scratch from the
//! device's pool one proof at a time (the MSM gate). Where that does not fit, the streamed mode
//! (cuda/stream.cuh) keeps what the budget holds on the device — SRS sections, the recorded
//! circuit — and streams the other sections from page-locked host memory in tiles, with stage H
//! in two domain slots, one lane. [`Footprint`] sizes each from the circuit's section counts —
//! the formulas of `cuda/` (stage_h.cuh, sparse.cuh, stream.cuh, msm_big.cuh, sum_ones.cuh,
//! sppark's msm_t), with the share of significant scalars a planning assumption — and [`plan`]
//! picks the resident mode with the most lanes that fit a budget, else the streamed mode with the
//! most kept on the device, or says that the circuit does not fit at all.
//!
//! Backend-neutral arithmetic (no CUDA here), so it is tested on any machine and can size a card
//! before one is bought.

use crate::srs::Srs;

pub const GIB: u64 = 1 << 30;
pub const MIB: u64 = 1 << 20;

/// What the budget keeps back on a device for what no plan counts: the CUDA context, sppark's
/// twiddle and constant tables, allocator rounding.
pub const CONTEXT_RESERVE: u64 = GIB;

/// Planning share of significant scalars (neither 0 nor 1) per query: a real 2 KiB witness has
/// L 1.6 %, A 1.2 %, B 4.6 % (cuda/NOTES.md); 5 % keeps headroom.
const SIG_SHARE_PERCENT: u64 = 5;

fn share(x: u64, pct: u64) -> u64 {
    x * pct / 100
}

/// Planning share of scalars equal to one (PoRep witnesses are half bits: ~47 %).
const ONES_SHARE_PERCENT: u64 = 50;

/// ΣH runs the one-pass big-MSM from this many points (cuda/sparse.cuh `MSM_BIG_MIN_POINTS`),
/// sppark's Pippenger below.
const MSM_BIG_MIN_POINTS: u64 = 1 << 25;

/// The G1 sums of ones run by affine rounds from this many bases of a query (cuda/sparse.cuh).
const ONES_ROUNDS_MIN_BASES: u64 = 1 << 24;

/// Bytes: G1 and G2 affine points, field elements, G1 XYZZ buckets.
const G1: u64 = 96;
const G2: u64 = 192;
const FR: u64 = 32;
const BUCKET: u64 = 192;

/// SRS sections as bits of a residency mask (the CUDA side's CUZK_CUDA_SEC_*), by section index
/// h, l, a, b_g1, b_g2 (`CircuitSizes::sections[1..]`).
pub mod sec {
    pub const H: u32 = 1;
    pub const L: u32 = 2;
    pub const A: u32 = 4;
    pub const B_G1: u32 = 8;
    pub const B_G2: u32 = 16;
    pub const ALL: u32 = 31;

    /// The sections of `mask` by name ("h, l, b_g1"; "none").
    pub fn names(mask: u32) -> String {
        let v: Vec<&str> = ["h", "l", "a", "b_g1", "b_g2"].iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, n)| *n).collect();
        if v.is_empty() { "none".into() } else { v.join(", ") }
    }
}

/// Most bases per streamed tile (two tiles of G2 bases: 1.5 GiB).
pub const STREAM_TILE: u64 = 1 << 22;

/// Fewest tiles the largest section is streamed in: smaller circuits take smaller tiles, so the
/// copy of one tile hides under the work on the previous at every size (and every size runs the
/// tiled path the 32 GiB circuit runs).
const MIN_TILES: u64 = 8;

/// Room for sppark's per-call tables and allocator rounding in streamed mode, beside the
/// significant scalars' Pippengers (sized from their counts).
const STREAM_SLACK: u64 = 16 * MIB;

/// The sizes of one circuit that its device memory follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CircuitSizes {
    /// Points per params section: ic, h, l, a, b_g1, b_g2.
    pub sections: [u64; 6],
    /// Bytes of the recorded circuit on the device, when a, b, c are evaluated there (0: a, b,
    /// c are computed on the host and uploaded).
    pub r1cs_bytes: u64,
}

impl CircuitSizes {
    pub fn of(srs: &Srs, r1cs_bytes: u64) -> CircuitSizes {
        let p = &srs.params;
        let n = |v: usize| v as u64;
        CircuitSizes { sections: [n(p.vk.ic.len()), n(p.h.len()), n(p.l.len()), n(p.a.len()), n(p.b_g1.len()), n(p.b_g2.len())], r1cs_bytes }
    }

    /// The NTT domain (h has one point fewer).
    pub fn domain(&self) -> u64 {
        (self.sections[1] + 1).next_power_of_two()
    }
}

/// Device bytes of one circuit's proofs in resident mode, by what holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    /// SRS bases (h, l, a, b_g1, b_g2), per device, shared by its lanes.
    pub srs: u64,
    /// The recorded circuit's matrices, per device.
    pub r1cs: u64,
    /// One lane's workspace, kept from proof to proof.
    pub workspace: u64,
    /// MSM scratch one proof at a time borrows from the pool (the larger of ΣH's and the sums
    /// of ones').
    pub transient: u64,
    /// The sizes it was computed from (the streamed mode's plan reads them).
    pub sizes: CircuitSizes,
    /// The sparse queries' device buffers (part of `workspace`).
    queries: u64,
}

impl Footprint {
    /// The footprint of `srs`'s proofs, with `r1cs` when a, b, c come from a recorded circuit.
    pub fn of_srs(srs: &Srs, r1cs: Option<&crate::synth::R1cs>) -> Footprint {
        Footprint::of(&CircuitSizes::of(srs, r1cs.map_or(0, |r| r.stats().bytes as u64)))
    }

    pub fn of(c: &CircuitSizes) -> Footprint {
        let [_, h, l, a, b, b2] = c.sections;
        let n = c.domain();
        let srs = (h + l + a + b) * G1 + b2 * G2;
        // Stage H: a, b, c in three domain-sized slots; the witness when a, b, c come from the
        // recorded circuit.
        let abc = 3 * n * FR;
        let witness = if c.r1cs_bytes > 0 { (c.sections[0] + l) * FR } else { 0 };
        // ΣH over [h | significant L and B_G1 bases]: a copy of h with the folded bases behind
        // it, re-reserved with a quarter's headroom.
        let fold = share(l + b, SIG_SHARE_PERCENT);
        let hcat = (h + fold + fold / 4) * G1;
        // Queries: ones bitmaps, significant indices and scalars, gathered bases.
        let sig = share(l + a + b, SIG_SHARE_PERCENT);
        let queries = (l + a + b) / 8 + sig * (4 + FR) + share(l.max(a), SIG_SHARE_PERCENT) * G1 + share(b, SIG_SHARE_PERCENT) * G2;
        let workspace = abc + hcat + witness + queries;
        // ΣH: the big-MSM's two sets of sort buffers (24 B per point and bucket tables) and its
        // affine rounds (~100 B per point); sppark's Pippenger below the threshold.
        let nh = h + fold;
        let sum_h = if nh >= MSM_BIG_MIN_POINTS { 148 * nh + 840 * MIB } else { 20 * nh + 64 * MIB };
        // The sums of ones by rounds: lists of the one-scalar positions and the rounds' scratch
        // (2^25-entry passes); sppark's batch addition needs none.
        let ones = if l.max(a) >= ONES_ROUNDS_MIN_BASES { share(l + a + b, ONES_SHARE_PERCENT) * 4 + 4 * GIB } else { 0 };
        Footprint { srs, r1cs: c.r1cs_bytes, workspace, transient: sum_h.max(ones), sizes: *c, queries }
    }

    /// Device bytes a streamed plan keeps: the sections in `resident` (`sec` bits), and the
    /// recorded circuit with `r1cs`.
    pub fn kept(&self, resident: u32, r1cs: bool) -> u64 {
        let [_, h, l, a, b, b2] = self.sizes.sections;
        let bytes = [h * G1, l * G1, a * G1, b * G1, b2 * G2];
        (0..5).filter(|i| resident & (1 << i) != 0).map(|i| bytes[i]).sum::<u64>() + if r1cs { self.r1cs } else { 0 }
    }

    /// Bytes a streamed-mode proof moves from host to device: the sections not in `resident`
    /// (each crosses once per proof), a, b, c (or the witness when the recorded circuit is
    /// kept), and the sparse queries. The resident mode moves only the last two.
    pub fn streamed_pcie_bytes(&self, resident: u32, r1cs: bool) -> u64 {
        let [ic, h, l, a, b, b2] = self.sizes.sections;
        let bytes = [h * G1, l * G1, a * G1, b * G1, b2 * G2];
        let streamed: u64 = (0..5).filter(|i| resident & (1 << i) == 0).map(|i| bytes[i]).sum();
        let stage_h = if r1cs && self.r1cs > 0 { (ic + l) * FR } else { 3 * (h + 1) * FR };
        let sig = share(l + a + b, SIG_SHARE_PERCENT);
        streamed + stage_h + (l + a + b) / 8 + sig * (4 + FR)
    }

    /// Bases per streamed tile: a power of two, at most `STREAM_TILE`, at least the 1024 bases
    /// a bitmap chunk covers, else an eighth of the largest section (`MIN_TILES`).
    pub fn tile_points(&self) -> u64 {
        let largest = self.sizes.sections[1..].iter().max().copied().unwrap_or(0);
        let eighth = (largest / MIN_TILES).max(1);
        (1u64 << (63 - eighth.leading_zeros())).clamp(1024, STREAM_TILE)
    }

    /// Device bytes of a streamed-mode proof keeping the sections in `resident` (`sec` bits) and,
    /// with `r1cs`, the recorded circuit on the device (one lane, the context reserve included).
    pub fn streamed(&self, resident: u32, r1cs: bool) -> u64 {
        let c = &self.sizes;
        let [ic, h, l, a, b, b2] = c.sections;
        let n = c.domain();
        let counts = [h, l, a, b, b2];
        let r1cs = r1cs && c.r1cs_bytes > 0;
        // Stage H: two domain slots, the witness while a, b, c are evaluated from it.
        let stage_h = 2 * n * FR + if r1cs { (ic + l) * FR } else { 0 };
        // The sparse stage: H's slot, then either two tiles of a streamed section's bases or
        // ΣH's batches (one after the other), and the significant scalars' Pippengers.
        let streamed = |i: usize| resident & (1 << i) == 0 && counts[i] > 0;
        let tile = |i: usize, size: u64| if streamed(i) { 2 * self.tile_points() * size } else { 0 };
        let tiles = tile(1, G1).max(tile(2, G1)).max(tile(3, G1)).max(tile(4, G2));
        let sum_h = sppark_msm_bytes(h, streamed(0));
        // The significant scalars' Pippenger of the largest query (G2 buckets are twice G1's).
        let sig = 2 * sppark_msm_bytes(share(l.max(a).max(b), SIG_SHARE_PERCENT), false);
        let sparse = n * FR + tiles.max(sum_h) + sig + STREAM_SLACK;
        self.kept(resident, r1cs) + stage_h.max(sparse) + self.queries + CONTEXT_RESERVE
    }

    /// Bytes with `lanes` lanes (resident SRS and circuit, a workspace each, one proof's MSM
    /// scratch at a time), the context reserve included.
    pub fn resident(&self, lanes: usize) -> u64 {
        self.srs + self.r1cs + lanes as u64 * self.workspace + self.transient + CONTEXT_RESERVE
    }
}

/// sppark's `msm_t` scratch for `n` points with device-resident scalars (msm/pippenger.cuh: the
/// window buckets and their histogram, the batch's digits and sort temporaries, and two batches
/// of points when they are streamed from the host).
pub fn sppark_msm_bytes(n: u64, host_points: bool) -> u64 {
    if n == 0 {
        return 0;
    }
    let lg2 = |x: u64| 63 - x.leading_zeros() as u64;
    let lg = lg2(n + n / 2);
    let wbits = if n > 192 { lg.saturating_sub(8).clamp(10, 18) } else { 10 };
    let nwins = 254 / wbits + 1;
    let batch = ((1u64 << (lg.max(wbits) - wbits)) >> 6).max(1);
    let stride = n.div_ceil(batch).div_ceil(32) * 32;
    let row = 1u64 << (wbits - 1);
    let buckets = (nwins * row + 4096) * BUCKET + nwins * row * 4;
    let points = if host_points { (if batch > 1 { 2 } else { 1 }) * stride * G1 } else { 0 };
    buckets + stride * 16 + nwins * stride * 4 + points
}

/// The streamed mode's choice for one circuit on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streamed {
    /// SRS sections kept on the device (`sec` bits); the others are streamed from host memory.
    pub resident: u32,
    /// Whether the recorded circuit is kept on the device (else a, b, c are computed on CPU
    /// threads and uploaded).
    pub r1cs: bool,
    /// Bases per streamed tile.
    pub tile: u64,
    /// Device bytes at most.
    pub need: u64,
}

/// What a device does with a circuit under its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// SRS and recorded circuit resident, `lanes` partitions at once; `need` bytes at most.
    Resident { lanes: usize, need: u64 },
    /// The resident mode does not fit: one partition at a time, streaming what is not kept.
    Streamed(Streamed),
    /// Not even the streamed mode fits: `need` bytes for it, over `budget`.
    TooSmall { need: u64, budget: u64 },
}

impl Plan {
    /// Lanes the plan proves on at once (0: none).
    pub fn lanes(&self) -> usize {
        match self {
            Plan::Resident { lanes, .. } => *lanes,
            Plan::Streamed(_) => 1,
            Plan::TooSmall { .. } => 0,
        }
    }
}

/// What the streamed mode keeps on the device first when the budget has room, by what it saves
/// per byte: the large G1 sections (their ones passes are bound by PCIe), B_G1, the recorded
/// circuit (a, b, c off the CPU, a third of stage H's upload), then B_G2 and h (their sums are
/// bound by arithmetic: sppark streams ΣH's bases under its own work).
const KEEP_ORDER: [Keep; 6] = [Keep::Sec(sec::L), Keep::Sec(sec::A), Keep::Sec(sec::B_G1), Keep::R1cs, Keep::Sec(sec::B_G2), Keep::Sec(sec::H)];

#[derive(Clone, Copy)]
enum Keep {
    Sec(u32),
    R1cs,
}

/// The resident mode with the most lanes (up to `max_lanes`) that fits `budget` bytes; else the
/// streamed mode keeping on the device what fits, in `KEEP_ORDER`; else TooSmall.
pub fn plan(f: &Footprint, budget: u64, max_lanes: usize) -> Plan {
    if let Some((lanes, need)) = (1..=max_lanes.max(1)).rev().map(|lanes| (lanes, f.resident(lanes))).find(|&(_, need)| need <= budget) {
        return Plan::Resident { lanes, need };
    }
    let (mut resident, mut r1cs) = (0u32, false);
    let need = f.streamed(0, false);
    if need > budget {
        return Plan::TooSmall { need, budget };
    }
    for keep in KEEP_ORDER {
        let (m, r) = match keep {
            Keep::Sec(bit) => (resident | bit, r1cs),
            Keep::R1cs if f.r1cs > 0 => (resident, true),
            Keep::R1cs => continue,
        };
        if f.streamed(m, r) <= budget {
            (resident, r1cs) = (m, r);
        }
    }
    Plan::Streamed(Streamed { resident, r1cs, tile: f.tile_points(), need: f.streamed(resident, r1cs) })
}

/// A device's budget: `configured` bytes when set (never above what the device has), else the
/// memory free on it when the backend opened it less 2 % (the driver's own growth).
pub fn budget(configured: Option<u64>, total: u64, free: u64) -> u64 {
    match configured {
        Some(b) => b.min(total),
        None => free - free / 50,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 32 GiB PoRep's sections (srs::shape) and its recorded circuit (7.38 GB measured).
    fn porep_32g() -> CircuitSizes {
        CircuitSizes { sections: [328, 134_217_727, 130_169_893, 129_753_620, 33_112_282, 33_112_282], r1cs_bytes: 7_380_000_000 }
    }

    fn gb(x: u64) -> f64 {
        x as f64 / 1e9
    }

    /// Today's resident 32 GiB footprint as cuda/ sizes it: SRS 47.4 GB, a workspace of ~31 GB,
    /// ΣH scratch of ~21 GB (BENCHMARKS / cuda/NOTES.md: ~107 GB for one lane, ~138 for two).
    #[test]
    fn the_32gib_resident_footprint() {
        let f = Footprint::of(&porep_32g());
        assert!((gb(f.srs) - 47.37).abs() < 0.05, "{}", gb(f.srs));
        assert!((28.0..34.0).contains(&gb(f.workspace)), "{}", gb(f.workspace));
        assert!((19.0..23.0).contains(&gb(f.transient)), "{}", gb(f.transient));
        assert!((100.0..115.0).contains(&gb(f.resident(1))), "{}", gb(f.resident(1)));
        assert!((130.0..148.0).contains(&gb(f.resident(2))), "{}", gb(f.resident(2)));
    }

    /// An H200 (~138 GiB free once its context is up) keeps its two lanes under the automatic
    /// budget, one under a smaller one; a card of 80 GB or less cannot hold the resident 32 GiB
    /// circuit at all.
    #[test]
    fn plans_by_budget() {
        let f = Footprint::of(&porep_32g());
        assert!(matches!(plan(&f, budget(None, 139 * GIB, 138 * GIB), 2), Plan::Resident { lanes: 2, .. }));
        assert!(matches!(plan(&f, 140 * GIB, 2), Plan::Resident { lanes: 2, .. }));
        assert!(matches!(plan(&f, 120 * GIB, 2), Plan::Resident { lanes: 1, .. }));
        assert!(matches!(plan(&f, 140 * GIB, 1), Plan::Resident { lanes: 1, .. }));
        // Below that, the streamed mode: one lane, under the budget, keeping more as it grows.
        let mut kept_before = 0;
        for card in [12, 16, 24, 32, 48, 80] {
            match plan(&f, card * GIB, 2) {
                Plan::Streamed(p) => {
                    assert!(p.need <= card * GIB, "{card} GiB: {p:?}");
                    assert_eq!(p.tile, STREAM_TILE);
                    let kept = Footprint::of(&porep_32g()).streamed(p.resident, p.r1cs) - f.streamed(0, false);
                    assert!(kept >= kept_before, "{card} GiB keeps less than a smaller card: {p:?}");
                    kept_before = kept;
                }
                p => panic!("{card} GiB: {p:?}"),
            }
        }
        // What each card class keeps (README's sizing table): 12 GiB nothing, 16 GiB B_G1,
        // 24 GiB L, 80 GB everything but ΣH's big-MSM scratch.
        let keeps = |card: u64| match plan(&f, card * GIB, 2) {
            Plan::Streamed(p) => (p.resident, p.r1cs),
            p => panic!("{card} GiB: {p:?}"),
        };
        assert_eq!(keeps(12), (0, false));
        assert_eq!(keeps(16), (sec::B_G1, false));
        assert_eq!(keeps(24), (sec::L, false));
        assert_eq!(keeps(80), (sec::ALL, true));
        // What crosses PCIe per partition: all five sections and a, b, c with nothing kept (~60
        // GB); L kept at 24 GiB saves its 12.5 GB; a resident-sized streamed plan moves only the
        // witness and the queries.
        let pcie = |card: u64| match plan(&f, card * GIB, 2) {
            Plan::Streamed(p) => f.streamed_pcie_bytes(p.resident, p.r1cs),
            p => panic!("{card} GiB: {p:?}"),
        };
        assert!((59.0..62.0).contains(&gb(pcie(12))), "{}", gb(pcie(12)));
        assert!((gb(pcie(12)) - gb(pcie(24)) - 12.5).abs() < 0.1, "{} {}", gb(pcie(12)), gb(pcie(24)));
        assert!(gb(pcie(80)) < 5.0, "{}", gb(pcie(80)));
        for card in [12, 16, 24, 32, 48, 80] {
            if let Plan::Streamed(p) = plan(&f, card * GIB, 2) {
                eprintln!(
                    "{card} GiB: kept {} (circuit {}), need {:.1} GB, PCIe {:.1} GB per partition",
                    sec::names(p.resident),
                    p.r1cs,
                    gb(p.need),
                    gb(f.streamed_pcie_bytes(p.resident, p.r1cs))
                );
            }
        }
        // Under ~11 GB not even that: the need it reports is the streamed mode's floor.
        match plan(&f, 10 * GIB, 2) {
            Plan::TooSmall { need, budget } => assert!(need > budget && need == f.streamed(0, false) && (10.0..12.5).contains(&gb(need)), "{}", gb(need)),
            p => panic!("10 GiB: {p:?}"),
        }
        // A 2 KiB circuit fits any card.
        let small = CircuitSizes { sections: [40, 4_194_303, 2_685_673, 2_674_948, 685_522, 685_522], r1cs_bytes: 152_000_000 };
        let f = Footprint::of(&small);
        assert!(matches!(plan(&f, 12 * GIB, 2), Plan::Resident { lanes: 2, .. }), "{:?}", plan(&f, 12 * GIB, 2));
        assert!(gb(f.resident(2)) < 5.0, "{}", gb(f.resident(2)));
        // Its tiles: an eighth of h (2^22 − 1 bases) rounded down to a power of two: 16 tiles.
        assert_eq!(f.tile_points(), 1 << 18);
    }

    /// sppark's msm_t scratch, against its own arithmetic at 2^27: 8 batches of 2^24, 18-bit
    /// windows (15 of them): digits 1 GiB, temps 0.25 GiB, two point batches 3 GiB, buckets.
    #[test]
    fn sppark_scratch() {
        let n = (1u64 << 27) - 1;
        let dev = sppark_msm_bytes(n, false);
        let host = sppark_msm_bytes(n, true);
        assert_eq!(host - dev, 2 * (1 << 24) * G1);
        assert!((1.6..1.8).contains(&gb(dev)), "{}", gb(dev));
        assert_eq!(sppark_msm_bytes(0, true), 0);
        // A small MSM is one batch: no double buffer.
        assert_eq!(sppark_msm_bytes(1000, true) - sppark_msm_bytes(1000, false), 1024 * G1);
    }

    /// Every circuit, however small, has a streamed plan below its resident one: budgets between
    /// them stream (what the GPU identity tests use to run the streamed mode at 2^10–2^20).
    #[test]
    fn small_circuits_stream_below_their_resident_footprint() {
        for lg in [10u64, 14, 18, 22] {
            let n = 1 << lg;
            let c = CircuitSizes { sections: [2, n - 1, n - 8, n - 9, n / 4, n / 4], r1cs_bytes: 0 };
            let f = Footprint::of(&c);
            assert!(f.streamed(sec::ALL, false) < f.resident(1), "2^{lg}: {} vs {}", f.streamed(sec::ALL, false), f.resident(1));
            // (At the smallest sizes a whole section can cost less than its two tiles, so the
            // floor's plan may keep one.)
            assert!(matches!(plan(&f, f.streamed(0, false), 2), Plan::Streamed(_)), "2^{lg}");
            assert!(matches!(plan(&f, f.resident(1) - 1, 2), Plan::Streamed(_)), "2^{lg}");
        }
    }

    #[test]
    fn budgets() {
        assert_eq!(budget(Some(16 * GIB), 80 * GIB, 70 * GIB), 16 * GIB);
        assert_eq!(budget(Some(200 * GIB), 80 * GIB, 70 * GIB), 80 * GIB);
        assert_eq!(budget(None, 80 * GIB, 50 * GIB), 49 * GIB);
    }
}
