//! The shape of a registered proof's partition circuit as its params file must reflect it: how
//! many points each section of bellperson's `Parameters` holds. Counted by synthesizing the blank
//! circuit (no witness) into a constraint system that keeps only counts and which variables
//! appear in A and B — what `generate_random_parameters` keeps after dropping identity points.

use bellperson::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use bitvec::vec::BitVec;
use blstrs::Scalar;
use ff::Field;
use filecoin_proofs::types::MerkleTreeTrait;

use crate::error::{Result, ResultExt, Status};
use crate::kinds::CircuitId;
use crate::kinds::registry::RegisteredSealProof;

/// Points per params section: ic, h, l, a, b_g1 (= b_g2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CircuitShape {
    pub constraints: usize,
    pub ic: usize,
    pub h: usize,
    pub l: usize,
    pub a: usize,
    pub b: usize,
}

#[derive(Default)]
struct Counter {
    inputs: usize,
    aux: usize,
    constraints: usize,
    /// Indexed inputs first, then aux (offset by the final input count at the end).
    a_inputs: BitVec,
    a_aux: BitVec,
    b_inputs: BitVec,
    b_aux: BitVec,
}

fn mark(lc: &LinearCombination<Scalar>, inputs: &mut BitVec, aux: &mut BitVec) {
    for (i, c) in lc.iter_inputs() {
        if !bool::from(c.is_zero()) {
            inputs.set(*i, true);
        }
    }
    for (i, c) in lc.iter_aux() {
        if !bool::from(c.is_zero()) {
            aux.set(*i, true);
        }
    }
}

impl ConstraintSystem<Scalar> for Counter {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux += 1;
        self.a_aux.push(false);
        self.b_aux.push(false);
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs += 1;
        self.a_inputs.push(false);
        self.b_inputs.push(false);
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, _c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.constraints += 1;
        mark(&a(LinearCombination::zero()), &mut self.a_inputs, &mut self.a_aux);
        mark(&b(LinearCombination::zero()), &mut self.b_inputs, &mut self.b_aux);
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

impl Counter {
    /// bellperson's generator: the ONE input first; after the circuit, `input * 0 = 0` for each
    /// input (every input in A); h has one point fewer than the power-of-two domain.
    fn shape(mut self) -> CircuitShape {
        self.constraints += self.inputs;
        self.a_inputs.fill(true);
        let domain = self.constraints.next_power_of_two();
        let ones = |v: &BitVec| v.count_ones();
        CircuitShape {
            constraints: self.constraints,
            ic: self.inputs,
            h: domain - 1,
            l: self.aux,
            a: ones(&self.a_inputs) + ones(&self.a_aux),
            b: ones(&self.b_inputs) + ones(&self.b_aux),
        }
    }
}

/// Count the section sizes of `proof`'s params by synthesizing its blank partition circuit
/// (seconds at 2 KiB, minutes at 32 GiB; the SRS loader uses a table of these, see
/// `srs::shape`).
pub fn count(proof: RegisteredSealProof) -> Result<CircuitShape> {
    count_circuit(proof.into())
}

/// [`count`] for the circuit of any kind (PoSt and update circuits from upstream's blank
/// circuits, as their params are made).
pub fn count_circuit(circuit: CircuitId) -> Result<CircuitShape> {
    match circuit {
        CircuitId::Seal(p) => with_tree_shape!(p, count_seal, p),
        CircuitId::PoSt(p) => with_tree_shape!(p, count_post, p),
        CircuitId::Update(p) => with_tree_shape!(p, count_update, p),
    }
}

fn count_blank(circuit: impl bellperson::Circuit<Scalar>) -> Result<CircuitShape> {
    let mut cs = Counter::default();
    cs.alloc_input(|| "one", || Ok(Scalar::ONE)).status(Status::Internal, "counting")?;
    circuit.synthesize(&mut cs).status(Status::Internal, "counting the blank circuit")?;
    Ok(cs.shape())
}

fn count_seal<Tree: 'static + MerkleTreeTrait>(proof: RegisteredSealProof) -> Result<CircuitShape> {
    count_blank(crate::kinds::porep::blank_circuit::<Tree>(proof)?)
}

fn count_post<Tree: 'static + MerkleTreeTrait>(proof: crate::kinds::RegisteredPoStProof) -> Result<CircuitShape> {
    count_blank(crate::kinds::post::blank_circuit::<Tree>(proof)?)
}

fn count_update<Tree: 'static + MerkleTreeTrait<Hasher = storage_proofs_update::constants::TreeRHasher>>(
    proof: crate::kinds::RegisteredUpdateProof,
) -> Result<CircuitShape> {
    count_blank(crate::kinds::update::blank_circuit::<Tree>(proof)?)
}
