//! Synthesis of independent sub-circuits on several threads, with a result identical to
//! synthesizing them one after the other.
//!
//! A [`Fork`] continues a parent [`Assignment`] (read-only: it may use the parent's variables)
//! and records its own constraints and variables locally, numbered as if they came right after
//! the parent's. Our constraint system keeps no linear combinations, only their values and the
//! density bits, so putting forks back in order ([`Assignment::absorb`]) is concatenation plus
//! the density bits the forks set on parent variables: the same vectors sequential synthesis
//! produces, whichever fork finished first.

use bellperson::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use bitvec::vec::BitVec;
use blstrs::Scalar;
use rayon::prelude::*;

use super::assignment::{constraint, Frame, Query};
use super::Assignment;

/// A constraint system whose independent sub-circuits can be synthesized on other threads and
/// put back in order, giving exactly what sequential synthesis gives: [`Assignment`] (a, b, c
/// values and densities) and [`super::witness::Witness`] (variable values only).
pub(crate) trait Forkable: ConstraintSystem<Scalar, Root = Self> + Sized + Sync {
    type Fork<'p>: ConstraintSystem<Scalar> + Send
    where
        Self: 'p;
    type Finished: Send;
    /// Close the circuit with bellperson's per-input constraints.
    fn end(self) -> Self;
    /// (constraints, inputs, aux) so far.
    fn sizes(&self) -> (usize, usize, usize);
    /// `n` forks, one per independent sub-circuit, in sequential order.
    fn forks(&mut self, n: usize, hint: super::SizeHint) -> Vec<Self::Fork<'_>>;
    fn finish(fork: Self::Fork<'_>) -> Self::Finished;
    /// Append a finished fork; forks are absorbed in sequential order.
    fn absorb(&mut self, f: Self::Finished);
    /// How many of `n` items [`on_forks`] gives forks at once on `threads` threads: up to 8 per
    /// thread, a multiple of the thread count (no batch ends on a partial round), so that the
    /// forks in flight hold one batch, not a second copy of the partition beside the parent (a
    /// 32 GiB WindowPoSt partition's 2,349 sectors at once needed ~2× its 15 GB and were
    /// OOM-killed on a 24 GiB machine).
    fn batch(n: usize, threads: usize) -> usize {
        let threads = threads.max(1);
        let batches = n.max(1).div_ceil(threads * 8);
        n.max(1).div_ceil(batches).div_ceil(threads) * threads
    }
}

impl Forkable for Assignment {
    type Fork<'p> = Fork<'p>;
    type Finished = Forked;
    fn end(self) -> Self {
        Assignment::end(self)
    }
    fn sizes(&self) -> (usize, usize, usize) {
        (self.num_constraints(), self.input.len(), self.aux.len())
    }
    fn forks(&mut self, n: usize, hint: super::SizeHint) -> Vec<Fork<'_>> {
        let parent: &Self = self;
        (0..n).map(|_| Fork::new(parent, hint)).collect()
    }
    fn finish(fork: Fork<'_>) -> Forked {
        fork.finish()
    }
    fn absorb(&mut self, f: Forked) {
        Assignment::absorb(self, f)
    }
}

impl Forkable for super::witness::Witness {
    type Fork<'p> = super::witness::WitnessFork<'p>;
    type Finished = super::witness::WitnessPart;
    fn end(self) -> Self {
        Self::end(self)
    }
    fn sizes(&self) -> (usize, usize, usize) {
        (self.constraints, self.input.len(), self.aux.len())
    }
    fn forks(&mut self, n: usize, hint: super::SizeHint) -> Vec<Self::Fork<'_>> {
        super::witness::Witness::forks(self, n, hint)
    }
    fn finish(fork: Self::Fork<'_>) -> Self::Finished {
        fork.finish()
    }
    fn absorb(&mut self, f: Self::Finished) {
        Self::absorb(self, f)
    }
    /// Every item at once: the forks write into their slots of the parent's reserved memory
    /// when the hint splits the rest evenly among all of them (`Witness::forks`).
    fn batch(n: usize, _threads: usize) -> usize {
        n.max(1)
    }
}

