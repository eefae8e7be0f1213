//! WinningPoSt and WindowPoSt from vanilla proofs (filecoin-proofs' `*_with_vanilla`): the
//! vanilla proofs are decoded and checked sector by sector (a sector whose proof does not check
//! out is reported as faulty, as upstream's PoSt reports unreadable sectors), partitioned the
//! way upstream partitions them, and each partition's `FallbackPoStCircuit` is proved.

mod forks;

use std::sync::Arc;

use filecoin_hashers::{HashFunction, Hasher};
use filecoin_proofs::types::{FallbackPoStSectorProof, MerkleTreeTrait};
use filecoin_proofs::PoStType;
use sha2::{Digest, Sha256};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleProofTrait;
use storage_proofs_core::sector::SectorId;
use storage_proofs_post::fallback::{self, FallbackPoStCircuit, FallbackPoStCompound, PublicSector};

use super::compound::{decode_all, BuildCircuit, Compound, PartitionInputs};
use super::vanilla::{self, TreeShape};
use super::{CircuitId, JobInputs, ProofKind, RegisteredPoStProof, Statement};
use crate::error::{Error, Result, ResultExt, Status};
use crate::synth::{Forkable, SizeHint, Witness};

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
        field(&super::registry::post_to_number(self.proof).to_le_bytes());
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

/// The most partitions a WindowPoSt deadline holds (builtin-actors' `MAX_PARTITIONS_PER_DEADLINE`,
/// sized for 10 EiB per miner): a partition index at or past it is no miner's.
pub const MAX_WINDOW_POST_PARTITIONS: usize = 3000;

/// Upstream's setup: WinningPoSt's circuit has one "sector" per challenge.
pub(crate) fn vanilla_params(config: &filecoin_proofs::PoStConfig) -> Result<fallback::SetupParams> {
    match config.typ {
        PoStType::Winning => filecoin_proofs::parameters::winning_post_setup_params(config).status(Status::Internal, "setup params"),
        PoStType::Window => Ok(filecoin_proofs::parameters::window_post_setup_params(config)),
    }
}

/// `proof`'s partition circuit without a witness: what its params are made from and counted by
/// (`synth::shape`).
pub(crate) fn blank_circuit<Tree: 'static + MerkleTreeTrait>(proof: RegisteredPoStProof) -> Result<FallbackPoStCircuit<Tree>> {
    let pp = public_params::<Tree>(&proof.as_v1_config(), 1)?;
    Ok(<FallbackPoStCompound<Tree> as CompoundProof<_, _>>::blank_circuit(&pp.vanilla_params))
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

/// Vanilla proof `i` (of sector `p.sector_id`) must have the shape upstream generates: one
/// sector proof with `challenges` inclusion proofs of the sector's tree R, every element
/// canonical. Anything else is malformed input (`INVALID_INPUT` naming where), not a fault.
fn check_shape<Tree: MerkleTreeTrait>(p: &FallbackPoStSectorProof<Tree>, i: usize, challenges: usize, tree: &TreeShape) -> Result<()> {
    let at = || format!("vanilla proof {i} (sector {})", u64::from(p.sector_id));
    vanilla::element(&p.comm_r, || format!("{}: comm_r", at()))?;
    let [sp] = &p.vanilla_proof.sectors[..] else {
        return Err(err!(InvalidInput, "{}: holds {} sector proofs, one expected", at(), p.vanilla_proof.sectors.len()));
    };
    vanilla::element(&sp.comm_c, || format!("{}: comm_c", at()))?;
    vanilla::element(&sp.comm_r_last, || format!("{}: comm_r_last", at()))?;
    if sp.inclusion_proofs.len() != challenges {
        return Err(err!(InvalidInput, "{}: {} inclusion proofs, one per challenge ({challenges}) expected", at(), sp.inclusion_proofs.len()));
    }
    for (n, ip) in sp.inclusion_proofs.iter().enumerate() {
        vanilla::merkle(ip, tree, &|| format!("{}: inclusion proof {n}", at()))?;
    }
    Ok(())
}

