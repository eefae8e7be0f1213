//! PoRep C2: the C1 output of filecoin-ffi's `seal_commit_phase1`, proved partition by partition
//! (synthesis in `synth`), checked with `verify::verify_seal`.

use bellperson::groth16::PreparedVerifyingKey;
use blstrs::Bls12;

use super::{CircuitId, JobInputs, ProofKind, Statement};
use crate::error::Result;
use crate::synth::SealJobInputs;
use crate::verify::SealStatement;

pub(super) fn parse(c1_json: &[u8], prover_id: &[u8; 32], sector_id: u64) -> Result<JobInputs> {
    let inputs = crate::synth::parse_c1(c1_json, prover_id, sector_id)?;
    Ok(seal_inputs(inputs, *prover_id, sector_id))
}

/// A seal job's inputs as the engine proves them, checked against its sector.
pub fn seal_inputs(inputs: SealJobInputs, prover_id: [u8; 32], sector_id: u64) -> JobInputs {
    let statement = SealStatement {
        proof_type: inputs.proof,
        comm_r: inputs.comm_r,
        comm_d: inputs.comm_d,
        prover_id,
        sector_id,
        ticket: inputs.ticket,
        seed: inputs.seed,
    };
    JobInputs {
        kind: ProofKind::PoRep,
        circuit: CircuitId::Seal(inputs.proof),
        circuits: inputs.circuits,
        statement: Box::new(statement),
        subject: format!("sector {sector_id}"),
    }
}

impl Statement for SealStatement {
    fn verify(&self, pvk: &PreparedVerifyingKey<Bls12>, proof: &[u8]) -> Result<bool> {
        crate::verify::verify_seal(pvk, self, proof)
    }
}