/// Into `cs`, `item` for each of `items` (independent sub-circuits of one shape, in sequential
/// order) on its own fork, all threads; the forks absorbed in order, each batch
/// ([`Forkable::batch`]) before the next one's forks exist. Each fork reserves an equal share of
/// what the partition still needs (`hint`), plus an eighth of slack.
pub(crate) fn on_forks<CS: Forkable, T: Send>(
    cs: &mut CS,
    items: Vec<T>,
    hint: super::SizeHint,
    item: impl Fn(&mut CS::Fork<'_>, T) -> Result<(), SynthesisError> + Sync,
) -> Result<(), SynthesisError> {
    let n = items.len().max(1);
    let share = |total: usize, used: usize| {
        let each = total.saturating_sub(used) / n;
        each + each / 8
    };
    let (constraints, inputs, aux) = cs.sizes();
    let fork_hint = super::SizeHint {
        constraints: share(hint.constraints, constraints),
        inputs: share(hint.inputs, inputs),
        aux: share(hint.aux, aux),
    };
    let batch = CS::batch(n, rayon::current_num_threads());
    let mut items = items.into_iter();
    loop {
        let these: Vec<T> = items.by_ref().take(batch).collect();
        if these.is_empty() {
            return Ok(());
        }
        let forks = cs.forks(these.len(), fork_hint);
        let done: Vec<CS::Finished> = forks
            .into_par_iter()
            .zip(these)
            .map(|(mut fork, it)| {
                item(&mut fork, it)?;
                Ok(CS::finish(fork))
            })
            .collect::<Result<_, SynthesisError>>()?;
        for f in done {
            cs.absorb(f);
        }
    }
}

pub(crate) struct Fork<'p> {
    parent: &'p Assignment,
    local: Assignment,
    touched: Touched,
}

/// Density bits a fork set on its parent's variables.
struct Touched {
    a_aux: BitVec,
    b_aux: BitVec,
    b_input: BitVec,
}

/// What a finished fork hands back to its parent.
pub(crate) struct Forked {
    base_input: usize,
    base_aux: usize,
    local: Assignment,
    touched: Touched,
}

impl<'p> Fork<'p> {
    /// A fork of `parent` expected to hold about `hint` of its own (capacity only: its vectors
    /// grow past it if need be; reserving without touching costs no memory, while growing from
    /// nothing copies a 32 GiB challenge's ~1 GB several times over).
    pub fn new(parent: &'p Assignment, hint: super::SizeHint) -> Self {
        let (ni, na) = (parent.input.len(), parent.aux.len());
        Fork {
            parent,
            local: Assignment::with_hint(hint),
            touched: Touched {
                a_aux: BitVec::repeat(false, na),
                b_aux: BitVec::repeat(false, na),
                b_input: BitVec::repeat(false, ni),
            },
        }
    }

    pub fn finish(self) -> Forked {
        Forked { base_input: self.parent.input.len(), base_aux: self.parent.aux.len(), local: self.local, touched: self.touched }
    }
}

impl Frame for Fork<'_> {
    fn input(&self, i: usize) -> Scalar {
        let base = self.parent.input.len();
        if i < base {
            self.parent.input[i]
        } else {
            self.local.input[i - base]
        }
    }
    fn aux(&self, i: usize) -> Scalar {
        let base = self.parent.aux.len();
        if i < base {
            self.parent.aux[i]
        } else {
            self.local.aux[i - base]
        }
    }
    fn mark_input(&mut self, q: Query, i: usize) {
        let base = self.parent.input.len();
        match (q, i < base) {
            (Query::B, true) => self.touched.b_input.set(i, true),
            (_, false) => self.local.mark_input(q, i - base),
            _ => {}
        }
    }
    fn mark_aux(&mut self, q: Query, i: usize) {
        let base = self.parent.aux.len();
        match (q, i < base) {
            (Query::A, true) => self.touched.a_aux.set(i, true),
            (Query::B, true) => self.touched.b_aux.set(i, true),
            (_, false) => self.local.mark_aux(q, i - base),
            _ => {}
        }
    }
}

