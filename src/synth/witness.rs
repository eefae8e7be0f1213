//! Witness-only synthesis: a circuit's variable values without evaluating any linear combination
//! (`enforce` is a no-op; its closures never run). With the partition circuit recorded once as
//! sparse matrices ([`super::r1cs::R1cs`]), a, b, c follow from the witness by matrix-vector
//! products, so most of synthesis's work — building and evaluating a linear combination per
//! constraint — is skipped. Gadgets see an ordinary constraint system (not a "witness
//! generator"), so they allocate exactly as in full synthesis: the values equal upstream's.

use std::mem::MaybeUninit;

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
    /// The aux count the size hint promised: lets forks write straight into place.
    expected_aux: usize,
    /// Set when a fork did not fill its slot exactly: the witness rebuilt by copying.
    rebuilt: Option<Vec<Scalar>>,
}

impl Witness {
    pub fn with_hint(h: SizeHint) -> Self {
        let mut aux: Vec<Scalar> = Vec::with_capacity(h.aux);
        // A 32 GiB partition's witness is 4.2 GB: a million 4 KiB first-touch faults otherwise.
        crate::pages::prefer_huge_pages(
            aux.as_mut_ptr().cast(),
            aux.capacity() * std::mem::size_of::<Scalar>(),
        );
        Witness {
            input: Vec::with_capacity(h.inputs),
            aux,
            constraints: 0,
            expected_aux: h.aux,
            rebuilt: None,
        }
    }

    /// A witness from its values (tests and tools: a synthesized one comes from the circuit).
    pub fn of(input: Vec<Scalar>, aux: Vec<Scalar>, constraints: usize) -> Self {
        Witness { input, aux, constraints, ..Default::default() }
    }

    /// Ready for a circuit: bellperson's ONE input first.
    pub(crate) fn begin(hint: SizeHint) -> Self {
        let mut w = Witness::with_hint(hint);
        w.input.push(Scalar::ONE);
        w
    }

    /// bellperson's per-input constraints after the circuit (values come from the R1CS).
    pub(crate) fn end(mut self) -> Self {
        if let Some(aux) = self.rebuilt.take() {
            self.aux = aux;
        }
        self.constraints += self.input.len();
        self
    }

    /// `n` forks continuing this witness, one per independent sub-circuit in order. When the
    /// size hint says exactly how many aux variables are left and they split evenly (every
    /// PoRep challenge has the same shape), each fork writes its values straight into its slot
    /// of this witness's reserved memory and [`Self::absorb`] only checks and counts them;
    /// otherwise each fork collects its own and absorbing copies them.
    pub(crate) fn forks(&mut self, n: usize, hint: SizeHint) -> Vec<WitnessFork<'_>> {
        let (base_input, base_aux) = (self.input.len(), self.aux.len());
        let left = self.expected_aux.saturating_sub(base_aux);
        let per = if n > 0
            && left > 0
            && left.is_multiple_of(n)
            && self.aux.capacity() - base_aux >= left
        {
            left / n
        } else {
            0
        };
        fn fork(
            aux: AuxOut<'_>,
            base_input: usize,
            base_aux: usize,
            inputs: usize,
        ) -> WitnessFork<'_> {
            WitnessFork {
                base_input,
                base_aux,
                input: Vec::with_capacity(inputs),
                aux,
                constraints: 0,
            }
        }
        if per == 0 {
            return (0..n)
                .map(|_| {
                    fork(
                        AuxOut::Local(Vec::with_capacity(hint.aux)),
                        base_input,
                        base_aux,
                        hint.inputs,
                    )
                })
                .collect();
        }
        self.aux.spare_capacity_mut()[..left]
            .chunks_mut(per)
            .enumerate()
            .map(|(i, slot)| {
                fork(
                    AuxOut::Slot {
                        slot,
                        len: 0,
                        overflow: Vec::new(),
                    },
                    base_input,
                    base_aux + i * per,
                    hint.inputs,
                )
            })
            .collect()
    }

    /// Append a finished fork; forks are absorbed in the order they were made.
    pub(crate) fn absorb(&mut self, f: WitnessPart) {
        assert!(
            f.base_input <= self.input.len(),
            "fork absorbed into the wrong parent"
        );
        self.constraints += f.constraints;
        super::fork::append(&mut self.input, f.input);
        match f.aux {
            PartAux::Local(v) => match self.rebuilt.as_mut() {
                Some(r) => r.extend_from_slice(&v),
                None => super::fork::append(&mut self.aux, v),
            },
            PartAux::Slot { len, cap, overflow } => {
                if self.rebuilt.is_none()
                    && f.base_aux == self.aux.len()
                    && len == cap
                    && overflow.is_empty()
                {
                    // SAFETY: the fork wrote all `cap` values of its slot, which starts at len.
                    unsafe { self.aux.set_len(f.base_aux + len) };
                    return;
                }
                // A fork's shape differed from the hint's: copy from here on.
                let r = self.rebuilt.get_or_insert_with(|| self.aux.clone());
                // SAFETY: the fork initialised the first `len` values of its slot.
                let written =
                    unsafe { std::slice::from_raw_parts(self.aux.as_ptr().add(f.base_aux), len) };
                r.extend_from_slice(written);
                r.extend_from_slice(&overflow);
            }
        }
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
/// variables are never needed without linear combinations); its aux values go to its slot of
/// the parent's memory or to a local vector ([`Witness::forks`]).
pub(crate) struct WitnessFork<'p> {
    base_input: usize,
    base_aux: usize,
    input: Vec<Scalar>,
    aux: AuxOut<'p>,
    constraints: usize,
}

