//! A registered proof's partition circuit recorded once as sparse matrices A, B, C (rows =
//! constraints, in bellperson's order; columns = inputs and aux variables), with the densities
//! the prover needs. Every partition of every sector of that proof type has this same R1CS (the
//! params were generated from it), so per partition only the witness is synthesized
//! ([`super::witness::Witness`]) and a, b, c are evaluated here as matrix-vector products on all
//! threads — equal value for value to full synthesis (`tests/parallel_synthesis.rs`).
//!
//! Terms are 8 bytes: a coefficient index (into a table of the circuit's distinct coefficients;
//! 1 and −1 are indices 0 and 1 and cost no multiplication) and a variable. Terms with a zero
//! coefficient are dropped, as bellperson's evaluation skips them.

use std::collections::HashMap;
use std::sync::Arc;

use bellperson::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ec_gpu_gen::multiexp_cpu::DensityTracker;
use ff::{Field, PrimeField};
use filecoin_proofs::types::MerkleTreeTrait;
use rayon::prelude::*;

use super::witness::Witness;
use super::{Assignment, SizeHint};
use crate::error::{Result, ResultExt, Status};
use crate::registry::{self, RegisteredSealProof};

/// Terms per constraint in A, B, C of PoRep circuits (2 KiB: 6.42 M, 2.69 M, 5.82 M terms for
/// 2.69 M constraints): what the recorder reserves, with a quarter of slack.
const TERMS_PER_CONSTRAINT: [f64; 3] = [2.4, 1.0, 2.2];

/// Bit 31 of a term's variable: an input (else aux).
const INPUT: u32 = 1 << 31;
const ONE: u32 = 0;
const MINUS_ONE: u32 = 1;

#[derive(Default)]
pub(crate) struct Rows {
    /// Row r's terms are terms[end[r - 1]..end[r]] (end[-1] = 0).
    end: Vec<u32>,
    /// coefficient index << 32 | variable.
    terms: Vec<u64>,
}

impl Rows {
    fn range(&self, r: usize) -> std::ops::Range<usize> {
        let start = if r == 0 { 0 } else { self.end[r - 1] as usize };
        start..self.end[r] as usize
    }
}

pub struct R1cs {
    pub proof: RegisteredSealProof,
    pub inputs: usize,
    pub aux: usize,
    /// A, B, C.
    rows: [Rows; 3],
    coeffs: Vec<Scalar>,
    a_aux_density: DensityTracker,
    b_input_density: DensityTracker,
    b_aux_density: DensityTracker,
}

/// Counts of a recorded R1CS (for logs and benchmarks).
#[derive(Debug, Clone, Copy)]
pub struct R1csStats {
    pub constraints: usize,
    pub inputs: usize,
    pub aux: usize,
    /// Terms of A, B, C.
    pub terms: [usize; 3],
    pub distinct_coefficients: usize,
    pub bytes: usize,
}

impl R1cs {
    /// Record `proof`'s partition circuit from its blank circuit (one thread: seconds at 2 KiB,
    /// about a minute and a half at 32 GiB); `hint` (the SRS's) sizes the vectors up front.
    /// Gives up with `Cancelled` soon after `cancelled()` turns true.
    pub fn record(
        proof: RegisteredSealProof,
        hint: SizeHint,
        cancelled: &(dyn Fn() -> bool + Sync),
    ) -> Result<R1cs> {
        with_tree_shape!(proof, record_tree, proof, hint, cancelled)
    }

    /// About how many bytes the recorded circuit of a partition of `hint`'s size holds (PoRep:
    /// ~5.6 terms of 8 bytes and three 4-byte row ends per constraint).
    pub fn estimate_bytes(hint: SizeHint) -> u64 {
        let per_constraint = 3.0 * 4.0 + 8.0 * TERMS_PER_CONSTRAINT.iter().sum::<f64>();
        (hint.constraints as f64 * per_constraint) as u64
    }

    pub fn constraints(&self) -> usize {
        self.rows[0].end.len()
    }

    pub fn stats(&self) -> R1csStats {
        let terms = self.rows.each_ref().map(|m| m.terms.len());
        let bytes = self
            .rows
            .iter()
            .map(|m| 4 * m.end.capacity() + 8 * m.terms.capacity())
            .sum::<usize>()
            + 32 * self.coeffs.capacity()
            + (self.a_aux_density.bv.len()
                + self.b_aux_density.bv.len()
                + self.b_input_density.bv.len())
                / 8;
        R1csStats {
            constraints: self.constraints(),
            inputs: self.inputs,
            aux: self.aux,
            terms,
            distinct_coefficients: self.coeffs.len(),
            bytes,
        }
    }

