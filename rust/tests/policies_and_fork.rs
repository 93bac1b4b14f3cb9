//! The pool's lasting settings (the idle policy, the workers' stack size) and a pool inherited through `fork()`.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use common::{pool, topology, Tally, THREAD_COUNTS};
use forkunion as fu;
use fu::IdlePolicy;

/// Waits until `condition` holds, yielding, for at most a minute (a bound for a stuck test, not a timing):
/// whether it held.
fn eventually(mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !condition() {
        if Instant::now() > deadline {
            return false;
        }
        thread::yield_now();
    }
    true
}

#[test]
fn every_idle_policy_reads_back_and_keeps_the_pool_working() {
    let micros = Duration::from_micros;
    for &threads in &THREAD_COUNTS {
        let pool = pool(threads);
        assert_eq!(pool.idle_policy(), IdlePolicy::Adaptive(IdlePolicy::DEFAULT_WINDOW), "the default");
        assert_eq!(IdlePolicy::default(), IdlePolicy::Adaptive(micros(100)));
        let napping = if (pool.capabilities() & fu::Capabilities::WAITS) != fu::Capabilities::NONE {
            IdlePolicy::Nap
        } else {
            IdlePolicy::Spin // nothing to nap on: the pool keeps spinning, and says so
        };
        let policies = [
            (IdlePolicy::Spin, IdlePolicy::Spin),
            (IdlePolicy::Adaptive(micros(0)), IdlePolicy::Adaptive(micros(0))),
            (IdlePolicy::Adaptive(Duration::from_millis(3)), IdlePolicy::Adaptive(micros(3000))),
            (IdlePolicy::Nap, napping),
            (IdlePolicy::Sleep(Duration::ZERO), IdlePolicy::Sleep(Duration::ZERO)),
            (IdlePolicy::Sleep(Duration::from_secs(2)), IdlePolicy::Sleep(micros(2_000_000))),
            // Rounded up to whole microseconds: a non-zero period never becomes "only a dispatch wakes".
            (IdlePolicy::Sleep(Duration::from_nanos(1)), IdlePolicy::Sleep(micros(1))),
            (IdlePolicy::Adaptive(Duration::from_nanos(1500)), IdlePolicy::Adaptive(micros(2))),
        ];
        for (set, read) in policies {
            pool.set_idle_policy(set).unwrap();
            let tally = Tally::new(64);
            pool.for_n(64, |prong| tally.hit(prong.task_index)).unwrap();
            pool.for_n_dynamic_or_run_on_caller(64, |prong| tally.hit(prong.task_index));
            assert_eq!(tally.total(), 128, "{:?} at {} threads", set, threads);
            assert_eq!(pool.idle_policy(), read, "{:?} outlives two dispatches", set);
        }
    }
}

#[test]
fn an_idle_policy_beyond_the_c_range_is_refused_and_changes_nothing() {
    let pool = pool(2);
    pool.set_idle_policy(IdlePolicy::Sleep(Duration::from_micros(7))).unwrap();
    let huge = Duration::from_micros(1 << 61);
    assert_eq!(pool.set_idle_policy(IdlePolicy::Adaptive(huge)), Err(fu::Error::InvalidArgument));
    assert_eq!(pool.set_idle_policy(IdlePolicy::Sleep(Duration::MAX)), Err(fu::Error::InvalidArgument));
    assert_eq!(pool.idle_policy(), IdlePolicy::Sleep(Duration::from_micros(7)));
    let just_below = Duration::from_micros((1 << 61) - 1);
    pool.set_idle_policy(IdlePolicy::Adaptive(just_below)).unwrap();
    assert_eq!(pool.idle_policy(), IdlePolicy::Adaptive(just_below));
    assert!(fu::ThreadPool::builder().idle_policy(IdlePolicy::Sleep(huge)).try_spawn(&topology(), 2).is_err());
}

