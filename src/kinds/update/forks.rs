//! SnapDeals (empty-sector update) partition synthesis on all threads.
//!
//! Mirrors `storage_proofs_update::EmptySectorUpdateCircuit::synthesize` (19.1): a prefix that
//! allocates the public inputs, checks comm_r_old / comm_r_new against comm_c and the two tree R
//! roots, proves the partition's apex tree into comm_d_new and derives every challenge's bits;
//! then one independent sub-circuit per challenge (its rho, the new label, the old and new tree R
//! paths and the tree D path up to the apex leaf: two Poseidon paths and 19 levels of SHA-256
//! at 32 GiB), each read-only on the prefix's variables. Upstream synthesizes the
//! challenges one after the other on one thread (24.75 s a 32 GiB partition); here each runs on
//! its own fork, absorbed in order, so the result equals sequential synthesis exactly (tested
//! against upstream's circuit, every partition, in `tests/proof_kinds.rs`).
//!
//! The prefix's gadgets (`apex_por`, `gen_challenge_bits`, `get_challenge_high_bits`,
//! `label_r_new`) are crate-private in storage-proofs-update, so they are restated here
//! constraint for constraint; upstream's panics on malformed inputs are errors instead (the
//! engine has verified the vanilla proofs before any synthesis, so they do not fire).
//!
//! Tree D is a binary SHA-256 tree: its hashes (the apex tree, ~20 levels of each challenge's
//! path) are ~99 % of a partition's constraints; each challenge's rho and two tree R paths are
//! Poseidon, ~1 % of the constraints but most of the time through the gadgets (their matrix
//! products build linear combinations on the heap). The full assignment and the recording run
//! upstream's gadgets for all of them ([`Gadgets`]); the witness alone computes them natively
//! ([`Native`]: `kinds::porep::native`, the code behind PoRep's comm_d and comm_c paths),
//! writing the variables the gadgets would allocate, in the same order.

use bellperson::gadgets::boolean::{field_into_allocated_bits_le, AllocatedBit, Boolean};
use bellperson::gadgets::multipack::pack_bits;
use bellperson::gadgets::num::AllocatedNum;
use bellperson::{ConstraintSystem, LinearCombination, SynthesisError};
use blstrs::Scalar as Fr;
use ff::{Field, PrimeField, PrimeFieldBits};
use filecoin_hashers::{HashFunction, Hasher};
use neptune::circuit::poseidon_hash;
use storage_proofs_core::gadgets::insertion::select;
use storage_proofs_core::gadgets::por::por_no_challenge_input;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_update::circuit::{ChallengeProof, PrivateInputs, PublicInputs};
use storage_proofs_update::constants::{hs, validate_tree_r_shape, TreeD, TreeDHasher, TreeRHasher, POSEIDON_CONSTANTS_GEN_RANDOMNESS};
use storage_proofs_update::{EmptySectorUpdateCircuit, PublicParams};

use crate::kinds::porep::native::{self, sha256_leaves};
use crate::synth::{on_forks, Forkable, SizeHint, Witness};

/// A challenge's tree D path up to its apex leaf, as `por_no_challenge_input::<TreeD>` takes it:
/// the challenge's low bits, the new data's leaf, one sibling a level, the apex leaf as root.
pub(crate) struct ApexPath {
    bits: Vec<AllocatedBit>,
    leaf: AllocatedNum<Fr>,
    siblings: Vec<Vec<AllocatedNum<Fr>>>,
    root: AllocatedNum<Fr>,
}