enum AuxOut<'p> {
    Local(Vec<Scalar>),
    /// Past the slot's end (a shape the hint did not predict) values go to `overflow`.
    Slot {
        slot: &'p mut [MaybeUninit<Scalar>],
        len: usize,
        overflow: Vec<Scalar>,
    },
}

impl AuxOut<'_> {
    #[inline]
    fn push(&mut self, v: Scalar) {
        match self {
            AuxOut::Local(aux) => aux.push(v),
            AuxOut::Slot {
                slot,
                len,
                overflow,
            } => match slot.get_mut(*len) {
                Some(cell) => {
                    cell.write(v);
                    *len += 1;
                }
                None => overflow.push(v),
            },
        }
    }

    fn len(&self) -> usize {
        match self {
            AuxOut::Local(aux) => aux.len(),
            AuxOut::Slot { len, overflow, .. } => len + overflow.len(),
        }
    }
}

/// A finished [`WitnessFork`], no longer borrowing its parent.
pub(crate) struct WitnessPart {
    base_input: usize,
    base_aux: usize,
    input: Vec<Scalar>,
    aux: PartAux,
    constraints: usize,
}

enum PartAux {
    Local(Vec<Scalar>),
    Slot {
        len: usize,
        cap: usize,
        overflow: Vec<Scalar>,
    },
}

impl WitnessFork<'_> {
    pub(crate) fn finish(self) -> WitnessPart {
        let aux = match self.aux {
            AuxOut::Local(v) => PartAux::Local(v),
            AuxOut::Slot {
                slot,
                len,
                overflow,
            } => PartAux::Slot {
                len,
                cap: slot.len(),
                overflow,
            },
        };
        WitnessPart {
            base_input: self.base_input,
            base_aux: self.base_aux,
            input: self.input,
            aux,
            constraints: self.constraints,
        }
    }
}

impl ConstraintSystem<Scalar> for WitnessFork<'_> {
    type Root = Self;

    fn new() -> Self {
        unreachable!("a WitnessFork is made from its parent with Witness::forks")
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(
            self.base_aux + self.aux.len() - 1,
        )))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.input.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(
            self.base_input + self.input.len() - 1,
        )))
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

impl WitnessFork<'_> {
    /// A new aux variable of value 0 or 1, allocated without a gadget (`kinds::porep::native`).
    #[inline]
    pub(crate) fn push_bit(&mut self, v: bool) {
        self.aux.push(if v { Scalar::ONE } else { Scalar::ZERO });
    }

    /// `n` constraints enforced without a gadget (their values come from the recorded R1CS).
    #[inline]
    pub(crate) fn add_constraints(&mut self, n: usize) {
        self.constraints += n;
    }
}
