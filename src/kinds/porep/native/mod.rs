//! Native witness generation: the parts of the circuits that cost the most to synthesize
//! through gadgets — SHA-256 (PoRep's labels and comm_d paths: ~99 % of a 32 GiB partition's
//! constraints; SnapDeals' tree D) and Poseidon (PoRep's column hashes and comm_c / comm_r_last
//! paths, the PoSt kinds' tree R paths: `poseidon`) — computed with plain field and integer code
//! that writes each variable the gadget would allocate, in the same order, straight into the
//! witness. Everything else (allocations, bit decompositions, insertions) still runs upstream's
//! gadgets on the same witness constraint system, so the two interleave exactly as in upstream's
//! circuit. The result equals upstream's witness value for value (`tests/native_witness.rs`,
//! `tests/proof_kinds.rs`); with the recorded R1CS it gives upstream's a, b, c.

mod bits;
mod digest;
mod porep;
mod poseidon;
mod sha256;

pub(crate) use digest::{sha256_leaves, tree_d_path};
pub(crate) use porep::witness;
pub(crate) use poseidon::{por_no_challenge_input, poseidon_hash, por_path, PathOptions};

/// Where native gadgets put what they allocate: a witness constraint system's aux vector and
/// its constraint count.
pub(crate) trait Sink {
    /// A new aux variable whose value is 0 or 1.
    fn bit(&mut self, v: bool);
    /// `n` constraints enforced (their values come from the recorded R1CS).
    fn constraints(&mut self, n: usize);
}

impl Sink for crate::synth::WitnessFork<'_> {
    #[inline]
    fn bit(&mut self, v: bool) {
        self.push_bit(v);
    }
    #[inline]
    fn constraints(&mut self, n: usize) {
        self.add_constraints(n);
    }
}

impl Sink for crate::synth::Witness {
    #[inline]
    fn bit(&mut self, v: bool) {
        self.aux.push(if v { blstrs::Scalar::from(1u64) } else { blstrs::Scalar::from(0u64) });
    }
    #[inline]
    fn constraints(&mut self, n: usize) {
        self.constraints += n;
    }
}
