//! Synthesis, for every kind: partition circuits ([`PartitionCircuits`], which each kind in
//! `crate::kinds` implements) into our constraint systems — the full assignment (a, b, c values
//! and densities), the witness alone, or the circuit's recording as sparse matrices — with
//! independent sub-circuits on several threads (`fork.rs`).

mod assignment;
mod fork;
mod record;
pub mod r1cs;
pub mod shape;
#[cfg(any(test, feature = "tools"))]
mod toy;
#[cfg(any(test, feature = "tools"))]
pub mod upstream;
mod witness;

pub use assignment::{Assignment, Prepared, SizeHint};
pub(crate) use fork::{on_forks, Forkable};
pub(crate) use record::{conclude, Recorder};
pub(crate) use witness::WitnessFork;
pub use r1cs::R1cs;
#[cfg(any(test, feature = "tools"))]
pub use toy::Toy;
pub use witness::Witness;

use crate::error::Result;

/// The partition circuits of one proof of any kind, type-erased over the Merkle tree shape.
pub trait PartitionCircuits: Send + Sync {
    fn partitions(&self) -> usize;
    /// Build and synthesize partition `k` (its independent sub-circuits on all threads).
    fn synthesize(&self, k: usize, hint: SizeHint) -> Result<Assignment>;

    /// Partition `k`'s witness alone (no linear combination evaluated), its independent
    /// sub-circuits on all threads; with the circuit's recorded [`R1cs`] it gives the same
    /// assignment as [`Self::synthesize`] ([`synthesize_recorded`]).
    fn witness(&self, k: usize, hint: SizeHint) -> Result<Witness> {
        let _ = (k, hint);
        Err(err!(Unsupported, "no witness-only synthesis for this circuit"))
    }

    /// The circuit's R1CS recorded from partition `k` on all threads (its independent
    /// sub-circuits in parallel): the circuit's structure does not depend on its values, so this
    /// equals [`R1cs::record`] of the blank circuit (one thread, ~135 s for a 32 GiB PoRep), in a
    /// fraction of the time. Gives up with `Cancelled` soon after `cancelled()` turns true.
    fn record(&self, k: usize, hint: SizeHint, cancelled: &(dyn Fn() -> bool + Sync)) -> Result<R1cs> {
        let _ = (k, hint, cancelled);
        Err(err!(Unsupported, "no parallel recording for this circuit"))
    }

    /// Whether these circuits offer the recorded path — [`Self::record`] and [`Self::witness`],
    /// equal to [`Self::synthesize`] through [`synthesize_recorded`] — which the engine then
    /// takes once the circuit is recorded. An ability of the kind, asked by the engine; no kind
    /// is named there.
    fn recordable(&self) -> bool {
        false
    }

    /// How many independent sub-circuits one partition's synthesis spreads over (a PoRep
    /// partition's challenges, a PoSt partition's sectors): how many partitions' witnesses the
    /// engine runs at once to keep its cores busy (`engine::gate`).
    fn sub_circuits(&self) -> usize {
        1
    }

    /// Upstream's own paths through these circuits, which the fast ones must equal (tests and
    /// benchmarks; not in the shipped library). None: a toy circuit without them.
    #[cfg(any(test, feature = "tools"))]
    fn upstream(&self) -> Option<&dyn upstream::Upstream> {
        None
    }
}

/// Partition `k` through its witness and the circuit's recorded R1CS: the assignment
/// [`PartitionCircuits::synthesize`] gives, value for value, at a fraction of the work.
pub fn synthesize_recorded(circuits: &dyn PartitionCircuits, k: usize, hint: SizeHint, r1cs: &R1cs) -> Result<Assignment> {
    r1cs.evaluate(circuits.witness(k, hint)?).map_err(|e| e.context(format!("partition {k}")))
}
