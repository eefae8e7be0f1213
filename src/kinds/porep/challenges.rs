//! StackedDrg partition synthesis with the challenges on all threads.
//!
//! Mirrors `storage_proofs_porep::stacked::StackedCircuit::synthesize` (19.x): the shared
//! prefix (replica id, comm_d, comm_r, comm_r_last, comm_c and `comm_r = H(comm_c, comm_r_last)`)
//! is synthesized once, then each challenge's sub-circuit — independent of the others, reading
//! only the prefix's variables — on its own [`Fork`], and the forks are absorbed in challenge
//! order. Generic over the constraint system ([`Forkable`]): full synthesis ([`Assignment`]) or
//! the witness alone ([`super::witness::Witness`]). The result equals sequential synthesis exactly (tested against upstream's circuit in
//! `tests/parallel_synthesis.rs`). A 2 KiB partition has 2 challenges, a 32 GiB one 18.

use bellperson::gadgets::boolean::Boolean;
use bellperson::gadgets::num::AllocatedNum;
use bellperson::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use filecoin_hashers::{HashFunction, Hasher};
use filecoin_proofs::constants::DefaultPieceDomain;
use filecoin_proofs::types::{MerkleTreeTrait, VanillaSealProof};
use storage_proofs_core::gadgets::constraint;
use storage_proofs_core::util::reverse_bit_numbering;
use storage_proofs_porep::stacked;

use crate::synth::{on_forks, Forkable, SizeHint};

/// Upstream's per-challenge circuits (`stacked::circuit::params::Proof`, a type storage-proofs
/// does not export by name: callers use its public fields and methods where it is inferred).
macro_rules! circuit_proofs {
    ($tree:ty, $vanilla:expr) => {
        $crate::kinds::porep::challenges::challenge_type(
            |p| {
                drop(storage_proofs_porep::stacked::StackedCircuit::<
                    $tree,
                    filecoin_proofs::constants::DefaultPieceHasher,
                >::synthesize(
                    $crate::synth::Assignment::new(),
                    None,
                    None,
                    None,
                    None,
                    None,
                    p,
                ))
            },
            $vanilla.iter().cloned().map(Into::into).collect(),
        )
    };
}
pub(super) use circuit_proofs;

pub(super) type ReplicaDomain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

/// The variables every challenge's sub-circuit reads, from the shared prefix.
pub(super) struct Prefix {
    pub replica_id_bits: Vec<Boolean>,
    pub comm_d: AllocatedNum<Scalar>,
    pub comm_c: AllocatedNum<Scalar>,
    pub comm_r_last: AllocatedNum<Scalar>,
}

/// Upstream's circuit into `cs` (ready for a circuit): the prefix, then each challenge's
/// `Proof::synthesize` on its own fork.
pub(super) fn synthesize<Tree: 'static + MerkleTreeTrait, CS: Forkable>(
    cs: CS,
    public_inputs: &stacked::PublicInputs<ReplicaDomain<Tree>, DefaultPieceDomain>,
    vanilla: &[VanillaSealProof<Tree>],
    hint: SizeHint,
) -> Result<CS, SynthesisError> {
    let proofs = circuit_proofs!(Tree, vanilla);
    run::<Tree, CS, _>(cs, public_inputs, vanilla, hint, proofs, |fork, proof, p| {
        proof.synthesize(
            fork,
            &p.comm_d,
            &p.comm_c,
            &p.comm_r_last,
            &p.replica_id_bits,
        )
    })
}

/// Into `cs` (ready for a circuit), the prefix once, then `challenge` for each of `items` (one
/// per challenge, in order) on its own fork, all threads; the forks absorbed in challenge order.
pub(super) fn run<Tree, CS, T>(
    mut cs: CS,
    public_inputs: &stacked::PublicInputs<ReplicaDomain<Tree>, DefaultPieceDomain>,
    vanilla: &[VanillaSealProof<Tree>],
    hint: SizeHint,
    items: Vec<T>,
    challenge: impl Fn(&mut CS::Fork<'_>, T, &Prefix) -> Result<(), SynthesisError> + Sync,
) -> Result<CS, SynthesisError>
where
    Tree: 'static + MerkleTreeTrait,
    CS: Forkable,
    T: Send,
{
    let (Some(first), Some(tau)) = (vanilla.first(), public_inputs.tau.as_ref()) else {
        return Err(SynthesisError::AssignmentMissing);
    };
    let (comm_r_last, comm_c) = (first.comm_r_last(), first.comm_c());
    if vanilla
        .iter()
        .any(|p| p.comm_r_last() != comm_r_last || p.comm_c() != comm_c)
    {
        return Err(SynthesisError::Unsatisfiable);
    }

    let num = |cs: &mut CS, name: &'static str, v: Scalar| {
        AllocatedNum::alloc(cs.namespace(|| name), || Ok(v))
    };

    let replica_id_num = num(&mut cs, "replica_id", public_inputs.replica_id.into())?;
    replica_id_num.inputize(cs.namespace(|| "replica_id_input"))?;
    let replica_id_bits =
        reverse_bit_numbering(replica_id_num.to_bits_le(cs.namespace(|| "replica_id_bits"))?);
    let comm_d_num = num(&mut cs, "comm_d", tau.comm_d.into())?;
    comm_d_num.inputize(cs.namespace(|| "comm_d_input"))?;
    let comm_r_num = num(&mut cs, "comm_r", tau.comm_r.into())?;
    comm_r_num.inputize(cs.namespace(|| "comm_r_input"))?;
    let comm_r_last_num = num(&mut cs, "comm_r_last", comm_r_last.into())?;
    let comm_c_num = num(&mut cs, "comm_c", comm_c.into())?;
    let hash_num = <<Tree::Hasher as Hasher>::Function as HashFunction<_>>::hash2_circuit(
        cs.namespace(|| "H_comm_c_comm_r_last"),
        &comm_c_num,
        &comm_r_last_num,
    )?;
    constraint::equal(
        &mut cs,
        || "enforce comm_r = H(comm_c || comm_r_last)",
        &comm_r_num,
        &hash_num,
    );
    let prefix = Prefix {
        replica_id_bits,
        comm_d: comm_d_num,
        comm_c: comm_c_num,
        comm_r_last: comm_r_last_num,
    };

    on_forks(&mut cs, items, hint, |fork, item| challenge(fork, item, &prefix))?;
    Ok(cs.end())
}

/// Returns `v`; `tie` is never called, it only names `P` for the type checker.
pub(super) fn challenge_type<P>(_tie: impl FnOnce(Vec<P>), v: Vec<P>) -> Vec<P> {
    v
}
