//! Recording a partition circuit as sparse matrices ([`R1cs`]): a constraint system that keeps
//! every constraint's terms and counts variables. [`blank`] records the proof type's blank
//! circuit on one thread (the reference: what the params were generated from); [`Recorder`] is
//! also [`Forkable`], so a partition's challenges can be recorded on all threads
//! ([`crate::synth::PartitionCircuits::record`]) — the circuit's structure does not depend on
//! the values, and the result equals the blank recording (`tests/recorded_circuits.rs`).

use std::collections::HashMap;

use bellperson::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ec_gpu_gen::multiexp_cpu::DensityTracker;
use ff::{Field, PrimeField};
use rayon::prelude::*;

use super::fork::Forkable;
use super::r1cs::{Rows, INPUT};
use super::{R1cs, SizeHint};
use crate::error::{Result, ResultExt, Status};
use crate::kinds::CircuitId;

pub(crate) type Cancelled<'c> = &'c (dyn Fn() -> bool + Sync);

/// Rows of A, B, C and the table of distinct coefficients they index.
struct Tape {
    rows: [Rows; 3],
    coeffs: Vec<Scalar>,
    index: HashMap<[u8; 32], u32>,
    /// Set when a matrix outgrows the 32-bit row ends.
    overflow: bool,
}

impl Tape {
    /// Room for `constraints` rows of `terms` terms per constraint in A, B, C, plus a quarter.
    fn new(constraints: usize, terms: [f64; 3]) -> Tape {
        let rows = terms.map(|k| Rows {
            end: Vec::with_capacity(constraints),
            terms: Vec::with_capacity((constraints as f64 * k * 1.25) as usize),
        });
        let mut t = Tape { rows, coeffs: Vec::new(), index: HashMap::new(), overflow: false };
        t.coefficient(Scalar::ONE);
        t.coefficient(-Scalar::ONE);
        t
    }

    fn coefficient(&mut self, c: Scalar) -> u32 {
        let next = self.coeffs.len() as u32;
        let i = *self.index.entry(c.to_repr()).or_insert(next);
        if i == next {
            self.coeffs.push(c);
        }
        i
    }

    /// Append `lc` as matrix `q`'s next row; `used(q, variable)` for each term kept (terms with a
    /// zero coefficient are dropped, as bellperson's evaluation skips them).
    fn row(&mut self, q: usize, lc: &LinearCombination<Scalar>, mut used: impl FnMut(usize, Index)) {
        let mut terms = std::mem::take(&mut self.rows[q].terms);
        for (&i, coeff) in lc.iter_inputs() {
            if !bool::from(coeff.is_zero()) {
                let c = self.coefficient(*coeff);
                terms.push((c as u64) << 32 | (i as u64 | INPUT as u64));
                used(q, Index::Input(i));
            }
        }
        for (&i, coeff) in lc.iter_aux() {
            if !bool::from(coeff.is_zero()) {
                let c = self.coefficient(*coeff);
                terms.push((c as u64) << 32 | i as u64);
                used(q, Index::Aux(i));
            }
        }
        self.overflow |= terms.len() > u32::MAX as usize;
        self.rows[q].end.push(terms.len() as u32);
        self.rows[q].terms = terms;
    }

    fn constraints(&self) -> usize {
        self.rows[0].end.len()
    }
}

/// The densities bellperson's prover tracks: A over aux (inputs have full A density), B over
/// inputs and aux; C none.
#[derive(Default)]
struct Densities {
    a_aux: DensityTracker,
    b_input: DensityTracker,
    b_aux: DensityTracker,
}

impl Densities {
    fn mark(&mut self, q: usize, v: Index) {
        match (q, v) {
            (0, Index::Aux(i)) => self.a_aux.inc(i),
            (1, Index::Aux(i)) => self.b_aux.inc(i),
            (1, Index::Input(i)) => self.b_input.inc(i),
            _ => {}
        }
    }
}

