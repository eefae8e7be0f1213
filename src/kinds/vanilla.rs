//! Strangers' vanilla proofs (PoSt sector proofs, SnapDeals partition proofs) checked for shape
//! and canonical field elements before any upstream code reads them. Upstream assumes both: it
//! inserts a path's node at the index the path claims, indexes paths by the tree's level counts
//! and converts every node to a field element with `expect` — a malformed proof panics inside
//! it. So every Merkle proof must have exactly its tree's levels (arity − 1 siblings each, an
//! index below the arity) in its tree's variant (single, sub-tree or top-tree proof), and every
//! node, root, leaf and commitment must be below the BLS12-381 scalar modulus. A proof that
//! breaks either rule is `INVALID_INPUT` naming where; one that is well-formed but proves the
//! wrong thing is the kind's business (a faulty sector, an update that does not verify).

use filecoin_hashers::Domain;
use storage_proofs_core::merkle::{base_path_length, MerkleProofTrait};
use generic_array::typenum::Unsigned;

use crate::error::{Result, ResultExt, Status};

/// Whether `d` is a canonical field element (little-endian, below the scalar modulus).
pub(super) fn canonical<D: Domain>(d: &D) -> bool {
    let bytes: &[u8] = d.as_ref();
    <[u8; 32]>::try_from(bytes).is_ok_and(|b| bool::from(blstrs::Scalar::from_bytes_le(&b).is_some()))
}

/// `d` must be a field element; `what` names it in the error.
pub(super) fn element<D: Domain>(d: &D, what: impl FnOnce() -> String) -> Result<()> {
    if canonical(d) {
        return Ok(());
    }
    Err(err!(InvalidInput, "{} is not a canonical field element (not below the BLS12-381 scalar modulus)", what()))
}

/// A caller's 32-byte commitment (comm_r, comm_d, randomness, prover id) as its tree's domain:
/// a canonical field element, else `INVALID_ARGUMENT` naming it.
pub(super) fn commitment<D: Domain>(bytes: &[u8; 32], what: &str) -> Result<D> {
    filecoin_proofs::as_safe_commitment(bytes, what).status(Status::InvalidArgument, what)
}

/// What every Merkle proof of one tree looks like: the arity of each path level, leaf to root,
/// and the `len()` upstream's proof of that tree's variant reports (a single-level tree's
/// proof: levels × (arity − 1) + 2; a sub-tree proof: the sub-tree arity; a top-tree proof:
/// the top arity) — the one public trait method that tells the variants apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TreeShape {
    arities: Vec<usize>,
    variant_len: usize,
}

impl TreeShape {
    /// The shape of `P`'s tree over `leaves` leaves (upstream's own path-length arithmetic).
    pub(super) fn of<P: MerkleProofTrait>(leaves: usize) -> TreeShape {
        let (base, sub, top) = (P::Arity::to_usize(), P::SubTreeArity::to_usize(), P::TopTreeArity::to_usize());
        let levels = base_path_length::<P::Arity, P::SubTreeArity, P::TopTreeArity>(leaves);
        let mut arities = vec![base; levels];
        arities.extend((sub > 0).then_some(sub));
        arities.extend((top > 0).then_some(top));
        let variant_len = match (sub, top) {
            (_, t) if t > 0 => t,
            (s, _) if s > 0 => s,
            _ => levels * (base - 1) + 2,
        };
        TreeShape { arities, variant_len }
    }

    pub(super) fn levels(&self) -> usize {
        self.arities.len()
    }
}

/// `p` must be a proof of `tree`'s shape with canonical elements; `what` names it.
pub(super) fn merkle<P: MerkleProofTrait>(p: &P, tree: &TreeShape, what: &dyn Fn() -> String) -> Result<()> {
    let path = p.path();
    if path.len() != tree.levels() {
        return Err(err!(InvalidInput, "{} has {} path levels, the tree has {}", what(), path.len(), tree.levels()));
    }
    if p.len() != tree.variant_len {
        return Err(err!(InvalidInput, "{} is not a proof of this sector size's tree (wrong sub-tree / top-tree variant)", what()));
    }
    for (level, ((siblings, index), &arity)) in path.iter().zip(&tree.arities).enumerate() {
        if siblings.len() != arity - 1 || *index >= arity {
            return Err(err!(
                InvalidInput,
                "{} level {level}: {} siblings at index {index}; a level of arity {arity} has {} siblings and an index below {arity}",
                what(),
                siblings.len(),
                arity - 1
            ));
        }
        for (j, s) in siblings.iter().enumerate() {
            element(s, || format!("{} level {level} sibling {j}", what()))?;
        }
    }
    element(&p.leaf(), || format!("{} leaf", what()))?;
    element(&p.root(), || format!("{} root", what()))
}

#[cfg(test)]
mod tests {
    use filecoin_hashers::poseidon::{PoseidonDomain, PoseidonHasher};
    use storage_proofs_core::merkle::MerkleProof;
    use generic_array::typenum::{U0, U2, U8};

    use super::*;

    #[test]
    fn tree_shapes_of_every_sector_size() {
        type Base = MerkleProof<PoseidonHasher, U8, U0, U0>;
        type Sub8 = MerkleProof<PoseidonHasher, U8, U8, U0>;
        type Top2 = MerkleProof<PoseidonHasher, U8, U8, U2>;
        // 2 KiB: 64 leaves, two levels of 8.
        assert_eq!(TreeShape::of::<Base>(64), TreeShape { arities: vec![8, 8], variant_len: 16 });
        // 32 GiB: 2^30 leaves in 8 sub-trees of 2^27 (9 levels of 8), then the sub level.
        let s = TreeShape::of::<Sub8>(1 << 30);
        assert_eq!((s.levels(), s.variant_len, s.arities[9]), (10, 8, 8));
        // 64 GiB: 2 × 8 sub-trees of 2^27.
        let t = TreeShape::of::<Top2>(1 << 31);
        assert_eq!((t.levels(), t.variant_len, t.arities[9], t.arities[10]), (11, 2, 8, 2));
    }

    #[test]
    fn canonical_elements() {
        let d = |b: [u8; 32]| PoseidonDomain::try_from_bytes(&b).unwrap();
        assert!(canonical(&d([0; 32])));
        let mut b = [0xffu8; 32];
        assert!(!canonical(&d(b)));
        b[31] = 0x3f;
        assert!(canonical(&d(b)));
        let e = commitment::<PoseidonDomain>(&[0xff; 32], "comm_r").unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument);
        assert!(e.message.contains("comm_r"), "{}", e.message);
    }
}
