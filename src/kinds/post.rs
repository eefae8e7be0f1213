//! WinningPoSt and WindowPoSt from vanilla proofs (filecoin-proofs' `*_with_vanilla`): the
//! vanilla proofs are decoded and checked sector by sector (a sector whose proof does not check
//! out is reported as faulty, as upstream's PoSt reports unreadable sectors), partitioned the
//! way upstream partitions them, and each partition's `FallbackPoStCircuit` is proved.

use std::sync::Arc;

use filecoin_hashers::{Domain, HashFunction, Hasher};
use filecoin_proofs::types::{FallbackPoStSectorProof, MerkleTreeTrait};
use filecoin_proofs::PoStType;
use sha2::{Digest, Sha256};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleProofTrait;
use storage_proofs_core::sector::SectorId;
use storage_proofs_post::fallback::{self, FallbackPoStCircuit, FallbackPoStCompound, PublicSector};

use super::compound::{decode_all, BuildCircuit, Compound, PartitionInputs};
use super::{CircuitId, JobInputs, ProofKind, RegisteredPoStProof, Statement};
use crate::error::{Error, Result, ResultExt, Status};
use crate::synth::{Assignment, SizeHint};

/// A PoSt request as filecoin-ffi takes it.
pub struct PoStRequest<'a> {
    pub proof: RegisteredPoStProof,
    pub randomness: [u8; 32],
    pub prover_id: [u8; 32],
    /// `FallbackPoStSectorProof`s, bincode-serialized (filecoin-ffi's `VanillaProofBytes`).
    pub vanilla_proofs: Vec<&'a [u8]>,
}

impl PoStRequest<'_> {
    pub(super) fn digest_into(&self, field: &mut impl FnMut(&[u8])) {
        field(&super::circuit::post_to_number(self.proof).to_le_bytes());
        field(&self.randomness);
        field(&self.prover_id);
        field(&(self.vanilla_proofs.len() as u64).to_le_bytes());
        for v in &self.vanilla_proofs {
            field(v);
        }
    }
}

/// A sector as PoSt verifiers know it: its number and sealed commitment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublicReplica {
    pub sector_id: u64,
    pub comm_r: [u8; 32],
}

fn check_type(p: RegisteredPoStProof, want: PoStType) -> Result<()> {
    if p.typ() != want {
        return Err(err!(InvalidArgument, "{p:?} is not a {want:?} PoSt proof"));
    }
    Ok(())
}

pub(super) fn parse_winning(r: &PoStRequest<'_>) -> Result<JobInputs> {
    check_type(r.proof, PoStType::Winning)?;
    with_tree_shape!(r.proof, prepare, r, Shape::Winning)
}

pub(super) fn parse_window(r: &PoStRequest<'_>, partition: Option<usize>) -> Result<JobInputs> {
    check_type(r.proof, PoStType::Window)?;
    match partition {
        None => with_tree_shape!(r.proof, prepare, r, Shape::Window),
        Some(k) => with_tree_shape!(r.proof, prepare, r, Shape::WindowPartition(k)),
    }
}

#[derive(Clone, Copy)]
enum Shape {
    Winning,
    Window,
    /// One WindowPoSt partition, by index: its sectors' vanilla proofs alone are given.
    WindowPartition(usize),
}

type TreeDomain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

fn safe<Tree: MerkleTreeTrait>(bytes: &[u8; 32], what: &str) -> Result<TreeDomain<Tree>> {
    filecoin_proofs::as_safe_commitment(bytes, what).status(Status::InvalidArgument, what)
}

/// Upstream's setup: WinningPoSt's circuit has one "sector" per challenge.
pub(crate) fn vanilla_params(config: &filecoin_proofs::PoStConfig) -> Result<fallback::SetupParams> {
    match config.typ {
        PoStType::Winning => filecoin_proofs::parameters::winning_post_setup_params(config).status(Status::Internal, "setup params"),
        PoStType::Window => Ok(filecoin_proofs::parameters::window_post_setup_params(config)),
    }
}