/// Records a circuit: counts variables, keeps every constraint's terms. A fork ([`Forkable`])
/// is a recorder too, numbering its variables as if right after its parent's (`base_*`), with a
/// coefficient table of its own.
pub(crate) struct Recorder<'c> {
    cancelled: Cancelled<'c>,
    /// The circuit's terms per constraint in A, B, C (what each tape reserves).
    terms: [f64; 3],
    base_input: usize,
    base_aux: usize,
    inputs: usize,
    aux: usize,
    tape: Tape,
    /// Densities of this recorder's own variables.
    density: Densities,
    /// A fork's density marks on its parent's variables (set on the parent when absorbed).
    parent_used: Vec<(usize, Index)>,
}

impl<'c> Recorder<'c> {
    fn empty(cancelled: Cancelled<'c>, terms: [f64; 3], base_input: usize, base_aux: usize, constraints: usize) -> Self {
        Recorder {
            cancelled,
            terms,
            base_input,
            base_aux,
            inputs: 0,
            aux: 0,
            tape: Tape::new(constraints, terms),
            density: Densities::default(),
            parent_used: Vec::new(),
        }
    }

    /// Ready for `circuit` (sized by `hint`): bellperson's ONE input allocated.
    pub(crate) fn new(circuit: CircuitId, hint: SizeHint, cancelled: Cancelled<'c>) -> Self {
        let mut r = Recorder::empty(cancelled, circuit.terms_per_constraint(), 0, 0, hint.constraints);
        r.alloc_input(|| "one", || Ok(Scalar::ONE)).expect("recording allocates without values");
        r
    }

    fn finish(mut self, circuit: CircuitId) -> Result<R1cs> {
        // bellperson's per-input constraints: input i in A, nothing in B and C.
        for i in 0..self.inputs {
            let lc = LinearCombination::zero() + Variable::new_unchecked(Index::Input(i));
            self.tape.row(0, &lc, |_, _| {});
            self.tape.row(1, &LinearCombination::zero(), |_, _| {});
            self.tape.row(2, &LinearCombination::zero(), |_, _| {});
        }
        if self.tape.overflow || self.inputs >= INPUT as usize || self.aux >= INPUT as usize {
            return Err(err!(Internal, "the {} circuit is too large to record", circuit.name()));
        }
        let Tape { mut rows, coeffs, .. } = self.tape;
        for m in &mut rows {
            m.terms.shrink_to_fit();
            m.end.shrink_to_fit();
        }
        Ok(R1cs {
            circuit,
            inputs: self.inputs,
            aux: self.aux,
            rows,
            coeffs,
            a_aux_density: self.density.a_aux,
            b_input_density: self.density.b_input,
            b_aux_density: self.density.b_aux,
            tile_terms: Default::default(),
            significant_seen: Default::default(),
        })
    }

    /// Append a finished fork: its variables renumbered after ours, its coefficients moved into
    /// our table, its densities appended and the ones it set on our variables set here.
    fn absorb_part(&mut self, part: Recorder<'_>) {
        let (shift_aux, shift_input) = ((self.aux - part.base_aux) as u64, (self.inputs - part.base_input) as u64);
        let (base_aux, base_input) = (part.base_aux as u64, part.base_input as u64);
        let remap: Vec<u64> = part.tape.coeffs.iter().map(|c| self.tape.coefficient(*c) as u64).collect();
        for (q, m) in part.tape.rows.into_iter().enumerate() {
            let dst = &mut self.tape.rows[q];
            let start = dst.terms.len();
            self.tape.overflow |= start + m.terms.len() > u32::MAX as usize;
            let renumber = |&t: &u64| {
                let (c, var) = (remap[(t >> 32) as usize], t as u32 as u64);
                let var = if var & INPUT as u64 != 0 {
                    let i = var & !(INPUT as u64);
                    INPUT as u64 | if i >= base_input { i + shift_input } else { i }
                } else if var >= base_aux {
                    var + shift_aux
                } else {
                    var
                };
                c << 32 | var
            };
            dst.terms.par_extend(m.terms.par_iter().map(renumber));
            dst.end.extend(m.end.iter().map(|&e| (start + e as usize) as u32));
        }
        let append = |d: &mut DensityTracker, local: DensityTracker| {
            d.bv.extend_from_bitslice(&local.bv);
            d.total_density += local.total_density;
        };
        append(&mut self.density.a_aux, part.density.a_aux);
        append(&mut self.density.b_input, part.density.b_input);
        append(&mut self.density.b_aux, part.density.b_aux);
        for (q, v) in part.parent_used {
            self.density.mark(q, v);
        }
        self.aux += part.aux;
        self.inputs += part.inputs;
    }
}

