//! PoRep's statement and its verification with a resident verifying key — the same checks as filecoin-proofs'
//! `verify_seal` (replica id from prover id / sector id / ticket / comm_d, per-partition public
//! inputs, batch Groth16 verification), without its global parameter cache.

use bellperson::groth16::PreparedVerifyingKey;
use blstrs::Bls12;
use filecoin_proofs::constants::{DefaultPieceDomain, DefaultPieceHasher};
use filecoin_proofs::types::MerkleTreeTrait;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::multi_proof::MultiProof;
use storage_proofs_porep::stacked::{self, ChallengeRequirements, StackedCompound, StackedDrg};

use crate::error::{Result, ResultExt, Status};
use crate::kinds::registry::{self, RegisteredSealProof};

/// Everything a seal proof is checked against.
#[derive(Debug, Clone, Copy)]
pub struct SealStatement {
    pub proof_type: RegisteredSealProof,
    pub comm_r: [u8; 32],
    pub comm_d: [u8; 32],
    pub prover_id: [u8; 32],
    pub sector_id: u64,
    pub ticket: [u8; 32],
    pub seed: [u8; 32],
}

/// Ok(true) when `proof` is a valid seal proof of `st`; Ok(false) when it is well-formed but
/// does not verify; Err for malformed input.
pub fn verify_seal(pvk: &PreparedVerifyingKey<Bls12>, st: &SealStatement, proof: &[u8]) -> Result<bool> {
    crate::kinds::CircuitId::Seal(st.proof_type).ensure_supported()?;
    let want = st.proof_type.single_partition_proof_len() * usize::from(st.proof_type.partitions());
    if proof.len() != want {
        return Err(err!(
            InvalidArgument,
            "proof is {} bytes; {} proofs are {} bytes",
            proof.len(),
            registry::seal_name(st.proof_type),
            want
        ));
    }
    for (what, v) in [("comm_r", &st.comm_r), ("comm_d", &st.comm_d)] {
        if *v == [0u8; 32] {
            return Err(err!(InvalidArgument, "all-zero {what}"));
        }
    }
    with_tree_shape!(st.proof_type, verify_tree, pvk, st, proof)
}

fn verify_tree<Tree: 'static + MerkleTreeTrait>(
    pvk: &PreparedVerifyingKey<Bls12>,
    st: &SealStatement,
    proof: &[u8],
) -> Result<bool> {
    let config = st.proof_type.as_v1_config();
    let comm_r: <Tree::Hasher as filecoin_hashers::Hasher>::Domain =
        filecoin_proofs::as_safe_commitment(&st.comm_r, "comm_r").status(Status::InvalidArgument, "verify")?;
    let comm_d: DefaultPieceDomain =
        filecoin_proofs::as_safe_commitment(&st.comm_d, "comm_d").status(Status::InvalidArgument, "verify")?;
    let replica_id = stacked::generate_replica_id::<Tree::Hasher, _>(
        &st.prover_id,
        st.sector_id,
        &st.ticket,
        comm_d,
        &config.porep_id,
    );
    let setup = compound_proof::SetupParams {
        vanilla_params: filecoin_proofs::parameters::setup_params(&config).status(Status::Internal, "setup params")?,
        partitions: Some(usize::from(config.partitions)),
        priority: false,
    };
    let public_params = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        _,
    >>::setup(&setup)
    .status(Status::Internal, "compound public params")?;
    let public_inputs = stacked::PublicInputs::<<Tree::Hasher as filecoin_hashers::Hasher>::Domain, DefaultPieceDomain> {
        replica_id,
        tau: Some(stacked::Tau { comm_r, comm_d }),
        seed: Some(st.seed),
        k: None,
    };
    let multi = MultiProof::new_from_bytes(Some(usize::from(config.partitions)), proof, pvk)
        .status(Status::InvalidArgument, "proof bytes are not valid Groth16 proofs")?;
    StackedCompound::verify(
        &public_params,
        &public_inputs,
        &multi,
        &ChallengeRequirements { minimum_challenges: config.minimum_challenges() },
    )
    .status(Status::Verification, "verification")
}