    /// The partition's assignment from its witness: a, b, c = A·w, B·w, C·w on all threads,
    /// the densities of the recorded circuit.
    pub fn evaluate(&self, w: Witness) -> Result<Assignment> {
        self.check(&w)?;
        let [a, b, c] = self.products(&w.input, &w.aux);
        Ok(self.assignment(w, [a, b, c], None))
    }

    /// The partition's assignment with a, b, c left to the backend (empty vectors, `deferred`
    /// set): a device that holds this circuit evaluates them there, so the host keeps only the
    /// witness.
    pub fn defer(self: &Arc<Self>, w: Witness) -> Result<Assignment> {
        self.check(&w)?;
        Ok(self.assignment(w, Default::default(), Some(self.clone())))
    }

    /// A, B and C times [input | aux].
    pub fn products(&self, input: &[Scalar], aux: &[Scalar]) -> [Vec<Scalar>; 3] {
        self.rows.each_ref().map(|m| self.product(m, input, aux))
    }

    /// Matrix `q` (0 = A, 1 = B, 2 = C) as row ends and terms (see [`Rows`]), and the coefficient
    /// table: what a device copy is made from.
    pub fn matrix(&self, q: usize) -> (&[u32], &[u64]) {
        (&self.rows[q].end, &self.rows[q].terms)
    }

    pub fn coefficients(&self) -> &[Scalar] {
        &self.coeffs
    }

    fn assignment(
        &self,
        w: Witness,
        [a, b, c]: [Vec<Scalar>; 3],
        deferred: Option<Arc<R1cs>>,
    ) -> Assignment {
        Assignment {
            prepared: None,
            deferred,
            a,
            b,
            c,
            input: w.input,
            aux: w.aux,
            a_aux_density: self.a_aux_density.clone(),
            b_input_density: self.b_input_density.clone(),
            b_aux_density: self.b_aux_density.clone(),
        }
    }

    fn check(&self, w: &Witness) -> Result<()> {
        if w.input.len() != self.inputs
            || w.aux.len() != self.aux
            || w.constraints != self.constraints()
        {
            return Err(err!(
                Internal,
                "witness ({} inputs, {} aux, {} constraints) does not fit the recorded {} circuit ({}, {}, {})",
                w.input.len(),
                w.aux.len(),
                w.constraints,
                registry::name(self.proof),
                self.inputs,
                self.aux,
                self.constraints()
            ));
        }
        Ok(())
    }

    /// One matrix times [input | aux], written straight into a new vector by all threads.
    fn product(&self, m: &Rows, input: &[Scalar], aux: &[Scalar]) -> Vec<Scalar> {
        const CHUNK: usize = 1 << 14;
        let n = m.end.len();
        let mut out: Vec<Scalar> = Vec::with_capacity(n);
        out.spare_capacity_mut()[..n]
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(k, dst)| {
                for (j, d) in dst.iter_mut().enumerate() {
                    d.write(self.row(m, k * CHUNK + j, input, aux));
                }
            });
        // SAFETY: all n slots were written above.
        unsafe { out.set_len(n) };
        out
    }

    #[inline]
    fn row(&self, m: &Rows, r: usize, input: &[Scalar], aux: &[Scalar]) -> Scalar {
        let mut acc = Scalar::ZERO;
        for &t in &m.terms[m.range(r)] {
            let var = t as u32;
            let v = if var & INPUT != 0 {
                input[(var & !INPUT) as usize]
            } else {
                aux[var as usize]
            };
            match (t >> 32) as u32 {
                ONE => acc += v,
                MINUS_ONE => acc -= v,
                c => acc += v * self.coeffs[c as usize],
            }
        }
        acc
    }
}

/// Records the blank circuit: counts variables, keeps every constraint's terms.
struct Recorder<'c> {
    cancelled: &'c (dyn Fn() -> bool + Sync),
    inputs: usize,
    aux: usize,
    rows: [Rows; 3],
    coeffs: Vec<Scalar>,
    index: HashMap<[u8; 32], u32>,
    a_aux_density: DensityTracker,
    b_input_density: DensityTracker,
    b_aux_density: DensityTracker,
    /// Set when a matrix outgrows the 32-bit row ends.
    overflow: bool,
}

