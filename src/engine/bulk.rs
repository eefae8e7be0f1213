//! The engine's bulk work — the synthesis of partitions at the default priority (PoRep C2,
//! SnapDeals) — runs `bulk_nice` steps below the process's CPU priority, so that whatever is not
//! bulk takes the cores first when they are all busy: the urgent worker's PoSt (its own pool, at
//! the process's priority) and the host's own threads (a node's chain sync, its RPC). The
//! synthesis workers lower themselves (`lower_this_thread`) and run their parallel work on this
//! module's pool, whose threads are lowered too.
//!
//! Proving stays at the process's priority, on the lanes' own threads. A device's driver uses
//! little CPU, and lowered it left the GPU waiting while an urgent CPU proof held every core
//! (2026-12-07 14:05). A CPU proof handed to a shared pool would start only once the pool's
//! workers run out of other tasks to steal (rayon takes injected jobs last), which serialized the
//! CPU backend's two lanes.
//!
//! Measured (BENCHMARKS.md, 2026-12-07 12:27 and 14:05): on a 2-core CPU-only host a 2 KiB
//! WinningPoSt behind four C2 jobs took a median 3.7–6.5 s at equal priority, 2.4–3.9 s with
//! synthesis and the CPU proofs 10 below; on a 16-core GPU host, where the urgent proof runs on
//! the CPU while 32 GiB SnapDeals hold the device, 2.10 → 1.92 s. Raising a thread's niceness needs no
//! privilege; lowering it does, so the bulk side is the one that moves.
//!
//! The pool is the engine's own, not rayon's global one: that one may be the host's, and its
//! threads are not ours to renice.

use rayon::{ThreadPool, ThreadPoolBuilder};

/// A pool of `threads` threads named `cuzk-bulk-N`, each `nice` steps below the priority of the
/// thread that builds it (0: unchanged).
pub(crate) fn pool(threads: usize, nice: i64) -> std::io::Result<ThreadPool> {
    let base = this_thread_nice();
    ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(|i| format!("cuzk-bulk-{i}"))
        .start_handler(move |_| lower_from(base, nice))
        .build()
        .map_err(std::io::Error::other)
}

/// Lower the calling thread `nice` steps below its current priority.
pub(crate) fn lower_this_thread(nice: i64) {
    lower_from(this_thread_nice(), nice)
}

/// The calling thread's nice value (0 where it cannot be read).
#[cfg(target_os = "linux")]
pub(crate) fn this_thread_nice() -> i32 {
    // getpriority may legitimately return -1: errno tells an error apart.
    unsafe {
        *libc::__errno_location() = 0;
        let n = libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t);
        if n == -1 && *libc::__errno_location() != 0 {
            return 0;
        }
        n
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn this_thread_nice() -> i32 {
    0
}

/// Set the calling thread's nice value to `base + nice` (capped at 19, the lowest priority).
/// On Linux a thread's nice value is its own; elsewhere this does nothing. A refusal (a sandbox
/// that forbids it) is logged once and the work runs at the process's priority.
fn lower_from(base: i32, nice: i64) {
    if nice <= 0 {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        static WARNED: std::sync::Once = std::sync::Once::new();
        let target = (base as i64 + nice).min(19) as i32;
        let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, target) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            WARNED.call_once(|| log::warn!("cuzk: could not lower the bulk threads' CPU priority (bulk_nice): {e}"));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = base;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn bulk_threads_run_below_the_builders_priority() {
        let base = this_thread_nice();
        let p = pool(2, 7).unwrap();
        let seen: Vec<i32> = p.install(|| {
            use rayon::prelude::*;
            (0..64).into_par_iter().map(|_| this_thread_nice()).collect()
        });
        assert!(seen.iter().all(|&n| n == (base + 7).min(19)), "bulk threads' nice values {seen:?}, base {base}");
        assert_eq!(this_thread_nice(), base, "the builder's own priority is unchanged");
        let same = pool(1, 0).unwrap();
        assert_eq!(same.install(this_thread_nice), base, "bulk_nice 0 leaves the priority alone");
    }
}
