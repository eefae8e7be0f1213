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

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use blstrs::Scalar;
use ec_gpu_gen::multiexp_cpu::DensityTracker;
use ff::Field;
use rayon::prelude::*;

use super::record::{blank, Cancelled};
use super::witness::Witness;
use super::{Assignment, SizeHint};
use crate::error::Result;
use crate::kinds::CircuitId;

/// Bit 31 of a term's variable: an input (else aux).
pub(super) const INPUT: u32 = 1 << 31;
const ONE: u32 = 0;
const MINUS_ONE: u32 = 1;

#[derive(Default)]
pub(crate) struct Rows {
    /// Row r's terms are terms[end[r - 1]..end[r]] (end[-1] = 0).
    pub(super) end: Vec<u32>,
    /// coefficient index << 32 | variable.
    pub(super) terms: Vec<u64>,
}

impl Rows {
    fn range(&self, r: usize) -> std::ops::Range<usize> {
        let start = if r == 0 { 0 } else { self.end[r - 1] as usize };
        start..self.end[r] as usize
    }
}

pub struct R1cs {
    /// The circuit recorded: every partition of every proof of it has this R1CS.
    pub circuit: CircuitId,
    pub inputs: usize,
    pub aux: usize,
    /// A, B, C.
    pub(super) rows: [Rows; 3],
    pub(super) coeffs: Vec<Scalar>,
    pub(super) a_aux_density: DensityTracker,
    pub(super) b_input_density: DensityTracker,
    pub(super) b_aux_density: DensityTracker,
    /// (tile rows, the most terms such a tile holds): `most_terms_per_tile`'s last answer.
    pub(super) tile_terms: OnceLock<(usize, u64)>,
    /// [`R1cs::significant_seen`].
    pub(super) significant_seen: [AtomicU64; 3],
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
    /// Record `circuit`'s partition circuit (any kind's) from its blank circuit on one thread
    /// (PoRep: seconds at 2 KiB, about a minute and a half at 32 GiB); `hint` (the SRS's) sizes
    /// the vectors up front. Gives up with `Cancelled` soon after `cancelled()` turns true.
    pub fn record(circuit: impl Into<CircuitId>, hint: SizeHint, cancelled: &(dyn Fn() -> bool + Sync)) -> Result<R1cs> {
        use crate::kinds::{post, update, RegisteredPoStProof, RegisteredUpdateProof};
        let id = circuit.into();
        fn blank_seal<Tree: 'static + filecoin_proofs::types::MerkleTreeTrait>(id: CircuitId, p: crate::kinds::registry::RegisteredSealProof, hint: SizeHint, c: Cancelled<'_>) -> Result<R1cs> {
            blank(id, crate::kinds::porep::blank_circuit::<Tree>(p)?, hint, c)
        }
        fn blank_post<Tree: 'static + filecoin_proofs::types::MerkleTreeTrait>(id: CircuitId, p: RegisteredPoStProof, hint: SizeHint, c: Cancelled<'_>) -> Result<R1cs> {
            blank(id, post::blank_circuit::<Tree>(p)?, hint, c)
        }
        fn blank_update<Tree: 'static + filecoin_proofs::types::MerkleTreeTrait<Hasher = storage_proofs_update::constants::TreeRHasher>>(
            id: CircuitId,
            p: RegisteredUpdateProof,
            hint: SizeHint,
            c: Cancelled<'_>,
        ) -> Result<R1cs> {
            blank(id, update::blank_circuit::<Tree>(p)?, hint, c)
        }
        match id {
            CircuitId::Seal(p) => with_tree_shape!(p, blank_seal, id, p, hint, cancelled),
            CircuitId::PoSt(p) => with_tree_shape!(p, blank_post, id, p, hint, cancelled),
            CircuitId::Update(p) => with_tree_shape!(p, blank_update, id, p, hint, cancelled),
        }
    }

    /// About how many bytes `circuit`'s recording holds for a partition of `hint`'s size: its
    /// terms of 8 bytes ([`CircuitId::terms_per_constraint`]: ~5.6 a constraint for PoRep, ~9.3
    /// for PoSt) and three 4-byte row ends per constraint.
    pub fn estimate_bytes(circuit: CircuitId, hint: SizeHint) -> u64 {
        let per_constraint = 3.0 * 4.0 + 8.0 * circuit.terms_per_constraint().iter().sum::<f64>();
        (hint.constraints as f64 * per_constraint) as u64
    }

    pub fn constraints(&self) -> usize {
        self.rows[0].end.len()
    }

    pub fn stats(&self) -> R1csStats {
        let terms = self.rows.each_ref().map(|m| m.terms.len());
        let bytes = self.rows.iter().map(|m| 4 * m.end.capacity() + 8 * m.terms.capacity()).sum::<usize>()
            + 32 * self.coeffs.capacity()
            + (self.a_aux_density.bv.len() + self.b_aux_density.bv.len() + self.b_input_density.bv.len()) / 8;
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

    /// Aᵀ·x, Bᵀ·x, Cᵀ·x for a value x[r] per row (missing rows count as zero): per variable,
    /// inputs first, then aux — the QAP polynomials at τ when x holds the Lagrange basis at τ
    /// (what a Groth16 SRS is made from). Each thread owns a range of the variables and reads
    /// every term, adding those of its range: a 32 GiB WindowPoSt's A has 862 M terms, which one
    /// thread per matrix took minutes to scatter.
    pub fn transposed_products(&self, x: &[Scalar]) -> [Vec<Scalar>; 3] {
        let vars = self.inputs + self.aux;
        let span = vars.div_ceil(rayon::current_num_threads().max(1)).max(1 << 12);
        self.rows.each_ref().map(|m| {
            let mut v = vec![Scalar::ZERO; vars];
            v.par_chunks_mut(span).enumerate().for_each(|(k, part)| {
                let lo = k * span;
                for (r, &xr) in x.iter().enumerate().take(m.end.len()) {
                    for &t in &m.terms[m.range(r)] {
                        let var = t as u32;
                        let j = if var & INPUT != 0 { (var & !INPUT) as usize } else { self.inputs + var as usize };
                        let Some(vj) = j.checked_sub(lo).and_then(|i| part.get_mut(i)) else { continue };
                        match (t >> 32) as u32 {
                            ONE => *vj += xr,
                            MINUS_ONE => *vj -= xr,
                            c => *vj += xr * self.coeffs[c as usize],
                        }
                    }
                }
            });
            v
        })
    }

    /// The most scalars neither 0 nor 1 that a witness of this circuit was seen to hold in the
    /// prover's queries L, A and B (0 before any was classified). The GPU's sparse stage holds an
    /// index, a scalar and a gathered base per significant scalar, so its device memory follows
    /// these counts, and they differ by kind more than any planning share can cover: a PoRep
    /// witness is mostly bits (1.6 % of L significant at 2 KiB), a PoSt's, Poseidon's
    /// field elements, almost none (99 %).
    pub fn significant_seen(&self) -> [u64; 3] {
        self.significant_seen.each_ref().map(|c| c.load(Ordering::Relaxed))
    }

    /// A classified witness's significant scalars per query (see [`R1cs::significant_seen`]).
    pub fn observe_significant(&self, counts: [u64; 3]) {
        for (seen, n) in self.significant_seen.iter().zip(counts) {
            seen.fetch_max(n, Ordering::Relaxed);
        }
    }

    /// Which aux variables occur in A, which inputs and aux in B: the densities the prover's A
    /// and B queries follow (and an SRS's a, b_g1, b_g2 sections are laid out by).
    pub fn densities(&self) -> [&DensityTracker; 3] {
        [&self.a_aux_density, &self.b_input_density, &self.b_aux_density]
    }

    /// The rows where A·w × B·w ≠ C·w for w = [input | aux], in order (at most `limit` of them),
    /// computed row by row on all threads without materializing a, b, c: whether a witness
    /// satisfies the circuit, at any size in the memory of the witness and the circuit alone.
    pub fn unsatisfied_rows(&self, input: &[Scalar], aux: &[Scalar], limit: usize) -> Vec<usize> {
        const CHUNK: usize = 1 << 14;
        let [a, b, c] = &self.rows;
        let n = a.end.len();
        let mut bad: Vec<usize> = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .flat_map_iter(|k| {
                (k * CHUNK..((k + 1) * CHUNK).min(n))
                    .filter(|&r| self.row(a, r, input, aux) * self.row(b, r, input, aux) != self.row(c, r, input, aux))
                    .take(limit)
                    .collect::<Vec<_>>()
            })
            .collect();
        bad.truncate(limit);
        bad
    }

    /// Row `r` of matrix `q` (0 = A, 1 = B, 2 = C) times w = [input | aux]: one value of a, b or c
    /// without materializing the vector (a check against another synthesis at any size).
    pub fn row_value(&self, q: usize, r: usize, input: &[Scalar], aux: &[Scalar]) -> Scalar {
        self.row(&self.rows[q], r, input, aux)
    }

    /// Matrix `q` (0 = A, 1 = B, 2 = C) as row ends and terms (see [`Rows`]), and the coefficient
    /// table: what a device copy is made from.
    pub fn matrix(&self, q: usize) -> (&[u32], &[u64]) {
        (&self.rows[q].end, &self.rows[q].terms)
    }

    /// The most terms any `tile_rows` consecutive rows from a multiple of `tile_rows` hold, over
    /// the three matrices: what a copy of the circuit by tiles of rows needs per tile. Computed
    /// once (a pass over the row ends: ~0.2 s at 32 GiB) for the first tile size asked.
    pub fn most_terms_per_tile(&self, tile_rows: usize) -> u64 {
        let most = || {
            self.rows
                .iter()
                .map(|m| {
                    m.end.chunks(tile_rows.max(1)).scan(0u64, |prev, c| {
                        let stop = c[c.len() - 1] as u64; // chunks are never empty
                        let n = stop.saturating_sub(*prev);
                        *prev = stop;
                        Some(n)
                    }).max().unwrap_or(0)
                })
                .max()
                .unwrap_or(0)
        };
        match self.tile_terms.get_or_init(|| (tile_rows, most())) {
            &(t, m) if t == tile_rows => m,
            _ => most(),
        }
    }

    pub fn coefficients(&self) -> &[Scalar] {
        &self.coeffs
    }

    fn assignment(&self, w: Witness, [a, b, c]: [Vec<Scalar>; 3], deferred: Option<Arc<R1cs>>) -> Assignment {
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
        if w.input.len() != self.inputs || w.aux.len() != self.aux || w.constraints != self.constraints() {
            return Err(err!(
                Internal,
                "witness ({} inputs, {} aux, {} constraints) does not fit the recorded {} circuit ({}, {}, {})",
                w.input.len(),
                w.aux.len(),
                w.constraints,
                self.circuit.name(),
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
        out.spare_capacity_mut()[..n].par_chunks_mut(CHUNK).enumerate().for_each(|(k, dst)| {
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
            let v = if var & INPUT != 0 { input[(var & !INPUT) as usize] } else { aux[var as usize] };
            match (t >> 32) as u32 {
                ONE => acc += v,
                MINUS_ONE => acc -= v,
                c => acc += v * self.coeffs[c as usize],
            }
        }
        acc
    }
}

// Shared by every synthesis worker.
const _: fn() = || {
    fn is<T: Send + Sync>() {}
    is::<R1cs>();
};
