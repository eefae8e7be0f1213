//! Section sizes a params file must have for its registered proof, checked from the section
//! headers before anything is decoded: a params file of another circuit (or an edited one) is
//! refused at load instead of failing every job after synthesis.
//!
//! The table is what `synth::shape::count` gives for each sector size's blank partition circuit
//! (V1, V1_1 and SyntheticPoRep of one size share the circuit); `tests/srs_shape.rs` recounts
//! the small sizes and checks the 2 KiB fixture params against the table.

use std::path::Path;

use super::decode::Section;
use crate::error::Result;
use crate::kinds::CircuitId;

/// (sector size, [ic, h, l, a, b_g1, b_g2]), counted by `cuzk-fixture --shape` (filecoin-proofs 19.x).
const SECTIONS: &[(u64, [usize; 6])] = &[
    (2 << 10, [40, 4_194_303, 2_685_673, 2_674_948, 685_522, 685_522]),
    (8 << 20, [40, 4_194_303, 3_842_449, 3_815_036, 1_011_290, 1_011_290]),
    (512 << 20, [40, 8_388_607, 4_420_837, 4_385_080, 1_174_174, 1_174_174]),
    (32 << 30, [328, 134_217_727, 130_169_893, 129_753_620, 33_112_282, 33_112_282]),
    (64 << 30, [328, 134_217_727, 131_076_643, 130_637_870, 33_386_944, 33_386_944]),
];

/// The section sizes `circuit`'s params must have (ic, h, l, a, b_g1, b_g2): known for every
/// seal circuit; None for the PoSt and update circuits (their params are checked against their
/// `.vk`, and every proof against the verifier). A seal proof of an unknown size is an error.
pub fn expected(circuit: CircuitId) -> Result<Option<[usize; 6]>> {
    let size = circuit.sector_size();
    match circuit {
        CircuitId::Seal(_) => match SECTIONS.iter().find(|(s, _)| *s == size) {
            Some((_, c)) => Ok(Some(*c)),
            None => Err(err!(Unsupported, "no known circuit shape for {} (sector size not supported)", circuit.name())),
        },
        _ => Ok(None),
    }
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
pub fn expected_seal(proof: crate::registry::RegisteredSealProof) -> Option<[usize; 6]> {
    expected(proof.into()).ok().flatten()
}