/// Whether the (well-formed) vanilla proof `p` proves its sector as the circuit will check it:
/// comm_r = H(comm_c, comm_r_last), and for every challenge `n` a valid path from leaf
/// `challenge(n)`'s challenged node to the proof's comm_r_last. Upstream's vanilla verifier
/// checks less (WinningPoSt: one challenge of 66; no kind: that the paths end at comm_r_last),
/// and a sector it lets through fails the whole proof after synthesis.
fn proves<Tree: MerkleTreeTrait>(
    vp: &fallback::PublicParams,
    randomness: &TreeDomain<Tree>,
    p: &FallbackPoStSectorProof<Tree>,
    challenge: impl Fn(usize) -> u64,
) -> bool {
    if !roots_agree(p) {
        return false;
    }
    let sp = &p.vanilla_proof.sectors[0];
    let hasher = challenge_hasher::<Tree>(randomness, p.sector_id);
    sp.inclusion_proofs.iter().enumerate().all(|(n, ip)| {
        let leaf = fallback::generate_leaf_challenge_inner::<TreeDomain<Tree>>(hasher.clone(), vp, challenge(n));
        ip.root() == sp.comm_r_last && ip.validate(leaf as usize)
    })
}

/// The part of [`proves`] that hashes no path: comm_r = H(comm_c, comm_r_last), and every
/// path ends at that comm_r_last. Upstream's WindowPoSt check takes comm_r_last from the first
/// path and never reads the proof's own, which the circuit is given: a proof whose field
/// differs passes it and makes a proof that does not verify.
fn roots_agree<Tree: MerkleTreeTrait>(p: &FallbackPoStSectorProof<Tree>) -> bool {
    let sp = &p.vanilla_proof.sectors[0];
    <Tree::Hasher as Hasher>::Function::hash2(&sp.comm_c, &sp.comm_r_last) == p.comm_r
        && sp.inclusion_proofs.iter().all(|ip| ip.root() == sp.comm_r_last)
}

/// What every challenge of a sector is derived from (upstream's leaf challenges hash it further).
fn challenge_hasher<Tree: MerkleTreeTrait>(randomness: &TreeDomain<Tree>, sector: SectorId) -> Sha256 {
    let mut hasher = Sha256::new();
    hasher.update(AsRef::<[u8]>::as_ref(randomness));
    hasher.update(u64::from(sector).to_le_bytes());
    hasher
}

/// The sectors among `proofs` whose vanilla proofs do not check out, every challenge of each
/// (sectors in parallel); `index0`: the first one's position among all the PoSt's sectors.
fn faulty_sectors<Tree: MerkleTreeTrait>(
    vp: &fallback::PublicParams,
    randomness: &TreeDomain<Tree>,
    proofs: &[FallbackPoStSectorProof<Tree>],
    shape: Shape,
    index0: usize,
) -> Vec<u64> {
    use rayon::prelude::*;
    proofs
        .par_iter()
        .enumerate()
        .filter(|(i, p)| match shape {
            // One sector; the verifier's circuit sees its challenges as sectors of one challenge.
            Shape::Winning => !proves::<Tree>(vp, randomness, p, |n| fallback::get_challenge_index(vp.api_version, n, vp.challenge_count, 0)),
            _ => !proves::<Tree>(vp, randomness, p, |n| fallback::get_challenge_index(vp.api_version, index0 + i, vp.challenge_count, n)),
        })
        .map(|(_, p)| u64::from(p.sector_id))
        .collect()
}

/// The error for sectors whose vanilla proofs do not check out.
fn faulty(sectors: Vec<u64>) -> Error {
    let mut e = err!(FaultySectors, "faulty sectors (their vanilla proofs do not verify): {sectors:?}");
    e.sectors = sectors;
    e
}

