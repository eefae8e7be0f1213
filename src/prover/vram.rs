//! Device memory: how much one circuit's proofs need on a GPU, and what a device's budget lets
//! the backend run. In the resident mode the CUDA backend keeps a circuit's SRS bases and
//! recorded circuit on the device, a workspace per lane (stage H's a/b/c slots, the copy of h the
//! folded ΣH reads, the witness, the sparse queries), and borrows its MSM scratch from the
//! device's pool one proof at a time (the MSM gate). Where that does not fit, the streamed mode
//! (cuda/stream.cuh) keeps what the budget holds on the device — the recorded circuit, SRS
//! sections — and streams the rest from page-locked host memory in tiles (the SRS sections by
//! bases, the recorded circuit by rows), with stage H in two domain slots, one lane. [`Footprint`] sizes each from the circuit's section counts —
//! the formulas of `cuda/` (stage_h.cuh, sparse.cuh, stream.cuh, msm_big.cuh, sum_ones.cuh,
//! sppark's msm_t), with the share of significant scalars a planning assumption — and [`plan`]
//! picks the resident mode with the most lanes that fit a budget, else the streamed mode with the
//! most kept on the device, or says that the circuit does not fit at all. What a streamed plan
//! leaves of the budget holds riders' queries ([`rider_bytes`]: partitions whose sums another
//! proof's passes over the tiles make, `prover::cuda::riders`).
//!
//! Backend-neutral arithmetic (no CUDA here), so it is tested on any machine and can size a card
//! before one is bought.

use crate::srs::Srs;

pub const GIB: u64 = 1 << 30;
pub const MIB: u64 = 1 << 20;

/// What the budget keeps back on a device for what no plan counts: the CUDA context, sppark's
/// twiddle and constant tables, allocator rounding.
pub const CONTEXT_RESERVE: u64 = GIB;

/// Planning share of significant scalars (neither 0 nor 1) per query until a witness of the
/// circuit was classified (`R1cs::significant_seen`), and the least planned after: a real 2 KiB
/// PoRep witness has L 1.6 %, A 1.2 %, B 4.6 % (cuda/NOTES.md); 5 % keeps headroom. A PoSt's
/// has 99 %: planned at 5 %, a 32 GiB WindowPoSt partition ran out of an H100's memory.
const SIG_SHARE_PERCENT: u64 = 5;

fn share(x: u64, pct: u64) -> u64 {
    x * pct / 100
}

/// Points per piece of a dense query's sum in the streamed mode (cuda/stream.cuh `DENSE_PIECE`):
/// sppark's buffers and the scalars on the device follow the piece.
const DENSE_PIECE: u64 = 1 << 24;

/// A query is dense from a quarter significant scalars (`dense_query`).
const DENSE_SHARE_DIV: u64 = 4;
/// ... and from this many points (below, a list and a gather cost next to nothing).
const DENSE_MIN_POINTS: u64 = 1024;

/// Whether a query with `nsig` significant scalars over `npoints` bases is summed dense
/// (cuda/cuzk_cuda.h `cuzk_cuda_sparse.dense`): its scalars uploaded as they are (32 B a point)
/// and one Pippenger over its bases, instead of a ones bitmap, a list (36 B per significant
/// scalar) and those bases gathered by index (96 B, in G2 192 B, each). From a quarter the dense
/// form holds less; the witnesses met are far on either side of it (PoRep and SnapDeals ~1.5 %
/// significant, WinningPoSt and WindowPoSt ~99 %, Poseidon's field elements), where the gather
/// would copy the SRS section once more on the device.
pub fn dense_query(nsig: u64, npoints: u64) -> bool {
    npoints >= DENSE_MIN_POINTS && nsig * DENSE_SHARE_DIV >= npoints
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

/// Most rows per tile of a recorded circuit streamed from host memory (~80 MB of PoRep's terms).
const R1CS_TILE_ROWS: u64 = 1 << 22;

/// Rows per tile of a streamed recorded circuit of `rows` rows: a power of two, at most
/// `R1CS_TILE_ROWS`, at least 1024, else an eighth of the rows (every size runs the tiled path).
pub fn r1cs_tile_rows(rows: u64) -> u64 {
    let eighth = (rows / MIN_TILES).max(1);
    (1u64 << (63 - eighth.leading_zeros())).clamp(1024, R1CS_TILE_ROWS)
}

/// Device bytes of one tile of `r`'s rows (row ends and the most terms any tile holds), as
/// cuda/workspace.cuh's `r1cs_new` sizes its tiles.
pub fn r1cs_tile_bytes(r: &crate::synth::R1cs) -> u64 {
    let tr = r1cs_tile_rows(r.constraints() as u64);
    tr * 4 + r.most_terms_per_tile(tr as usize) * 8
}

/// The sizes of one circuit that its device memory follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CircuitSizes {
    /// Points per params section: ic, h, l, a, b_g1, b_g2.
    pub sections: [u64; 6],
    /// Bytes of the recorded circuit on the device, when a, b, c are evaluated there (0: a, b,
    /// c are computed on the host and uploaded).
    pub r1cs_bytes: u64,
    /// Device bytes of one tile of the recorded circuit's rows when it is streamed from host
    /// memory instead (two are allocated).
    pub r1cs_tile_bytes: u64,
    /// The most significant scalars of L, A, B a witness of the circuit was seen to hold
    /// (`R1cs::significant_seen`; zeros before any).
    pub significant_seen: [u64; 3],
}

