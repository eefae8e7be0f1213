//! neptune's legacy Poseidon circuit (`neptune::circuit::poseidon_hash`, the one filecoin-hashers'
//! Poseidon gadgets call) computed natively into a witness: the same round schedule (the first
//! full round with its constants added before and after the S-boxes and the domain tag's S-box a
//! constant, the pre-sparse matrix before the partial rounds, the sparse matrices in them), and
//! one aux variable and one constraint wherever the gadget allocates and enforces one — four per
//! S-box (its input, x², x⁴, x⁵), three in the first round (the inputs are allocated already),
//! and the result. Through the gadget every matrix product builds linear combinations on the
//! heap (~2 µs a constraint); here it is field arithmetic alone.

use bellperson::gadgets::boolean::{AllocatedBit, Boolean};
use bellperson::gadgets::multipack;
use bellperson::gadgets::num::AllocatedNum;
use bellperson::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use ff::Field;
use filecoin_hashers::PoseidonArity;
use neptune::poseidon::{Arity, PoseidonConstants};
use storage_proofs_core::gadgets::insertion::insert;

use super::Sink;

/// One variable the gadget allocates, with the one constraint it enforces on it.
#[inline]
fn put<C: ConstraintSystem<Scalar> + Sink>(cs: &mut C, v: Scalar) -> Result<(), SynthesisError> {
    cs.alloc(|| "", || Ok(v))?;
    cs.constraints(1);
    Ok(())
}

/// `poseidon_hash(cs, preimage, constants)` into a witness: equal values, equal counts.
pub(crate) fn poseidon_hash<C, A>(cs: &mut C, preimage: &[AllocatedNum<Scalar>], constants: &PoseidonConstants<Scalar, A>) -> Result<AllocatedNum<Scalar>, SynthesisError>
where
    C: ConstraintSystem<Scalar> + Sink,
    A: Arity<Scalar>,
{
    let width = constants.width();
    if preimage.len() + 1 != width {
        return Err(SynthesisError::Unsatisfiable); // upstream: a hash of another arity
    }
    let mut e = Vec::with_capacity(width);
    e.push(constants.domain_tag);
    for p in preimage {
        e.push(p.get_value().ok_or(SynthesisError::AssignmentMissing)?);
    }
    let rc = &constants.compressed_round_constants;
    let half = constants.half_full_rounds;
    let mut round = 0; // matrix products so far (the gadget's `current_round`)
    let mut at = 0; // round constants used (its `constants_offset`)

    // The first full round: constants before and after each S-box; the inputs are allocated.
    let (pre, post) = (&rc[at..at + width], &rc[at + width..at + 2 * width]);
    at += 2 * width;
    let mut tag = e[0];
    neptune_sbox(&mut tag, Some(&pre[0]), Some(&post[0])); // a constant: nothing allocated
    e[0] = tag;
    for i in 1..width {
        let l = e[i] + pre[i];
        let l2 = l.square();
        put(cs, l2)?;
        let l4 = l2.square();
        put(cs, l4)?;
        e[i] = l4 * l + post[i];
        put(cs, e[i])?;
    }
    mds(&mut e, constants, &mut round);
    // Every later S-box input is a linear combination, allocated first.
    let sbox = |cs: &mut C, x: &mut Scalar, post: Option<Scalar>| -> Result<(), SynthesisError> {
        put(cs, *x)?;
        let l2 = x.square();
        put(cs, l2)?;
        let l4 = l2.square();
        put(cs, l4)?;
        *x = l4 * *x + post.unwrap_or(Scalar::ZERO);
        put(cs, *x)
    };
    let full = |cs: &mut C, e: &mut Vec<Scalar>, at: &mut usize, round: &mut usize, last: bool| -> Result<(), SynthesisError> {
        for (i, x) in e.iter_mut().enumerate() {
            sbox(cs, x, (!last).then(|| rc[*at + i]))?;
        }
        if !last {
            *at += width;
        }
        mds(e, constants, round);
        Ok(())
    };
    for _ in 1..half {
        full(cs, &mut e, &mut at, &mut round, false)?;
    }
    for _ in 0..constants.partial_rounds {
        sbox(cs, &mut e[0], Some(rc[at]))?;
        at += 1;
        mds(&mut e, constants, &mut round);
    }
    for _ in 0..half - 1 {
        full(cs, &mut e, &mut at, &mut round, false)?;
    }
    full(cs, &mut e, &mut at, &mut round, true)?;
    let out = AllocatedNum::alloc(cs.namespace(|| "hash result"), || Ok(e[1]))?;
    cs.constraints(1);
    Ok(out)
}