fn public_params<Tree: 'static + MerkleTreeTrait>(
    config: &filecoin_proofs::PoStConfig,
    partitions: usize,
) -> Result<compound_proof::PublicParams<'static, fallback::FallbackPoSt<'static, Tree>>> {
    let setup = compound_proof::SetupParams {
        vanilla_params: vanilla_params(config)?,
        partitions: (partitions > 1).then_some(partitions),
        priority: false,
    };
    FallbackPoStCompound::<Tree>::setup(&setup).status(Status::Internal, "PoSt public params")
}

/// Whether `p` is a valid vanilla proof of its sector at `sector_index` (its place among the
/// proof's sectors): the checks of upstream's `FallbackPoSt::verify`, for one sector.
fn sector_ok<Tree: MerkleTreeTrait>(
    pub_params: &fallback::PublicParams,
    randomness: &TreeDomain<Tree>,
    sector_index: usize,
    p: &FallbackPoStSectorProof<Tree>,
) -> bool {
    let [sp] = &p.vanilla_proof.sectors[..] else { return false };
    let proofs = &sp.inclusion_proofs;
    if proofs.len() != pub_params.challenge_count || proofs.is_empty() {
        return false;
    }
    let comm_r_last = proofs[0].root();
    if <Tree::Hasher as Hasher>::Function::hash2(&sp.comm_c, &comm_r_last) != p.comm_r {
        return false;
    }
    let mut hasher = Sha256::new();
    hasher.update(AsRef::<[u8]>::as_ref(randomness));
    hasher.update(u64::from(p.sector_id).to_le_bytes());
    let leaves = pub_params.sector_size as usize / storage_proofs_core::util::NODE_SIZE;
    proofs.iter().enumerate().all(|(n, ip)| {
        let index = fallback::get_challenge_index(pub_params.api_version, sector_index, pub_params.challenge_count, n);
        let leaf = fallback::generate_leaf_challenge_inner::<TreeDomain<Tree>>(hasher.clone(), pub_params, index);
        ip.root() == comm_r_last && ip.expected_len(leaves) == ip.path().len() && ip.validate(leaf as usize)
    })
}

/// The error for sectors whose vanilla proofs do not check out.
fn faulty(sectors: Vec<u64>) -> Error {
    let mut e = err!(FaultySectors, "faulty sectors (their vanilla proofs do not verify): {sectors:?}");
    e.sectors = sectors;
    e
}