impl CircuitSizes {
    pub fn of(srs: &Srs, r1cs: Option<&crate::synth::R1cs>) -> CircuitSizes {
        let p = &srs.params;
        let n = |v: usize| v as u64;
        CircuitSizes {
            sections: [n(p.vk.ic.len()), n(p.h.len()), n(p.l.len()), n(p.a.len()), n(p.b_g1.len()), n(p.b_g2.len())],
            r1cs_bytes: r1cs.map_or(0, |r| r.stats().bytes as u64),
            r1cs_tile_bytes: r1cs.map_or(0, r1cs_tile_bytes),
            significant_seen: r1cs.map_or([0; 3], |r| r.significant_seen()),
        }
    }

    /// With `counts` significant scalars of L, A, B seen too (a classified witness's: without a
    /// recorded circuit nothing else carries them, and a PoSt's 99 % planned at the 5 % share
    /// would not fit what its proof allocates).
    pub fn seen(mut self, counts: [u64; 3]) -> CircuitSizes {
        for (s, n) in self.significant_seen.iter_mut().zip(counts) {
            *s = (*s).max(n);
        }
        self
    }

    /// Significant scalars planned for in L, A, B: what witnesses were seen to hold, at least
    /// the planning share (`SIG_SHARE_PERCENT`).
    pub fn significant(&self) -> [u64; 3] {
        let [_, _, l, a, b, _] = self.sections;
        let [sl, sa, sb] = self.significant_seen;
        [share(l, SIG_SHARE_PERCENT).max(sl), share(a, SIG_SHARE_PERCENT).max(sa), share(b, SIG_SHARE_PERCENT).max(sb)]
    }

    /// Which of L, A, B are planned dense ([`dense_query`] of the planned significant scalars).
    pub fn dense(&self) -> [bool; 3] {
        let [_, _, l, a, b, _] = self.sections;
        let [sl, sa, sb] = self.significant();
        [dense_query(sl, l), dense_query(sa, a), dense_query(sb, b)]
    }

    /// Significant scalars of L, A, B in lists (the sparse queries'; a dense query has none).
    fn listed(&self) -> [u64; 3] {
        let d = self.dense();
        let s = self.significant();
        [0, 1, 2].map(|f| if d[f] { 0 } else { s[f] })
    }

    /// Device bytes of a dense L, A, B query's scalars (0 for a sparse one).
    fn dense_scalars(&self) -> [u64; 3] {
        let [_, _, l, a, b, _] = self.sections;
        let d = self.dense();
        let n = [l, a, b];
        [0, 1, 2].map(|f| if d[f] { n[f] * FR } else { 0 })
    }

    /// Device bytes of the L, A, B queries' uploads: a sparse query's ones bitmap and list, a
    /// dense one's scalars.
    fn query_uploads(&self) -> u64 {
        let [_, _, l, a, b, _] = self.sections;
        let (d, s) = (self.dense(), self.listed());
        let sparse = [l, a, b].iter().enumerate().filter(|&(f, _)| !d[f]).map(|(f, &n)| n / 8 + s[f] * (4 + FR)).sum::<u64>();
        sparse + self.dense_scalars().iter().sum::<u64>()
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
        Footprint::of(&CircuitSizes::of(srs, r1cs))
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
        // it, re-reserved with a quarter's headroom; none when L or B is dense (not folded).
        let [sl, sa, sb] = c.listed();
        let [dl, da, db] = c.dense();
        let fold = sl + sb;
        let hcat = if dl || db { 0 } else { (h + fold + fold / 4) * G1 };
        // Queries: the uploads, the sparse ones' gathered bases.
        let queries = c.query_uploads() + sl.max(sa) * G1 + sb * G2;
        let workspace = abc + hcat + witness + queries;
        // ΣH: the big-MSM's two sets of sort buffers (24 B per point and bucket tables) and its
        // affine rounds (~100 B per point); sppark's Pippenger below the threshold.
        let nh = h + fold;
        let sum_h = if nh >= MSM_BIG_MIN_POINTS { 148 * nh + 840 * MIB } else { 20 * nh + 64 * MIB };
        // The sums of ones by rounds: lists of the one-scalar positions and the rounds' scratch
        // (2^25-entry passes); sppark's batch addition needs none.
        let ones = if l.max(a) >= ONES_ROUNDS_MIN_BASES { share(l + a + b, ONES_SHARE_PERCENT) * 4 + 4 * GIB } else { 0 };
        // Dense queries' Pippengers: L's, A's, B_G1's one after the other, B_G2's beside them.
        let dense_g1 = [(dl, l), (da, a), (db, b)].iter().filter(|x| x.0).map(|x| sppark_msm_bytes(x.1)).max().unwrap_or(0);
        let dense = dense_g1 + if db { sppark_scratch(b2, 2 * BUCKET) } else { 0 };
        Footprint { srs, r1cs: c.r1cs_bytes, workspace, transient: sum_h.max(ones).max(dense), sizes: *c, queries }
    }

