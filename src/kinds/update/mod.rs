//! SnapDeals (empty-sector update) from its partition vanilla proofs, as filecoin-proofs'
//! `generate_empty_sector_update_proof_with_vanilla` takes them: each partition's
//! `EmptySectorUpdateCircuit`, checked against comm_r_old, comm_r_new and comm_d_new, its
//! challenges synthesized on all threads (`forks`).

mod forks;

use std::sync::Arc;

use filecoin_proofs::constants::DefaultPieceDomain;
use filecoin_proofs::types::{MerkleTreeTrait, SectorUpdateConfig};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_core::merkle::MerkleProof;
use storage_proofs_update::constants::{TreeDArity, TreeDHasher, TreeRDomain, TreeRHasher};
use storage_proofs_update::{EmptySectorUpdate, EmptySectorUpdateCircuit, EmptySectorUpdateCompound, PartitionProof, PublicInputs};

use super::compound::{decode_all, BuildCircuit, Compound, PartitionInputs};
use super::vanilla::{self, TreeShape};
use super::{CircuitId, JobInputs, ProofKind, RegisteredUpdateProof, Statement};
use crate::error::{Result, ResultExt, Status};
use crate::synth::{Forkable, SizeHint, Witness};

/// A SnapDeals request as filecoin-ffi takes it.
pub struct UpdateRequest<'a> {
    pub proof: RegisteredUpdateProof,
    /// One `PartitionProof` per update partition, bincode-serialized (`PartitionProofBytes`).
    pub vanilla_proofs: Vec<&'a [u8]>,
    pub comm_r_old: [u8; 32],
    pub comm_r_new: [u8; 32],
    pub comm_d_new: [u8; 32],
}

/// What a SnapDeals proof is checked against.
#[derive(Debug, Clone, Copy)]
pub struct UpdateCommitments {
    pub comm_r_old: [u8; 32],
    pub comm_r_new: [u8; 32],
    pub comm_d_new: [u8; 32],
}

impl UpdateRequest<'_> {
    pub(super) fn digest_into(&self, field: &mut impl FnMut(&[u8])) {
        field(&super::registry::update_to_number(self.proof).to_le_bytes());
        field(&self.comm_r_old);
        field(&self.comm_r_new);
        field(&self.comm_d_new);
        field(&(self.vanilla_proofs.len() as u64).to_le_bytes());
        for v in &self.vanilla_proofs {
            field(v);
        }
    }

    fn commitments(&self) -> UpdateCommitments {
        UpdateCommitments { comm_r_old: self.comm_r_old, comm_r_new: self.comm_r_new, comm_d_new: self.comm_d_new }
    }
}

/// The parameter-cache identifier filecoin-proofs files the update params under
/// (`empty-sector-update-…`). Not `RegisteredUpdateProof::circuit_identifier`: in
/// filecoin-proofs-api 19.1 that returns the sector's PoRep identifier.
pub(super) fn identifier(proof: RegisteredUpdateProof) -> Result<String> {
    with_tree_shape!(proof, identifier_of, proof)
}

fn identifier_of<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(proof: RegisteredUpdateProof) -> Result<String> {
    use storage_proofs_core::parameter_cache::CacheableParameters;
    let pp = storage_proofs_update::PublicParams::from_sector_size(u64::from(proof.sector_size()));
    Ok(<EmptySectorUpdateCompound<Tree> as CacheableParameters<EmptySectorUpdateCircuit<Tree>, _>>::cache_identifier(&pp))
}

pub(super) fn parse(r: &UpdateRequest<'_>) -> Result<JobInputs> {
    with_tree_shape!(r.proof, prepare, r)
}

/// What a SnapDeals proof is checked against (upstream's `verify_empty_sector_update_proof`).
pub fn update_statement(proof: RegisteredUpdateProof, c: &UpdateCommitments) -> Result<Box<dyn Statement>> {
    with_tree_shape!(proof, statement, proof, c)
}

struct Setup<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> {
    pub_inputs: PublicInputs,
    pub_params: compound_proof::PublicParams<'static, EmptySectorUpdate<Tree>>,
}

