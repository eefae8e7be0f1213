//! What PoSt and SnapDeals share: partition circuits built by an upstream `CompoundProof`
//! (synthesized through bellperson's circuit into our [`Assignment`], or recorded once and then
//! synthesized as witnesses alone), and a statement that is each partition's public inputs as
//! upstream's verifier computes them.

use bellperson::groth16::{PreparedVerifyingKey, Proof};
use blstrs::{Bls12, Scalar};

use super::{CircuitId, Statement};
use crate::error::{Result, ResultExt, Status};
use crate::synth::{conclude, Assignment, Forkable, PartitionCircuits, R1cs, Recorder, SizeHint, Witness};

/// Builds partition `k`'s circuit exactly as upstream's `CompoundProof::circuit` does.
pub(super) trait BuildCircuit: Send + Sync {
    type Circuit: bellperson::Circuit<Scalar> + Send;
    fn partitions(&self) -> usize;
    fn circuit(&self, k: usize) -> Result<Self::Circuit>;
    /// `circuit` synthesized into `cs` (ready for a circuit: bellperson's ONE allocated) and
    /// closed: a kind with independent sub-circuits does them on all threads, equal to upstream's
    /// sequential synthesis (the default) value for value. One function for the three
    /// constraint systems — the full assignment, the witness alone and the recording — so that
    /// the recorded path's values are the full path's by construction.
    fn synthesize_into<CS: Forkable>(&self, mut cs: CS, circuit: Self::Circuit, hint: SizeHint) -> std::result::Result<CS, bellperson::SynthesisError> {
        let _ = hint;
        bellperson::Circuit::synthesize(circuit, &mut cs)?;
        Ok(cs.end())
    }
    /// The witness alone of partition `k` (its `circuit`): `synthesize_into` a witness-only
    /// system unless the kind computes its costly gadgets natively (their values equal, checked
    /// against upstream's synthesis).
    fn witness_into(&self, cs: Witness, k: usize, circuit: Self::Circuit, hint: SizeHint) -> std::result::Result<Witness, bellperson::SynthesisError> {
        let _ = k;
        self.synthesize_into(cs, circuit, hint)
    }
    /// Independent sub-circuits a partition's synthesis spreads over (see
    /// [`PartitionCircuits::sub_circuits`]).
    fn sub_circuits(&self) -> usize {
        1
    }
}

/// [`PartitionCircuits`] of any [`BuildCircuit`] of the circuit `id`: full synthesis, and the
/// recorded path (the circuit recorded once, then each partition's witness alone).
pub(super) struct Compound<B> {
    pub id: CircuitId,
    pub build: B,
}

impl<B: BuildCircuit> PartitionCircuits for Compound<B> {
    fn partitions(&self) -> usize {
        self.build.partitions()
    }

    fn synthesize(&self, k: usize, hint: SizeHint) -> Result<Assignment> {
        let circuit = self.build.circuit(k)?;
        let cs = Assignment::begin(hint).status(Status::Synthesis, "allocating the assignment")?;
        self.build.synthesize_into(cs, circuit, hint).status(Status::Synthesis, &format!("synthesizing partition {k}"))
    }

    fn recordable(&self) -> bool {
        true
    }

    fn witness(&self, k: usize, hint: SizeHint) -> Result<Witness> {
        let circuit = self.build.circuit(k)?;
        self.build
            .witness_into(Witness::begin(hint), k, circuit, hint)
            .status(Status::Synthesis, &format!("synthesizing the witness of partition {k}"))
    }

    fn record(&self, k: usize, hint: SizeHint, cancelled: &(dyn Fn() -> bool + Sync)) -> Result<R1cs> {
        let circuit = self.build.circuit(k)?;
        let res = self.build.synthesize_into(Recorder::new(self.id, hint, cancelled), circuit, hint);
        conclude(res, self.id, cancelled)
    }

    fn sub_circuits(&self) -> usize {
        self.build.sub_circuits()
    }

    #[cfg(any(test, feature = "tools"))]
    fn upstream(&self) -> Option<&dyn crate::synth::upstream::Upstream> {
        Some(self)
    }
}

#[cfg(any(test, feature = "tools"))]
impl<B: BuildCircuit> crate::synth::upstream::Upstream for Compound<B> {
    fn synthesize_sequential(&self, k: usize, hint: SizeHint) -> Result<Assignment> {
        crate::synth::upstream::sequential(self.build.circuit(k)?, k, hint)
    }

    fn witness_sequential(&self, k: usize) -> Result<(Vec<Scalar>, Vec<Scalar>)> {
        crate::synth::upstream::witness_only(self.build.circuit(k)?, k)
    }

    fn bellperson_reference(&self, k: usize, params: &bellperson::groth16::Parameters<Bls12>, r: Scalar, s: Scalar) -> Result<Proof<Bls12>> {
        crate::synth::upstream::reference_proof(self.build.circuit(k)?, params, r, s)
    }
}

/// A proof of `inputs.len()` partitions, partition `k` against public inputs `inputs[k]`
/// (without bellperson's leading ONE), batch-verified the way upstream's `CompoundProof::verify`
/// does once it has computed them.
pub struct PartitionInputs {
    pub what: String,
    pub inputs: Vec<Vec<Scalar>>,
}

/// Bytes of one Groth16 proof (compressed A, B, C).
pub const PROOF_BYTES: usize = 192;

impl Statement for PartitionInputs {
    fn verify(&self, pvk: &PreparedVerifyingKey<Bls12>, proof: &[u8]) -> Result<bool> {
        let n = self.inputs.len();
        if proof.len() != n * PROOF_BYTES {
            return Err(err!(
                InvalidArgument,
                "proof is {} bytes; a {} proof of {n} partition(s) is {} bytes",
                proof.len(),
                self.what,
                n * PROOF_BYTES
            ));
        }
        let proofs = proof
            .chunks(PROOF_BYTES)
            .map(Proof::<Bls12>::read)
            .collect::<std::io::Result<Vec<_>>>()
            .status(Status::InvalidArgument, "proof bytes are not valid Groth16 proofs")?;
        let refs: Vec<&Proof<Bls12>> = proofs.iter().collect();
        bellperson::groth16::verify_proofs_batch(pvk, &mut rand::rngs::OsRng, &refs, &self.inputs)
            .status(Status::Verification, "verification")
    }
}

/// Decode each of `bytes` as upstream does (bincode), refusing more than the bytes could hold.
pub(crate) fn decode_all<T: serde::de::DeserializeOwned>(bytes: &[&[u8]], what: &str) -> Result<Vec<T>> {
    use bincode::Options;
    if bytes.is_empty() {
        return Err(err!(InvalidInput, "no {what} given"));
    }
    bytes
        .iter()
        .enumerate()
        .map(|(i, b)| {
            bincode::DefaultOptions::new()
                .with_fixint_encoding()
                .allow_trailing_bytes()
                .with_limit(b.len() as u64)
                .deserialize(b)
                .map_err(|e| err!(InvalidInput, "{what} {i} ({} bytes) cannot be decoded: {e}", b.len()))
        })
        .collect()
}
