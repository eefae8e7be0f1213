//! Partitions that ride another proof's passes over the SRS tiles (streamed mode). In the
//! streamed mode every sparse stage copies the SRS sections it does not keep over PCIe (34.5 GB a
//! partition at 32 GiB) to add up the bases of one-scalars and gather the bases of significant
//! scalars. Those passes need only a partition's classified queries, not its H, so one pass can
//! serve several partitions, as supraseal-c2's batches do: a partition waiting for the device
//! posts its queries on the [`Board`]; the proof holding the device takes the waiting partitions
//! of the same SRS whose queries fit the room its plan leaves in the budget, and its sparse
//! stage makes their sums of ones and significant parts from the same tiles (cuda/stream.cuh).
//! The rider's own sparse stage then runs ΣH alone (`ffi::SUMS_GIVEN`). No device state crosses
//! proofs: the sums come back to the rider as points, so it may prove on any device.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::ffi;
use super::prep::SparseScalars;
use super::witness::sparse;

/// Partitions one pass serves besides its own at most (the engine's prover lanes bound how many
/// wait at once anyway).
pub(super) const MAX_RIDERS: usize = 3;

enum State {
    Posted,
    /// A holder's sparse stage is making its sums.
    Taken,
    Done(Box<ffi::ProveOut>),
    /// The holder's stage failed: the rider makes its own sums.
    Failed,
}

pub(super) struct Rider {
    /// The SRS (its five section vectors' addresses): one SRS, one set of bases.
    srs: [usize; 5],
    queries: [ffi::Sparse; 3],
    /// Device bytes its queries take in a pass (`vram::rider_bytes`).
    bytes: u64,
    state: Mutex<State>,
}

// SAFETY: the raw pointers in `queries` point into the rider's classification, which `post`
// borrows for the ticket's lifetime; the ticket does not let go (settle, or drop) while a holder
// has the rider Taken, so the arrays outlive every read.
unsafe impl Send for Rider {}
unsafe impl Sync for Rider {}

impl Rider {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The rider's queries as the CUDA side reads them, its sums going to `out`.
    pub(super) fn spec(&self, out: &mut ffi::ProveOut) -> ffi::Rider {
        let [l, a_q, b_q] = self.queries;
        ffi::Rider { l, a_q, b_q, out }
    }

    /// Whether its queries have the shape of `own` (a pass walks one query's bases for all),
    /// none of them dense on either side (a dense query's Pippenger reads the bases itself: no
    /// pass serves it).
    fn fits(&self, own: &[ffi::Sparse; 3]) -> bool {
        self.queries.iter().zip(own).all(|(q, o)| {
            q.npoints == o.npoints && q.ones_words == o.ones_words && q.dense.is_null() && o.dense.is_null()
        })
    }
}

/// The partitions waiting for a device, by their queries.
#[derive(Default)]
pub(super) struct Board {
    posted: Mutex<Vec<Arc<Rider>>>,
    changed: Condvar,
}

impl Board {
    fn posted(&self) -> MutexGuard<'_, Vec<Arc<Rider>>> {
        self.posted.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Posts a partition of `srs` classified as `q` (the significant scalars too few for the GPU
    /// left to the CPU, as the proof's own stage leaves them) until the ticket settles.
    pub(super) fn post<'a>(&'a self, srs: [usize; 5], q: &'a [SparseScalars; 3]) -> Ticket<'a> {
        let queries = q.each_ref().map(sparse);
        let nsig = queries.each_ref().map(|q| q.nsig);
        let bytes = crate::prover::vram::rider_bytes(queries.iter().map(|q| q.ones_words).sum(), nsig);
        let rider = Arc::new(Rider { srs, queries, bytes, state: Mutex::new(State::Posted) });
        self.posted().push(rider.clone());
        Ticket { board: self, rider: Some(rider), _classification: std::marker::PhantomData }
    }

    /// Takes the posted partitions of `srs` shaped like `own` whose queries fit `room` bytes
    /// together (at most [`MAX_RIDERS`], oldest first); the caller's pass makes their sums and
    /// hands them over with [`Serving::done`].
    pub(super) fn take(&self, srs: [usize; 5], own: &[ffi::Sparse; 3], room: u64) -> Serving<'_> {
        let mut posted = self.posted();
        let mut left = room;
        let mut taken = Vec::new();
        posted.retain(|r| {
            let take = taken.len() < MAX_RIDERS && r.srs == srs && r.bytes <= left && r.fits(own);
            if take {
                left -= r.bytes;
                *r.state() = State::Taken;
                taken.push(r.clone());
            }
            !take
        });
        Serving { board: self, taken, outs: None }
    }

    fn settle(&self, riders: &[Arc<Rider>], outs: Option<Vec<Box<ffi::ProveOut>>>) {
        let mut outs = outs.map(|o| o.into_iter());
        for r in riders {
            *r.state() = match outs.as_mut().and_then(|o| o.next()) {
                Some(out) => State::Done(out),
                None => State::Failed,
            };
        }
        // Under the board's lock: a ticket checks the state and waits under it.
        let _posted = self.posted();
        self.changed.notify_all();
    }
}

