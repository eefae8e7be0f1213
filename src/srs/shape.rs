//! Section sizes a params file must have for its circuit, checked from the section headers
//! before anything is decoded: a params file of another circuit (another kind's, another size's,
//! or an edited one) is refused at load instead of failing every job in the prover.
//!
//! The table is what `synth::shape::count_circuit` gives for each circuit's blank partition
//! circuit, counted by `cuzk-fixture --shape` (filecoin-proofs 19.x). Registered proofs that
//! share a circuit share a row: V1, V1_1 and SyntheticPoRep seal proofs of one size; V1 and
//! V1_2 WindowPoSt (the API version changes only which leaves are challenged). `tests/srs_shape.rs`
//! recounts the small sizes of every kind and checks the 2 KiB fixture params against the table.

use std::path::Path;

use super::decode::Section;
use crate::error::Result;
use crate::kinds::{CircuitId, ProofKind};

/// (kind, sector size, [ic, h, l, a, b_g1, b_g2]).
const SECTIONS: &[(ProofKind, u64, [usize; 6])] = &[
    (ProofKind::PoRep, 2 << 10, [40, 4_194_303, 2_685_673, 2_674_948, 685_522, 685_522]),
    (ProofKind::PoRep, 8 << 20, [40, 4_194_303, 3_842_449, 3_815_036, 1_011_290, 1_011_290]),
    (ProofKind::PoRep, 512 << 20, [40, 8_388_607, 4_420_837, 4_385_080, 1_174_174, 1_174_174]),
    (ProofKind::PoRep, 32 << 30, [328, 134_217_727, 130_169_893, 129_753_620, 33_112_282, 33_112_282]),
    (ProofKind::PoRep, 64 << 30, [328, 134_217_727, 131_076_643, 130_637_870, 33_386_944, 33_386_944]),
    (ProofKind::WinningPoSt, 2 << 10, [133, 131_071, 91_674, 69_433, 66_793, 66_793]),
    (ProofKind::WinningPoSt, 8 << 20, [133, 262_143, 233_442, 176_881, 169_489, 169_489]),
    (ProofKind::WinningPoSt, 512 << 20, [133, 524_287, 304_326, 230_605, 220_837, 220_837]),
    (ProofKind::WinningPoSt, 32 << 30, [133, 524_287, 375_210, 284_329, 272_185, 272_185]),
    (ProofKind::WinningPoSt, 64 << 30, [133, 524_287, 396_000, 299_971, 287_695, 287_695]),
    (ProofKind::WindowPoSt, 2 << 10, [23, 32_767, 22_128, 16_793, 16_029, 16_029]),
    (ProofKind::WindowPoSt, 8 << 20, [23, 65_535, 65_088, 49_353, 47_149, 47_149]),
    (ProofKind::WindowPoSt, 512 << 20, [23, 131_071, 86_568, 65_633, 62_709, 62_709]),
    (ProofKind::WindowPoSt, 32 << 30, [25_840, 134_217_727, 126_902_376, 96_205_645, 91_925_767, 91_925_767]),
    (ProofKind::WindowPoSt, 64 << 30, [25_301, 134_217_727, 131_500_200, 99_649_801, 95_413_201, 95_413_201]),
    (ProofKind::SnapDeals, 2 << 10, [5, 2_097_151, 1_703_569, 1_697_194, 444_404, 444_404]),
    (ProofKind::SnapDeals, 8 << 20, [5, 16_777_215, 9_998_039, 9_981_020, 2_567_922, 2_567_922]),
    (ProofKind::SnapDeals, 512 << 20, [5, 67_108_863, 57_401_314, 57_212_322, 14_916_880, 14_916_880]),
    (ProofKind::SnapDeals, 32 << 30, [5, 134_217_727, 80_978_488, 80_743_586, 20_983_608, 20_983_608]),
    (ProofKind::SnapDeals, 64 << 30, [5, 134_217_727, 84_931_220, 84_682_730, 22_012_684, 22_012_684]),
];

/// The section sizes `circuit`'s params must have (ic, h, l, a, b_g1, b_g2). A circuit of a
/// size the table does not know is an error.
pub fn expected(circuit: CircuitId) -> Result<[usize; 6]> {
    let (kind, size) = (circuit.kind(), circuit.sector_size());
    SECTIONS
        .iter()
        .find(|(k, s, _)| *k == kind && *s == size)
        .map(|(_, _, c)| *c)
        .ok_or_else(|| err!(Unsupported, "no known circuit shape for {} (sector size not supported)", circuit.name()))
}

/// Capacity hints for synthesizing `circuit` before its SRS exists (what `Srs::size_hint` gives
/// once it does): from the section sizes its params must have.
pub fn expected_size_hint(circuit: CircuitId) -> Result<crate::synth::SizeHint> {
    let [ic, h, l, ..] = expected(circuit)?;
    Ok(crate::synth::SizeHint { constraints: h + 1, inputs: ic, aux: l })
}

/// Refuse a params file whose sections do not have the `want` points of `proof`'s circuit.
pub fn check(circuit: CircuitId, sections: &[Section; 6], want: [usize; 6], path: &Path) -> Result<()> {
    for (s, w) in sections.iter().zip(want) {
        if s.count != w {
            return Err(err!(
                SrsLoad,
                "{}: not the params of {}: section {} has {} points, its circuit needs {}",
                path.display(),
                circuit.name(),
                s.name,
                s.count,
                w
            ));
        }
    }
    Ok(())
}

/// The section sizes of a seal proof's params (ic, h, l, a, b_g1, b_g2), if its size is known.
pub fn expected_seal(proof: crate::kinds::registry::RegisteredSealProof) -> Option<[usize; 6]> {
    expected(proof.into()).ok()
}