    /// Device bytes a streamed plan keeps: the sections in `resident` (`sec` bits), and the
    /// recorded circuit when `abc` keeps it there.
    pub fn kept(&self, resident: u32, abc: AbcAt) -> u64 {
        let [_, h, l, a, b, b2] = self.sizes.sections;
        let bytes = [h * G1, l * G1, a * G1, b * G1, b2 * G2];
        (0..5).filter(|i| resident & (1 << i) != 0).map(|i| bytes[i]).sum::<u64>() + if abc == AbcAt::CircuitOnDevice { self.r1cs } else { 0 }
    }

    /// Bytes a streamed-mode proof moves over PCIe: the sections not in `resident` (each crosses
    /// once per proof), a, b, c (or the witness, and the recorded circuit's matrices when they
    /// are streamed too; parked, C and A there and back), and the sparse queries. The resident mode moves
    /// only the witness and the queries.
    pub fn streamed_pcie_bytes(&self, resident: u32, abc: AbcAt) -> u64 {
        let [ic, h, l, a, b, b2] = self.sizes.sections;
        let bytes = [h * G1, l * G1, a * G1, b * G1, b2 * G2];
        let streamed: u64 = (0..5).filter(|i| resident & (1 << i) == 0).map(|i| bytes[i]).sum();
        let stage_h = match abc.effective(self) {
            AbcAt::Cpu => 3 * (h + 1) * FR,
            AbcAt::CircuitTilesParked => (ic + l) * FR + self.r1cs + 4 * self.sizes.domain() * FR,
            AbcAt::CircuitTiles => (ic + l) * FR + self.r1cs,
            AbcAt::CircuitOnDevice => (ic + l) * FR,
        };
        streamed + stage_h + self.sizes.query_uploads()
    }

    /// Bases per streamed tile: a power of two, at most `STREAM_TILE`, at least the 1024 bases
    /// a bitmap chunk covers, else an eighth of the largest section (`MIN_TILES`).
    pub fn tile_points(&self) -> u64 {
        let largest = self.sizes.sections[1..].iter().max().copied().unwrap_or(0);
        let eighth = (largest / MIN_TILES).max(1);
        (1u64 << (63 - eighth.leading_zeros())).clamp(1024, STREAM_TILE)
    }

    /// Device bytes of a streamed-mode proof keeping the sections in `resident` (`sec` bits) on
    /// the device and evaluating a, b, c as `abc` says, ΣH after the passes over the tiles (one
    /// lane, the context reserve included).
    pub fn streamed(&self, resident: u32, abc: AbcAt) -> u64 {
        self.streamed_need(resident, abc, false)
    }

    /// As [`Footprint::streamed`], with ΣH beside the passes over the tiles
    /// (cuda/stream.cuh `sparse_beside`).
    pub fn streamed_beside(&self, resident: u32, abc: AbcAt) -> u64 {
        self.streamed_need(resident, abc, true)
    }

    fn streamed_need(&self, resident: u32, abc: AbcAt, beside: bool) -> u64 {
        let c = &self.sizes;
        let [ic, h, l, a, b, b2] = c.sections;
        let [sl, sa, sb] = c.listed();
        let dense = c.dense();
        let n = c.domain();
        let counts = [h, l, a, b, b2];
        let abc = abc.effective(self);
        // Stage H: two domain slots, the witness while a, b, c are evaluated from it, and two
        // tiles of the circuit's rows when it is streamed; parked, one slot beside the witness
        // and the tiles, two once they have gone.
        let witness = (ic + l) * FR;
        let stage_h = match abc {
            AbcAt::Cpu => 2 * n * FR,
            AbcAt::CircuitTilesParked => (n * FR + witness + 2 * c.r1cs_tile_bytes).max(2 * n * FR),
            AbcAt::CircuitTiles => 2 * n * FR + witness + 2 * c.r1cs_tile_bytes,
            AbcAt::CircuitOnDevice => 2 * n * FR + witness,
        };
        let streamed = |i: usize| resident & (1 << i) == 0 && counts[i] > 0;
        // ΣH by size, as cuda/stream.cuh `sigma_h_streamed` sums it: sppark's Pippenger up to the
        // big-MSM's size (copying host bases itself), the tiled big-MSM above.
        let sum_h = if h < MSM_BIG_MIN_POINTS {
            sppark_msm_bytes(h) + if streamed(0) { sppark_host_points_bytes(h) } else { 0 }
        } else {
            tiled_msm_bytes(h, sigma_h_tile(self.tile_points()), streamed(0))
        };
        // A dense query's Pippenger over section i (1 L .. 4 B_G2), piece by piece
        // (`DENSE_PIECE` points), with sppark's batches of points when the section is streamed
        // (G2's buckets and points are twice G1's).
        let dense_msm = |i: usize, n: u64| {
            let (bucket, point) = if i == 4 { (2 * BUCKET, G2) } else { (BUCKET, G1) };
            let n = n.min(DENSE_PIECE);
            sppark_scratch(n, bucket) + if streamed(i) { host_points(n, point) } else { 0 }
        };
        // Streamed, a dense query's scalars go up a piece at a time just before its Pippenger
        // (the queries count them whole, as the resident mode uploads them).
        let all_dense: u64 = c.dense_scalars().iter().sum();
        let one_dense = c.dense_scalars().iter().map(|&bytes| bytes.min(DENSE_PIECE * FR)).max().unwrap_or(0);
        let dense_g1 = [(dense[0], 1, l), (dense[1], 2, a), (dense[2], 3, b)].iter().filter(|x| x.0).map(|x| dense_msm(x.1, x.2)).max().unwrap_or(0);
        let dense_g2 = if dense[2] { dense_msm(4, b2) } else { 0 };
        // A pass's two tiles of section i's bases (1 L, 2 A, 3 B_G1, 4 B_G2; none for a dense
        // query's: no pass).
        let passes = |i: usize| streamed(i) && !(i >= 1 && dense[[0, 0, 1, 2, 2][i]]);
        let sparse = if beside {
            // H's slot, ΣH's buffers (the G1 dense Pippengers follow ΣH on its thread), two
            // tiles of G2's size (one allocation serves every pass), every G1 query's gathered
            // bases at once (the queries count the largest one's) and B_G2's Pippenger, which
            // runs beside ΣH.
            let tiles = if (1..5).any(streamed) { 2 * self.tile_points() * G2 } else { 0 };
            let gathered = (sl.min(sa) + sb) * G1;
            let sig_g2 = (2 * sppark_msm_bytes(sb.min(b2))).max(dense_g2);
            n * FR + tiles + sum_h.max(dense_g1) + gathered + sig_g2 + STREAM_SLACK
        } else {
            // H's slot, then either two tiles of a streamed section's bases or ΣH's buffers
            // (one after the other), and the significant scalars' Pippengers.
            let tile = |i: usize, size: u64| if passes(i) { 2 * self.tile_points() * size } else { 0 };
            let tiles = tile(1, G1).max(tile(2, G1)).max(tile(3, G1)).max(tile(4, G2));
            // The significant scalars' Pippenger of the largest query (G2 buckets are twice
            // G1's), or a dense query's.
            let sig = (2 * sppark_msm_bytes(sl.max(sa).max(sb))).max(dense_g1 + one_dense).max(dense_g2 + one_dense);
            n * FR + tiles.max(sum_h) + sig + STREAM_SLACK
        };
        self.kept(resident, abc) + stage_h.max(sparse) + self.queries - all_dense + CONTEXT_RESERVE
    }

