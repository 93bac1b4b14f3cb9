//! The pool's verbs, as properties at 1 thread and at N: every task exactly once, slices that partition the range,
//! the documented static split, domains in prongs, refusals that run nothing, fallbacks that run everything.

mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use common::{pool, task_counts, topology, Tally, THREAD_COUNTS};
use forkunion as fu;

/// Counts one call (relaxed: read after the dispatch's join).
fn bump(counter: &AtomicUsize) {
    counter.fetch_add(1, Ordering::Relaxed);
}

#[test]
fn each_task_runs_exactly_once() {
    for &threads in &THREAD_COUNTS {
        let pool = pool(threads);
        for n in task_counts(threads) {
            let tally = Tally::new(n);
            pool.for_n(n, |prong| tally.hit(prong.task_index)).unwrap();
            assert_eq!(tally.wrong(), vec![], "for_n({}) at {} threads", n, threads);
            let tally = Tally::new(n);
            pool.for_n_dynamic(n, |prong| tally.hit(prong.task_index)).unwrap();
            assert_eq!(tally.wrong(), vec![], "for_n_dynamic({}) at {} threads", n, threads);
        }
    }
}

#[test]
fn for_threads_calls_every_thread_once() {
    for &threads in &THREAD_COUNTS {
        let pool = pool(threads);
        let tally = Tally::new(threads);
        pool.for_threads(|thread, domain| {
            assert_eq!(domain, 0, "one compute domain on a single-domain pool");
            tally.hit(thread);
        })
        .unwrap();
        assert_eq!(tally.wrong(), vec![], "{} threads", threads);
    }
}

/// The static split of `n` tasks over `threads`: thread t's block starts at q*t + min(t, r), of length q + (t < r).
fn static_block(n: usize, threads: usize, thread: usize) -> (usize, usize) {
    let (q, r) = (n / threads, n % threads);
    (q * thread + thread.min(r), q + (thread < r) as usize)
}

#[test]
fn static_split_follows_the_documented_formula() {
    for &threads in &THREAD_COUNTS {
        let pool = pool(threads);
        for n in task_counts(threads) {
            let runner: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(usize::MAX)).collect();
            pool.for_n(n, |prong| runner[prong.task_index].store(prong.thread_index, Ordering::Relaxed)).unwrap();
            for thread in 0..threads {
                let (first, count) = static_block(n, threads, thread);
                for (task, ran_on) in runner.iter().enumerate().skip(first).take(count) {
                    assert_eq!(ran_on.load(Ordering::Relaxed), thread, "task {} of {} at {}", task, n, threads);
                }
            }
        }
    }
}

#[test]
fn slices_partition_the_range() {
    for &threads in &THREAD_COUNTS {
        let pool = pool(threads);
        for n in task_counts(threads) {
            let slices = fu::SpinMutex::new(Vec::new());
            pool.for_slices(n, |prong, count| {
                assert!(count > 0, "no empty slices");
                slices.lock().push((prong.task_index, count, prong.thread_index));
            })
            .unwrap();
            let mut slices = slices.into_inner();
            slices.sort_unstable();
            let mut next = 0;
            for &(first, count, thread) in &slices {
                assert_eq!(first, next, "contiguous and disjoint: {:?}", slices);
                assert_eq!((first, count), static_block(n, threads, thread), "thread {}'s block", thread);
                next = first + count;
            }
            assert_eq!(next, n, "the slices cover [0, {}) at {} threads", n, threads);
            let distinct: HashSet<usize> = slices.iter().map(|s| s.2).collect();
            assert_eq!(distinct.len(), slices.len(), "one slice per thread at most");
        }
    }
}

#[test]
fn prongs_carry_valid_threads() {
    for &threads in &THREAD_COUNTS {
        let pool = pool(threads);
        let seen = fu::SpinMutex::new(HashSet::new());
        pool.for_n_dynamic(10 * threads, |prong| {
            assert!(prong.thread_index < threads);
            assert_eq!(prong.compute_domain, 0);
            seen.lock().insert(prong.thread_index);
        })
        .unwrap();
        assert!(!seen.into_inner().is_empty());
    }
}

