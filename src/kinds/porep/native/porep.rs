//! A StackedDrg partition's witness with the hashes computed natively: the prefix and the fork
//! per challenge as in [`super::super::challenges`], and each challenge's sub-circuit mirroring
//! `storage_proofs_porep::stacked::circuit::params::Proof::synthesize` (19.x) step for step —
//! [`create_label`] and [`sha256_inclusion`] for the SHA-256 parts, [`column_hash`] and
//! [`tree_path`] for the Poseidon ones (the 15 column hashes and comm_c paths and the comm_r_last
//! path of each challenge), upstream's gadgets for the rest (allocations, bit decompositions,
//! insertions, the encoding).

use bellperson::gadgets::boolean::{AllocatedBit, Boolean};
use bellperson::gadgets::multipack;
use bellperson::gadgets::num::AllocatedNum;
use bellperson::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use filecoin_hashers::{POSEIDON_CONSTANTS_11, POSEIDON_CONSTANTS_2};
use filecoin_proofs::constants::DefaultPieceDomain;
use filecoin_proofs::types::{MerkleTreeTrait, VanillaSealProof};
use storage_proofs_core::gadgets::uint64::UInt64;
use storage_proofs_core::gadgets::{constraint, encode::encode, insertion::insert};
use storage_proofs_core::merkle::MerkleProofTrait;
use storage_proofs_core::util::reverse_bit_numbering;
use storage_proofs_porep::stacked;

use super::bits::Bit;
use super::poseidon::{poseidon_hash, por_path, PathOptions};
use super::digest::{bits, pack_digest, sha256_leaves};
use super::Sink;
use super::super::challenges::{self, circuit_proofs, ReplicaDomain};
use crate::synth::{SizeHint, Witness, WitnessFork};

/// Partition witness of `vanilla` (one partition's challenges), equal to upstream's.
pub(crate) fn witness<Tree: 'static + MerkleTreeTrait>(
    public_inputs: &stacked::PublicInputs<ReplicaDomain<Tree>, DefaultPieceDomain>,
    vanilla: &[VanillaSealProof<Tree>],
    hint: SizeHint,
) -> Result<Witness, SynthesisError> {
    let items: Vec<_> = circuit_proofs!(Tree, vanilla)
        .into_iter()
        .zip(vanilla)
        .collect();
    challenges::run::<Tree, Witness, _>(
        Witness::begin(hint),
        public_inputs,
        vanilla,
        hint,
        items,
        |cs: &mut WitnessFork<'_>, (proof, v), p| {
            let layers = v.labeling_proofs.len();
            let data_leaf = AllocatedNum::alloc(cs.namespace(|| "data_leaf"), || {
                proof.data_leaf.ok_or(SynthesisError::AssignmentMissing)
            })?;
            sha256_inclusion(cs, &data_leaf, v.comm_d_proofs.as_options(), &p.comm_d)?;

            // Parent columns: allocated, hashed (Poseidon) and proven against comm_c, drg then
            // expander parents. The paths come from the vanilla proofs (see `column_path`).
            let columns = &v.replica_column_proofs;
            let (n_drg, mut parent_columns) = (proof.drg_parents_proofs.len(), Vec::new());
            for (parent, vanilla) in proof
                .drg_parents_proofs
                .into_iter()
                .chain(proof.exp_parents_proofs)
                .zip(columns.drg_parents.iter().chain(&columns.exp_parents))
            {
                let (column, _) = parent.alloc(&mut *cs)?;
                let rows: Vec<_> = (1..=layers).map(|l| column.get_value(l).clone()).collect();
                let hash = column_hash(cs, &rows)?;
                tree_path::<Tree>(cs, hash, &column_path(vanilla)?, &p.comm_c)?;
                parent_columns.push(rows);
            }
            let (drg, exp) = parent_columns.split_at(n_drg);

            let challenge = UInt64::alloc(cs.namespace(|| "challenge"), proof.challenge)?;
            challenge.pack_into_input(cs.namespace(|| "challenge input"))?;
            let node = bits(&challenge.to_bits_be())?;
            let replica_id = bits(&p.replica_id_bits)?;

            let mut labels = Vec::with_capacity(layers);
            for layer in 1..=layers {
                let mut parents = Vec::with_capacity(drg.len() + exp.len());
                for col in drg {
                    parents.push(bits(&reverse_bit_numbering(
                        col[layer - 1].to_bits_le(&mut *cs)?,
                    ))?);
                }
                if layer > 1 {
                    for col in exp {
                        parents.push(bits(&reverse_bit_numbering(
                            col[layer - 2].to_bits_le(&mut *cs)?,
                        ))?);
                    }
                }
                // The 37 parents a label hashes: the base parents repeated as upstream does.
                let n = parents.len();
                let expanded: Vec<&[Bit]> = if layer > 1 {
                    (0..2 * n)
                        .map(|i| i % n)
                        .chain(0..9)
                        .map(|i| parents[i].as_slice())
                        .collect()
                } else {
                    (0..6 * n)
                        .map(|i| i % n)
                        .chain([0])
                        .map(|i| parents[i].as_slice())
                        .collect()
                };
                if expanded.len() != 37 {
                    return Err(SynthesisError::Unsatisfiable);
                }
                labels.push(create_label(
                    cs,
                    &replica_id,
                    &expanded,
                    layer as u32,
                    &node,
                )?);
            }

            let key = labels.last().ok_or(SynthesisError::AssignmentMissing)?;
            let encoded = encode(cs.namespace(|| "encode_node"), key, &data_leaf)?;
            let comm_r_last_path = v.comm_r_last_proof.as_options();
            tree_path::<Tree>(cs, encoded, &comm_r_last_path, &p.comm_r_last)?;

            let hash = column_hash(cs, &labels)?;
            tree_path::<Tree>(cs, hash, &column_path(&columns.c_x)?, &p.comm_c)
        },
    )
}

