//! The C1 output of filecoin-ffi's `seal_commit_phase1`: parsed, validated against the sector
//! it claims, and prepared as the sector's partition circuits — full synthesis with each
//! partition's challenges on all threads (`challenges`), the recording, and the witness with its
//! SHA-256 computed natively (`native`).

use std::sync::Arc;

use filecoin_proofs::constants::DefaultPieceDomain;
use filecoin_proofs::types::{MerkleTreeTrait, VanillaSealProof};
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use storage_proofs_porep::stacked;

use super::{challenges, native, validate};
use crate::error::{Result, ResultExt, Status};
use crate::kinds::registry::{self, RegisteredSealProof};
use crate::kinds::CircuitId;
#[cfg(any(test, feature = "tools"))]
use crate::synth::upstream;
use crate::synth::{conclude, Assignment, PartitionCircuits, R1cs, Recorder, SizeHint, Witness};

/// What a C2 job proves, as read from the C1 output.
pub struct SealJobInputs {
    pub proof: RegisteredSealProof,
    pub comm_r: [u8; 32],
    pub comm_d: [u8; 32],
    pub seed: [u8; 32],
    pub ticket: [u8; 32],
    pub circuits: Arc<dyn PartitionCircuits>,
}

/// The registered proof a C1 output was made for (cheap: reads only that field).
pub fn c1_registered_proof(bytes: &[u8]) -> Result<RegisteredSealProof> {
    #[derive(serde::Deserialize)]
    struct Head {
        registered_proof: RegisteredSealProof,
    }
    if bytes.is_empty() {
        return Err(err!(InvalidInput, "C1 output is empty"));
    }
    let h: Head = serde_json::from_slice(bytes).status(Status::InvalidInput, "C1 output is not valid SealCommitPhase1Output JSON")?;
    Ok(h.registered_proof)
}

/// `prover_id` and `sector_id` must be the ones the sector was sealed with: the replica id in
/// the C1 output is checked against them here, so a mix-up fails at submit, not after proving.
pub fn parse_c1(bytes: &[u8], prover_id: &[u8; 32], sector_id: u64) -> Result<SealJobInputs> {
    let proof = c1_registered_proof(bytes)?;
    CircuitId::Seal(proof).ensure_supported()?;
    let max = validate::max_c1_bytes(proof)?;
    if bytes.len() > max {
        return Err(err!(
            InvalidInput,
            "C1 output is {} bytes; a {} C1 output is at most {max}",
            bytes.len(),
            registry::seal_name(proof)
        ));
    }
    let json: serde_json::Value =
        serde_json::from_slice(bytes).status(Status::InvalidInput, "C1 output is not valid SealCommitPhase1Output JSON")?;
    validate::check(&json, proof)?;
    let c1: SealCommitPhase1Output =
        serde_json::from_value(json).status(Status::InvalidInput, "C1 output is not valid SealCommitPhase1Output JSON")?;
    for (what, v) in [("comm_r", &c1.comm_r), ("comm_d", &c1.comm_d), ("seed", &c1.seed)] {
        if *v == [0u8; 32] {
            return Err(err!(InvalidInput, "C1 output has an all-zero {what}"));
        }
    }
    let (comm_r, comm_d, seed, ticket) = (c1.comm_r, c1.comm_d, c1.seed, c1.ticket);
    let circuits = with_tree_shape!(proof, prepare, c1, prover_id, sector_id)?;
    Ok(SealJobInputs { proof, comm_r, comm_d, seed, ticket, circuits })
}

struct StackedPartitions<Tree: 'static + MerkleTreeTrait> {
    proof: RegisteredSealProof,
    public_inputs: stacked::PublicInputs<<Tree::Hasher as filecoin_hashers::Hasher>::Domain, DefaultPieceDomain>,
    /// What upstream's circuit is built from (its reference paths only).
    #[cfg(any(test, feature = "tools"))]
    vanilla_params: stacked::PublicParams<Tree>,
    vanilla_proofs: Vec<Vec<VanillaSealProof<Tree>>>,
}