fn prepare<Tree: 'static + MerkleTreeTrait>(r: &PoStRequest<'_>, shape: Shape) -> Result<JobInputs> {
    let config = r.proof.as_v1_config();
    let name = format!("{:?}", r.proof);
    let proofs: Vec<FallbackPoStSectorProof<Tree>> = decode_all(&r.vanilla_proofs, &format!("{name} vanilla proof"))?;
    let randomness = safe::<Tree>(&r.randomness, "randomness")?;
    let prover_id = safe::<Tree>(&r.prover_id, "prover_id")?;
    let per_partition = config.sector_count;
    let sectors: Vec<PublicSector<TreeDomain<Tree>>> = proofs.iter().map(|p| PublicSector { id: p.sector_id, comm_r: p.comm_r }).collect();
    let ids: Vec<u64> = proofs.iter().map(|p| u64::from(p.sector_id)).collect();
    match shape {
        Shape::Winning if proofs.len() != per_partition => {
            return Err(err!(InvalidInput, "{name} takes {per_partition} vanilla proof(s), got {}", proofs.len()));
        }
        Shape::WindowPartition(_) if proofs.len() > per_partition => {
            return Err(err!(
                InvalidInput,
                "{name}: one partition holds at most {per_partition} sectors, got {} vanilla proofs",
                proofs.len()
            ));
        }
        _ => {}
    }
    if matches!(shape, Shape::Window | Shape::WindowPartition(_)) && ids.windows(2).any(|w| w[0] >= w[1]) {
        // Upstream's verifier takes the sectors ordered by number: any other order (or a sector
        // twice) gives a proof that never verifies.
        return Err(err!(InvalidInput, "{name}: vanilla proofs must be in ascending sector number order, each sector once; got {ids:?}"));
    }
    let partitions = match shape {
        Shape::Window => proofs.len().div_ceil(per_partition),
        Shape::Winning | Shape::WindowPartition(_) => 1,
    };
    let first = match shape {
        Shape::WindowPartition(k) => k,
        _ => 0,
    };
    let pub_params = public_params::<Tree>(&config, partitions)?;
    let vp = &pub_params.vanilla_params;

    // Sector by sector, so the faulty ones can be named.
    if !matches!(shape, Shape::Winning) {
        let bad: Vec<u64> = proofs
            .iter()
            .enumerate()
            .filter(|(i, p)| !sector_ok::<Tree>(vp, &randomness, first * per_partition + i, p))
            .map(|(_, p)| u64::from(p.sector_id))
            .collect();
        if !bad.is_empty() {
            return Err(faulty(bad));
        }
    }
    let pub_inputs = fallback::PublicInputs { randomness, prover_id, sectors: sectors.clone(), k: (first > 0).then_some(first) };
    // Upstream's own partitioning (and its verification of every partition's vanilla proof).
    let partitioned = match shape {
        Shape::WindowPartition(k) => {
            let pi = fallback::PublicInputs { k: Some(k), ..pub_inputs.clone() };
            filecoin_proofs::single_partition_vanilla_proofs(&config, vp, &pi, &proofs).map(|p| vec![p])
        }
        _ => filecoin_proofs::partition_vanilla_proofs(&config, vp, &pub_inputs, partitions, &proofs),
    };
    let partitioned = match partitioned {
        Ok(p) => p,
        Err(_) if matches!(shape, Shape::Winning) => return Err(faulty(ids)),
        Err(e) => return Err(err!(InvalidInput, "{name} vanilla proofs: {e:#}")),
    };
    // The public inputs upstream's verifier computes for each partition.
    let verifier_sectors = match shape {
        // verify_winning_post repeats the challenged sector once per challenge.
        Shape::Winning => sectors.iter().cycle().take(vp.sector_count).cloned().collect(),
        // The partition's sectors at their place among all (the ones before it are not read).
        Shape::WindowPartition(k) => std::iter::repeat_n(sectors[0].clone(), k * per_partition).chain(sectors.iter().cloned()).collect(),
        Shape::Window => sectors.clone(),
    };
    let verifier_inputs = fallback::PublicInputs { randomness, prover_id, sectors: verifier_sectors, k: None };
    let inputs = (0..partitions)
        .map(|j| FallbackPoStCompound::<Tree>::generate_public_inputs(&verifier_inputs, vp, Some(first + j)))
        .collect::<anyhow::Result<Vec<_>>>()
        .status(Status::Internal, "PoSt public inputs")?;
    let kind = if matches!(shape, Shape::Winning) { ProofKind::WinningPoSt } else { ProofKind::WindowPoSt };
    // The circuit as upstream builds it: a single partition's circuit is given only its sectors.
    let circuit_inputs = fallback::PublicInputs { k: None, ..pub_inputs };
    let build = PoStCircuits::<Tree> { pub_inputs: circuit_inputs, pub_params: vp.clone(), partitions: partitioned };
    Ok(JobInputs {
        kind,
        circuit: CircuitId::PoSt(r.proof),
        circuits: Arc::new(Compound(build)),
        statement: Box::new(PartitionInputs { what: name, inputs }),
    })
}

struct PoStCircuits<Tree: MerkleTreeTrait> {
    pub_inputs: fallback::PublicInputs<TreeDomain<Tree>>,
    pub_params: fallback::PublicParams,
    partitions: Vec<fallback::Proof<Tree::Proof>>,
}