impl ConstraintSystem<Scalar> for Fork<'_> {
    type Root = Self;

    fn new() -> Self {
        unreachable!("a Fork is made from its parent with Fork::new")
    }

    fn alloc<F, A, AR>(&mut self, n: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let v = self.local.alloc(n, f)?;
        Ok(Variable::new_unchecked(Index::Aux(self.parent.aux.len() + index_of(v))))
    }

    fn alloc_input<F, A, AR>(&mut self, n: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let v = self.local.alloc_input(n, f)?;
        Ok(Variable::new_unchecked(Index::Input(self.parent.input.len() + index_of(v))))
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
        self.local.push_constraint(abc);
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

pub(super) fn index_of(v: Variable) -> usize {
    match v.get_unchecked() {
        Index::Input(i) | Index::Aux(i) => i,
    }
}

impl Assignment {
    /// Append a finished fork. Forks of one parent must be absorbed in the order sequential
    /// synthesis would have produced them, and the parent must not have grown in between
    /// except by absorbing its earlier forks.
    pub(crate) fn absorb(&mut self, f: Forked) {
        assert!(f.base_input <= self.input.len() && f.base_aux <= self.aux.len(), "fork absorbed into the wrong parent");
        let Forked { local, touched, .. } = f;
        for i in touched.a_aux.iter_ones() {
            self.a_aux_density.inc(i);
        }
        for i in touched.b_aux.iter_ones() {
            self.b_aux_density.inc(i);
        }
        for i in touched.b_input.iter_ones() {
            self.b_input_density.inc(i);
        }
        for (mine, theirs) in [
            (&mut self.a_aux_density, &local.a_aux_density),
            (&mut self.b_aux_density, &local.b_aux_density),
            (&mut self.b_input_density, &local.b_input_density),
        ] {
            mine.bv.extend_from_bitslice(&theirs.bv);
            mine.total_density += theirs.total_density;
        }
        let Assignment { a, b, c, input, aux, .. } = local;
        append(&mut self.input, input);
        for (mine, theirs) in [(&mut self.a, a), (&mut self.b, b), (&mut self.c, c), (&mut self.aux, aux)] {
            append(mine, theirs);
        }
    }
}

/// `dst.extend(src)`, copied by all threads (a 32 GiB partition moves ~17 GB here), and `src`
/// freed on the thread pool rather than by the caller.
pub(super) fn append(dst: &mut Vec<Scalar>, src: Vec<Scalar>) {
    const CHUNK: usize = 1 << 16;
    let (old, n) = (dst.len(), src.len());
    dst.reserve(n);
    dst.spare_capacity_mut()[..n].par_chunks_mut(CHUNK).zip(src.par_chunks(CHUNK)).for_each(|(d, s)| {
        for (d, s) in d.iter_mut().zip(s) {
            d.write(*s);
        }
    });
    // SAFETY: the n slots after `old` were written just above.
    unsafe { dst.set_len(old + n) };
    if n >= CHUNK {
        rayon::spawn(move || drop(src));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Batches are whole rounds of the threads, at most 8 items a thread, and as even as that
    /// allows; a witness's forks all go at once (they write into the parent's slots).
    #[test]
    fn batches() {
        let b = <Assignment as Forkable>::batch;
        assert_eq!(b(2349, 16), 128); // a 32 GiB WindowPoSt partition: 19 batches
        assert_eq!(b(2349, 2), 16);
        assert_eq!(b(176, 16), 96); // a 32 GiB PoRep partition's challenges: 96 + 80
        assert_eq!(b(66, 16), 80); // WinningPoSt's challenges: one batch
        assert_eq!(b(1, 16), 16);
        assert_eq!(b(0, 0), 1);
        assert_eq!(<super::super::witness::Witness as Forkable>::batch(176, 16), 176);
    }
}
