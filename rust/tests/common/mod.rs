//! What the integration tests share: thread counts to sweep, task sizes around every split boundary, and the
//! recorded machines of `test/fixtures/sysfs`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use forkunion as fu;

/// Thread counts every property runs at: one, the cores of the CI machine, an odd split, and oversubscribed.
pub const THREAD_COUNTS: [usize; 4] = [1, 2, 3, 8];

/// Task counts around the static split's boundaries for `threads`, plus a larger one.
pub fn task_counts(threads: usize) -> Vec<usize> {
    let mut counts = vec![0, 1, 2, threads.saturating_sub(1), threads, threads + 1, 2 * threads + 1, 1000, 4099];
    counts.sort_unstable();
    counts.dedup();
    counts
}

pub fn topology() -> fu::Topology {
    fu::Topology::new().expect("the live topology")
}

pub fn pool(threads: usize) -> fu::ThreadPool {
    fu::ThreadPool::try_spawn(&topology(), threads).expect("a pool")
}

/// One counter per task, to check that each ran exactly once.
pub struct Tally {
    counts: Vec<AtomicUsize>,
}

impl Tally {
    pub fn new(n: usize) -> Tally {
        Tally { counts: (0..n).map(|_| AtomicUsize::new(0)).collect() }
    }
    pub fn hit(&self, index: usize) {
        // Relaxed: read after the dispatch's join, which orders every callback before it.
        self.counts[index].fetch_add(1, Ordering::Relaxed);
    }
    /// Indices not hit exactly once, with their counts.
    pub fn wrong(&self) -> Vec<(usize, usize)> {
        self.counts
            .iter()
            .enumerate()
            .map(|(i, c)| (i, c.load(Ordering::Relaxed)))
            .filter(|&(_, count)| count != 1)
            .collect()
    }
    pub fn total(&self) -> usize {
        self.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }
}

/// The repository's recorded sysfs trees (in a packaged crate, the copy that `package.sh` vendored).
pub fn fixtures() -> PathBuf {
    Path::new(env!("FORKUNION_SOURCE_ROOT")).join("test").join("fixtures").join("sysfs")
}

/// `machine`'s recorded tree, extracted (once per build) under cargo's temporary directory; `None`, with the
/// reason printed, when `tar` cannot run here.
pub fn recorded_machine(machine: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sysfs").join(machine);
    if root.join("sys").join("devices").is_dir() {
        return Some(root);
    }
    let tarball = fixtures().join(machine).join(format!("{}.tar.gz", machine));
    assert!(tarball.is_file(), "the fixture {} exists", tarball.display());
    // Extract into a fresh folder, then rename: tests running at once never see a half-extracted tree. The folder is
    // this call's own (process and call number): tests of one process run on threads, and with a per-process name
    // one test's `remove_dir_all` or rename could empty the tree another was still extracting.
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let staging = root.with_extension(format!("partial-{}-{}", std::process::id(), call));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).expect("a staging folder");
    match Command::new("tar").arg("-xzf").arg(&tarball).arg("-C").arg(&staging).status() {
        Ok(status) if status.success() => {}
        outcome => {
            eprintln!("skipped: cannot extract {} with tar ({:?})", tarball.display(), outcome);
            return None;
        }
    }
    if std::fs::rename(&staging, &root).is_err() {
        let _ = std::fs::remove_dir_all(&staging); // another test got there first
    }
    Some(root)
}