/// `hash_single_column`: a column of 2 or 11 rows (the only sizes upstream has) under Poseidon.
fn column_hash(cs: &mut WitnessFork<'_>, rows: &[AllocatedNum<Scalar>]) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    match rows.len() {
        2 => poseidon_hash(cs, rows, &*POSEIDON_CONSTANTS_2),
        11 => poseidon_hash(cs, rows, &*POSEIDON_CONSTANTS_11),
        _ => Err(SynthesisError::Unsatisfiable),
    }
}

/// `enforce_inclusion` of upstream's circuit: a leaf under a root of a tree of `Tree`'s shape.
fn tree_path<Tree: MerkleTreeTrait>(cs: &mut WitnessFork<'_>, leaf: AllocatedNum<Scalar>, path: &PathOptions, root: &AllocatedNum<Scalar>) -> Result<(), SynthesisError> {
    por_path::<Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity, _>(cs, leaf, path, root)
}

/// A vanilla column proof's Merkle path as `as_options` gives it, which is what upstream's
/// circuit proves. Upstream keeps the path in a crate-private field with no getter, but the
/// proof is serde-public, and bincode writes a struct as its fields in order: the column, then
/// the path. Read back as that pair, the bytes give the path (~3 KB a proof at 32 GiB). A change
/// of upstream's layout fails here or in `tests/native_witness.rs`, never silently.
fn column_path<P: MerkleProofTrait>(proof: &stacked::ColumnProof<P>) -> Result<Vec<(Vec<Option<Scalar>>, Option<usize>)>, SynthesisError> {
    let unreadable = |e: bincode::Error| SynthesisError::IoError(std::io::Error::other(format!("reading a column proof's Merkle path: {e}")));
    let bytes = bincode::serialize(proof).map_err(unreadable)?;
    let (_, path): (stacked::Column<P::Hasher>, P) = bincode::deserialize(&bytes).map_err(unreadable)?;
    Ok(path.as_options())
}

/// `create_label_circuit`: SHA-256 of replica id, layer, node and the 37 parents' labels.
fn create_label<C: ConstraintSystem<Scalar> + Sink>(
    cs: &mut C,
    replica_id: &[Bit],
    parents: &[&[Bit]],
    layer: u32,
    node_be: &[Bit],
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    let mut msg = Vec::with_capacity((2 + parents.len()) * 256);
    msg.extend_from_slice(replica_id);
    msg.resize(msg.len().max(256), Bit::Const(false));
    msg.extend((0..32).rev().map(|i| Bit::Const((layer >> i) & 1 == 1)));
    msg.extend_from_slice(node_be);
    msg.resize(msg.len().max(512), Bit::Const(false));
    for parent in parents {
        msg.extend_from_slice(parent);
        msg.resize(msg.len().next_multiple_of(256), Bit::Const(false));
    }
    pack_digest(cs, &msg)
}

/// `PoRCircuit::synthesize` for the binary SHA-256 tree of comm_d (arity 2, no sub or top
/// tree, private root): per level an index bit, the sibling, the ordered pair, its hash.
fn sha256_inclusion<C: ConstraintSystem<Scalar> + Sink>(
    cs: &mut C,
    leaf: &AllocatedNum<Scalar>,
    path: Vec<(Vec<Option<Scalar>>, Option<usize>)>,
    root: &AllocatedNum<Scalar>,
) -> Result<(), SynthesisError> {
    let mut cur = leaf.clone();
    let mut path_bits = Vec::with_capacity(path.len());
    for (hashes, index) in path {
        let index = index.ok_or(SynthesisError::AssignmentMissing)?;
        let bit = Boolean::from(AllocatedBit::alloc(
            cs.namespace(|| "index bit"),
            Some(index & 1 == 1),
        )?);
        path_bits.push(bit.clone());
        let siblings = hashes
            .iter()
            .map(|h| {
                AllocatedNum::alloc(cs.namespace(|| "path element"), || {
                    h.ok_or(SynthesisError::AssignmentMissing)
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let pair = insert(cs, &cur, &[bit], &siblings)?;
        cur = sha256_leaves(cs, &pair)?;
    }
    multipack::pack_into_inputs(cs.namespace(|| "path"), &path_bits)?;
    constraint::equal(cs, || "enforce root is correct", &cur, root);
    Ok(())
}
