//! Device memory: how much one circuit's proofs need on a GPU, and what a device's budget lets
//! the backend run. The CUDA backend keeps a circuit's SRS bases and recorded circuit resident
//! on the device, a workspace per lane (stage H's a/b/c slots, the copy of h the folded ΣH reads,
//! the witness, the sparse queries), and borrows its MSM scratch from the device's pool one
//! proof at a time (the MSM gate). [`Footprint`] sizes each from the circuit's section counts —
//! the formulas of `cuda/` (stage_h.cuh, sparse.cuh, msm_big.cuh, sum_ones.cuh), with the share
//! of significant scalars a planning assumption — and [`plan`] picks the most lanes that fit a
//! budget, or says that the circuit does not fit at all.
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

/// Planning share of scalars equal to one (PoRep witnesses are half bits: ~47 %).
const ONES_SHARE_PERCENT: u64 = 50;

/// ΣH runs the one-pass big-MSM from this many points (cuda/sparse.cuh `MSM_BIG_MIN_POINTS`),
/// sppark's Pippenger below.
const MSM_BIG_MIN_POINTS: u64 = 1 << 25;

/// The G1 sums of ones run by affine rounds from this many bases of a query (cuda/sparse.cuh).
const ONES_ROUNDS_MIN_BASES: u64 = 1 << 24;

/// Bytes: G1 and G2 affine points, field elements.
const G1: u64 = 96;
const G2: u64 = 192;
const FR: u64 = 32;

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
}

impl Footprint {
    /// The footprint of `srs`'s proofs, with `r1cs` when a, b, c come from a recorded circuit.
    pub fn of_srs(srs: &Srs, r1cs: Option<&crate::synth::R1cs>) -> Footprint {
        Footprint::of(&CircuitSizes::of(srs, r1cs.map_or(0, |r| r.stats().bytes as u64)))
    }

    pub fn of(c: &CircuitSizes) -> Footprint {
        let [_, h, l, a, b, b2] = c.sections;
        let n = c.domain();
        let share = |x: u64, pct: u64| x * pct / 100;
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
        Footprint { srs, r1cs: c.r1cs_bytes, workspace, transient: sum_h.max(ones) }
    }

    /// Bytes with `lanes` lanes (resident SRS and circuit, a workspace each, one proof's MSM
    /// scratch at a time), the context reserve included.
    pub fn resident(&self, lanes: usize) -> u64 {
        self.srs + self.r1cs + lanes as u64 * self.workspace + self.transient + CONTEXT_RESERVE
    }
}

/// What a device does with a circuit under its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// SRS and recorded circuit resident, `lanes` partitions at once; `need` bytes at most.
    Resident { lanes: usize, need: u64 },
    /// Not even one lane fits: `need` bytes for one, over `budget`.
    TooSmall { need: u64, budget: u64 },
}

/// The most lanes (up to `max_lanes`) whose resident footprint fits `budget` bytes.
pub fn plan(f: &Footprint, budget: u64, max_lanes: usize) -> Plan {
    (1..=max_lanes.max(1))
        .rev()
        .map(|lanes| (lanes, f.resident(lanes)))
        .find(|&(_, need)| need <= budget)
        .map_or(Plan::TooSmall { need: f.resident(1), budget }, |(lanes, need)| Plan::Resident { lanes, need })
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
        for card in [12, 16, 24, 32, 48, 80] {
            match plan(&f, card * GIB, 2) {
                Plan::TooSmall { need, budget } => assert!(need > budget && budget == card * GIB),
                p => panic!("{card} GiB: {p:?}"),
            }
        }
        // A 2 KiB circuit fits any card.
        let small = CircuitSizes { sections: [40, 4_194_303, 2_685_673, 2_674_948, 685_522, 685_522], r1cs_bytes: 152_000_000 };
        let f = Footprint::of(&small);
        assert!(matches!(plan(&f, 12 * GIB, 2), Plan::Resident { lanes: 2, .. }), "{:?}", plan(&f, 12 * GIB, 2));
        assert!(gb(f.resident(2)) < 5.0, "{}", gb(f.resident(2)));
    }

    #[test]
    fn budgets() {
        assert_eq!(budget(Some(16 * GIB), 80 * GIB, 70 * GIB), 16 * GIB);
        assert_eq!(budget(Some(200 * GIB), 80 * GIB, 70 * GIB), 80 * GIB);
        assert_eq!(budget(None, 80 * GIB, 50 * GIB), 49 * GIB);
    }
}