/// neptune's `quintic_s_box` (crate-private upstream): (x + pre)^5 + post.
fn neptune_sbox(x: &mut Scalar, pre: Option<&Scalar>, post: Option<&Scalar>) {
    if let Some(p) = pre {
        *x += p;
    }
    let x4 = x.square().square();
    *x *= x4;
    if let Some(p) = post {
        *x += p;
    }
}

/// The gadget's `product_mds` at `round`: the pre-sparse matrix before the partial rounds, a
/// sparse matrix in each of them, the MDS matrix elsewhere (new[j] = Σ_i e[i]·M[i][j]).
fn mds<A: Arity<Scalar>>(e: &mut Vec<Scalar>, c: &PoseidonConstants<Scalar, A>, round: &mut usize) {
    let sparse_offset = c.half_full_rounds - 1;
    let dense = |e: &[Scalar], m: &[Vec<Scalar>]| -> Vec<Scalar> {
        (0..e.len()).map(|j| e.iter().zip(m).fold(Scalar::ZERO, |acc, (x, row)| acc + *x * row[j])).collect()
    };
    *e = if *round == sparse_offset {
        dense(e, &c.pre_sparse_matrix)
    } else if *round > sparse_offset && *round < c.half_full_rounds + c.partial_rounds {
        let s = &c.sparse_matrixes[*round - sparse_offset - 1];
        let first = e.iter().zip(&s.w_hat).fold(Scalar::ZERO, |acc, (x, w)| acc + *x * w);
        let e0 = e[0];
        std::iter::once(first).chain(e[1..].iter().zip(&s.v_rest).map(|(x, v)| *x + e0 * v)).collect()
    } else {
        dense(e, &c.mds_matrices.m)
    };
    *round += 1;
}

/// A Merkle path's levels as `MerkleProofTrait::as_options` gives them (base levels, then the
/// sub-tree's and the top tree's level when the tree has them): each level's sibling hashes and
/// the node's index among its arity.
pub(crate) type PathOptions = [(Vec<Option<Scalar>>, Option<usize>)];

/// `PoRCircuit::<Tree>::synthesize(cs, Root::Var(leaf), path, Root::Var(root), true)` for a
/// Poseidon tree of arities `U` (base), `V` (sub-tree, 0 for none), `W` (top, 0 for none), into
/// a witness: upstream's gadgets for the index bits, the insertion, the packed path bits and the
/// root check, and each level's hash natively. (A `Root::Val` leaf is allocated by the caller
/// first, as upstream's `value.allocated` does.)
pub(crate) fn por_path<U, V, W, C>(cs: &mut C, leaf: AllocatedNum<Scalar>, path: &PathOptions, root: &AllocatedNum<Scalar>) -> Result<(), SynthesisError>
where
    U: PoseidonArity,
    V: PoseidonArity,
    W: PoseidonArity,
    C: ConstraintSystem<Scalar> + Sink,
{
    let mut cur = leaf;
    let mut bits = Vec::new();
    for ((hashes, index), (tree, arity)) in path.iter().zip(levels::<U, V, W>(path.len())?) {
        let mut index_bits = Vec::with_capacity(arity.trailing_zeros() as usize);
        for i in 0..arity.trailing_zeros() {
            let bit = AllocatedBit::alloc(cs.namespace(|| "index bit"), index.map(|x| (x >> i) & 1 == 1))?;
            index_bits.push(Boolean::from(bit));
        }
        bits.extend_from_slice(&index_bits);
        let siblings = hashes
            .iter()
            .map(|h| AllocatedNum::alloc(cs.namespace(|| "path element"), || h.ok_or(SynthesisError::AssignmentMissing)))
            .collect::<Result<Vec<_>, _>>()?;
        cur = hash_level::<U, V, W, C>(cs, (tree, arity), &cur, &index_bits, &siblings)?;
    }
    multipack::pack_into_inputs(cs.namespace(|| "path"), &bits)?;
    enforce_root(cs, &cur, root);
    Ok(())
}

