//! What is left of a CUDA proof once its device work is done (the proof's tail, run by the
//! engine's finisher thread): the proof's assembly.

use std::time::Instant;

use bellperson::groth16::Proof;
use blstrs::{Bls12, G1Projective, G2Projective, Scalar};

use super::witness::Witness;
use crate::error::Result;
use crate::prover::assemble::{assemble, MsmSums};
use crate::prover::{Garbage, PartitionProof, PhaseTimings, ProofTail};
use crate::srs::Srs;

/// The GPU's share of one proof, before assembly: the proof's tail ([`ProofTail`]).
pub struct Started {
    /// h (with the significant L and r·B_G1 terms folded in), L, A, B_G1.
    pub(super) sums: [G1Projective; 4],
    pub(super) r: Scalar,
    pub(super) s: Scalar,
    pub(super) b_g2: G2Projective,
    pub(super) witness: Witness,
    pub(super) phases: PhaseTimings,
    pub(super) garbage: Garbage,
    pub(super) started: Instant,
}

impl ProofTail for Started {
    /// The proof's assembly.
    fn finish(self: Box<Self>, srs: &Srs) -> Result<PartitionProof> {
        let Started { sums, r, s, b_g2, witness, mut phases, mut garbage, started } = *self;
        let m = MsmSums { h: sums[0], l: sums[1], a: sums[2], b_g1: sums[3], b_g2 };
        let proof: Proof<Bls12> = phases.time("assemble", || assemble(srs, &m, r, s))?;
        phases.push("backend_wall", started.elapsed());
        let wbytes = (32 * (witness.input.capacity() + witness.aux.capacity())) as u64;
        garbage.push((Box::new(witness), wbytes));
        Ok(PartitionProof { proof, phases, garbage, cpu_fallback: false })
    }
}
