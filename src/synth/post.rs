//! FallbackPoSt (WinningPoSt, WindowPoSt) partition synthesis on all threads.
//!
//! Mirrors `storage_proofs_post::fallback::FallbackPoStCircuit::synthesize` (19.x). Its sectors
//! are independent (each reads only bellperson's ONE), so with several sectors each one is
//! synthesized whole — upstream's own `&Sector` circuit — on its own [`Fork`]; a single sector
//! (WinningPoSt, a one-sector WindowPoSt partition) has its prefix (comm_r_last, comm_c, comm_r
//! and `comm_r = H(comm_c, comm_r_last)`) synthesized once and then each challenge's inclusion
//! proof on its own fork. Forks are absorbed in order, so the result equals sequential synthesis
//! exactly (tested against upstream's circuit in `tests/proof_kinds.rs`).
//!
//! [`Fork`]: super::fork::Fork

use bellperson::gadgets::num::AllocatedNum;
use bellperson::{Circuit, SynthesisError};
use blstrs::Scalar;
use filecoin_hashers::{HashFunction, Hasher};
use rayon::prelude::*;
use storage_proofs_core::gadgets::constraint;
use storage_proofs_core::gadgets::por::PoRCircuit;
use storage_proofs_core::gadgets::variables::Root;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_post::fallback::{FallbackPoStCircuit, Sector};

use super::fork::Forkable;
use super::SizeHint;

/// `circuit` into `cs` (ready for a circuit: bellperson's ONE allocated), closed with the
/// per-input constraints.
pub(crate) fn fallback_post<Tree: 'static + MerkleTreeTrait, CS: Forkable>(
    mut cs: CS,
    circuit: &FallbackPoStCircuit<Tree>,
    hint: SizeHint,
) -> Result<CS, SynthesisError> {
    match circuit.sectors.as_slice() {
        [] => {}
        [sector] => one_sector(&mut cs, sector, hint)?,
        sectors => on_forks(&mut cs, sectors, hint, |fork, sector| sector.synthesize(fork))?,
    }
    Ok(cs.end())
}

/// Upstream's `Sector::synthesize` with each challenge's inclusion proof on its own fork.
fn one_sector<Tree: 'static + MerkleTreeTrait, CS: Forkable>(cs: &mut CS, sector: &Sector<Tree>, hint: SizeHint) -> Result<(), SynthesisError> {
    let Sector { comm_r, comm_c, comm_r_last, leafs, paths, .. } = sector;
    if paths.len() != leafs.len() {
        return Err(SynthesisError::Unsatisfiable);
    }
    let num = |cs: &mut CS, name: &'static str, v: &Option<Scalar>| {
        AllocatedNum::alloc(cs.namespace(|| name), || v.ok_or(SynthesisError::AssignmentMissing))
    };
    let comm_r_last_num = num(cs, "comm_r_last", comm_r_last)?;
    let comm_c_num = num(cs, "comm_c", comm_c)?;
    let comm_r_num = num(cs, "comm_r", comm_r)?;
    comm_r_num.inputize(cs.namespace(|| "comm_r_input"))?;
    let hash_num = <Tree::Hasher as Hasher>::Function::hash2_circuit(cs.namespace(|| "H_comm_c_comm_r_last"), &comm_c_num, &comm_r_last_num)?;
    constraint::equal(cs, || "enforce_comm_c_comm_r_last_hash_comm_r", &comm_r_num, &hash_num);
    let challenges: Vec<_> = leafs.iter().zip(paths).collect();
    on_forks(cs, &challenges, hint, |fork, (leaf, path)| {
        PoRCircuit::<Tree>::synthesize(fork, Root::Val(**leaf), (*path).clone(), Root::Var(comm_r_last_num.clone()), true)
    })
}

/// `item` for each of `items` on its own fork, all threads, absorbed in order. Every item has
/// the same shape: each fork reserves an equal share of what the partition still needs.
fn on_forks<CS: Forkable, T: Sync>(
    cs: &mut CS,
    items: &[T],
    hint: SizeHint,
    item: impl Fn(&mut CS::Fork<'_>, &T) -> Result<(), SynthesisError> + Sync,
) -> Result<(), SynthesisError> {
    let n = items.len().max(1);
    let share = |total: usize, used: usize| {
        let each = total.saturating_sub(used) / n;
        each + each / 8
    };
    let (constraints, inputs, aux) = cs.sizes();
    let fork_hint = SizeHint { constraints: share(hint.constraints, constraints), inputs: share(hint.inputs, inputs), aux: share(hint.aux, aux) };
    let forks = cs.forks(items.len(), fork_hint);
    let done: Vec<CS::Finished> = forks
        .into_par_iter()
        .zip(items)
        .map(|(mut fork, it)| {
            item(&mut fork, it)?;
            Ok(CS::finish(fork))
        })
        .collect::<Result<_, SynthesisError>>()?;
    for f in done {
        cs.absorb(f);
    }
    Ok(())
}