/// How the partition's hashes are synthesized: tree D's SHA-256 into `CS` (the parent, for the
/// apex tree) and its forks (each challenge's path to its apex leaf), and each challenge's
/// Poseidon in its fork (rho and the old and new tree R paths).
pub(crate) trait Hashing<CS: Forkable> {
    /// `Sha256Function::hash2_circuit`.
    fn hash2(cs: &mut CS, name: String, a: &AllocatedNum<Fr>, b: &AllocatedNum<Fr>) -> Result<AllocatedNum<Fr>, SynthesisError>;
    /// `por_no_challenge_input::<TreeD>`.
    fn tree_d_path(cs: &mut CS::Fork<'_>, name: String, p: ApexPath) -> Result<(), SynthesisError>;
    /// `poseidon_hash([phi, c_high], POSEIDON_CONSTANTS_GEN_RANDOMNESS)`: the challenge's rho.
    fn rho(cs: &mut CS::Fork<'_>, name: String, phi: &AllocatedNum<Fr>, c_high: AllocatedNum<Fr>) -> Result<AllocatedNum<Fr>, SynthesisError>;
    /// `por_no_challenge_input::<TreeR>`.
    fn tree_r_path<TreeR: MerkleTreeTrait<Hasher = TreeRHasher>>(cs: &mut CS::Fork<'_>, name: String, p: TreeRPath) -> Result<(), SynthesisError>;
}

/// A challenge's path in tree R (old or new), as `por_no_challenge_input::<TreeR>` takes it: the
/// challenge's bits, the leaf, the siblings of each level, the root.
pub(crate) struct TreeRPath {
    bits: Vec<AllocatedBit>,
    leaf: AllocatedNum<Fr>,
    siblings: Vec<Vec<AllocatedNum<Fr>>>,
    root: AllocatedNum<Fr>,
}

/// Upstream's gadgets: any constraint system.
pub(crate) struct Gadgets;

impl<CS: Forkable> Hashing<CS> for Gadgets {
    fn hash2(cs: &mut CS, name: String, a: &AllocatedNum<Fr>, b: &AllocatedNum<Fr>) -> Result<AllocatedNum<Fr>, SynthesisError> {
        <TreeDHasher as Hasher>::Function::hash2_circuit(cs.namespace(|| name), a, b)
    }
    fn tree_d_path(cs: &mut CS::Fork<'_>, name: String, p: ApexPath) -> Result<(), SynthesisError> {
        por_no_challenge_input::<TreeD, _>(cs.namespace(|| name), p.bits, p.leaf, p.siblings, p.root)
    }
    fn rho(cs: &mut CS::Fork<'_>, name: String, phi: &AllocatedNum<Fr>, c_high: AllocatedNum<Fr>) -> Result<AllocatedNum<Fr>, SynthesisError> {
        poseidon_hash(cs.namespace(|| name), vec![phi.clone(), c_high], &*POSEIDON_CONSTANTS_GEN_RANDOMNESS)
    }
    fn tree_r_path<TreeR: MerkleTreeTrait<Hasher = TreeRHasher>>(cs: &mut CS::Fork<'_>, name: String, p: TreeRPath) -> Result<(), SynthesisError> {
        por_no_challenge_input::<TreeR, _>(cs.namespace(|| name), p.bits, p.leaf, p.siblings, p.root)
    }
}

/// Native SHA-256 and Poseidon into the witness alone.
pub(crate) struct Native;

impl Hashing<Witness> for Native {
    fn hash2(cs: &mut Witness, _: String, a: &AllocatedNum<Fr>, b: &AllocatedNum<Fr>) -> Result<AllocatedNum<Fr>, SynthesisError> {
        sha256_leaves(cs, &[a.clone(), b.clone()])
    }
    fn tree_d_path(cs: &mut crate::synth::WitnessFork<'_>, _: String, p: ApexPath) -> Result<(), SynthesisError> {
        native::tree_d_path(cs, p.bits, p.leaf, p.siblings, &p.root)
    }
    fn rho(cs: &mut crate::synth::WitnessFork<'_>, _: String, phi: &AllocatedNum<Fr>, c_high: AllocatedNum<Fr>) -> Result<AllocatedNum<Fr>, SynthesisError> {
        native::poseidon_hash(cs, &[phi.clone(), c_high], &*POSEIDON_CONSTANTS_GEN_RANDOMNESS)
    }
    fn tree_r_path<TreeR: MerkleTreeTrait<Hasher = TreeRHasher>>(cs: &mut crate::synth::WitnessFork<'_>, _: String, p: TreeRPath) -> Result<(), SynthesisError> {
        native::por_no_challenge_input::<TreeR::Arity, TreeR::SubTreeArity, TreeR::TopTreeArity, _>(cs, p.bits, p.leaf, p.siblings, &p.root)
    }
}

/// `circuit` into `cs` (ready for a circuit: bellperson's ONE allocated), closed with the
/// per-input constraints.
pub(crate) fn empty_sector_update<TreeR: 'static + MerkleTreeTrait<Hasher = TreeRHasher>, CS: Forkable, D: Hashing<CS>>(
    mut cs: CS,
    circuit: EmptySectorUpdateCircuit<TreeR>,
    hint: SizeHint,
) -> Result<CS, SynthesisError> {
    let EmptySectorUpdateCircuit { pub_params, pub_inputs, priv_inputs } = circuit;
    let PublicParams { sector_nodes, challenge_count, challenge_bit_len, partition_count, partition_bit_len, apex_leaf_count, apex_leaf_bit_len } =
        pub_params;
    let PublicInputs { k_and_h_select, comm_r_old, comm_d_new, comm_r_new } = pub_inputs;
    let PrivateInputs { comm_c, root_r_old, root_r_new, apex_leafs, challenge_proofs } = priv_inputs;

    validate_tree_r_shape::<TreeR>(sector_nodes);
    let hs = hs(sector_nodes);
    let h_select_bit_len = hs.len();
    if challenge_proofs.len() != challenge_count || apex_leafs.len() != apex_leaf_count {
        return Err(SynthesisError::Unsatisfiable);
    }
    let partition_path = challenge_proofs[0].path_d_new[challenge_bit_len - partition_bit_len..].to_vec();
    if let Some(v) = k_and_h_select {
        check_k_and_h_select(v, partition_bit_len, partition_count, h_select_bit_len)?;
    }
    let same_partition = |p: &ChallengeProof<TreeR>| p.path_d_new[challenge_bit_len - partition_bit_len..] == partition_path[..];
    if partition_path.len() != partition_bit_len || partition_path.iter().any(|s| s.len() != 1) || !challenge_proofs[1..].iter().all(same_partition) {
        return Err(SynthesisError::Unsatisfiable);
    }
    let num = |cs: &mut CS, name: String, v: Option<Fr>| AllocatedNum::alloc(cs.namespace(|| name), || v.ok_or(SynthesisError::AssignmentMissing));

    // Public inputs: k and h_select packed into one, then the three commitments.
    let k_and_h_select = num(&mut cs, "k_and_h_select".into(), k_and_h_select)?;
    k_and_h_select.inputize(cs.namespace(|| "k_and_h_select (public input)"))?;
    let k_and_h_select_bits = {
        let bit_len = partition_bit_len + h_select_bit_len;
        let bits: Vec<Option<bool>> = match k_and_h_select.get_value() {
            Some(v) => v.to_le_bits().into_iter().take(bit_len).map(Some).collect(),
            None => vec![None; bit_len],
        };
        let bits = bits
            .into_iter()
            .enumerate()
            .map(|(i, bit)| AllocatedBit::alloc(cs.namespace(|| format!("k_and_h_select_bit_{i}")), bit))
            .collect::<Result<Vec<_>, _>>()?;
        enforce_binary_decomposition(&mut cs, "k_and_h_select binary decomp", &bits, &k_and_h_select);
        bits
    };
    let partition_bits = k_and_h_select_bits[..partition_bit_len].to_vec();
    let h_select_bits = k_and_h_select_bits[partition_bit_len..].to_vec();
    let partition = pack_bits(cs.namespace(|| "pack partition bits"), &partition_bits.iter().cloned().map(Boolean::from).collect::<Vec<_>>())?;
    let comm_r_old = num(&mut cs, "comm_r_old".into(), comm_r_old)?;
    comm_r_old.inputize(cs.namespace(|| "comm_r_old_input"))?;
    let comm_d_new = num(&mut cs, "comm_d_new".into(), comm_d_new)?;
    comm_d_new.inputize(cs.namespace(|| "comm_d_new_input"))?;
    let comm_r_new = num(&mut cs, "comm_r_new".into(), comm_r_new)?;
    comm_r_new.inputize(cs.namespace(|| "comm_r_new_input"))?;

    // phi = H(comm_d_new || comm_r_old).
    let phi = poseidon_hash(cs.namespace(|| "phi"), vec![comm_d_new.clone(), comm_r_old.clone()], &*POSEIDON_CONSTANTS_GEN_RANDOMNESS)?;

    // The private inputs but each challenge's Merkle proofs.
    let comm_c = num(&mut cs, "comm_c".into(), comm_c)?;
    let root_r_old = num(&mut cs, "root_r_old".into(), root_r_old)?;
    let root_r_new = num(&mut cs, "root_r_new".into(), root_r_new)?;
    let apex_leafs = apex_leafs.iter().enumerate().map(|(i, leaf)| num(&mut cs, format!("apex_leaf_{i}"), *leaf)).collect::<Result<Vec<_>, _>>()?;
    let partition_path = partition_path
        .iter()
        .enumerate()
        .map(|(i, siblings)| num(&mut cs, format!("partition_path_sibling_{i}"), siblings[0]).map(|s| vec![s]))
        .collect::<Result<Vec<_>, _>>()?;

    // comm_r = H(comm_c || root_r), old and new.
    let checks = [
        ("comm_r_old_calc", "enforce comm_r_old_calc == comm_r_old", &root_r_old, &comm_r_old),
        ("comm_r_new_calc", "enforce comm_r_new_calc == comm_r_new", &root_r_new, &comm_r_new),
    ];
    for (name, check, root, comm_r) in checks {
        let calc = <TreeRHasher as Hasher>::Function::hash2_circuit(cs.namespace(|| name), &comm_c, root)?;
        cs.enforce(
            || check,
            |lc| lc + calc.get_variable(),
            |lc| lc + CS::one(),
            |lc| lc + comm_r.get_variable(),
        );
    }

    apex_por::<CS, D>(&mut cs, apex_leafs.clone(), partition_bits.clone(), partition_path, comm_d_new)?;

    let generated_bits = gen_challenge_bits(
        cs.namespace(|| "gen_challenge_bits"),
        &comm_r_new,
        &partition,
        challenge_count,
        challenge_bit_len - partition_bit_len,
    )?;

    // Each challenge on its own fork.
    let shared = Shared { partition_bits: &partition_bits, h_select_bits: &h_select_bits, hs: &hs, phi: &phi, root_r_old: &root_r_old, root_r_new: &root_r_new, apex_leafs: &apex_leafs };
    let lens = Lens { challenge_bit_len, partition_bit_len, apex_leaf_bit_len };
    on_forks(&mut cs, generated_bits.into_iter().zip(&challenge_proofs).enumerate().collect(), hint, |fork, (c_index, (bits, proof))| {
        challenge::<TreeR, CS, D>(fork, c_index, bits, proof, &shared, lens)
    })?;
    Ok(cs.end())
}

/// The prefix's variables every challenge reads.
struct Shared<'a> {
    partition_bits: &'a [AllocatedBit],
    h_select_bits: &'a [AllocatedBit],
    hs: &'a [usize],
    phi: &'a AllocatedNum<Fr>,
    root_r_old: &'a AllocatedNum<Fr>,
    root_r_new: &'a AllocatedNum<Fr>,
    apex_leafs: &'a [AllocatedNum<Fr>],
}

/// Bit lengths of a challenge and its parts.
#[derive(Clone, Copy)]
struct Lens {
    challenge_bit_len: usize,
    partition_bit_len: usize,
    apex_leaf_bit_len: usize,
}

/// Upstream's loop body for challenge `c_index`: rho, the new label from the old one and the new
/// data, the old and new tree R paths, and the tree D path up to its apex leaf.
fn challenge<TreeR: 'static + MerkleTreeTrait<Hasher = TreeRHasher>, CS: Forkable, D: Hashing<CS>>(
    cs: &mut CS::Fork<'_>,
    c_index: usize,
    bits_without_partition: Vec<AllocatedBit>,
    proof: &ChallengeProof<TreeR>,
    s: &Shared<'_>,
    lens: Lens,
) -> Result<(), SynthesisError> {
    let c_bits: Vec<AllocatedBit> = bits_without_partition.into_iter().chain(s.partition_bits.iter().cloned()).collect();
    let c_high = get_challenge_high_bits(cs.namespace(|| format!("get_challenge_high_bits (c_index={c_index})")), &c_bits, s.h_select_bits, s.hs)?;
    let rho = D::rho(cs, format!("rho (c_index={c_index})"), &s.phi, c_high)?;
    let num = |cs: &mut CS::Fork<'_>, name: String, v: Option<Fr>| AllocatedNum::alloc(cs.namespace(|| name), || v.ok_or(SynthesisError::AssignmentMissing));
    let leaf_r_old = num(cs, format!("leaf_r_old (c_index={c_index})"), proof.leaf_r_old)?;
    let leaf_d_new = num(cs, format!("leaf_d_new (c_index={c_index})"), proof.leaf_d_new)?;
    let leaf_r_new = label_r_new(cs.namespace(|| format!("leaf_r_new (c_index={c_index})")), &leaf_r_old, &leaf_d_new, &rho)?;
    // Upstream asserts the computed label equals the vanilla proof's.
    if let (Some(computed), Some(given)) = (leaf_r_new.get_value(), proof.leaf_r_new) {
        if computed != given {
            return Err(SynthesisError::Unsatisfiable);
        }
    }
    let path = |cs: &mut CS::Fork<'_>, which: &str, path: &[Vec<Option<Fr>>]| {
        path.iter()
            .enumerate()
            .map(|(row, siblings)| {
                siblings
                    .iter()
                    .enumerate()
                    .map(|(i, v)| num(cs, format!("{which} sibling (c_index={c_index}, tree_row={row}, sibling_index={i})"), *v))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, SynthesisError>>()
    };
    let siblings = path(cs, "path_r_old", &proof.path_r_old)?;
    let old = TreeRPath { bits: c_bits.clone(), leaf: leaf_r_old, siblings, root: s.root_r_old.clone() };
    D::tree_r_path::<TreeR>(cs, format!("por tree_r_old (c_index={c_index})"), old)?;
    let siblings = path(cs, "path_r_new", &proof.path_r_new)?;
    let new = TreeRPath { bits: c_bits.clone(), leaf: leaf_r_new, siblings, root: s.root_r_new.clone() };
    D::tree_r_path::<TreeR>(cs, format!("por tree_r_new (c_index={c_index})"), new)?;

    let Lens { challenge_bit_len, partition_bit_len, apex_leaf_bit_len } = lens;
    let to_apex_leaf = challenge_bit_len - partition_bit_len - apex_leaf_bit_len;
    let apex_leaf_bits: Vec<Boolean> = c_bits[to_apex_leaf..to_apex_leaf + apex_leaf_bit_len].iter().cloned().map(Boolean::from).collect();
    let apex_leaf = select(cs.namespace(|| format!("select_apex_leaf (c_index={c_index})")), s.apex_leafs, &apex_leaf_bits)?;
    let c_bits_to_apex_leaf: Vec<AllocatedBit> = c_bits.into_iter().take(to_apex_leaf).collect();
    let path_to_apex_leaf = proof
        .path_d_new
        .iter()
        .take(to_apex_leaf)
        .enumerate()
        .map(|(row, siblings)| num(cs, format!("path_to_apex_leaf sibling (c_index={c_index}, tree_row={row})"), siblings[0]).map(|s| vec![s]))
        .collect::<Result<Vec<_>, _>>()?;
    let apex_path = ApexPath { bits: c_bits_to_apex_leaf, leaf: leaf_d_new, siblings: path_to_apex_leaf, root: apex_leaf };
    D::tree_d_path(cs, format!("por to_apex_leaf (c_index={c_index})"), apex_path)
}

/// Upstream's checks of the packed k and h_select (assertions there): k below the partition
/// count, exactly one h_select bit, nothing above.
fn check_k_and_h_select(v: Fr, partition_bit_len: usize, partition_count: usize, h_select_bit_len: usize) -> Result<(), SynthesisError> {
    let bits: Vec<bool> = v.to_le_bits().into_iter().collect();
    let k = bits[..partition_bit_len].iter().enumerate().fold(0usize, |k, (i, b)| k | (usize::from(*b) << i));
    let h_select = &bits[partition_bit_len..partition_bit_len + h_select_bit_len];
    let rest_zero = bits[partition_bit_len + h_select_bit_len..].iter().all(|b| !*b);
    if k < partition_count && h_select.iter().filter(|b| **b).count() == 1 && rest_zero {
        Ok(())
    } else {
        Err(SynthesisError::Unsatisfiable)
    }
}

/// `(2^0 * bits[0] + ... + 2^(n-1) * bits[n-1]) * 1 == num`.
fn enforce_binary_decomposition<CS: ConstraintSystem<Fr>>(cs: &mut CS, name: &'static str, bits: &[AllocatedBit], num: &AllocatedNum<Fr>) {
    let mut lc = LinearCombination::<Fr>::zero();
    let mut pow2 = Fr::ONE;
    for bit in bits {
        lc = lc + (pow2, bit.get_variable());
        pow2 = pow2.double();
    }
    cs.enforce(|| name, |_| lc, |lc| lc + CS::one(), |lc| lc + num.get_variable());
}

/// The partition's apex tree built from its apex leaves (tree D's hash), and its root proved
/// into comm_d along the partition path (upstream `gadgets::apex_por`, in its namespace).
fn apex_por<CS: Forkable, D: Hashing<CS>>(
    cs: &mut CS,
    apex_leafs: Vec<AllocatedNum<Fr>>,
    partition_bits: Vec<AllocatedBit>,
    partition_path: Vec<Vec<AllocatedNum<Fr>>>,
    comm_d: AllocatedNum<Fr>,
) -> Result<(), SynthesisError> {
    let height = apex_leafs.len().trailing_zeros() as usize;
    let mut row = apex_leafs;
    for row_index in 0..height {
        row = row
            .chunks(2)
            .enumerate()
            .map(|(i, pair)| D::hash2(cs, format!("apex_tree generation hash (tree_row={row_index}, siblings={i})"), &pair[0], &pair[1]))
            .collect::<Result<Vec<_>, _>>()?;
    }
    let apex_root = row.into_iter().next().ok_or(SynthesisError::Unsatisfiable)?;
    por_no_challenge_input::<TreeD, _>(cs.namespace(|| "partition-tree por"), partition_bits, apex_root, partition_path, comm_d)
}

/// Each challenge's random bits for the partition (upstream `gadgets::gen_challenge_bits`):
/// digest j = H(comm_r_new || k * digests_per_partition + j), its bits cut into challenges.
fn gen_challenge_bits<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    comm_r_new: &AllocatedNum<Fr>,
    partition: &AllocatedNum<Fr>,
    challenges: usize,
    bits_per_challenge: usize,
) -> Result<Vec<Vec<AllocatedBit>>, SynthesisError> {
    let challenges_per_digest = Fr::CAPACITY as usize / bits_per_challenge;
    // Upstream computes this in f32; the counts are small integers, where that is exact.
    let digests_per_partition = (challenges as f32 / challenges_per_digest as f32).ceil() as u64;
    let mut generated = Vec::with_capacity(challenges);
    for j in 0..digests_per_partition {
        let digest_index = AllocatedNum::alloc(cs.namespace(|| format!("digest_index_{j}")), || {
            let k = partition.get_value().ok_or(SynthesisError::AssignmentMissing)?;
            Ok(k * Fr::from(digests_per_partition) + Fr::from(j))
        })?;
        cs.enforce(
            || format!("digest_index_{j} == k * digests_per_partition + {j}"),
            |lc| lc + (Fr::from(digests_per_partition), partition.get_variable()) + (Fr::from(j), CS::one()),
            |lc| lc + CS::one(),
            |lc| lc + digest_index.get_variable(),
        );
        let digest = poseidon_hash(cs.namespace(|| format!("digest_{j}")), vec![comm_r_new.clone(), digest_index], &*POSEIDON_CONSTANTS_GEN_RANDOMNESS)?;
        let digest_bits = {
            let mut cs = cs.namespace(|| format!("digest_{j}_bits"));
            let bits = field_into_allocated_bits_le(&mut cs, digest.get_value())?;
            enforce_binary_decomposition(&mut cs, "binary decomp", &bits, &digest);
            bits
        };
        let take = if j == digests_per_partition - 1 { challenges - generated.len() } else { challenges_per_digest };
        generated.extend(digest_bits.chunks(bits_per_challenge).take(take).map(<[AllocatedBit]>::to_vec));
    }
    Ok(generated)
}

