//! Upstream's own paths through a kind's partition circuits — sequential synthesis, bellperson's
//! witness-only constraint system, bellperson's `create_proof_batch` — which the fast paths must
//! equal value for value and byte for byte. Tests and benchmarks only: compiled with the `tools`
//! feature, never into the shipped library.

use bellperson::groth16::{Parameters, Proof};
use blstrs::{Bls12, Scalar};

use super::{Assignment, PartitionCircuits, SizeHint};
use crate::error::{Result, ResultExt, Status};

pub trait Upstream {
    /// Partition `k` through upstream's own circuit on one thread: what
    /// [`PartitionCircuits::synthesize`] must equal exactly.
    fn synthesize_sequential(&self, k: usize, hint: SizeHint) -> Result<Assignment>;

    /// Partition `k`'s witness (inputs, aux) from upstream's circuit through bellperson's
    /// witness-only constraint system on one thread: no linear combination is evaluated (the
    /// floor of any synthesis that computes a, b, c from a recorded R1CS).
    fn witness_sequential(&self, k: usize) -> Result<(Vec<Scalar>, Vec<Scalar>)>;

    /// Partition `k` proved by bellperson's own `create_proof_batch`: the reference every
    /// backend must match byte for byte.
    fn bellperson_reference(&self, k: usize, params: &Parameters<Bls12>, r: Scalar, s: Scalar) -> Result<Proof<Bls12>>;
}

/// The upstream paths of `circuits`, or `Unsupported` for circuits without them (toys).
pub fn of(circuits: &dyn PartitionCircuits) -> Result<&dyn Upstream> {
    circuits.upstream().ok_or_else(|| err!(Unsupported, "this circuit has no upstream reference paths"))
}

/// `circuit` synthesized by upstream's sequential path, as partition `k`.
pub(crate) fn sequential<C: bellperson::Circuit<Scalar>>(circuit: C, k: usize, hint: SizeHint) -> Result<Assignment> {
    Assignment::synthesize(circuit, hint).status(Status::Synthesis, &format!("synthesizing partition {k}"))
}

/// `circuit`'s witness (inputs, aux) through bellperson's witness-only constraint system, as
/// partition `k`.
pub(crate) fn witness_only<C: bellperson::Circuit<Scalar>>(circuit: C, k: usize) -> Result<(Vec<Scalar>, Vec<Scalar>)> {
    use bellperson::util_cs::witness_cs::WitnessCS;
    use bellperson::ConstraintSystem;
    let mut cs = WitnessCS::<Scalar>::new();
    circuit.synthesize(&mut cs).status(Status::Synthesis, &format!("witness of partition {k}"))?;
    Ok((cs.scalar_inputs(), cs.scalar_aux()))
}

/// `circuit` proved by bellperson's `create_proof_batch` with `r`, `s`.
pub(crate) fn reference_proof<C: bellperson::Circuit<Scalar> + Send>(circuit: C, params: &Parameters<Bls12>, r: Scalar, s: Scalar) -> Result<Proof<Bls12>> {
    let mut proofs = bellperson::groth16::create_proof_batch(vec![circuit], params, vec![r], vec![s])
        .status(Status::Prover, "bellperson create_proof_batch")?;
    proofs.pop().ok_or_else(|| err!(Internal, "bellperson returned no proof"))
}
