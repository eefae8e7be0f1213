//! How much host memory the engine's automatic budget may give partitions. `MemAvailable` at
//! start alone is wrong twice over: in a container it is the host's figure, not what the
//! cgroup will let this process use before the OOM killer steps in; and on hosts whose
//! reported `MemTotal` grows as memory is used (memory added to a VM as it is touched) it stays
//! at its small start value. So the room is the smaller of
//! - `MemAvailable` at start plus whatever `MemTotal` has grown by since, and
//! - for each memory cgroup from this process's up to the root: its limit (read again, it may
//!   be raised) less its usage at start.
//!
//! Both are re-read at most once a second.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// cgroup v1 writes "no limit" as a huge number (PAGE_COUNTER_MAX pages); anything this large is none.
const UNLIMITED: u64 = 1 << 62;
const REFRESH: Duration = Duration::from_secs(1);

/// Where the kernel's files are (`/` on a real system; a fake tree in tests).
#[derive(Debug, Clone)]
pub struct Probe {
    root: PathBuf,
}

impl Default for Probe {
    fn default() -> Self {
        Probe { root: PathBuf::from("/") }
    }
}

/// One memory cgroup directory holding a limit.
#[derive(Debug, Clone)]
struct Cgroup {
    limit_file: PathBuf,
    usage_at_start: u64,
}

fn read_u64(p: &Path) -> Option<u64> {
    std::fs::read_to_string(p).ok()?.trim().parse().ok()
}

impl Probe {
    #[cfg(test)]
    fn at(root: &Path) -> Self {
        Probe { root: root.to_owned() }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.root.join(p.trim_start_matches('/'))
    }

    /// A `/proc/meminfo` field, in bytes.
    fn meminfo(&self, field: &str) -> Option<u64> {
        let s = std::fs::read_to_string(self.path("proc/meminfo")).ok()?;
        let line = s.lines().find(|l| l.split(':').next() == Some(field))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib.saturating_mul(1024))
    }

    /// The memory cgroups this process is in, innermost first, that set a limit: v2 (`0::/p`,
    /// `memory.max` / `memory.current`) or v1 (`N:...memory...:/p`, `memory.limit_in_bytes` /
    /// `memory.usage_in_bytes`). Directories that are not visible (another cgroup namespace)
    /// are skipped.
    fn cgroups(&self) -> Vec<Cgroup> {
        let Ok(s) = std::fs::read_to_string(self.path("proc/self/cgroup")) else { return Vec::new() };
        let mut out = Vec::new();
        for line in s.lines() {
            let mut f = line.splitn(3, ':');
            let (_, controllers, rel) = match (f.next(), f.next(), f.next()) {
                (Some(a), Some(b), Some(c)) => (a, b, c),
                _ => continue,
            };
            let (base, limit, usage) = if controllers.is_empty() {
                ("sys/fs/cgroup", "memory.max", "memory.current")
            } else if controllers.split(',').any(|c| c == "memory") {
                ("sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes")
            } else {
                continue;
            };
            let mut dir = Some(Path::new(rel.trim_start_matches('/')));
            while let Some(d) = dir {
                let at = self.path(base).join(d);
                if let (Some(l), Some(u)) = (read_u64(&at.join(limit)), read_u64(&at.join(usage))) {
                    if l < UNLIMITED {
                        out.push(Cgroup { limit_file: at.join(limit), usage_at_start: u });
                    }
                }
                dir = d.parent();
            }
        }
        out
    }
}

/// The host's memory as the engine started, and the room partitions get now.
pub struct HostMemory {
    probe: Probe,
    available_at_start: Option<u64>,
    total_at_start: Option<u64>,
    cgroups: Vec<Cgroup>,
    /// The last measurement: when, the room, and what bounds it.
    cached: Mutex<Option<(Instant, Option<u64>, &'static str)>>,
}

impl HostMemory {
    pub fn read(probe: Probe) -> Self {
        let cgroups = probe.cgroups();
        HostMemory {
            available_at_start: probe.meminfo("MemAvailable"),
            total_at_start: probe.meminfo("MemTotal"),
            cgroups,
            probe,
            cached: Mutex::new(None),
        }
    }

    /// Bytes this process may still fill, as measured at start and corrected since for a
    /// growing `MemTotal` and changed cgroup limits (None: nothing could be read).
    pub fn room(&self) -> Option<u64> {
        self.measured().0
    }

    /// What bounds the room: "cgroup", "meminfo" or "unknown".
    pub fn source(&self) -> &'static str {
        self.measured().1
    }