/// The `h` high bits of a challenge, h picked from `hs` by the one set bit of `h_select_bits`
/// (upstream `gadgets::get_challenge_high_bits`).
fn get_challenge_high_bits<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    c_bits: &[AllocatedBit],
    h_select_bits: &[AllocatedBit],
    hs: &[usize],
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    if h_select_bits.len() != hs.len() {
        return Err(SynthesisError::Unsatisfiable);
    }
    let bit_len = c_bits.len();
    let c_bits: Vec<Boolean> = c_bits.iter().cloned().map(Boolean::from).collect();
    let c_high_and_zeros = hs
        .iter()
        .zip(h_select_bits)
        .enumerate()
        .map(|(k, (h, h_select_bit))| {
            let c_high = pack_bits(cs.namespace(|| format!("c_high (h={h}, k={k})")), &c_bits[bit_len - h..])?;
            let c_high_or_zero = AllocatedNum::alloc(cs.namespace(|| format!("c_high_or_zero (h={h}, k={k})")), || {
                if h_select_bit.get_value().ok_or(SynthesisError::AssignmentMissing)? {
                    c_high.get_value().ok_or(SynthesisError::AssignmentMissing)
                } else {
                    Ok(Fr::ZERO)
                }
            })?;
            cs.enforce(
                || format!("c_high_or_zero == c_high * h_select_bit (h={h}, k={k})"),
                |lc| lc + c_high.get_variable(),
                |lc| lc + h_select_bit.get_variable(),
                |lc| lc + c_high_or_zero.get_variable(),
            );
            Ok(c_high_or_zero)
        })
        .collect::<Result<Vec<_>, SynthesisError>>()?;
    let selected = AllocatedNum::alloc(cs.namespace(|| "c_high_selected"), || {
        c_high_and_zeros.iter().try_fold(Fr::ZERO, |sum, x| Ok(sum + x.get_value().ok_or(SynthesisError::AssignmentMissing)?))
    })?;
    cs.enforce(
        || "c_high_selected == dot(c_highs, h_select_bits)",
        |lc| c_high_and_zeros.iter().fold(lc, |lc, x| lc + x.get_variable()),
        |lc| lc + CS::one(),
        |lc| lc + selected.get_variable(),
    );
    Ok(selected)
}

/// label_r_new = label_r_old + label_d_new * rho (upstream `gadgets::label_r_new`).
fn label_r_new<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    label_r_old: &AllocatedNum<Fr>,
    label_d_new: &AllocatedNum<Fr>,
    rho: &AllocatedNum<Fr>,
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let d_rho = label_d_new.mul(cs.namespace(|| "label_d_new * rho"), rho)?;
    let label = AllocatedNum::alloc(cs.namespace(|| "label_r_new"), || {
        let old = label_r_old.get_value().ok_or(SynthesisError::AssignmentMissing)?;
        let d_rho = d_rho.get_value().ok_or(SynthesisError::AssignmentMissing)?;
        Ok(old + d_rho)
    })?;
    cs.enforce(
        || "label_r_new == label_r_old + label_d_new * rho",
        |lc| lc + label_r_old.get_variable() + d_rho.get_variable(),
        |lc| lc + CS::one(),
        |lc| lc + label.get_variable(),
    );
    Ok(label)
}