impl<'c> Recorder<'c> {
    fn new(hint: SizeHint, cancelled: &'c (dyn Fn() -> bool + Sync)) -> Self {
        let rows = TERMS_PER_CONSTRAINT.map(|k| Rows {
            end: Vec::with_capacity(hint.constraints),
            terms: Vec::with_capacity((hint.constraints as f64 * k * 1.25) as usize),
        });
        let mut r = Recorder {
            cancelled,
            inputs: 0,
            aux: 0,
            rows,
            coeffs: Vec::new(),
            index: HashMap::new(),
            a_aux_density: DensityTracker::new(),
            b_input_density: DensityTracker::new(),
            b_aux_density: DensityTracker::new(),
            overflow: false,
        };
        r.coefficient(Scalar::ONE);
        r.coefficient(-Scalar::ONE);
        r
    }

    fn coefficient(&mut self, c: Scalar) -> u32 {
        let next = self.coeffs.len() as u32;
        let i = *self.index.entry(c.to_repr()).or_insert(next);
        if i == next {
            self.coeffs.push(c);
        }
        i
    }

    /// Append `lc` as matrix `q`'s next row, marking densities as bellperson's prover does
    /// (A: aux only — inputs have full A density; B: inputs and aux; C: none).
    fn row(&mut self, q: usize, lc: &LinearCombination<Scalar>) {
        let mut terms = std::mem::take(&mut self.rows[q].terms);
        for (&i, coeff) in lc.iter_inputs() {
            if !bool::from(coeff.is_zero()) {
                let c = self.coefficient(*coeff);
                terms.push((c as u64) << 32 | (i as u64 | INPUT as u64));
                if q == 1 {
                    self.b_input_density.inc(i);
                }
            }
        }
        for (&i, coeff) in lc.iter_aux() {
            if !bool::from(coeff.is_zero()) {
                let c = self.coefficient(*coeff);
                terms.push((c as u64) << 32 | i as u64);
                match q {
                    0 => self.a_aux_density.inc(i),
                    1 => self.b_aux_density.inc(i),
                    _ => {}
                }
            }
        }
        self.overflow |= terms.len() > u32::MAX as usize;
        self.rows[q].end.push(terms.len() as u32);
        self.rows[q].terms = terms;
    }

    fn finish(mut self, proof: RegisteredSealProof) -> Result<R1cs> {
        // bellperson's per-input constraints: input i in A, nothing in B and C.
        for i in 0..self.inputs {
            let lc = LinearCombination::zero() + Variable::new_unchecked(Index::Input(i));
            self.row(0, &lc);
            self.row(1, &LinearCombination::zero());
            self.row(2, &LinearCombination::zero());
        }
        if self.overflow || self.inputs >= INPUT as usize || self.aux >= INPUT as usize {
            return Err(err!(
                Internal,
                "the {} circuit is too large to record",
                registry::name(proof)
            ));
        }
        for m in &mut self.rows {
            m.terms.shrink_to_fit();
            m.end.shrink_to_fit();
        }
        Ok(R1cs {
            proof,
            inputs: self.inputs,
            aux: self.aux,
            rows: self.rows,
            coeffs: self.coeffs,
            a_aux_density: self.a_aux_density,
            b_input_density: self.b_input_density,
            b_aux_density: self.b_aux_density,
        })
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
        self.a_aux_density.add_element();
        self.b_aux_density.add_element();
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs += 1;
        self.b_input_density.add_element();
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.row(0, &a(LinearCombination::zero()));
        self.row(1, &b(LinearCombination::zero()));
        self.row(2, &c(LinearCombination::zero()));
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

fn record_tree<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredSealProof,
    hint: SizeHint,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<R1cs> {
    let circuit = super::shape::blank_circuit::<Tree>(proof)?;
    let mut cs = Recorder::new(hint, cancelled);
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))
        .status(Status::Internal, "recording")?;
    let res = bellperson::Circuit::synthesize(circuit, &mut cs);
    if cancelled() {
        return Err(err!(
            Cancelled,
            "recording the {} circuit was cancelled",
            registry::name(proof)
        ));
    }
    res.status(Status::Internal, "recording the blank circuit")?;
    cs.finish(proof)
}

// Shared by every synthesis worker.
const _: fn() = || {
    fn is<T: Send + Sync>() {}
    is::<R1cs>();
};