#[test]
fn sleeping_workers_park_and_spinning_ones_unpark() {
    for &threads in &[2usize, 3] {
        let pool = fu::ThreadPool::builder()
            .idle_policy(IdlePolicy::Sleep(Duration::ZERO))
            .try_spawn(&topology(), threads)
            .unwrap();
        assert_eq!(pool.idle_policy(), IdlePolicy::Sleep(Duration::ZERO), "the builder's policy");
        let tally = Tally::new(100);
        pool.for_n(100, |prong| tally.hit(prong.task_index)).unwrap();
        assert_eq!(tally.wrong(), vec![]);
        // Every worker (not the inclusive caller) blocks in the kernel once the dispatch is over...
        assert!(eventually(|| pool.parked_threads_count() == threads - 1), "{} parked", pool.parked_threads_count());
        // ... a dispatch wakes them all and runs every task ...
        let tally = Tally::new(100);
        pool.for_n(100, |prong| tally.hit(prong.task_index)).unwrap();
        assert_eq!(tally.wrong(), vec![]);
        // ... and a new policy wakes the parked ones to wait its way.
        assert!(eventually(|| pool.parked_threads_count() == threads - 1));
        pool.set_idle_policy(IdlePolicy::Spin).unwrap();
        assert!(eventually(|| pool.parked_threads_count() == 0), "{} still parked", pool.parked_threads_count());
    }
}

#[test]
fn the_idle_policy_survives_a_respawn() {
    let topology = topology();
    let mut pool = fu::ThreadPool::try_spawn(&topology, 2).unwrap();
    pool.set_idle_policy(IdlePolicy::Sleep(Duration::from_micros(250))).unwrap();
    pool.terminate().unwrap();
    assert_eq!(pool.parked_threads_count(), 0, "no threads, none parked");
    pool.set_idle_policy(IdlePolicy::Spin).unwrap(); // also between spawns
    pool.respawn(&topology, 3).unwrap();
    assert_eq!(pool.idle_policy(), IdlePolicy::Spin);
}

/// The stack a thread runs on, as glibc reports it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn own_stack_bytes() -> usize {
    use std::os::raw::{c_int, c_ulong};
    #[repr(C, align(8))]
    struct Attributes([u8; 64]); // glibc's pthread_attr_t: 56 bytes on 64-bit targets, 36 on 32-bit ones
    extern "C" {
        fn pthread_self() -> c_ulong;
        fn pthread_getattr_np(thread: c_ulong, attributes: *mut Attributes) -> c_int;
        fn pthread_attr_getstacksize(attributes: *const Attributes, bytes: *mut usize) -> c_int;
        fn pthread_attr_destroy(attributes: *mut Attributes) -> c_int;
    }
    let mut attributes = Attributes([0; 64]);
    let mut bytes = 0usize;
    // SAFETY: a buffer at least as large and aligned as pthread_attr_t, initialized by the first call.
    unsafe {
        assert_eq!(pthread_getattr_np(pthread_self(), &mut attributes), 0);
        assert_eq!(pthread_attr_getstacksize(&attributes, &mut bytes), 0);
        pthread_attr_destroy(&mut attributes);
    }
    bytes
}

#[test]
fn workers_get_the_stack_size_asked_for() {
    const BYTES: usize = 24 << 20; // far from glibc's default (8 MiB, or RLIMIT_STACK)
    let topology = topology();
    let mut pool = fu::ThreadPool::builder().stack_size(BYTES).try_spawn(&topology, 3).unwrap();
    assert_eq!(pool.stack_size(), BYTES);
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let stacks: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
        pool.for_threads(|thread, _| stacks[thread].store(own_stack_bytes(), Ordering::Relaxed)).unwrap();
        for (thread, stack) in stacks.iter().enumerate().skip(1) {
            let bytes = stack.load(Ordering::Relaxed);
            assert!((BYTES..BYTES + (1 << 20)).contains(&bytes), "worker {}: {} bytes", thread, bytes);
        }
    }
    // Too small for the platform: refused, and the size stays.
    assert_eq!(pool.set_stack_size(1), Err(fu::Error::InvalidArgument));
    assert_eq!(pool.stack_size(), BYTES);
    assert_eq!(fu::ThreadPool::builder().stack_size(1).try_spawn(&topology, 2).err(), Some(fu::Error::InvalidArgument));
    // A new size applies to the next spawn; 0 is the platform's default again.
    pool.set_stack_size(0).unwrap();
    pool.terminate().unwrap();
    pool.respawn(&topology, 2).unwrap();
    assert_eq!(pool.stack_size(), 0);
    let tally = Tally::new(10);
    pool.for_n(10, |prong| tally.hit(prong.task_index)).unwrap();
    assert_eq!(tally.wrong(), vec![]);
}