/// A posted partition; it keeps the classification borrowed until it settles.
pub(super) struct Ticket<'a> {
    board: &'a Board,
    rider: Option<Arc<Rider>>,
    _classification: std::marker::PhantomData<&'a [SparseScalars; 3]>,
}

impl Ticket<'_> {
    /// Leaves the board: the sums a holder's pass made, waiting while one is making them; None
    /// when no pass took the partition (or the pass failed): it makes its own.
    pub(super) fn settle(mut self) -> Option<Box<ffi::ProveOut>> {
        self.leave()
    }

    fn leave(&mut self) -> Option<Box<ffi::ProveOut>> {
        let rider = self.rider.take()?;
        let mut posted = self.board.posted();
        loop {
            let mut state = rider.state();
            match std::mem::replace(&mut *state, State::Failed) {
                State::Posted => {
                    drop(state);
                    posted.retain(|r| !Arc::ptr_eq(r, &rider));
                    return None;
                }
                State::Done(out) => return Some(out),
                State::Failed => return None,
                State::Taken => {
                    *state = State::Taken;
                    drop(state);
                    posted = self.board.changed.wait(posted).unwrap_or_else(|e| e.into_inner());
                }
            }
        }
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        self.leave();
    }
}

/// Riders a sparse stage serves: their outputs while it runs, handed to them by `done`; if it is
/// dropped without (an error, an unwinding panic), they make their own sums.
pub(super) struct Serving<'a> {
    board: &'a Board,
    taken: Vec<Arc<Rider>>,
    outs: Option<Vec<Box<ffi::ProveOut>>>,
}

impl Serving<'_> {
    /// The riders' specs for the CUDA side (valid while `self` lives, unmoved outputs).
    pub(super) fn specs(&mut self) -> Vec<ffi::Rider> {
        let outs = self.outs.get_or_insert_with(|| self.taken.iter().map(|_| ffi::new_out()).collect());
        self.taken.iter().zip(outs.iter_mut()).map(|(r, o)| r.spec(o)).collect()
    }

    /// The pass made their sums: each rider gets its own.
    pub(super) fn done(mut self) {
        let outs = self.outs.take();
        self.board.settle(&std::mem::take(&mut self.taken), outs);
    }
}

impl Drop for Serving<'_> {
    fn drop(&mut self) {
        if !self.taken.is_empty() {
            self.board.settle(&std::mem::take(&mut self.taken), None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queries(npoints: usize, nsig: usize) -> [SparseScalars; 3] {
        std::array::from_fn(|_| SparseScalars {
            npoints,
            ones: vec![0; npoints.div_ceil(1024) * 32],
            sig_idx: (0..nsig as u32).collect(),
            sig: vec![blstrs::Scalar::from(2u64); nsig],
            n_sig: nsig,
            ..Default::default()
        })
    }

    fn own(q: &[SparseScalars; 3]) -> [ffi::Sparse; 3] {
        q.each_ref().map(sparse)
    }

    const SRS: [usize; 5] = [1, 2, 3, 4, 5];
    const ROOM: u64 = 1 << 30;

    /// A posted partition of the same SRS and shape is taken and gets the sums the pass made;
    /// one of another SRS, another shape or too big for the room is left to make its own.
    #[test]
    fn taken_by_srs_shape_and_room() {
        let board = Board::default();
        let (mine, other_shape) = (queries(4096, 100), queries(8192, 100));
        let rider = board.post(SRS, &mine);
        let stranger = board.post([9; 5], &mine);
        let misfit = board.post(SRS, &other_shape);
        let mut serving = board.take(SRS, &own(&mine), ROOM);
        let mut specs = serving.specs();
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].l.nsig, 100);
        // SAFETY: the spec's output is the serving's box, alive here.
        let out = specs[0].out;
        unsafe { (*out).l_ones.x[0] = 7 };
        specs.clear();
        serving.done();
        assert_eq!(rider.settle().expect("the pass made its sums").l_ones.x[0], 7);
        assert!(stranger.settle().is_none());
        assert!(misfit.settle().is_none());
        assert!(board.posted().is_empty());

        let big = board.post(SRS, &mine);
        assert!(board.take(SRS, &own(&mine), 1 << 20).specs().is_empty(), "24 MiB of slack alone is over 1 MiB of room");
        assert!(big.settle().is_none());
    }

    /// A pass that fails (or is dropped) leaves its riders to make their own sums; a rider whose
    /// sums are being made waits for them.
    #[test]
    fn failed_passes_and_waiting_riders() {
        let board = Board::default();
        let q = queries(4096, 10);
        let ticket = board.post(SRS, &q);
        drop(board.take(SRS, &own(&q), ROOM));
        assert!(ticket.settle().is_none());

        let ticket = board.post(SRS, &q);
        let serving = board.take(SRS, &own(&q), ROOM);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| ticket.settle().map(|o| o.a_sig.y[1]));
            std::thread::sleep(std::time::Duration::from_millis(50));
            let mut serving = serving;
            let specs = serving.specs();
            // SAFETY: as above.
            let out = specs[0].out;
            unsafe { (*out).a_sig.y[1] = 3 };
            serving.done();
            assert_eq!(waiter.join().unwrap(), Some(3));
        });
        assert_eq!(board.take(SRS, &own(&q), ROOM).specs().len(), 0, "settled riders leave the board");
    }
}