/// Partition `k`'s public inputs from its own sectors alone. Upstream's
/// `FallbackPoStCompound::generate_public_inputs` picks partition k's sectors out of a list of
/// every partition's, so a caller proving one partition would first have to make k × 2349
/// placeholder sectors; this is its computation for one partition, through upstream's own
/// pieces (challenge index, leaf challenge, PoR inputs, the padding of a short partition), and
/// tested equal to it.
fn partition_public_inputs<Tree: 'static + MerkleTreeTrait>(
    vp: &fallback::PublicParams,
    randomness: &TreeDomain<Tree>,
    sectors: &[PublicSector<TreeDomain<Tree>>],
    k: usize,
) -> Result<Vec<blstrs::Scalar>> {
    use storage_proofs_core::gadgets::por::PoRCompound;
    use storage_proofs_core::por;
    let por_params = por::PublicParams { leaves: vp.sector_size as usize / storage_proofs_core::util::NODE_SIZE, private: true };
    let mut inputs = Vec::new();
    for (i, sector) in sectors.iter().enumerate() {
        inputs.push(sector.comm_r.into());
        let hasher = challenge_hasher::<Tree>(randomness, sector.id);
        for n in 0..vp.challenge_count {
            let index = fallback::get_challenge_index(vp.api_version, k * vp.sector_count + i, vp.challenge_count, n);
            let leaf = fallback::generate_leaf_challenge_inner::<TreeDomain<Tree>>(hasher.clone(), vp, index);
            let pi = por::PublicInputs { commitment: None, challenge: leaf as usize };
            inputs.extend(PoRCompound::<Tree>::generate_public_inputs(&pi, &por_params, Some(k)).status(Status::Internal, "PoR inputs")?);
        }
    }
    let per_sector = inputs.len().checked_div(sectors.len()).ok_or_else(|| err!(Internal, "a partition without sectors"))?;
    let last = inputs[inputs.len() - per_sector..].to_vec();
    while inputs.len() < per_sector * vp.sector_count {
        inputs.extend_from_slice(&last);
    }
    Ok(inputs)
}