    /// Bytes with `lanes` lanes (resident SRS and circuit, a workspace each, one proof's MSM
    /// scratch at a time), the context reserve included.
    pub fn resident(&self, lanes: usize) -> u64 {
        self.srs + self.r1cs + lanes as u64 * self.workspace + self.transient + CONTEXT_RESERVE
    }
}

/// sppark's `msm_t` scratch for `n` device-resident points with device-resident scalars
/// (msm/pippenger.cuh: the window buckets and their histogram, the batch's digits and sort
/// temporaries).
pub fn sppark_msm_bytes(n: u64) -> u64 {
    sppark_scratch(n, BUCKET)
}

/// As [`sppark_msm_bytes`] with buckets of `bucket` bytes (G2's are twice G1's).
fn sppark_scratch(n: u64, bucket: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let (wbits, _, stride) = sppark_batches(n);
    let nwins = 254 / wbits + 1;
    let row = 1u64 << (wbits - 1);
    let buckets = (nwins * row + 4096) * bucket + nwins * row * 4;
    buckets + stride * 16 + nwins * stride * 4
}

/// sppark's `msm_t` buffers for `n` points it copies from host memory itself: its batches of
/// points, two (double-buffered) when there is more than one batch (msm/pippenger.cuh).
pub fn sppark_host_points_bytes(n: u64) -> u64 {
    host_points(n, G1)
}

/// As [`sppark_host_points_bytes`] for points of `point` bytes.
fn host_points(n: u64, point: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let (_, batch, stride) = sppark_batches(n);
    (if batch > 1 { 2 } else { 1 }) * stride * point
}

/// How sppark's `msm_t` splits `n` points (n > 0): its window bits, the batches and the points
/// of one batch (rounded up to 32).
fn sppark_batches(n: u64) -> (u64, u64, u64) {
    let lg2 = |x: u64| 63 - x.leading_zeros() as u64;
    let lg = lg2(n + n / 2);
    let wbits = if n > 192 { lg.saturating_sub(8).clamp(10, 18) } else { 10 };
    let batch = ((1u64 << (lg.max(wbits) - wbits)) >> 6).max(1);
    let stride = n.div_ceil(batch).div_ceil(32) * 32;
    (wbits, batch, stride)
}

/// Device bytes a partition riding another proof's passes over the tiles takes during them
/// (cuda/stream.cuh `rider_buffers`): its ones bitmaps (`ones_words` words) and significant
/// lists (`nsig` per query: index and scalar), the gathered bases of all three queries' significant
/// scalars and B's in G2, its per-warp sums, and the pool's rounding of seven allocations.
pub fn rider_bytes(ones_words: u64, nsig: [u64; 3]) -> u64 {
    let sig: u64 = nsig.iter().sum();
    ones_words * 4 + sig * (4 + FR + G1) + nsig[2] * G2 + RIDER_SLACK
}

/// What a rider's per-warp sums (about 1 MB on a 132-SM card) and the pool's 2 MiB rounding of
/// its seven allocations take at most.
const RIDER_SLACK: u64 = 24 * MIB;