    fn measured(&self) -> (Option<u64>, &'static str) {
        let mut c = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, room, source)) = *c {
            if at.elapsed() < REFRESH {
                return (room, source);
            }
        }
        let (room, source) = self.measure();
        *c = Some((Instant::now(), room, source));
        (room, source)
    }

    fn measure(&self) -> (Option<u64>, &'static str) {
        let grown = match (self.total_at_start, self.probe.meminfo("MemTotal")) {
            (Some(t0), Some(t)) => t.saturating_sub(t0),
            _ => 0,
        };
        let meminfo = self.available_at_start.map(|a| a.saturating_add(grown));
        let cgroup = self
            .cgroups
            .iter()
            .filter_map(|g| read_u64(&g.limit_file).filter(|&l| l < UNLIMITED).map(|l| l.saturating_sub(g.usage_at_start)))
            .min();
        match (meminfo, cgroup) {
            (Some(a), Some(b)) if b < a => (Some(b), "cgroup"),
            (Some(a), _) => (Some(a), "meminfo"),
            (None, Some(b)) => (Some(b), "cgroup"),
            (None, None) => (None, "unknown"),
        }
    }

    /// The tightest cgroup limit now (None: no limit seen).
    pub fn cgroup_limit(&self) -> Option<u64> {
        self.cgroups.iter().filter_map(|g| read_u64(&g.limit_file)).filter(|&l| l < UNLIMITED).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory standing for `/`, removed on drop.
    struct Root(PathBuf);

    impl Root {
        fn new(tag: &str) -> Self {
            let p = std::env::temp_dir().join(format!("cuzk-host-memory-{}-{tag}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            Root(p)
        }
        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Root {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn meminfo(root: &Path, total_kib: u64, avail_kib: u64) {
        write(root, "proc/meminfo", &format!("MemTotal:       {total_kib} kB\nMemFree:        1 kB\nMemAvailable:   {avail_kib} kB\n"));
    }

    #[test]
    fn room_is_the_tighter_of_meminfo_and_every_cgroup_level() {
        let d = Root::new("1");
        let r = d.path();
        meminfo(r, 64 << 20, 60 << 20); // 64 GiB total, 60 available
        write(r, "proc/self/cgroup", "0::/pods/job\n");
        write(r, "sys/fs/cgroup/pods/job/memory.max", "max\n");
        write(r, "sys/fs/cgroup/pods/job/memory.current", "100\n");
        write(r, "sys/fs/cgroup/pods/memory.max", &format!("{}\n", 20u64 << 30));
        write(r, "sys/fs/cgroup/pods/memory.current", &format!("{}\n", 4u64 << 30));
        let h = HostMemory::read(Probe::at(r));
        assert_eq!(h.room(), Some(16 << 30), "the parent's 20 GiB limit less its 4 GiB in use");
        assert_eq!(h.source(), "cgroup");
        assert_eq!(h.cgroup_limit(), Some(20 << 30));

        // No cgroup limit: MemAvailable, growing with MemTotal.
        let d = Root::new("2");
        let r = d.path();
        meminfo(r, 16 << 20, 10 << 20);
        write(r, "proc/self/cgroup", "0::/\n");
        write(r, "sys/fs/cgroup/memory.max", "max\n");
        write(r, "sys/fs/cgroup/memory.current", "5\n");
        let h = HostMemory::read(Probe::at(r));
        assert_eq!(h.room(), Some(10 << 30));
        assert_eq!(h.source(), "meminfo");
        meminfo(r, 80 << 20, 2 << 20); // the host added 64 GiB as memory was used
        *h.cached.lock().unwrap() = None;
        assert_eq!(h.room(), Some(74 << 30));
        assert_eq!(h.cgroup_limit(), None);
    }

    #[test]
    fn cgroup_v1_and_unreadable_files() {
        let d = Root::new("3");
        let r = d.path();
        write(r, "proc/self/cgroup", "12:cpu,cpuacct:/x\n11:memory:/docker/abc\n");
        write(r, "sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", &format!("{}\n", 8u64 << 30));
        write(r, "sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes", &format!("{}\n", 1u64 << 30));
        write(r, "sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
        write(r, "sys/fs/cgroup/memory/memory.usage_in_bytes", "1\n");
        let h = HostMemory::read(Probe::at(r)); // no /proc/meminfo at all
        assert_eq!(h.room(), Some(7 << 30));
        assert_eq!(h.source(), "cgroup");
        let none = Root::new("4");
        let h = HostMemory::read(Probe::at(none.path()));
        assert_eq!((h.room(), h.source()), (None, "unknown"));
    }

    #[test]
    fn this_machine_reads_something() {
        let h = HostMemory::read(Probe::default());
        if Path::new("/proc/meminfo").exists() {
            assert!(h.room().is_some_and(|b| b > 0));
        }
    }
}