fn setup<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(proof: RegisteredUpdateProof, c: &UpdateCommitments) -> Result<Setup<Tree>> {
    let config = SectorUpdateConfig::from_porep_config(&proof.as_v1_config());
    let pub_inputs = PublicInputs {
        k: usize::from(config.update_partitions),
        comm_r_old: vanilla::commitment::<TreeRDomain>(&c.comm_r_old, "comm_r_old")?,
        comm_d_new: vanilla::commitment::<DefaultPieceDomain>(&c.comm_d_new, "comm_d_new")?,
        comm_r_new: vanilla::commitment::<TreeRDomain>(&c.comm_r_new, "comm_r_new")?,
        h: config.h,
    };
    Ok(Setup { pub_inputs, pub_params: public_params(&config)? })
}

/// Upstream's public params of an update of `config`'s sector size, all its partitions.
fn public_params<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    config: &SectorUpdateConfig,
) -> Result<compound_proof::PublicParams<'static, EmptySectorUpdate<Tree>>> {
    let setup = compound_proof::SetupParams {
        vanilla_params: storage_proofs_update::SetupParams { sector_bytes: u64::from(config.sector_size) },
        partitions: Some(usize::from(config.update_partitions)),
        priority: false,
    };
    EmptySectorUpdateCompound::<Tree>::setup(&setup).status(Status::Internal, "update public params")
}

/// `proof`'s partition circuit without a witness: what its params are made from and counted by
/// (`synth::shape`).
pub(crate) fn blank_circuit<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(proof: RegisteredUpdateProof) -> Result<EmptySectorUpdateCircuit<Tree>> {
    let pp = public_params::<Tree>(&SectorUpdateConfig::from_porep_config(&proof.as_v1_config()))?;
    Ok(<EmptySectorUpdateCompound<Tree> as CompoundProof<_, _>>::blank_circuit(&pp.vanilla_params))
}

fn inputs<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(proof: RegisteredUpdateProof, s: &Setup<Tree>) -> Result<PartitionInputs> {
    let partitions = s.pub_inputs.k;
    let inputs = (0..partitions)
        .map(|k| EmptySectorUpdateCompound::<Tree>::generate_public_inputs(&s.pub_inputs, &s.pub_params.vanilla_params, Some(k)))
        .collect::<anyhow::Result<Vec<_>>>()
        .status(Status::Internal, "update public inputs")?;
    Ok(PartitionInputs { what: format!("Update{proof:?}"), inputs })
}

fn statement<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    proof: RegisteredUpdateProof,
    c: &UpdateCommitments,
) -> Result<Box<dyn Statement>> {
    let s = setup::<Tree>(proof, c)?;
    Ok(Box::new(inputs(proof, &s)?))
}

fn prepare<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(r: &UpdateRequest<'_>) -> Result<JobInputs> {
    let name = format!("Update{:?}", r.proof);
    let s = setup::<Tree>(r.proof, &r.commitments())?;
    let partitions = s.pub_inputs.k;
    if r.vanilla_proofs.len() != partitions {
        return Err(err!(InvalidInput, "{name} takes {partitions} partition vanilla proof(s), got {}", r.vanilla_proofs.len()));
    }
    let proofs: Vec<PartitionProof<Tree>> = decode_all(&r.vanilla_proofs, &format!("{name} partition vanilla proof"))?;
    let pp = &s.pub_params.vanilla_params;
    let tree_r = TreeShape::of::<Tree::Proof>(pp.sector_nodes);
    let tree_d = TreeShape::of::<MerkleProof<TreeDHasher, TreeDArity>>(pp.sector_nodes);
    for (k, p) in proofs.iter().enumerate() {
        check_shape(p, pp, &tree_r, &tree_d, &|| format!("{name} partition vanilla proof {k}"))?;
    }
    let valid = EmptySectorUpdate::<Tree>::verify_all_partitions(&s.pub_params.vanilla_params, &s.pub_inputs, &proofs)
        .status(Status::InvalidInput, &format!("{name} vanilla proofs"))?;
    if !valid {
        return Err(err!(
            InvalidInput,
            "{name}: the partition vanilla proofs do not verify against comm_r_old, comm_r_new and comm_d_new"
        ));
    }
    let statement = inputs(r.proof, &s)?;
    let build = UpdateCircuits::<Tree> { pub_inputs: s.pub_inputs, pub_params: s.pub_params.vanilla_params, partitions: proofs };
    Ok(JobInputs {
        kind: ProofKind::SnapDeals,
        circuit: CircuitId::Update(r.proof),
        circuits: Arc::new(Compound { id: CircuitId::Update(r.proof), build }),
        statement: Box::new(statement),
        subject: format!("comm_r_new {}...", r.comm_r_new[..4].iter().map(|b| format!("{b:02x}")).collect::<String>()),
    })
}