/// `por_no_challenge_input::<Tree>(cs, challenge_bits, leaf, path, root)` for a Poseidon tree of
/// arities `U`, `V`, `W` as in [`por_path`], into a witness: the caller has allocated the
/// challenge's bits (little-endian: each level's index bits in turn) and every sibling; per level
/// upstream's `insert`, then the hash natively; the root check last. Upstream's assertions on a
/// path or bit count that does not fit the tree are errors here.
pub(crate) fn por_no_challenge_input<U, V, W, C>(
    cs: &mut C,
    challenge_bits: Vec<AllocatedBit>,
    leaf: AllocatedNum<Scalar>,
    path: Vec<Vec<AllocatedNum<Scalar>>>,
    root: &AllocatedNum<Scalar>,
) -> Result<(), SynthesisError>
where
    U: PoseidonArity,
    V: PoseidonArity,
    W: PoseidonArity,
    C: ConstraintSystem<Scalar> + Sink,
{
    let mut bits = challenge_bits.into_iter().map(Boolean::from);
    let mut cur = leaf;
    for (siblings, (tree, arity)) in path.iter().zip(levels::<U, V, W>(path.len())?) {
        let index = (0..arity.trailing_zeros()).map(|_| bits.next().ok_or(SynthesisError::Unsatisfiable)).collect::<Result<Vec<_>, _>>()?;
        cur = hash_level::<U, V, W, C>(cs, (tree, arity), &cur, &index, siblings)?;
    }
    if bits.next().is_some() {
        return Err(SynthesisError::Unsatisfiable); // more challenge bits than the tree's levels take
    }
    enforce_root(cs, &cur, root);
    Ok(())
}

/// Each of a path's `n` levels' tree (0 base, 1 sub-tree, 2 top tree) and arity, for a Poseidon
/// tree of arities `U`, `V`, `W` (0: no such tree): the base levels, then one level of the
/// sub-tree and one of the top tree where they exist. A shape upstream asserts against is an
/// error.
fn levels<U: PoseidonArity, V: PoseidonArity, W: PoseidonArity>(n: usize) -> Result<impl Iterator<Item = (usize, usize)>, SynthesisError> {
    let arities = [U::to_usize(), V::to_usize(), W::to_usize()];
    let upper = arities[1..].iter().filter(|&&a| a > 0).count();
    if n < upper || arities[2] > 0 && arities[1] == 0 {
        return Err(SynthesisError::Unsatisfiable);
    }
    let base = n - upper;
    Ok((0..n).map(move |level| {
        let tree = if level < base { 0 } else { 1 + level - base };
        (tree, arities[tree])
    }))
}

/// The path's computed root equals the given one (one constraint).
fn enforce_root<C: ConstraintSystem<Scalar>>(cs: &mut C, computed: &AllocatedNum<Scalar>, root: &AllocatedNum<Scalar>) {
    cs.enforce(|| "root", |lc| lc + computed.get_variable(), |lc| lc + C::one(), |lc| lc + root.get_variable());
}

/// One level of a Poseidon Merkle path: `cur` inserted among the siblings at the index the bits
/// give (upstream's `insert`), hashed natively with the arity of `tree` (0 base, 1 sub, 2 top;
/// [`levels`]). Siblings that do not fill the arity are an error.
fn hash_level<U, V, W, C>(cs: &mut C, (tree, arity): (usize, usize), cur: &AllocatedNum<Scalar>, index: &[Boolean], siblings: &[AllocatedNum<Scalar>]) -> Result<AllocatedNum<Scalar>, SynthesisError>
where
    U: PoseidonArity,
    V: PoseidonArity,
    W: PoseidonArity,
    C: ConstraintSystem<Scalar> + Sink,
{
    if siblings.len() + 1 != arity {
        return Err(SynthesisError::Unsatisfiable);
    }
    let inserted = insert(cs, cur, index, siblings)?;
    match tree {
        0 => poseidon_hash(cs, &inserted, U::PARAMETERS()),
        1 => poseidon_hash(cs, &inserted, V::PARAMETERS()),
        _ => poseidon_hash(cs, &inserted, W::PARAMETERS()),
    }
}
