//! FallbackPoSt (WinningPoSt, WindowPoSt) partition synthesis on all threads.
//!
//! Mirrors `storage_proofs_post::fallback::FallbackPoStCircuit::synthesize` (19.x). Its sectors
//! are independent (each reads only bellperson's ONE), so with several sectors each one is
//! synthesized whole — upstream's own `&Sector` circuit — on its own fork; a single sector
//! (WinningPoSt, a one-sector WindowPoSt partition) has its prefix (comm_r_last, comm_c, comm_r
//! and `comm_r = H(comm_c, comm_r_last)`) synthesized once and then each challenge's inclusion
//! proof on its own fork. Forks are absorbed in order, so the result equals sequential synthesis
//! exactly (tested against upstream's circuit in `tests/proof_kinds.rs`).

use bellperson::gadgets::num::AllocatedNum;
use bellperson::{Circuit, SynthesisError};
use blstrs::Scalar;
use filecoin_hashers::{HashFunction, Hasher};
use storage_proofs_core::gadgets::constraint;
use storage_proofs_core::gadgets::por::PoRCircuit;
use storage_proofs_core::gadgets::variables::Root;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_post::fallback::{FallbackPoStCircuit, Sector};

use crate::synth::{on_forks, Forkable, SizeHint};

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
        sectors => on_forks(&mut cs, sectors.iter().collect(), hint, |fork, sector| sector.synthesize(fork))?,
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
    on_forks(cs, leafs.iter().zip(paths).collect(), hint, |fork, (leaf, path)| {
        PoRCircuit::<Tree>::synthesize(fork, Root::Val(*leaf), path.clone(), Root::Var(comm_r_last_num.clone()), true)
    })
}
