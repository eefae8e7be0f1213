//! The work queue of the synthesis stage: (job, partition) items, highest priority first, then
//! oldest job first, then partition order — so one sector's partitions stay together.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use super::job::Job;

pub struct WorkItem {
    pub job: Arc<Job>,
    pub partition: usize,
}

impl WorkItem {
    fn key(&self) -> (i32, std::cmp::Reverse<u64>, std::cmp::Reverse<usize>) {
        (self.job.priority, std::cmp::Reverse(self.job.id), std::cmp::Reverse(self.partition))
    }
}

impl PartialEq for WorkItem {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl Eq for WorkItem {}
impl PartialOrd for WorkItem {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for WorkItem {
    fn cmp(&self, o: &Self) -> Ordering {
        self.key().cmp(&o.key())
    }
}

#[derive(Default)]
pub struct WorkQueue {
    heap: Mutex<(BinaryHeap<WorkItem>, bool)>,
    cv: Condvar,
}

impl WorkQueue {
    pub fn push_job(&self, job: &Arc<Job>) {
        let mut g = self.heap.lock().unwrap_or_else(|e| e.into_inner());
        for partition in 0..job.partitions() {
            g.0.push(WorkItem { job: job.clone(), partition });
        }
        drop(g);
        self.cv.notify_all();
    }

    /// Block until an item is available; None once closed and empty.
    pub fn pop(&self) -> Option<(WorkItem, Instant)> {
        let mut g = self.heap.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(item) = g.0.pop() {
                return Some((item, Instant::now()));
            }
            if g.1 {
                return None;
            }
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Block until an item above the default priority (0) heads the queue — what the urgent
    /// synthesis worker takes, so a PoSt job never waits behind C2 partitions for a worker;
    /// None once closed.
    pub fn pop_urgent(&self) -> Option<(WorkItem, Instant)> {
        let mut g = self.heap.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if g.0.peek().is_some_and(|i| i.job.priority > 0) {
                return g.0.pop().map(|item| (item, Instant::now()));
            }
            if g.1 {
                return None;
            }
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    pub fn len(&self) -> usize {
        self.heap.lock().unwrap_or_else(|e| e.into_inner()).0.len()
    }

    /// Stop handing out work; items still queued are dropped (their jobs are cancelled first).
    pub fn close(&self) {
        let mut g = self.heap.lock().unwrap_or_else(|e| e.into_inner());
        g.0.clear();
        g.1 = true;
        drop(g);
        self.cv.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::kinds::registry::RegisteredSealProof;
    use crate::srs::Srs;
    use crate::kinds::porep::SealJobInputs;
    use crate::synth::{Assignment, PartitionCircuits, SizeHint};

    /// Partition circuits that are never synthesized: only their count matters here.
    struct Count(usize);
    impl PartitionCircuits for Count {
        fn partitions(&self) -> usize {
            self.0
        }
        fn synthesize(&self, _: usize, _: SizeHint) -> crate::error::Result<Assignment> {
            unreachable!("the queue never synthesizes")
        }
    }

    fn job(id: u64, priority: i32, partitions: usize, srs: &Arc<Srs>) -> Arc<Job> {
        let inputs = SealJobInputs {
            proof: RegisteredSealProof::StackedDrg32GiBV1_1,
            comm_r: [1; 32],
            comm_d: [1; 32],
            seed: [1; 32],
            ticket: [1; 32],
            circuits: Arc::new(Count(partitions)),
        };
        let inputs = crate::kinds::seal_inputs(inputs, [0; 32], id);
        Arc::new(Job::new(id, None, priority, inputs, srs.clone(), None, Duration::ZERO, Instant::now()))
    }

    #[test]
    fn priority_then_age_then_partition_order() {
        let params = crate::srs::generator_parameters([1, 0, 0, 0, 0]);
        let srs = Arc::new(Srs::from_parameters(RegisteredSealProof::StackedDrg32GiBV1_1, params));
        let q = WorkQueue::default();
        q.push_job(&job(1, 0, 3, &srs));
        q.push_job(&job(2, 5, 2, &srs));
        q.push_job(&job(3, 0, 1, &srs));
        let order: Vec<(u64, usize)> = (0..6).map(|_| q.pop().map(|(w, _)| (w.job.id, w.partition)).unwrap()).collect();
        assert_eq!(order, [(2, 0), (2, 1), (1, 0), (1, 1), (1, 2), (3, 0)]);
        q.close();
        assert!(q.pop().is_none(), "a closed, empty queue ends the workers");
    }

    /// The urgent worker takes only work above the default priority, highest first, and
    /// waits (without taking it) while only default-priority work is queued.
    #[test]
    fn urgent_pop_takes_only_work_above_the_default_priority() {
        let params = crate::srs::generator_parameters([1, 0, 0, 0, 0]);
        let srs = Arc::new(Srs::from_parameters(RegisteredSealProof::StackedDrg32GiBV1_1, params));
        let q = Arc::new(WorkQueue::default());
        q.push_job(&job(1, 0, 2, &srs));
        let waiter = {
            let q = q.clone();
            std::thread::spawn(move || q.pop_urgent().map(|(w, _)| (w.job.id, w.partition)))
        };
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(q.len(), 2, "default-priority work is left for the other workers");
        q.push_job(&job(2, 2000, 1, &srs));
        assert_eq!(waiter.join().unwrap(), Some((2, 0)));
        assert_eq!(q.len(), 2);
        q.close();
        assert!(q.pop_urgent().is_none());
    }
}