impl<Tree: 'static + MerkleTreeTrait> BuildCircuit for PoStCircuits<Tree> {
    type Circuit = FallbackPoStCircuit<Tree>;

    fn partitions(&self) -> usize {
        self.partitions.len()
    }

    fn circuit(&self, k: usize) -> Result<FallbackPoStCircuit<Tree>> {
        let proof = self.partitions.get(k).ok_or_else(|| err!(Internal, "partition {k} out of range"))?;
        FallbackPoStCompound::<Tree>::circuit(&self.pub_inputs, Default::default(), proof, &self.pub_params, Some(k))
            .status(Status::Synthesis, "building the PoSt circuit")
    }

    /// Sectors (or, with one sector, its challenges) on all threads: `synth::post`.
    fn synthesize(&self, circuit: FallbackPoStCircuit<Tree>, hint: SizeHint) -> std::result::Result<Assignment, bellperson::SynthesisError> {
        crate::synth::post::fallback_post(Assignment::begin(hint)?, &circuit, hint)
    }
}

/// What a WinningPoSt proof is checked against (upstream's `verify_winning_post`): the
/// challenged sector(s), the randomness and the prover id.
pub fn winning_statement(
    proof: RegisteredPoStProof,
    randomness: &[u8; 32],
    prover_id: &[u8; 32],
    replicas: &[PublicReplica],
) -> Result<Box<dyn Statement>> {
    check_type(proof, PoStType::Winning)?;
    with_tree_shape!(proof, statement, proof, randomness, prover_id, replicas)
}

/// What a WindowPoSt proof (every partition, concatenated) is checked against (upstream's
/// `verify_window_post`): the proven sectors (in any order; upstream orders them by number).
pub fn window_statement(
    proof: RegisteredPoStProof,
    randomness: &[u8; 32],
    prover_id: &[u8; 32],
    replicas: &[PublicReplica],
) -> Result<Box<dyn Statement>> {
    check_type(proof, PoStType::Window)?;
    let mut sorted = replicas.to_vec();
    sorted.sort_by_key(|r| r.sector_id);
    if sorted.windows(2).any(|w| w[0].sector_id == w[1].sector_id) {
        return Err(err!(InvalidArgument, "a sector is listed twice"));
    }
    with_tree_shape!(proof, statement, proof, randomness, prover_id, &sorted)
}

fn statement<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredPoStProof,
    randomness: &[u8; 32],
    prover_id: &[u8; 32],
    replicas: &[PublicReplica],
) -> Result<Box<dyn Statement>> {
    let config = proof.as_v1_config();
    if replicas.is_empty() {
        return Err(err!(InvalidArgument, "no sectors given"));
    }
    if config.typ == PoStType::Winning && replicas.len() != config.sector_count {
        return Err(err!(InvalidArgument, "{proof:?} proves {} sector(s), {} given", config.sector_count, replicas.len()));
    }
    let partitions = match config.typ {
        PoStType::Winning => 1,
        PoStType::Window => replicas.len().div_ceil(config.sector_count),
    };
    let pub_params = public_params::<Tree>(&config, partitions)?;
    let vp = &pub_params.vanilla_params;
    let mut sectors = Vec::with_capacity(replicas.len());
    for r in replicas {
        let comm_r = <TreeDomain<Tree>>::try_from_bytes(&r.comm_r).status(Status::InvalidArgument, &format!("comm_r of sector {}", r.sector_id))?;
        sectors.push(PublicSector { id: SectorId::from(r.sector_id), comm_r });
    }
    if config.typ == PoStType::Winning {
        sectors = sectors.iter().cycle().take(vp.sector_count).cloned().collect();
    }
    let pub_inputs = fallback::PublicInputs {
        randomness: safe::<Tree>(randomness, "randomness")?,
        prover_id: safe::<Tree>(prover_id, "prover_id")?,
        sectors,
        k: None,
    };
    let inputs = (0..partitions)
        .map(|j| FallbackPoStCompound::<Tree>::generate_public_inputs(&pub_inputs, vp, Some(j)))
        .collect::<anyhow::Result<Vec<_>>>()
        .status(Status::InvalidArgument, "PoSt public inputs")?;
    Ok(Box::new(PartitionInputs { what: format!("{proof:?}"), inputs }))
}
