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