#[test]
fn inclusive_callers_are_thread_zero_and_exclusive_callers_run_nothing() {
    let topology = topology();
    let caller = thread::current().id();
    for exclusivity in [fu::CallerExclusivity::Inclusive, fu::CallerExclusivity::Exclusive] {
        let pool = fu::ThreadPool::builder().exclusivity(exclusivity).try_spawn(&topology, 3).unwrap();
        assert_eq!(pool.caller_exclusivity(), exclusivity);
        let on_caller = fu::SpinMutex::new(Vec::new());
        pool.for_threads(|thread, _| {
            if thread::current().id() == caller {
                on_caller.lock().push(thread);
            }
        })
        .unwrap();
        let expected = if exclusivity == fu::CallerExclusivity::Inclusive { vec![0] } else { vec![] };
        assert_eq!(on_caller.into_inner(), expected, "{:?}", exclusivity);
    }
}

#[test]
fn nested_dispatch_is_refused_and_the_fallback_runs_on_the_caller() {
    for &threads in &THREAD_COUNTS {
        let pool = pool(threads);
        let refusals = AtomicUsize::new(0);
        let inner = Tally::new(threads * 7);
        pool.for_threads(|thread, _| {
            // Inside a callback the pool is busy with this very dispatch: refused, nothing ran.
            let ran = AtomicUsize::new(0);
            assert_eq!(pool.for_n(5, |_| bump(&ran)), Err(fu::Error::Contended));
            assert_eq!(pool.for_threads(|_, _| bump(&ran)), Err(fu::Error::Contended));
            assert_eq!(ran.load(Ordering::Relaxed), 0);
            refusals.fetch_add(1, Ordering::Relaxed);
            // Every fallback runs every task on this thread, as a team of one: thread 0, compute domain 0.
            let me = thread::current().id();
            let alone = |prong: fu::Prong| {
                assert_eq!((prong.thread_index, prong.compute_domain, thread::current().id()), (0, 0, me));
            };
            pool.for_n_or_run_on_caller(7, |prong| {
                alone(prong);
                inner.hit(thread * 7 + prong.task_index);
            });
            let dynamic = Tally::new(7);
            pool.for_n_dynamic_or_run_on_caller(7, |prong| {
                alone(prong);
                dynamic.hit(prong.task_index);
            });
            assert_eq!(dynamic.wrong(), vec![]);
            let slices = AtomicUsize::new(0);
            pool.for_slices_or_run_on_caller(7, |prong, count| {
                alone(prong);
                assert_eq!((prong.task_index, count), (0, 7), "one slice: the whole range");
                bump(&slices);
            });
            let calls = AtomicUsize::new(0);
            pool.for_threads_or_run_on_caller(|nested_thread, domain| {
                assert_eq!((nested_thread, domain, thread::current().id()), (0, 0, me));
                bump(&calls);
            });
            assert_eq!((slices.into_inner(), calls.into_inner()), (1, 1));
        })
        .unwrap();
        assert_eq!(refusals.into_inner(), threads);
        assert_eq!(inner.wrong(), vec![], "{} threads", threads);
    }
}

#[test]
fn a_concurrent_dispatch_is_refused_and_runs_nothing() {
    let pool = pool(2);
    let started = AtomicBool::new(false);
    let release = AtomicBool::new(false);
    /// Releases the blocking dispatch however this scope ends, so that a failed assertion fails the test
    /// instead of leaving the scope waiting for it.
    struct Release<'a>(&'a AtomicBool);
    impl Drop for Release<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }
    thread::scope(|scope| {
        scope.spawn(|| {
            pool.for_threads(|thread, _| {
                if thread == 0 {
                    started.store(true, Ordering::Release); // pairs with the acquire below
                    while !release.load(Ordering::Acquire) {
                        std::hint::spin_loop();
                    }
                }
            })
            .unwrap();
        });
        let _release = Release(&release);
        while !started.load(Ordering::Acquire) {
            thread::yield_now();
        }
        // The first dispatch is in flight until `release`: every other one is refused at once.
        let ran = AtomicUsize::new(0);
        assert_eq!(pool.for_n(10, |_| bump(&ran)), Err(fu::Error::Contended));
        assert_eq!(pool.for_n_dynamic(10, |_| bump(&ran)), Err(fu::Error::Contended));
        assert_eq!(pool.for_slices(10, |_, _| bump(&ran)), Err(fu::Error::Contended));
        assert_eq!(pool.for_threads(|_, _| bump(&ran)), Err(fu::Error::Contended));
        assert_eq!(ran.load(Ordering::Relaxed), 0);
        // The idle policy is never refused by a dispatch in flight.
        pool.set_idle_policy(fu::IdlePolicy::Spin).unwrap();
        assert_eq!(pool.idle_policy(), fu::IdlePolicy::Spin);
        pool.set_idle_policy(fu::IdlePolicy::default()).unwrap();
        // Each fallback runs everything here instead.
        let tally = Tally::new(10);
        pool.for_n_dynamic_or_run_on_caller(10, |prong| tally.hit(prong.task_index));
        assert_eq!(tally.wrong(), vec![]);
        let tally = Tally::new(10);
        pool.for_n_or_run_on_caller(10, |prong| tally.hit(prong.task_index));
        assert_eq!(tally.wrong(), vec![]);
    });
}