fn prepare<Tree: 'static + MerkleTreeTrait>(
    c1: SealCommitPhase1Output,
    prover_id: &[u8; 32],
    sector_id: u64,
) -> Result<Arc<dyn PartitionCircuits>> {
    let proof = c1.registered_proof;
    let config = proof.as_v1_config();
    let vanilla_proofs: Vec<Vec<VanillaSealProof<Tree>>> = c1.vanilla_proofs.try_into().map_err(|e: anyhow::Error| {
        err!(InvalidInput, "C1 vanilla proofs do not match {}: {e:#}", registry::seal_name(proof))
    })?;
    let want = usize::from(config.partitions);
    if vanilla_proofs.len() != want || vanilla_proofs.iter().any(|p| p.is_empty()) {
        return Err(err!(
            InvalidInput,
            "C1 output has {} partitions of vanilla proofs ({} empty); {} needs {} non-empty",
            vanilla_proofs.len(),
            vanilla_proofs.iter().filter(|p| p.is_empty()).count(),
            registry::seal_name(proof),
            want
        ));
    }
    let comm_r = filecoin_proofs::as_safe_commitment(&c1.comm_r, "comm_r").status(Status::InvalidInput, "C1 output")?;
    let comm_d: DefaultPieceDomain =
        filecoin_proofs::as_safe_commitment(&c1.comm_d, "comm_d").status(Status::InvalidInput, "C1 output")?;
    #[cfg(any(test, feature = "tools"))]
    let vanilla_params = filecoin_proofs::parameters::public_params::<Tree>(&config).status(Status::Internal, "public params")?;
    let replica_id: blstrs::Scalar = c1.replica_id.into();
    let expected = stacked::generate_replica_id::<Tree::Hasher, _>(prover_id, sector_id, &c1.ticket, comm_d, &config.porep_id);
    let expected: blstrs::Scalar = expected.into();
    if expected != replica_id {
        return Err(err!(
            InvalidInput,
            "C1 output ({}) does not match sector {sector_id} of this prover id: its replica id differs \
             (wrong prover id or sector id, or a C1 of another proof type)",
            registry::seal_name(proof)
        ));
    }
    let public_inputs = stacked::PublicInputs {
        replica_id: replica_id.into(),
        tau: Some(stacked::Tau { comm_d, comm_r }),
        k: None,
        seed: Some(c1.seed),
    };
    Ok(Arc::new(StackedPartitions::<Tree> {
        proof,
        public_inputs,
        #[cfg(any(test, feature = "tools"))]
        vanilla_params,
        vanilla_proofs,
    }))
}

impl<Tree: 'static + MerkleTreeTrait> PartitionCircuits for StackedPartitions<Tree> {
    fn partitions(&self) -> usize {
        self.vanilla_proofs.len()
    }

    fn synthesize(&self, k: usize, hint: SizeHint) -> Result<Assignment> {
        let proofs = self.vanilla_proofs.get(k).ok_or_else(|| err!(Internal, "partition {k} out of range"))?;
        let cs = Assignment::begin(hint).status(Status::Synthesis, "allocating the assignment")?;
        challenges::synthesize(cs, &self.public_inputs, proofs, hint).status(Status::Synthesis, &format!("synthesizing partition {k}"))
    }

    fn witness(&self, k: usize, hint: SizeHint) -> Result<Witness> {
        let proofs = self.vanilla_proofs.get(k).ok_or_else(|| err!(Internal, "partition {k} out of range"))?;
        native::witness(&self.public_inputs, proofs, hint)
            .status(Status::Synthesis, &format!("synthesizing the witness of partition {k}"))
    }

    fn record(&self, k: usize, hint: SizeHint, cancelled: &(dyn Fn() -> bool + Sync)) -> Result<R1cs> {
        let proofs = self.vanilla_proofs.get(k).ok_or_else(|| err!(Internal, "partition {k} out of range"))?;
        let res = challenges::synthesize(Recorder::new(CircuitId::Seal(self.proof), hint, cancelled), &self.public_inputs, proofs, hint);
        conclude(res, CircuitId::Seal(self.proof), cancelled)
    }

    fn recordable(&self) -> bool {
        true
    }

    fn sub_circuits(&self) -> usize {
        self.vanilla_proofs.first().map_or(1, |challenges| challenges.len().max(1))
    }

    #[cfg(any(test, feature = "tools"))]
    fn upstream(&self) -> Option<&dyn upstream::Upstream> {
        Some(self)
    }
}

#[cfg(any(test, feature = "tools"))]
impl<Tree: 'static + MerkleTreeTrait> upstream::Upstream for StackedPartitions<Tree> {
    fn synthesize_sequential(&self, k: usize, hint: SizeHint) -> Result<Assignment> {
        upstream::sequential(self.circuit(k)?, k, hint)
    }

    fn witness_sequential(&self, k: usize) -> Result<(Vec<blstrs::Scalar>, Vec<blstrs::Scalar>)> {
        upstream::witness_only(self.circuit(k)?, k)
    }

    fn bellperson_reference(
        &self,
        k: usize,
        params: &bellperson::groth16::Parameters<blstrs::Bls12>,
        r: blstrs::Scalar,
        s: blstrs::Scalar,
    ) -> Result<bellperson::groth16::Proof<blstrs::Bls12>> {
        upstream::reference_proof(self.circuit(k)?, params, r, s)
    }
}

#[cfg(any(test, feature = "tools"))]
impl<Tree: 'static + MerkleTreeTrait> StackedPartitions<Tree> {
    /// Partition `k`'s circuit as upstream's `StackedCompound::circuit` builds it.
    fn circuit(&self, k: usize) -> Result<stacked::StackedCircuit<Tree, filecoin_proofs::constants::DefaultPieceHasher>> {
        use filecoin_proofs::constants::DefaultPieceHasher;
        use storage_proofs_core::compound_proof::CompoundProof;
        use storage_proofs_porep::stacked::{StackedCompound, StackedDrg};
        let proofs = self
            .vanilla_proofs
            .get(k)
            .ok_or_else(|| err!(Internal, "partition {k} out of range"))?;
        <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
            StackedDrg<'_, Tree, DefaultPieceHasher>,
            _,
        >>::circuit(&self.public_inputs, Default::default(), proofs, &self.vanilla_params, Some(k))
        .status(Status::Synthesis, "building the circuit")
    }
}
