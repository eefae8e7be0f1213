//! SHA-256 digests as filecoin's circuits take them — packed into a number (labels, tree D's
//! nodes), over numbers' bits (`Sha256Function::hash_multi_leaf_circuit` and `hash2_circuit`) —
//! and tree D's inclusion path, computed natively into a witness (`Sink`): PoRep's comm_d paths
//! and labels, SnapDeals' apex tree and tree D paths.

use bellperson::gadgets::boolean::{AllocatedBit, Boolean};
use bellperson::gadgets::num::AllocatedNum;
use bellperson::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use storage_proofs_core::gadgets::insertion::insert;

use super::bits::Bit;
use super::sha256::sha256;
use super::Sink;

/// The gadget bits behind upstream `Boolean`s.
pub(crate) fn bits(b: &[Boolean]) -> Result<Vec<Bit>, SynthesisError> {
    b.iter()
        .map(|b| match b {
            Boolean::Constant(c) => Ok(Bit::Const(*c)),
            Boolean::Is(a) => a
                .get_value()
                .map(Bit::Is)
                .ok_or(SynthesisError::AssignmentMissing),
            Boolean::Not(a) => a
                .get_value()
                .map(Bit::Not)
                .ok_or(SynthesisError::AssignmentMissing),
        })
        .collect()
}

/// `multipack::pack_bits`: the first 254 bits (least significant first) as one number.
fn pack_bits<C: ConstraintSystem<Scalar> + Sink>(
    cs: &mut C,
    bits: &[Bit],
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    let mut le = [0u8; 32];
    for (i, b) in bits.iter().take(254).enumerate() {
        le[i / 8] |= (b.value() as u8) << (i % 8);
    }
    let value =
        Option::<Scalar>::from(Scalar::from_bytes_le(&le)).ok_or(SynthesisError::Unsatisfiable)?;
    let num = AllocatedNum::alloc(cs.namespace(|| "input"), || Ok(value))?;
    cs.constraints(1); // the packing constraint
    Ok(num)
}

/// Bits with the order reversed inside each byte (upstream's `reverse_bit_numbering`; the
/// length is a whole number of bytes here).
fn bytes_reversed(bits: &[Bit]) -> impl Iterator<Item = Bit> + '_ {
    bits.chunks(8).flat_map(|c| c.iter().rev()).copied()
}

/// SHA-256 of `msg`, its first 254 bits (bit order reversed in each byte) packed into a number:
/// how labels and comm_d's tree nodes come out of the hash.
pub(crate) fn pack_digest<C: ConstraintSystem<Scalar> + Sink>(cs: &mut C, msg: &[Bit]) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    let digest = sha256(cs, msg);
    let le: Vec<Bit> = bytes_reversed(&digest).collect();
    pack_bits(cs, &le)
}

/// `Sha256Function::hash_multi_leaf_circuit`: each leaf's 255 bits padded to bytes (bits
/// reversed within each byte), hashed, the digest's first 254 bits packed.
pub(crate) fn sha256_leaves<C: ConstraintSystem<Scalar> + Sink>(
    cs: &mut C,
    leaves: &[AllocatedNum<Scalar>],
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    let mut msg = Vec::with_capacity(leaves.len() * 256);
    for leaf in leaves {
        let mut b = bits(&leaf.to_bits_le(cs.namespace(|| "num_into_bits"))?)?;
        b.resize(b.len().next_multiple_of(8), Bit::Const(false));
        msg.extend(bytes_reversed(&b));
    }
    pack_digest(cs, &msg)
}

/// `por_no_challenge_input` for tree D (binary SHA-256, no sub or top tree): per level the
/// challenge's next bit places the node beside its sibling, the pair is hashed; the root is
/// enforced equal to `root`.
pub(crate) fn tree_d_path<C: ConstraintSystem<Scalar> + Sink>(
    cs: &mut C,
    challenge_bits: Vec<AllocatedBit>,
    leaf: AllocatedNum<Scalar>,
    path: Vec<Vec<AllocatedNum<Scalar>>>,
    root: &AllocatedNum<Scalar>,
) -> Result<(), SynthesisError> {
    if challenge_bits.len() != path.len() || path.iter().any(|s| s.len() != 1) {
        return Err(SynthesisError::Unsatisfiable);
    }
    let mut cur = leaf;
    for (bit, siblings) in challenge_bits.into_iter().zip(path) {
        let pair = insert(cs, &cur, &[Boolean::from(bit)], &siblings)?;
        cur = sha256_leaves(cs, &pair)?;
    }
    cs.enforce(|| "calculated root == provided root", |lc| lc + cur.get_variable(), |lc| lc + C::one(), |lc| lc + root.get_variable());
    Ok(())
}