/// Four threads share one pool through `Arc` and dispatch at once: every dispatch either ran all its tasks or was
/// refused with `Contended` and ran none, and the fallback runs every one of them.
#[test]
fn threads_sharing_a_pool_lose_no_work() {
    const DISPATCHES: usize = 2000;
    const TASKS: usize = 16;
    let pool = Arc::new(pool(2));
    let ran = Arc::new(AtomicUsize::new(0));
    let outcomes: Vec<(usize, usize)> = (0..4)
        .map(|_| {
            let (pool, ran) = (Arc::clone(&pool), Arc::clone(&ran));
            thread::spawn(move || {
                let (mut accepted, mut refused) = (0, 0);
                for round in 0..DISPATCHES {
                    let add = |_: fu::Prong| bump(&ran);
                    if round % 2 == 0 {
                        match pool.for_n(TASKS, add) {
                            Ok(()) => accepted += 1,
                            Err(fu::Error::Contended) => refused += 1,
                            Err(other) => panic!("unexpected {}", other),
                        }
                    } else {
                        pool.for_n_or_run_on_caller(TASKS, add);
                        accepted += 1;
                    }
                }
                (accepted, refused)
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|worker| worker.join().unwrap())
        .collect();
    let accepted: usize = outcomes.iter().map(|o| o.0).sum();
    let refused: usize = outcomes.iter().map(|o| o.1).sum();
    assert_eq!(accepted + refused, 4 * DISPATCHES);
    assert_eq!(ran.load(Ordering::Relaxed), accepted * TASKS, "{} accepted, {} refused", accepted, refused);
}

#[test]
fn a_terminated_pool_refuses_until_respawned_and_the_fallbacks_still_run() {
    let topology = topology();
    let mut pool = fu::ThreadPool::try_spawn(&topology, 3).unwrap();
    pool.terminate().unwrap();
    assert_eq!(pool.terminate(), Err(fu::Error::NotSpawned));
    assert_eq!(pool.threads_count(), 0);
    let ran = AtomicUsize::new(0);
    assert_eq!(pool.for_n(4, |_| bump(&ran)), Err(fu::Error::NotSpawned));
    assert_eq!(pool.for_threads(|_, _| bump(&ran)), Err(fu::Error::NotSpawned));
    assert_eq!(ran.load(Ordering::Relaxed), 0);
    let tally = Tally::new(4);
    pool.for_n_or_run_on_caller(4, |prong| tally.hit(prong.task_index));
    assert_eq!(tally.wrong(), vec![]);
    let calls = AtomicUsize::new(0);
    pool.for_threads_or_run_on_caller(|thread, _| {
        assert_eq!(thread, 0);
        calls.fetch_add(1, Ordering::Relaxed);
    });
    pool.for_slices_or_run_on_caller(9, |prong, count| {
        assert_eq!((prong.task_index, count), (0, 9));
        calls.fetch_add(1, Ordering::Relaxed);
    });
    pool.for_slices_or_run_on_caller(0, |_, _| panic!("no slice of nothing"));
    assert_eq!(calls.into_inner(), 2);

    pool.respawn(&topology, 2).unwrap();
    assert_eq!(pool.respawn(&topology, 2), Err(fu::Error::AlreadySpawned));
    assert_eq!(pool.threads_count(), 2);
    let tally = Tally::new(100);
    pool.for_n(100, |prong| tally.hit(prong.task_index)).unwrap();
    assert_eq!(tally.wrong(), vec![]);
}

#[test]
fn bad_spawns_are_refused_with_a_status() {
    let topology = topology();
    assert_eq!(fu::ThreadPool::try_spawn(&topology, 0).err(), Some(fu::Error::InvalidArgument));
    assert_eq!(fu::ThreadPool::try_named_spawn(&topology, "bad\0name", 2).err(), Some(fu::Error::InvalidArgument));
    let beyond = fu::ComputeDomain(topology.compute_domains_count());
    assert_eq!(fu::ThreadPool::builder().try_spawn_on(&topology, beyond, 2).err(), Some(fu::Error::InvalidArgument));
    let no_threads = fu::Capabilities::ALL & !fu::Capabilities::OS_THREADS;
    let builder = fu::ThreadPool::builder().allowed_capabilities(no_threads);
    assert_eq!(builder.clone().try_spawn(&topology, 2).err(), Some(fu::Error::Unsupported));
    let single = builder.try_spawn(&topology, 1).unwrap(); // the caller alone needs no OS thread
    let tally = Tally::new(5);
    single.for_n(5, |prong| tally.hit(prong.task_index)).unwrap();
    assert_eq!(tally.wrong(), vec![]);
}

#[test]
#[should_panic(expected = "forkunion::spawn(0 threads) failed")]
fn spawn_panics_with_the_reason() {
    let _ = fu::spawn(&topology(), 0);
}

#[test]
fn spawn_on_a_domain_reports_it_in_every_prong() {
    let topology = topology();
    let last = fu::ComputeDomain(topology.compute_domains_count() - 1);
    let pool = fu::ThreadPool::builder().try_spawn_on(&topology, last, 2).unwrap();
    assert_eq!(pool.compute_domains_count(), 1);
    assert_eq!(pool.threads_count_in(last), 2);
    pool.for_n(20, |prong| assert_eq!(prong.compute_domain, last.get())).unwrap();
    // A fallback is a team of one whatever the pool's domain: thread 0, compute domain 0.
    let fallbacks = AtomicUsize::new(0);
    pool.for_threads(|_, _| {
        pool.for_n_or_run_on_caller(3, |prong| {
            assert_eq!((prong.thread_index, prong.compute_domain), (0, 0));
            bump(&fallbacks);
        })
    })
    .unwrap();
    assert_eq!(fallbacks.into_inner(), 2 * 3);
}

#[test]
fn queries_describe_the_pool() {
    let topology = topology();
    let pool = fu::ThreadPool::builder()
        .allowed_capabilities(fu::Capabilities::ALL & !fu::Capabilities::THREAD_PINNING)
        .try_spawn(&topology, 3)
        .unwrap();
    assert_eq!(pool.threads_count(), 3);
    assert_eq!(pool.unpinned_threads_count(), 3);
    assert!(!pool.capabilities().contains(fu::Capabilities::THREAD_PINNING));
    assert!(pool.capabilities().contains(fu::Capabilities::OS_THREADS));
    let usable = fu::comptime_capabilities() & fu::runtime_capabilities();
    assert_eq!(pool.capabilities() & !usable, fu::Capabilities::NONE, "narrowed to the build and the machine");
    assert_eq!(pool.compute_domains_count(), 1);
    assert!(pool.memory_usage() > std::mem::size_of::<usize>() * 3);
    let unplaced = fu::ThreadPool::builder()
        .allowed_capabilities(fu::Capabilities::ALL & !fu::Capabilities::MEMORY_PLACEMENT)
        .try_spawn(&topology, 2)
        .unwrap();
    assert!(!unplaced.memory_placed(), "not allowed to place its thread table");
    let placed = fu::ThreadPool::try_spawn(&topology, 2).unwrap();
    let can_place =
        (fu::comptime_capabilities() & fu::runtime_capabilities()).contains(fu::Capabilities::MEMORY_PLACEMENT);
    assert!(placed.memory_placed() || !can_place, "a NUMA kernel binds the thread table");
    assert!(format!("{:?}", pool).contains("threads: 3"));
}

#[test]
fn workers_carry_the_pools_name() {
    let pool = fu::ThreadPool::try_named_spawn(&topology(), "named", 3).unwrap();
    let tasks = match std::fs::read_dir("/proc/self/task") {
        Ok(tasks) => tasks,
        Err(_) => {
            eprintln!("skipped: no /proc/self/task to read thread names from");
            return;
        }
    };
    let names: HashSet<String> = tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim_end().to_string())
        .collect();
    assert!(names.contains("named:001") && names.contains("named:002"), "thread names: {:?}", names);
    drop(pool);
}

#[test]
fn broadcasts_overlap_the_callers_work_and_join_before_returning() {
    let topology = topology();
    for exclusivity in [fu::CallerExclusivity::Inclusive, fu::CallerExclusivity::Exclusive] {
        let pool = fu::ThreadPool::builder().exclusivity(exclusivity).try_spawn(&topology, 3).unwrap();
        let tally = Tally::new(3);
        let result = pool
            .broadcast(
                |thread, _| tally.hit(thread),
                |flight| {
                    assert_eq!(flight.generation().get() % 2, 1);
                    // While a broadcast is in flight every other dispatch is refused. An inclusive pool holds it
                    // until thread 0's share runs at the join; an exclusive pool's workers may finish it first,
                    // and a dispatch after that is served, so there only a completed broadcast excuses success.
                    let other = pool.for_threads(|_, _| {});
                    if exclusivity == fu::CallerExclusivity::Inclusive {
                        assert_eq!(other, Err(fu::Error::Contended));
                    } else {
                        assert!(other == Err(fu::Error::Contended) || flight.is_complete(), "{:?}", other);
                    }
                    if exclusivity == fu::CallerExclusivity::Exclusive {
                        while !flight.is_complete() {
                            std::hint::spin_loop();
                        }
                    } else {
                        assert!(!flight.is_complete(), "thread 0's share runs at the join");
                    }
                    42
                },
            )
            .unwrap();
        assert_eq!(result, 42);
        assert_eq!(tally.wrong(), vec![], "{:?}", exclusivity);
    }
}

#[test]
fn split_dispatches_join_once_and_only_from_their_thread() {
    let pool = pool(2);
    let tally = Tally::new(2);
    let hello = |thread: usize, _: usize| tally.hit(thread);
    // SAFETY: `hello` and `tally` outlive the join below.
    let generation = unsafe { pool.unsafe_broadcast(&hello) }.unwrap();
    // SAFETY: refused: nothing is published, so nothing refers to `hello` afterwards.
    assert_eq!(unsafe { pool.unsafe_broadcast(&hello) }.err(), Some(fu::Error::Contended));
    // Only the broadcasting thread can run thread 0's share of an inclusive pool. Joined explicitly: the join
    // (pthread_join) orders the other thread's calls before the pool's drop where TSan sees it.
    thread::scope(|scope| {
        scope.spawn(|| assert_eq!(pool.join(generation), Err(fu::Error::InvalidArgument))).join().unwrap();
    });
    pool.join(generation).unwrap();
    assert!(pool.is_complete(generation));
    assert_eq!(pool.join(generation), Err(fu::Error::StaleGeneration));
    assert_eq!(tally.wrong(), vec![]);
}

#[test]
#[allow(deprecated)]
fn the_deprecated_nap_and_sleep_set_a_lasting_policy() {
    for &threads in &THREAD_COUNTS {
        let pool = pool(threads);
        let tally = Tally::new(150);
        pool.nap().unwrap();
        let napping = pool.idle_policy();
        assert!(napping == fu::IdlePolicy::Nap || napping == fu::IdlePolicy::Spin, "{:?}", napping);
        pool.for_n(50, |prong| tally.hit(prong.task_index)).unwrap();
        assert_eq!(pool.idle_policy(), napping, "it outlives the dispatch");
        pool.sleep(0).unwrap();
        pool.for_n_dynamic(50, |prong| tally.hit(50 + prong.task_index)).unwrap();
        pool.sleep(100).unwrap();
        pool.for_n(50, |prong| tally.hit(100 + prong.task_index)).unwrap();
        assert_eq!(pool.idle_policy(), fu::IdlePolicy::Sleep(std::time::Duration::from_micros(100)));
        assert_eq!(tally.wrong(), vec![], "{} threads", threads);
    }
    let mut pool = pool(2);
    pool.terminate().unwrap();
    assert_eq!(pool.nap(), Err(fu::Error::NotSpawned));
    assert_eq!(pool.sleep(0), Err(fu::Error::NotSpawned));
}

#[test]
fn pools_and_topologies_move_and_share_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<fu::ThreadPool>();
    send_sync::<fu::Topology>();
    send_sync::<fu::Allocation>();
    send_sync::<fu::ShardedArray<u64>>();
    send_sync::<fu::ReplicatedArray<f32>>();
    send_sync::<fu::SpinMutex<Vec<u8>>>();
    send_sync::<fu::Fabric>();
    let pool = pool(2);
    let pool = thread::spawn(move || {
        pool.for_n(10, |_| {}).unwrap();
        pool
    })
    .join()
    .unwrap();
    pool.for_n(10, |_| {}).unwrap();
}

#[test]
fn errors_name_their_status() {
    let all = [
        (fu::Error::BadAlloc, -1, "bad_alloc"),
        (fu::Error::InvalidArgument, -2, "invalid_argument"),
        (fu::Error::AlreadySpawned, -3, "already_spawned"),
        (fu::Error::NotSpawned, -4, "not_spawned"),
        (fu::Error::ThreadRefused, -5, "thread_refused"),
        (fu::Error::Contended, -6, "contended"),
        (fu::Error::Unsupported, -7, "unsupported"),
        (fu::Error::PlacementRefused, -8, "placement_refused"),
        (fu::Error::StaleGeneration, -9, "stale_generation"),
        (fu::Error::Forked, -10, "forked"),
    ];
    for (error, code, name) in all {
        assert_eq!((error.code(), error.name()), (code, name));
        assert!(error.to_string().contains(name), "{}", error);
        let boxed: Box<dyn std::error::Error> = Box::new(error);
        assert!(!boxed.to_string().is_empty());
    }
    assert_eq!(fu::Error::Other(-99).name(), "unknown");
}

/// A panic in a callback must abort the process with a message, never unwind into the C library: checked in a
/// child process, this test binary run again for `panicking_callback_child` only.
#[test]
fn a_panic_in_a_callback_aborts_with_a_message() {
    for verb in ["for_n", "for_threads", "iterator", "fallback"] {
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "panicking_callback_child", "--nocapture", "--test-threads=1"])
            .env("FORKUNION_PANIC_CHILD", verb)
            .output()
            .expect("the test binary runs again");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{}: the child must not succeed", verb);
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(
                output.status.signal(),
                Some(6),
                "{}: SIGABRT, got {:?}; stderr: {}",
                verb,
                output.status,
                stderr
            );
        }
        assert!(stderr.contains("task 3 failed on purpose"), "{}: the panic's own message; stderr: {}", verb, stderr);
        assert!(stderr.contains("a callback panicked inside a dispatch; aborting"), "{}: stderr: {}", verb, stderr);
        assert!(!stderr.contains("unwound past"), "{}", verb);
    }
}

#[test]
fn panicking_callback_child() {
    let verb = match std::env::var("FORKUNION_PANIC_CHILD") {
        Ok(verb) => verb,
        Err(_) => return, // run for real only as the child of the test above
    };
    let pool = pool(2);
    let fail = |task: usize| {
        if task == 3 {
            panic!("task 3 failed on purpose");
        }
    };
    match verb.as_str() {
        "for_n" => pool.for_n(8, |prong| fail(prong.task_index)).unwrap(),
        "for_threads" => pool.for_threads(|thread, _| fail(thread + 2)).unwrap(),
        "iterator" => {
            use fu::prelude::*;
            (0..8usize).into_par_iter().with_pool(&pool).for_each(fail);
        }
        _ => pool.for_threads(|_, _| pool.for_n_or_run_on_caller(8, |prong| fail(prong.task_index))).unwrap(),
    }
    eprintln!("unwound past the dispatch");
}
