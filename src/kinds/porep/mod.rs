//! PoRep C2, the whole kind in this folder: the C1 output of filecoin-ffi's
//! `seal_commit_phase1` parsed and validated (`c1`, `validate`), its partition circuits with the
//! recorded path (`challenges`, the native witness in `native`), the circuit's shape
//! ([`blank_circuit`]), and its statement and verification (`verify`).
//!
//! Every kind looks like this — a folder (or file) here implementing
//! [`crate::synth::PartitionCircuits`] and [`super::Statement`] for its parsed request, plus its
//! numbering in [`super::registry`] and identity in [`super::CircuitId`] — and the engine names
//! none of them.

mod c1;
mod challenges;
pub(crate) mod native;
pub mod validate;
pub mod verify;

use bellperson::groth16::PreparedVerifyingKey;
use blstrs::Bls12;
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::types::MerkleTreeTrait;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_porep::stacked::{StackedCircuit, StackedCompound, StackedDrg};

pub use c1::{c1_registered_proof, parse_c1, SealJobInputs};
pub use verify::{verify_seal, SealStatement};

use super::registry::RegisteredSealProof;
use super::{CircuitId, JobInputs, ProofKind, Statement};
use crate::error::{Result, ResultExt, Status};

pub(super) fn parse(c1_json: &[u8], prover_id: &[u8; 32], sector_id: u64) -> Result<JobInputs> {
    let inputs = parse_c1(c1_json, prover_id, sector_id)?;
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
        verify_seal(pvk, self, proof)
    }
}

/// `proof`'s partition circuit without a witness: what params are generated from
/// (`fixtures`), what `synth::shape` counts and what `R1cs::record` records.
pub(crate) fn blank_circuit<Tree: 'static + MerkleTreeTrait>(proof: RegisteredSealProof) -> Result<StackedCircuit<Tree, DefaultPieceHasher>> {
    let config = proof.as_v1_config();
    let public_params = filecoin_proofs::parameters::public_params::<Tree>(&config).status(Status::Internal, "public params")?;
    Ok(<StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::blank_circuit(&public_params))
}