/// ΣH's tile in the streamed mode: twice the plan's tile of SRS bases, at most 2^23 bases
/// (cuda/stream.cuh, `sigma_h_tile`).
pub fn sigma_h_tile(tile_points: u64) -> u64 {
    (2 * tile_points).min(1 << 23)
}

/// The tiled big-MSM's device memory for `n` scalars in tiles of `tile` bases
/// (cuda/msm_big.cuh, `msm_tiled`), with two slots of bases when they are copied from the host:
/// every window's buckets, two sets of sort buffers, the affine rounds' buffers, the folds.
pub fn tiled_msm_bytes(n: u64, tile: u64, host_points: bool) -> u64 {
    if n == 0 {
        return 0;
    }
    let t = tile.min(n).max(1);
    // msm_big::tiled_window and widths(): c = lg t − 3 in 12..=20, the widest window's bits.
    let lg = 63 - t.leading_zeros() as u64;
    let c = lg.saturating_sub(3).clamp(12, 20);
    let nwin = 256u64.div_ceil(c);
    let cmax = 256 / nwin + u64::from(256 % nwin != 0);
    let m = 1u64 << (cmax - 1);
    let k1 = (m + 1).div_ceil(32);
    let (k2, k3) = (k1.div_ceil(32), k1.div_ceil(32).div_ceil(32));
    let buckets = nwin * (m + 1) * BUCKET;
    let folds = nwin * (3 * k2 + 4 * k3) * BUCKET;
    // A set: keys, vals, skeys, svals, start, order, two level-1 fold arrays and CUB's temporary
    // (its alternate keys and values, 8 bytes an entry, and histograms: 16 an entry counted).
    let set = 3 * 4 * t.max(m) + 4 * t + 4 * (2 * m + 2) + 2 * k1 * BUCKET + 16 * t.max(m) + MIB;
    // msm_affine::rounds_t: odd and even rounds' x and y, the prefix products (64 additions a
    // thread), the slot map, lengths and bounds.
    let nb1 = t / 2 + m / 2 + 1;
    let nb2 = nb1 / 2 + m / 2 + 1;
    let threads = nb1.div_ceil(64).div_ceil(256) * 256;
    let rounds = 2 * nb1 * 48 + 2 * nb2 * 48 + 64 * threads * 48 + 4 * nb1 + 12 * (m + 2) + MIB;
    let slots = if host_points { 2 * t * G1 } else { 0 };
    buckets + folds + 2 * set + rounds + slots
}

/// Where a streamed proof's a, b, c are evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AbcAt {
    /// On CPU threads (the engine's synthesis threads) and uploaded: three domain vectors.
    Cpu,
    /// As `CircuitTiles`, with C and A's coset values parked in host memory while the witness
    /// is on the device (one domain slot beside it instead of two: ~4.3 GB less at 32 GiB),
    /// for four more domain vectors over PCIe (cuda/stage_h.cuh, `stage_h_lean`).
    CircuitTilesParked,
    /// On the device from the recorded circuit streamed from page-locked host memory in tiles
    /// of rows (the matrices cross PCIe once per proof, beside the witness).
    CircuitTiles,
    /// On the device from the recorded circuit kept there.
    CircuitOnDevice,
}

impl AbcAt {
    /// What runs for a circuit of footprint `f`: on the CPU when it has no recorded circuit.
    fn effective(self, f: &Footprint) -> AbcAt {
        if f.sizes.r1cs_bytes == 0 { AbcAt::Cpu } else { self }
    }

    pub fn name(self) -> &'static str {
        match self {
            AbcAt::Cpu => "on CPU threads",
            AbcAt::CircuitTilesParked => "from the recorded circuit streamed in tiles, C and A parked in host memory",
            AbcAt::CircuitTiles => "from the recorded circuit streamed in tiles",
            AbcAt::CircuitOnDevice => "from the recorded circuit on the device",
        }
    }
}

/// The streamed mode's choice for one circuit on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streamed {
    /// SRS sections kept on the device (`sec` bits); the others are streamed from host memory.
    pub resident: u32,
    /// Where a, b, c are evaluated.
    pub abc: AbcAt,
    /// ΣH beside the passes over the tiles (where both fit at once), else after them.
    pub h_beside_tiles: bool,
    /// Bases per streamed tile.
    pub tile: u64,
    /// Device bytes at most.
    pub need: u64,
}

impl Streamed {
    /// Where ΣH runs, in words.
    pub fn sigma_h(&self) -> &'static str {
        if self.h_beside_tiles { "ΣH beside the passes over the tiles" } else { "ΣH after the passes over the tiles" }
    }
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

/// What the streamed mode keeps on the device, in order, when the budget has room. First a, b,
/// c off the CPU: measured at 32 GiB on 16 cores (BENCHMARKS.md, 2026-12-05), a streamed proof
/// with a, b, c on the synthesis threads is CPU-bound (they cost ~2 s of 16 cores per
/// partition, and synthesis waits for host memory behind them), while the GPU idles 40 % of
/// the time — so the recorded circuit goes on the device where it fits, else streams in tiles
/// (7.4 GB over PCIe per partition, under the witness's upload and the NTTs). Then the SRS
/// sections by what they save per byte: the large G1 sections (their ones passes are bound by
/// PCIe), B_G1, then B_G2 and h (their sums are bound by arithmetic: sppark streams ΣH's bases
/// under its own work).
const KEEP_ORDER: [u32; 5] = [sec::L, sec::A, sec::B_G1, sec::B_G2, sec::H];