/// A partition vanilla proof must have the shape upstream generates — the apex leaves and
/// challenge proofs of its sector size, each challenge's three Merkle proofs of tree R (old and
/// new) and tree D — with every element canonical: `verify_all_partitions` reads them unchecked.
fn check_shape<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    p: &PartitionProof<Tree>,
    pp: &storage_proofs_update::PublicParams,
    tree_r: &TreeShape,
    tree_d: &TreeShape,
    at: &dyn Fn() -> String,
) -> Result<()> {
    vanilla::element(&p.comm_c, || format!("{}: comm_c", at()))?;
    if p.apex_leafs.len() != pp.apex_leaf_count {
        return Err(err!(InvalidInput, "{}: {} apex leaves, {} expected", at(), p.apex_leafs.len(), pp.apex_leaf_count));
    }
    for (i, leaf) in p.apex_leafs.iter().enumerate() {
        vanilla::element(leaf, || format!("{}: apex leaf {i}", at()))?;
    }
    if p.challenge_proofs.len() != pp.challenge_count {
        return Err(err!(InvalidInput, "{}: {} challenge proofs, {} expected", at(), p.challenge_proofs.len(), pp.challenge_count));
    }
    for (c, cp) in p.challenge_proofs.iter().enumerate() {
        vanilla::merkle(&cp.proof_r_old, tree_r, &|| format!("{}: challenge {c} proof_r_old", at()))?;
        vanilla::merkle(&cp.proof_d_new, tree_d, &|| format!("{}: challenge {c} proof_d_new", at()))?;
        vanilla::merkle(&cp.proof_r_new, tree_r, &|| format!("{}: challenge {c} proof_r_new", at()))?;
    }
    Ok(())
}

struct UpdateCircuits<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> {
    pub_inputs: PublicInputs,
    pub_params: storage_proofs_update::PublicParams,
    partitions: Vec<PartitionProof<Tree>>,
}

impl<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> BuildCircuit for UpdateCircuits<Tree> {
    type Circuit = EmptySectorUpdateCircuit<Tree>;

    fn partitions(&self) -> usize {
        self.partitions.len()
    }

    fn circuit(&self, k: usize) -> Result<EmptySectorUpdateCircuit<Tree>> {
        let proof = self.partitions.get(k).ok_or_else(|| err!(Internal, "partition {k} out of range"))?;
        EmptySectorUpdateCompound::<Tree>::circuit(&self.pub_inputs, Default::default(), proof, &self.pub_params, Some(k))
            .status(Status::Synthesis, "building the update circuit")
    }

    /// The challenges on all threads: `forks`.
    fn synthesize_into<CS: Forkable>(&self, cs: CS, circuit: EmptySectorUpdateCircuit<Tree>, hint: SizeHint) -> std::result::Result<CS, bellperson::SynthesisError> {
        forks::empty_sector_update::<Tree, CS, forks::Gadgets>(cs, circuit, hint)
    }

    /// Tree D's SHA-256 natively (`forks::Native`).
    fn witness_into(&self, cs: Witness, _: usize, circuit: EmptySectorUpdateCircuit<Tree>, hint: SizeHint) -> std::result::Result<Witness, bellperson::SynthesisError> {
        forks::empty_sector_update::<Tree, Witness, forks::Native>(cs, circuit, hint)
    }

    /// A partition's challenges: what `forks` spreads over.
    fn sub_circuits(&self) -> usize {
        self.pub_params.challenge_count.max(1)
    }
}