fn prepare<Tree: 'static + MerkleTreeTrait>(r: &PoStRequest<'_>, shape: Shape) -> Result<JobInputs> {
    let config = r.proof.as_v1_config();
    let name = format!("{:?}", r.proof);
    let per_partition = config.sector_count;
    // Counts first: nothing is decoded or allocated for a request of the wrong size.
    match shape {
        Shape::WindowPartition(k) if k >= MAX_WINDOW_POST_PARTITIONS => {
            return Err(err!(
                InvalidArgument,
                "{name}: partition index {k} is past the last partition a deadline can hold ({})",
                MAX_WINDOW_POST_PARTITIONS - 1
            ));
        }
        Shape::Winning if r.vanilla_proofs.len() != per_partition => {
            return Err(err!(InvalidInput, "{name} takes {per_partition} vanilla proof(s), got {}", r.vanilla_proofs.len()));
        }
        Shape::WindowPartition(_) if r.vanilla_proofs.len() > per_partition => {
            return Err(err!(
                InvalidInput,
                "{name}: one partition holds at most {per_partition} sectors, got {} vanilla proofs",
                r.vanilla_proofs.len()
            ));
        }
        _ => {}
    }
    let randomness = vanilla::commitment::<TreeDomain<Tree>>(&r.randomness, "randomness")?;
    let prover_id = vanilla::commitment::<TreeDomain<Tree>>(&r.prover_id, "prover_id")?;
    let proofs: Vec<FallbackPoStSectorProof<Tree>> = decode_all(&r.vanilla_proofs, &format!("{name} vanilla proof"))?;
    let tree = TreeShape::of::<Tree::Proof>(u64::from(config.sector_size) as usize / storage_proofs_core::util::NODE_SIZE);
    for (i, p) in proofs.iter().enumerate() {
        check_shape(p, i, config.challenge_count, &tree).map_err(|e| e.context(&name))?;
    }
    let sectors: Vec<PublicSector<TreeDomain<Tree>>> = proofs.iter().map(|p| PublicSector { id: p.sector_id, comm_r: p.comm_r }).collect();
    let ids: Vec<u64> = proofs.iter().map(|p| u64::from(p.sector_id)).collect();
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

    // Upstream's partitioning below verifies every path of a WindowPoSt's sectors (in parallel)
    // but not each sector's comm_r_last, nor a WinningPoSt's challenges past the first. So
    // first: a WinningPoSt's every challenge (66 paths), a WindowPoSt's roots (no hashing of
    // paths: a 32 GiB partition's 23,490 take ~27 core-seconds, and upstream hashes them all
    // again). Either names the faulty sectors.
    let bad: Vec<u64> = match shape {
        Shape::Winning => faulty_sectors::<Tree>(vp, &randomness, &proofs, shape, 0),
        _ => proofs.iter().filter(|p| !roots_agree(p)).map(|p| u64::from(p.sector_id)).collect(),
    };
    if !bad.is_empty() {
        return Err(faulty(bad));
    }
    let pub_inputs = fallback::PublicInputs { randomness, prover_id, sectors: sectors.clone(), k: (first > 0).then_some(first) };
    // Upstream's own partitioning, and its verification of every partition's vanilla proofs.
    let partitioned = match shape {
        Shape::WindowPartition(k) => {
            let pi = fallback::PublicInputs { k: Some(k), ..pub_inputs.clone() };
            filecoin_proofs::single_partition_vanilla_proofs(&config, vp, &pi, &proofs).map(|p| vec![p])
        }
        _ => filecoin_proofs::partition_vanilla_proofs(&config, vp, &pub_inputs, partitions, &proofs),
    };
    // Refused: every path of every sector checked here, to name the faulty ones.
    let partitioned = partitioned.map_err(|e| match faulty_sectors::<Tree>(vp, &randomness, &proofs, shape, first * per_partition) {
        bad if bad.is_empty() => err!(InvalidInput, "{name} vanilla proofs: {e:#}"),
        bad => faulty(bad),
    })?;
    // The public inputs upstream's verifier computes for each partition.
    let inputs = match shape {
        Shape::WindowPartition(k) => vec![partition_public_inputs::<Tree>(vp, &randomness, &sectors, k)?],
        Shape::Winning | Shape::Window => {
            let verifier_sectors = match shape {
                // verify_winning_post repeats the challenged sector once per challenge.
                Shape::Winning => sectors.iter().cycle().take(vp.sector_count).cloned().collect(),
                _ => sectors.clone(),
            };
            let verifier_inputs = fallback::PublicInputs { randomness, prover_id, sectors: verifier_sectors, k: None };
            (0..partitions)
                .map(|j| FallbackPoStCompound::<Tree>::generate_public_inputs(&verifier_inputs, vp, Some(j)))
                .collect::<anyhow::Result<Vec<_>>>()
                .status(Status::Internal, "PoSt public inputs")?
        }
    };
    let kind = if matches!(shape, Shape::Winning) { ProofKind::WinningPoSt } else { ProofKind::WindowPoSt };
    // The circuit as upstream builds it: a single partition's circuit is given only its sectors.
    let circuit_inputs = fallback::PublicInputs { k: None, ..pub_inputs };
    let build = PoStCircuits::<Tree> { pub_inputs: circuit_inputs, pub_params: vp.clone(), partitions: partitioned };
    Ok(JobInputs {
        kind,
        circuit: CircuitId::PoSt(r.proof),
        circuits: Arc::new(Compound { id: CircuitId::PoSt(r.proof), build }),
        statement: Box::new(PartitionInputs { what: name, inputs }),
        subject: match shape {
            Shape::WindowPartition(k) => format!("partition {k}, {}", super::sectors_subject(&ids)),
            _ => super::sectors_subject(&ids),
        },
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
    fn synthesize_into<CS: Forkable>(&self, cs: CS, circuit: FallbackPoStCircuit<Tree>, hint: SizeHint) -> std::result::Result<CS, bellperson::SynthesisError> {
        forks::fallback_post(cs, &circuit, hint)
    }

    /// Tree R's Poseidon natively (`forks::fallback_post_witness`), each path as partition
    /// `k`'s vanilla proofs give it.
    fn witness_into(&self, cs: Witness, k: usize, circuit: FallbackPoStCircuit<Tree>, hint: SizeHint) -> std::result::Result<Witness, bellperson::SynthesisError> {
        let proof = self.partitions.get(k).ok_or(bellperson::SynthesisError::Unsatisfiable)?;
        let paths: Vec<forks::SectorPaths> = proof.sectors.iter().map(|s| s.as_options()).collect();
        forks::fallback_post_witness(cs, &circuit, &paths, hint)
    }

    /// A partition's sectors, or with one sector its challenges: what `synth::post` forks.
    fn sub_circuits(&self) -> usize {
        match self.partitions.first().map(|p| &p.sectors[..]) {
            Some([one]) => one.inclusion_proofs.len().max(1),
            Some(sectors) => sectors.len().max(1),
            None => 1,
        }
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
        let comm_r = vanilla::commitment::<TreeDomain<Tree>>(&r.comm_r, &format!("comm_r of sector {}", r.sector_id))?;
        sectors.push(PublicSector { id: SectorId::from(r.sector_id), comm_r });
    }
    if config.typ == PoStType::Winning {
        sectors = sectors.iter().cycle().take(vp.sector_count).cloned().collect();
    }
    let pub_inputs = fallback::PublicInputs {
        randomness: vanilla::commitment(randomness, "randomness")?,
        prover_id: vanilla::commitment(prover_id, "prover_id")?,
        sectors,
        k: None,
    };
    let inputs = (0..partitions)
        .map(|j| FallbackPoStCompound::<Tree>::generate_public_inputs(&pub_inputs, vp, Some(j)))
        .collect::<anyhow::Result<Vec<_>>>()
        .status(Status::InvalidArgument, "PoSt public inputs")?;
    Ok(Box::new(PartitionInputs { what: format!("{proof:?}"), inputs }))
}

#[cfg(test)]
mod tests {
    use filecoin_hashers::Domain;
    use filecoin_proofs::constants::SectorShapeBase;

    use super::*;

    /// Partition k's public inputs from its sectors alone equal upstream's from the list of
    /// every partition's (V1 challenges depend on a sector's place among all, V1_2 not), for a
    /// full and a short partition, and for the last partition a deadline can hold.
    #[test]
    fn partition_inputs_equal_upstreams_from_every_partitions_sectors() {
        let d = |i: u64| {
            let mut b = [0u8; 32];
            b[..8].copy_from_slice(&(i * 7919 + 1).to_le_bytes());
            TreeDomain::<SectorShapeBase>::try_from_bytes(&b).unwrap()
        };
        for proof in [RegisteredPoStProof::StackedDrgWindow2KiBV1, RegisteredPoStProof::StackedDrgWindow2KiBV1_2] {
            let config = proof.as_v1_config();
            let per = config.sector_count;
            let pp = public_params::<SectorShapeBase>(&config, 1).unwrap();
            let vp = &pp.vanilla_params;
            for (k, count) in [(0, per), (1, per), (3, 1), (MAX_WINDOW_POST_PARTITIONS - 1, per)] {
                let all: Vec<PublicSector<_>> =
                    (0..(k * per + count) as u64).map(|i| PublicSector { id: SectorId::from(1000 + i), comm_r: d(i) }).collect();
                let every = fallback::PublicInputs { randomness: d(99), prover_id: d(5), sectors: all.clone(), k: None };
                let upstream = FallbackPoStCompound::<SectorShapeBase>::generate_public_inputs(&every, vp, Some(k)).unwrap();
                let ours = partition_public_inputs::<SectorShapeBase>(vp, &d(99), &all[k * per..], k).unwrap();
                assert!(ours == upstream, "{proof:?} partition {k} of {count} sector(s)");
            }
        }
    }
}