/// In a `fork()`ed child the parent's pool has no workers: every dispatch is refused with `Forked`, the
/// fallbacks and the iterators run every task on the caller, and the pool respawns there. The child is this test
/// binary run again (one test thread), which forks; the forked process reports by its exit status.
#[cfg(target_os = "linux")]
#[test]
fn a_pool_inherited_through_fork_refuses_then_respawns() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "forking_child", "--nocapture", "--test-threads=1"])
        .env("FORKUNION_FORK_CHILD", "1")
        .output()
        .expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{:?}\nstdout: {}\nstderr: {}",
        output.status,
        stdout,
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("forked child: every check passed"), "stdout: {}", stdout);
}

#[cfg(target_os = "linux")]
#[test]
fn forking_child() {
    use std::os::raw::c_int;
    extern "C" {
        fn fork() -> c_int;
        fn waitpid(pid: c_int, status: *mut c_int, options: c_int) -> c_int;
        fn _exit(status: c_int) -> !;
    }
    if std::env::var_os("FORKUNION_FORK_CHILD").is_none() {
        return; // run for real only as the child of the test above
    }
    let topology = topology();
    let mut pool = fu::ThreadPool::try_spawn(&topology, 2).unwrap();
    pool.for_n(10, |_| {}).unwrap();
    // SAFETY: the forked process runs only the checks below and leaves with `_exit`, never returning into the
    // test harness; glibc keeps `malloc` usable in it.
    let pid = unsafe { fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let checks = || -> Result<(), String> {
            let ran = AtomicUsize::new(0);
            let counted = |_: fu::Prong| {
                ran.fetch_add(1, Ordering::Relaxed);
            };
            if pool.for_n(10, counted) != Err(fu::Error::Forked) || ran.load(Ordering::Relaxed) != 0 {
                return Err("for_n was not refused with Forked".into());
            }
            if pool.for_threads(|_, _| {}) != Err(fu::Error::Forked) {
                return Err("for_threads was not refused with Forked".into());
            }
            pool.for_n_or_run_on_caller(10, counted);
            pool.for_slices_or_run_on_caller(10, |prong, count| {
                ran.fetch_add(count, Ordering::Relaxed);
                assert_eq!((prong.thread_index, prong.compute_domain), (0, 0));
            });
            if ran.load(Ordering::Relaxed) != 20 {
                return Err(format!("the fallbacks ran {} of 20 tasks", ran.load(Ordering::Relaxed)));
            }
            use fu::prelude::*;
            let sum: u64 = (0..1000u64).into_par_iter().with_pool(&pool).sum();
            if sum != 499_500 {
                return Err(format!("the iterator's sum is {}", sum));
            }
            pool.respawn(&topology, 2).map_err(|e| format!("respawn: {}", e))?;
            let tally = Tally::new(100);
            pool.for_n(100, |prong| tally.hit(prong.task_index)).map_err(|e| format!("after respawn: {}", e))?;
            if !tally.wrong().is_empty() {
                return Err("a task was lost after the respawn".into());
            }
            Ok(())
        };
        let code = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(checks)) {
            Ok(Ok(())) => 0,
            Ok(Err(message)) => {
                eprintln!("forked child: {}", message);
                1
            }
            Err(_) => 2,
        };
        // SAFETY: leaves the forked process without running the parent's harness or destructors.
        unsafe { _exit(code) }
    }
    let mut status = 0;
    // SAFETY: `pid` is our child.
    assert_eq!(unsafe { waitpid(pid, &mut status, 0) }, pid);
    assert_eq!(status, 0, "the forked process failed (wait status {:#x})", status);
    println!("forked child: every check passed");
    // The parent's pool is untouched.
    let tally = Tally::new(10);
    pool.for_n(10, |prong| tally.hit(prong.task_index)).unwrap();
    assert_eq!(tally.wrong(), vec![]);
}