impl ConstraintSystem<Scalar> for Recorder<'_> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        if self.aux % (1 << 16) == 0 && (self.cancelled)() {
            return Err(SynthesisError::AssignmentMissing); // unwinds the synthesis; reported as Cancelled
        }
        self.aux += 1;
        self.density.a_aux.add_element();
        self.density.b_aux.add_element();
        Ok(Variable::new_unchecked(Index::Aux(self.base_aux + self.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs += 1;
        self.density.b_input.add_element();
        Ok(Variable::new_unchecked(Index::Input(self.base_input + self.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let (base_input, base_aux) = (self.base_input, self.base_aux);
        let (own, parent) = (&mut self.density, &mut self.parent_used);
        let mut used = |q: usize, v: Index| match v {
            Index::Aux(i) if i >= base_aux => own.mark(q, Index::Aux(i - base_aux)),
            Index::Input(i) if i >= base_input => own.mark(q, Index::Input(i - base_input)),
            v => parent.push((q, v)),
        };
        self.tape.row(0, &a(LinearCombination::zero()), &mut used);
        self.tape.row(1, &b(LinearCombination::zero()), &mut used);
        self.tape.row(2, &c(LinearCombination::zero()), &mut used);
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

impl<'c> Forkable for Recorder<'c> {
    type Fork<'p>
        = Recorder<'c>
    where
        Self: 'p;
    type Finished = Recorder<'c>;

    fn end(self) -> Self {
        self // bellperson's per-input constraints are added when the recording is concluded
    }
    fn sizes(&self) -> (usize, usize, usize) {
        (self.tape.constraints(), self.inputs, self.aux)
    }
    fn forks(&mut self, n: usize, hint: SizeHint) -> Vec<Recorder<'c>> {
        (0..n).map(|_| Recorder::empty(self.cancelled, self.terms, self.inputs, self.aux, hint.constraints)).collect()
    }
    fn finish(f: Recorder<'c>) -> Recorder<'c> {
        f
    }
    fn absorb(&mut self, part: Recorder<'c>) {
        self.absorb_part(part)
    }
}

/// The recording `res` synthesized (its synthesis result), as a circuit: `Cancelled` when
/// `cancelled()` says so, else the synthesis error, else the R1CS.
pub(crate) fn conclude(res: Result<Recorder<'_>, SynthesisError>, circuit: CircuitId, cancelled: Cancelled<'_>) -> Result<R1cs> {
    if cancelled() {
        return Err(err!(Cancelled, "recording the {} circuit was cancelled", circuit.name()));
    }
    res.status(Status::Internal, &format!("recording the {} circuit", circuit.name()))?.finish(circuit)
}

/// `circuit` (`id`'s blank circuit) recorded on one thread.
pub(super) fn blank(id: CircuitId, circuit: impl bellperson::Circuit<Scalar>, hint: SizeHint, cancelled: Cancelled<'_>) -> Result<R1cs> {
    let mut cs = Recorder::new(id, hint, cancelled);
    let res = circuit.synthesize(&mut cs).map(|()| cs);
    conclude(res, id, cancelled)
}
