//! Witness-only synthesis: a circuit's variable values without evaluating any linear combination
//! (`enforce` is a no-op; its closures never run). With the partition circuit recorded once as
//! sparse matrices ([`super::r1cs::R1cs`]), a, b, c follow from the witness by matrix-vector
//! products, so most of synthesis's work — building and evaluating a linear combination per
//! constraint — is skipped. Gadgets see an ordinary constraint system (not a "witness
//! generator"), so they allocate exactly as in full synthesis: the values equal upstream's.

use bellperson::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

use super::SizeHint;

/// Input and aux values of a synthesized circuit, and how many constraints it enforced.
#[derive(Default)]
pub struct Witness {
    pub input: Vec<Scalar>,
    pub aux: Vec<Scalar>,
    pub constraints: usize,
}

impl Witness {
    pub fn with_hint(h: SizeHint) -> Self {
        Witness { input: Vec::with_capacity(h.inputs), aux: Vec::with_capacity(h.aux), constraints: 0 }
    }

    /// Ready for a circuit: bellperson's ONE input first.
    pub(crate) fn begin(hint: SizeHint) -> Self {
        let mut w = Witness::with_hint(hint);
        w.input.push(Scalar::ONE);
        w
    }

    /// bellperson's per-input constraints after the circuit (values come from the R1CS).
    pub(crate) fn end(mut self) -> Self {
        self.constraints += self.input.len();
        self
    }
}

impl ConstraintSystem<Scalar> for Witness {
    type Root = Self;

    fn new() -> Self {
        Witness::default()
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.input.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(self.input.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.constraints += 1;
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

/// A [`Witness`] continued on another thread: reads nothing of its parent (values of parent
/// variables are never needed without linear combinations), numbers its own variables as if
/// they came right after the parent's.
pub(crate) struct WitnessFork {
    base_input: usize,
    base_aux: usize,
    local: Witness,
}

impl WitnessFork {
    pub fn new(parent: &Witness, hint: SizeHint) -> Self {
        WitnessFork { base_input: parent.input.len(), base_aux: parent.aux.len(), local: Witness::with_hint(hint) }
    }
}

impl ConstraintSystem<Scalar> for WitnessFork {
    type Root = Self;

    fn new() -> Self {
        unreachable!("a WitnessFork is made from its parent with WitnessFork::new")
    }

    fn alloc<F, A, AR>(&mut self, n: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let v = self.local.alloc(n, f)?;
        Ok(Variable::new_unchecked(Index::Aux(self.base_aux + super::fork::index_of(v))))
    }

    fn alloc_input<F, A, AR>(&mut self, n: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let v = self.local.alloc_input(n, f)?;
        Ok(Variable::new_unchecked(Index::Input(self.base_input + super::fork::index_of(v))))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, n: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.local.enforce(n, a, b, c);
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

impl Witness {
    /// Append finished forks in the order sequential synthesis would have produced them.
    pub(crate) fn absorb(&mut self, f: WitnessFork) {
        assert!(f.base_input <= self.input.len() && f.base_aux <= self.aux.len(), "fork absorbed into the wrong parent");
        self.constraints += f.local.constraints;
        super::fork::append(&mut self.input, f.local.input);
        super::fork::append(&mut self.aux, f.local.aux);
    }
}
