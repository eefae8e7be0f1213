//! FallbackPoSt (WinningPoSt, WindowPoSt) partition synthesis on all threads.
//!
//! Mirrors `storage_proofs_post::fallback::FallbackPoStCircuit::synthesize` (19.x). Its sectors
//! are independent (each reads only bellperson's ONE), so with several sectors each one is
//! synthesized whole — upstream's own `&Sector` circuit — on its own fork; a single sector
//! (WinningPoSt, a one-sector WindowPoSt partition) has its prefix (comm_r_last, comm_c, comm_r
//! and `comm_r = H(comm_c, comm_r_last)`) synthesized once and then each challenge's inclusion
//! proof on its own fork. Forks are absorbed in order, so the result equals sequential synthesis
//! exactly (tested against upstream's circuit in `tests/proof_kinds.rs`).
//!
//! The witness alone ([`fallback_post_witness`]) has the same structure with tree R's Poseidon
//! computed natively (`native::por_path`, `native::poseidon_hash`): ~98 % of a PoSt's
//! constraints are those hashes. Its paths come from the vanilla proofs (`as_options`), as
//! upstream's `Sector::circuit` builds them: the circuit's own are private to upstream.

use bellperson::gadgets::num::AllocatedNum;
use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use filecoin_hashers::poseidon::PoseidonHasher;
use filecoin_hashers::{HashFunction, Hasher, PoseidonArity};
use generic_array::typenum::U2;
use storage_proofs_core::gadgets::constraint;
use storage_proofs_core::gadgets::por::PoRCircuit;
use storage_proofs_core::gadgets::variables::Root;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_post::fallback::{FallbackPoStCircuit, Sector};

use crate::kinds::porep::native::{poseidon_hash, por_path, PathOptions, Sink};
use crate::synth::{on_forks, Forkable, SizeHint, Witness};

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
    if sector.paths.len() != sector.leafs.len() {
        return Err(SynthesisError::Unsatisfiable);
    }
    let comm_r_last = prefix(cs, sector, |cs, a, b| <Tree::Hasher as Hasher>::Function::hash2_circuit(cs.namespace(|| "H_comm_c_comm_r_last"), a, b))?;
    on_forks(cs, sector.leafs.iter().zip(&sector.paths).collect(), hint, |fork, (leaf, path)| {
        PoRCircuit::<Tree>::synthesize(fork, Root::Val(*leaf), path.clone(), Root::Var(comm_r_last.clone()), true)
    })
}

/// A sector's comm_r check: comm_r_last, comm_c and comm_r allocated, comm_r an input, and
/// `comm_r = hash2(comm_c, comm_r_last)`. Returns comm_r_last, the root of every challenge's path.
fn prefix<Tree: MerkleTreeTrait, CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    sector: &Sector<Tree>,
    hash2: impl FnOnce(&mut CS, &AllocatedNum<Scalar>, &AllocatedNum<Scalar>) -> Result<AllocatedNum<Scalar>, SynthesisError>,
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    let num = |cs: &mut CS, name: &'static str, v: &Option<Scalar>| {
        AllocatedNum::alloc(cs.namespace(|| name), || v.ok_or(SynthesisError::AssignmentMissing))
    };
    let comm_r_last_num = num(cs, "comm_r_last", &sector.comm_r_last)?;
    let comm_c_num = num(cs, "comm_c", &sector.comm_c)?;
    let comm_r_num = num(cs, "comm_r", &sector.comm_r)?;
    comm_r_num.inputize(cs.namespace(|| "comm_r_input"))?;
    let hash_num = hash2(cs, &comm_c_num, &comm_r_last_num)?;
    constraint::equal(cs, || "enforce_comm_c_comm_r_last_hash_comm_r", &comm_r_num, &hash_num);
    Ok(comm_r_last_num)
}

/// Each sector's challenge paths as the vanilla proofs give them (`MerkleProofTrait::as_options`).
pub(crate) type SectorPaths = Vec<Vec<(Vec<Option<Scalar>>, Option<usize>)>>;

/// [`fallback_post`] into a witness, tree R's Poseidon natively. `paths[j]`: sector j's
/// challenge paths. Upstream's gadgets (`fallback_post`) where tree R's hasher is not Poseidon.
pub(crate) fn fallback_post_witness<Tree: 'static + MerkleTreeTrait>(
    mut cs: Witness,
    circuit: &FallbackPoStCircuit<Tree>,
    paths: &[SectorPaths],
    hint: SizeHint,
) -> Result<Witness, SynthesisError> {
    if std::any::TypeId::of::<Tree::Hasher>() != std::any::TypeId::of::<PoseidonHasher>() {
        return fallback_post(cs, circuit, hint);
    }
    if paths.len() != circuit.sectors.len() || circuit.sectors.iter().zip(paths).any(|(s, p)| p.len() != s.leafs.len()) {
        return Err(SynthesisError::Unsatisfiable);
    }
    match circuit.sectors.as_slice() {
        [] => {}
        [sector] => {
            let comm_r_last = prefix(&mut cs, sector, native_hash2)?;
            on_forks(&mut cs, sector.leafs.iter().zip(&paths[0]).collect(), hint, |fork, (leaf, path)| {
                native_path::<Tree, _>(fork, *leaf, path, &comm_r_last)
            })?;
        }
        sectors => on_forks(&mut cs, sectors.iter().zip(paths).collect(), hint, |fork, (sector, paths)| {
            let comm_r_last = prefix(fork, sector, native_hash2)?;
            sector.leafs.iter().zip(paths).try_for_each(|(leaf, path)| native_path::<Tree, _>(fork, *leaf, path, &comm_r_last))
        })?,
    }
    Ok(cs.end())
}

/// `PoseidonFunction::hash2_circuit`, natively.
fn native_hash2<C: ConstraintSystem<Scalar> + Sink>(cs: &mut C, a: &AllocatedNum<Scalar>, b: &AllocatedNum<Scalar>) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    poseidon_hash(cs, &[a.clone(), b.clone()], U2::PARAMETERS())
}

/// `PoRCircuit::<Tree>::synthesize(cs, Root::Val(leaf), .., true)`, natively.
fn native_path<Tree: MerkleTreeTrait, C: ConstraintSystem<Scalar> + Sink>(cs: &mut C, leaf: Option<Scalar>, path: &PathOptions, root: &AllocatedNum<Scalar>) -> Result<(), SynthesisError> {
    let leaf = AllocatedNum::alloc(cs.namespace(|| "value"), || leaf.ok_or(SynthesisError::AssignmentMissing))?;
    por_path::<Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity, C>(cs, leaf, path, root)
}