/// The resident mode with the most lanes (up to `max_lanes`) that fits `budget` bytes; else the
/// streamed mode: a, b, c where the budget allows it (on the device, in tiles, in tiles with two
/// vectors parked in host memory, else on the CPU), ΣH beside the passes over the tiles where
/// that fits, then the SRS sections that fit, in `KEEP_ORDER`; else TooSmall.
pub fn plan(f: &Footprint, budget: u64, max_lanes: usize) -> Plan {
    if let Some((lanes, need)) = (1..=max_lanes.max(1)).rev().map(|lanes| (lanes, f.resident(lanes))).find(|&(_, need)| need <= budget) {
        return Plan::Resident { lanes, need };
    }
    let need = f.streamed(0, AbcAt::Cpu);
    if need > budget {
        return Plan::TooSmall { need, budget };
    }
    let abc = [AbcAt::CircuitOnDevice, AbcAt::CircuitTiles, AbcAt::CircuitTilesParked, AbcAt::Cpu]
        .into_iter()
        .map(|abc| abc.effective(f))
        .find(|&abc| f.streamed(0, abc) <= budget)
        .unwrap_or(AbcAt::Cpu);
    // ΣH beside the passes over the tiles before any section is kept: the passes are bound by
    // PCIe and ΣH by arithmetic, so the pair costs about the longer of the two.
    // (Never with a dense query: its scalars go up through the pinned slots on the passes'
    // thread, cuda/stream.cuh.)
    let h_beside_tiles = !f.sizes.dense().contains(&true) && f.streamed_beside(0, abc) <= budget;
    let need = |resident: u32| if h_beside_tiles { f.streamed_beside(resident, abc) } else { f.streamed(resident, abc) };
    let mut resident = 0u32;
    for bit in KEEP_ORDER {
        if need(resident | bit) <= budget {
            resident |= bit;
        }
    }
    Plan::Streamed(Streamed { resident, abc, h_beside_tiles, tile: f.tile_points(), need: need(resident) })
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
        CircuitSizes { sections: [328, 134_217_727, 130_169_893, 129_753_620, 33_112_282, 33_112_282], r1cs_bytes: 7_380_000_000, r1cs_tile_bytes: 120_000_000, significant_seen: [0; 3] }
    }

    fn gb(x: u64) -> f64 {
        x as f64 / 1e9
    }

    /// Today's resident 32 GiB footprint as cuda/ sizes it: SRS 47.4 GB, a workspace of ~31 GB,
    /// ΣH scratch of ~21 GB (BENCHMARKS / cuda/HISTORY.md: ~107 GB for one lane, ~138 for two).
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
    /// The 32 GiB PoRep plans on 12, 16 and 24 GiB cards leave room for one rider of the real
    /// witness's mix (~2 % significant: BENCHMARKS.md 2026-12-06 11:00 measured riders on each),
    /// and a rider's bytes are its queries' (bitmaps, lists, gathered bases) plus the slack.
    #[test]
    fn plans_leave_room_for_a_rider() {
        let f = Footprint::of(&porep_32g());
        let [_, _, l, a, b, _] = porep_32g().sections;
        let words = (l + a + b).div_ceil(32);
        let two_percent = [l / 50, a / 50, b / 50];
        let rider = rider_bytes(words, two_percent);
        assert!(rider > GIB / 2 && rider < 2 * GIB, "{}", gb(rider));
        for card in [12, 16, 24] {
            let Plan::Streamed(p) = plan(&f, card * GIB, 2) else { panic!("{card} GiB") };
            assert!(card * GIB - p.need >= rider, "{card} GiB: room {} GB, a rider {} GB", gb(card * GIB - p.need), gb(rider));
        }
        assert_eq!(rider_bytes(0, [0; 3]), RIDER_SLACK);
        assert_eq!(rider_bytes(32, [1, 0, 1]) - RIDER_SLACK, 32 * 4 + 2 * (4 + FR + G1) + G2);
    }

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
                    let kept = f.streamed(p.resident, p.abc) - f.streamed(0, AbcAt::Cpu);
                    assert!(kept >= kept_before, "{card} GiB keeps less than a smaller card: {p:?}");
                    kept_before = kept;
                }
                p => panic!("{card} GiB: {p:?}"),
            }
        }
        // What each card class keeps (README's sizing table): a, b, c leave the CPU first —
        // 12 GiB evaluates them from the circuit streamed in tiles with C and A parked in host
        // memory (the witness and two slots do not fit), 16 GiB from the circuit in tiles,
        // 24 GiB from the circuit on the device; 32 GiB adds both B sections; 80 GB everything
        // but ΣH's big-MSM scratch.
        let keeps = |card: u64| match plan(&f, card * GIB, 2) {
            Plan::Streamed(p) => (p.resident, p.abc),
            p => panic!("{card} GiB: {p:?}"),
        };
        assert_eq!(keeps(12), (0, AbcAt::CircuitTilesParked));
        assert_eq!(keeps(16), (0, AbcAt::CircuitTiles));
        assert_eq!(keeps(24), (0, AbcAt::CircuitOnDevice));
        assert_eq!(keeps(32), (sec::B_G1 | sec::B_G2, AbcAt::CircuitOnDevice));
        assert_eq!(keeps(80), (sec::ALL, AbcAt::CircuitOnDevice));
        // What crosses PCIe per partition: all five sections and a, b, c with nothing kept (~60
        // GB); the witness and the streamed matrices instead of a, b, c at 16 GiB (1.3 GB less);
        // the witness alone at 24 GiB; a resident-sized streamed plan moves only the witness
        // and the queries.
        let pcie = |card: u64| match plan(&f, card * GIB, 2) {
            Plan::Streamed(p) => f.streamed_pcie_bytes(p.resident, p.abc),
            p => panic!("{card} GiB: {p:?}"),
        };
        let cpu = f.streamed_pcie_bytes(0, AbcAt::Cpu);
        assert!((59.0..62.0).contains(&gb(cpu)), "{}", gb(cpu));
        assert!((gb(cpu) - gb(pcie(16)) - 1.33).abs() < 0.05, "{} {}", gb(cpu), gb(pcie(16)));
        // Parked: C and A there and back, 4 × 4.3 GB more than the plain tiles.
        assert!((gb(pcie(12)) - gb(pcie(16)) - 17.18).abs() < 0.01, "{} {}", gb(pcie(12)), gb(pcie(16)));
        assert!((gb(pcie(16)) - gb(pcie(24)) - 7.38).abs() < 0.01, "{} {}", gb(pcie(16)), gb(pcie(24)));
        assert!(gb(pcie(80)) < 5.0, "{}", gb(pcie(80)));
        for card in [12, 16, 24, 32, 48, 80] {
            if let Plan::Streamed(p) = plan(&f, card * GIB, 2) {
                eprintln!(
                    "{card} GiB: kept {}; a, b, c {}; ΣH beside the tiles {}; need {:.1} GB, PCIe {:.1} GB per partition",
                    sec::names(p.resident),
                    p.abc.name(),
                    p.h_beside_tiles,
                    gb(p.need),
                    gb(f.streamed_pcie_bytes(p.resident, p.abc))
                );
            }
        }
        // Under ~11 GB not even that: the need it reports is the streamed mode's floor.
        match plan(&f, 10 * GIB, 2) {
            Plan::TooSmall { need, budget } => assert!(need > budget && need == f.streamed(0, AbcAt::Cpu) && (10.0..12.5).contains(&gb(need)), "{}", gb(need)),
            p => panic!("10 GiB: {p:?}"),
        }
        // A 2 KiB circuit fits any card.
        let small = CircuitSizes { sections: [40, 4_194_303, 2_685_673, 2_674_948, 685_522, 685_522], r1cs_bytes: 152_000_000, r1cs_tile_bytes: 2_000_000, significant_seen: [0; 3] };
        let f = Footprint::of(&small);
        assert!(matches!(plan(&f, 12 * GIB, 2), Plan::Resident { lanes: 2, .. }), "{:?}", plan(&f, 12 * GIB, 2));
        assert!(gb(f.resident(2)) < 5.0, "{}", gb(f.resident(2)));
        // Its tiles: an eighth of h (2^22 − 1 bases) rounded down to a power of two: 16 tiles.
        assert_eq!(f.tile_points(), 1 << 18);
    }

    /// A 32 GiB WindowPoSt partition (sections and recorded circuit measured 2026-12-07). Planned
    /// at the 5 % share its streamed plan on an H100's automatic budget kept four sections and
    /// the circuit, and the proof ran out of device memory: its witnesses are 99 % significant
    /// (Poseidon's field elements). Planned as seen, L, A and B are dense: their scalars go up as
    /// they are and no base is gathered, so the queries hold ~10 GB instead of ~41 GB of lists and
    /// gathered bases, and streamed piece by piece the partition fits a 16 GiB card. The counts
    /// seen never plan below the share (a PoRep witness: 1.6 %).
    #[test]
    fn dense_witnesses_are_planned_as_seen() {
        let sections = [25_840, 134_217_727, 126_902_376, 96_205_645, 91_925_767, 91_925_767];
        let mut c = CircuitSizes { sections, r1cs_bytes: 10_713_153_204, r1cs_tile_bytes: 350_000_000, significant_seen: [0; 3] };
        let h100 = 78_939 * MIB;
        let planned = Footprint::of(&c);
        assert_eq!(c.dense(), [false; 3]);
        c.significant_seen = [125_600_000, 95_200_000, 91_000_000];
        assert_eq!(c.dense(), [true; 3]);
        let seen = Footprint::of(&c);
        // The dense queries' scalars, 32 B a point, and nothing gathered.
        assert_eq!(seen.queries, (126_902_376 + 96_205_645 + 91_925_767) * FR);
        let (a, b) = (plan(&planned, h100, 2), plan(&seen, h100, 2));
        eprintln!("WindowPoSt 32 GiB on 78,939 MiB: planned at 5 %: {a:?}; as seen: {b:?}");
        assert!(matches!(b, Plan::Streamed(p) if p.need <= h100), "{b:?}");
        for gib in [24, 16] {
            let p = plan(&seen, gib * GIB, 2);
            eprintln!("... on {gib} GiB: {p:?}");
            assert!(matches!(p, Plan::Streamed(s) if s.need <= gib * GIB), "{p:?}");
        }
        // One proof's own counts (a classified witness, no recorded circuit): the same plan.
        let own = CircuitSizes { significant_seen: [0; 3], ..c }.seen([125_600_000, 95_200_000, 91_000_000]);
        assert_eq!(Footprint::of(&own), seen);
        assert_eq!(c.seen([7, 7, 7]), c, "fewer than seen: the most seen stays");
        c.significant_seen = [1_000, 1_000, 1_000];
        let few = Footprint::of(&c);
        assert_eq!((few.workspace, few.transient, plan(&few, h100, 2)), (planned.workspace, planned.transient, a), "fewer seen than the share: planned at the share");
    }

    /// A dense query is one from a quarter significant scalars and 1,024 points.
    #[test]
    fn dense_queries() {
        assert!(dense_query(256, 1024));
        assert!(!dense_query(255, 1024));
        assert!(!dense_query(1000, 1000), "too few points to matter");
        assert!(dense_query(125_600_000, 126_902_376));
        assert!(!dense_query(2_100_000, 130_000_000));
    }

    /// sppark's msm_t scratch, against its own arithmetic at 2^27: 8 batches of 2^24, 18-bit
    /// windows (15 of them): digits 1 GiB, temps 0.25 GiB, buckets.
    #[test]
    fn sppark_scratch() {
        let n = (1u64 << 27) - 1;
        assert!((1.6..1.8).contains(&gb(sppark_msm_bytes(n))), "{}", gb(sppark_msm_bytes(n)));
        assert_eq!(sppark_msm_bytes(0), 0);
    }

    /// sppark copying 2 KiB's 2^22 − 1 h bases from host memory (the streamed mode's ΣH below the
    /// big-MSM's size): 14-bit windows, 4 batches of 2^20 points, two batches' bases on the device.
    #[test]
    fn sppark_host_points() {
        let n = (1u64 << 22) - 1;
        assert_eq!(sppark_batches(n), (14, 4, 1 << 20));
        assert_eq!(sppark_host_points_bytes(n), 2 * (1 << 20) * G1);
        // One batch: its bases once.
        assert_eq!(sppark_host_points_bytes(1000), 1024 * G1);
        assert_eq!(sppark_host_points_bytes(0), 0);
    }

    /// The tiled big-MSM at 2^27 in tiles of 2^23: 20-bit windows (13), their buckets 1.3 GB,
    /// two sets ~0.6 GB, the rounds ~0.9 GB, two slots of bases 1.6 GB — less than sppark's
    /// Pippenger streaming host bases took (4.9 GB).
    #[test]
    fn tiled_msm_scratch() {
        let n = (1u64 << 27) - 1;
        let tile = sigma_h_tile(STREAM_TILE);
        assert_eq!(tile, 1 << 23);
        let host = tiled_msm_bytes(n, tile, true);
        let dev = tiled_msm_bytes(n, tile, false);
        assert_eq!(host - dev, 2 * tile * G1);
        assert!((4.0..4.7).contains(&gb(host)), "{}", gb(host));
        assert_eq!(tiled_msm_bytes(0, tile, true), 0);
        // A toy MSM: 12-bit windows (22 of them), one short tile.
        let small = tiled_msm_bytes(1000, 2048, true);
        assert!(small < 64 * MIB, "{small}");
    }

    /// Every circuit, however small, has a streamed plan below its resident one: budgets between
    /// them stream (what the GPU identity tests use to run the streamed mode at 2^10–2^20).
    #[test]
    fn small_circuits_stream_below_their_resident_footprint() {
        for lg in [10u64, 14, 18, 22] {
            let n = 1 << lg;
            let c = CircuitSizes { sections: [2, n - 1, n - 8, n - 9, n / 4, n / 4], r1cs_bytes: 0, r1cs_tile_bytes: 0, significant_seen: [0; 3] };
            let f = Footprint::of(&c);
            assert!(f.streamed(sec::ALL, AbcAt::Cpu) < f.resident(1), "2^{lg}: {} vs {}", f.streamed(sec::ALL, AbcAt::Cpu), f.resident(1));
            // (At the smallest sizes a whole section can cost less than its two tiles, so the
            // floor's plan may keep one.)
            assert!(matches!(plan(&f, f.streamed(0, AbcAt::Cpu), 2), Plan::Streamed(_)), "2^{lg}");
            assert!(matches!(plan(&f, f.resident(1) - 1, 2), Plan::Streamed(_)), "2^{lg}");
        }
    }

    /// A streamed circuit's tiles: an eighth of its rows, a power of two from 1024 to 2^22.
    #[test]
    fn r1cs_tiles() {
        assert_eq!(r1cs_tile_rows(2_687_961), 1 << 18);
        assert_eq!(r1cs_tile_rows(130_278_869), R1CS_TILE_ROWS);
        assert_eq!(r1cs_tile_rows(5000), 1024);
        assert_eq!(r1cs_tile_rows(1), 1024);
    }

    #[test]
    fn budgets() {
        assert_eq!(budget(Some(16 * GIB), 80 * GIB, 70 * GIB), 16 * GIB);
        assert_eq!(budget(Some(200 * GIB), 80 * GIB, 70 * GIB), 80 * GIB);
        assert_eq!(budget(None, 80 * GIB, 50 * GIB), 49 * GIB);
    }
}
