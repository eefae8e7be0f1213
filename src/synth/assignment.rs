//! Our constraint system for proving: records the A/B/C evaluations of every constraint, the
//! witness, and which query points the witness touches (densities). Backend-neutral: the CPU and
//! CUDA provers both consume an [`Assignment`].

use bellperson::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ec_gpu_gen::multiexp_cpu::DensityTracker;
use ff::Field;
use std::sync::Arc;

use super::r1cs::R1cs;

/// Capacity hints taken from the SRS so the big vectors are allocated once.
#[derive(Debug, Clone, Copy, Default)]
pub struct SizeHint {
    pub constraints: usize,
    pub inputs: usize,
    pub aux: usize,
}

/// A backend's own work on an assignment, done after synthesis by
/// [`crate::prover::Backend::prepare`] (the CUDA backend's witness classification).
pub type Prepared = Box<dyn std::any::Any + Send + Sync>;

pub struct Assignment {
    /// Set by a backend's `prepare`.
    pub prepared: Option<Prepared>,
    /// Set when a, b, c are not evaluated (empty): they are this recorded circuit's matrices
    /// times [input | aux]. A backend that evaluates them on its device takes the assignment as
    /// it is; the others call [`Assignment::evaluate_deferred`] first.
    pub deferred: Option<Arc<R1cs>>,
    pub a: Vec<Scalar>,
    pub b: Vec<Scalar>,
    pub c: Vec<Scalar>,
    pub input: Vec<Scalar>,
    pub aux: Vec<Scalar>,
    /// Aux variables that appear in some A term (inputs have full A density).
    pub a_aux_density: DensityTracker,
    pub b_input_density: DensityTracker,
    pub b_aux_density: DensityTracker,
}

impl Assignment {
    pub fn with_hint(h: SizeHint) -> Self {
        Assignment {
            prepared: None,
            deferred: None,
            a: Vec::with_capacity(h.constraints),
            b: Vec::with_capacity(h.constraints),
            c: Vec::with_capacity(h.constraints),
            input: Vec::with_capacity(h.inputs),
            aux: Vec::with_capacity(h.aux),
            a_aux_density: DensityTracker::new(),
            b_input_density: DensityTracker::new(),
            b_aux_density: DensityTracker::new(),
        }
    }

    /// Synthesize `circuit` the way bellperson's prover does: the ONE input first, the circuit,
    /// then one `input * 1 = 0`-style constraint per public input (`input * 0 = 0` in A only).
    pub fn synthesize<C: bellperson::Circuit<Scalar>>(circuit: C, hint: SizeHint) -> Result<Self, SynthesisError> {
        let mut cs = Assignment::begin(hint)?;
        circuit.synthesize(&mut cs)?;
        Ok(cs.end())
    }

    /// A constraint system holding bellperson's ONE input, ready for a circuit.
    pub(crate) fn begin(hint: SizeHint) -> Result<Self, SynthesisError> {
        let mut cs = Assignment::with_hint(hint);
        cs.alloc_input(|| "", || Ok(Scalar::ONE))?;
        Ok(cs)
    }

    /// Close a circuit's synthesis with bellperson's per-input constraints.
    pub(crate) fn end(mut self) -> Self {
        for i in 0..self.input.len() {
            self.enforce(|| "", |lc| lc + Variable::new_unchecked(Index::Input(i)), |lc| lc, |lc| lc);
        }
        self
    }

    pub fn num_constraints(&self) -> usize {
        self.deferred.as_ref().map_or(self.a.len(), |r| r.constraints())
    }

    /// Evaluate deferred a, b, c on the CPU threads (nothing to do when they are evaluated).
    pub fn evaluate_deferred(&mut self) {
        if let Some(r1cs) = self.deferred.take() {
            let [a, b, c] = r1cs.products(&self.input, &self.aux);
            (self.a, self.b, self.c) = (a, b, c);
        }
    }

    /// Bytes held by the big vectors (for the memory accounting and the deallocator).
    pub fn heap_bytes(&self) -> usize {
        let s = std::mem::size_of::<Scalar>();
        s * (self.a.capacity() + self.b.capacity() + self.c.capacity() + self.input.capacity() + self.aux.capacity())
    }
}

/// Which query a linear combination feeds: A and B mark densities, C does not.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Query {
    A,
    B,
    C,
}

/// Where a constraint system reads variable values and marks densities: the root
/// [`Assignment`], or a [`super::fork::Fork`] that continues one on another thread.
pub(super) trait Frame {
    fn input(&self, i: usize) -> Scalar;
    fn aux(&self, i: usize) -> Scalar;
    /// Record that input `i` has a non-zero coefficient in query `q` (A or B).
    fn mark_input(&mut self, q: Query, i: usize);
    fn mark_aux(&mut self, q: Query, i: usize);
}

/// Evaluate `lc`, marking the variables with non-zero coefficients in the densities of `q`
/// (the same rule the parameter generator used to decide which query points exist).
pub(super) fn eval<F: Frame>(lc: &LinearCombination<Scalar>, f: &mut F, q: Query) -> Scalar {
    let mut acc = Scalar::ZERO;
    for (&i, coeff) in lc.iter_inputs() {
        if !bool::from(coeff.is_zero()) {
            let v = f.input(i);
            acc += if *coeff == Scalar::ONE { v } else { v * coeff };
            if q != Query::C {
                f.mark_input(q, i);
            }
        }
    }
    for (&i, coeff) in lc.iter_aux() {
        if !bool::from(coeff.is_zero()) {
            let v = f.aux(i);
            acc += if *coeff == Scalar::ONE { v } else { v * coeff };
            if q != Query::C {
                f.mark_aux(q, i);
            }
        }
    }
    acc
}

/// One constraint's A, B and C values, densities marked through `f`.
pub(super) fn constraint<F: Frame>(
    f: &mut F,
    a: impl FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    b: impl FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    c: impl FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
) -> [Scalar; 3] {
    let (la, lb, lc) = (a(LinearCombination::zero()), b(LinearCombination::zero()), c(LinearCombination::zero()));
    [eval(&la, f, Query::A), eval(&lb, f, Query::B), eval(&lc, f, Query::C)]
}

impl Assignment {
    pub(super) fn push_constraint(&mut self, [a, b, c]: [Scalar; 3]) {
        self.a.push(a);
        self.b.push(b);
        self.c.push(c);
    }
}

impl Frame for Assignment {
    fn input(&self, i: usize) -> Scalar {
        self.input[i]
    }
    fn aux(&self, i: usize) -> Scalar {
        self.aux[i]
    }
    fn mark_input(&mut self, q: Query, i: usize) {
        // Inputs have full A density (every input gets an `input * 0 = 0` constraint).
        if q == Query::B {
            self.b_input_density.inc(i);
        }
    }
    fn mark_aux(&mut self, q: Query, i: usize) {
        match q {
            Query::A => self.a_aux_density.inc(i),
            Query::B => self.b_aux_density.inc(i),
            Query::C => {}
        }
    }
}

impl ConstraintSystem<Scalar> for Assignment {
    type Root = Self;

    fn new() -> Self {
        Assignment::with_hint(SizeHint::default())
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        self.a_aux_density.add_element();
        self.b_aux_density.add_element();
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.input.push(f()?);
        self.b_input_density.add_element();
        Ok(Variable::new_unchecked(Index::Input(self.input.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let abc = constraint(self, a, b, c);
        self.push_constraint(abc);
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
