//! Dispatch latency: nanoseconds per fork-join with one cache line of work per thread, forkunion against Rayon,
//! next to the in-process two-thread ping-pong (the floor).
//!
//! Every task increments its thread's own padded counter, so no two tasks share a line and what is measured is the
//! fork, the wake-up and the join. Backends (each with `FORKUNION_THREADS` threads, the timed loop inside the
//! runtime):
//! - `forkunion_for_threads`: `for_threads`, one call per thread;
//! - `forkunion_for_n`, `forkunion_for_n_dynamic`: `threads` tasks, statically split or stolen;
//! - `forkunion_iter`: the parallel iterator over `0..threads`, static schedule;
//! - `rayon_broadcast`: `ThreadPool::broadcast`, one call per thread;
//! - `rayon_for_each`: `(0..threads).into_par_iter().with_max_len(1).for_each(...)`.
//!
//! With no `FORKUNION_BACKEND`, all of them run in interleaved rounds, and the summary gives each one's ratio to
//! `forkunion_for_n`.
use std::sync::atomic::{AtomicU64, Ordering};

use forkunion as fu;
use forkunion_bench as bench;
use fu::prelude::*;
use rayon::iter::{IndexedParallelIterator as _, ParallelIterator as _};

const BACKENDS: [&str; 6] = [
    "forkunion_for_n",
    "forkunion_for_n_dynamic",
    "forkunion_for_threads",
    "forkunion_iter",
    "rayon_for_each",
    "rayon_broadcast",
];

/// One padded counter per thread.
struct Lines(Vec<fu::CacheAligned<AtomicU64>>);

impl Lines {
    #[inline(always)]
    fn touch(&self, index: usize) {
        // Relaxed: a counter only its own task writes; read once, after the window.
        self.0[index].fetch_add(1, Ordering::Relaxed);
    }
    fn total(&self) -> u64 {
        self.0.iter().map(|line| line.load(Ordering::Relaxed)).sum()
    }
}

/// One dispatch of `backend` whose task `i` calls `task(i)`.
fn dispatch(
    backend: &str,
    ours: &fu::ThreadPool,
    rayon: &rayon::ThreadPool,
    threads: usize,
    task: impl Fn(usize) + Sync + Send,
) {
    match backend {
        "forkunion_for_n" => ours.for_n(threads, |prong| task(prong.task_index)).unwrap(),
        "forkunion_for_n_dynamic" => ours.for_n_dynamic(threads, |prong| task(prong.task_index)).unwrap(),
        "forkunion_for_threads" => ours.for_threads(|thread, _| task(thread)).unwrap(),
        "forkunion_iter" => (0..threads).into_par_iter().with_pool(ours).for_each(task),
        "rayon_for_each" => rayon::iter::IntoParallelIterator::into_par_iter(0..threads).with_max_len(1).for_each(task),
        _ => {
            rayon.broadcast(|context| task(context.index()));
        }
    }
}

fn main() {
    if bench::list_requested(&BACKENDS) {
        return;
    }
    let settings = bench::Settings::read(&BACKENDS, &BACKENDS.join(","));
    bench::print_banner("dispatch", &settings);
    let floor_ns = bench::measure_floor_ns();
    println!("# floor: ping-pong over two cache lines: {:.1} ns per round trip", floor_ns);

    let threads = settings.threads;
    let topology = fu::Topology::new().unwrap_or_else(|e| bench::fail(bench::EXIT_UNAVAILABLE, &e.to_string()));
    let ours = fu::ThreadPool::try_named_spawn(&topology, "dispatch", threads)
        .unwrap_or_else(|e| bench::fail(bench::EXIT_UNAVAILABLE, &format!("forkunion: {}", e)));
    let rayon = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap_or_else(|e| bench::fail(bench::EXIT_UNAVAILABLE, &format!("rayon: {}", e)));
    ours.set_idle_policy(settings.idle)
        .unwrap_or_else(|e| bench::fail(bench::EXIT_UNAVAILABLE, &format!("forkunion: idle policy: {}", e)));
    let lines = Lines((0..threads).map(|_| fu::CacheAligned(AtomicU64::new(0))).collect());

    let mut dispatches = vec![0usize; settings.backends.len()];
    let mut shares = vec![0f64; settings.backends.len()];
    let mut timed = vec![(0usize, 0f64); settings.backends.len()];
    let mut index = 0;
    let medians = bench::interleave(&settings.backends, settings.rounds, settings.time_limit, |backend, limit| {
        let slot = index % settings.backends.len();
        index += 1;
        let census = bench::Census::default();
        let run = || {
            let _mark = bench::Census::mark_caller();
            for _ in 0..1000 {
                dispatch(backend, &ours, &rayon, threads, |i| {
                    census.count();
                    lines.touch(i)
                });
            }
            let once = || dispatch(backend, &ours, &rayon, threads, |i| lines.touch(i));
            let warm = bench::warm_up(settings.warmup / settings.rounds as u32, 1000, once);
            let stride = bench::checkpoint_stride(warm.seconds / warm.iterations as f64);
            bench::timed_window(limit, stride, once)
        };
        let window = if backend.starts_with("rayon") { rayon.install(run) } else { run() };
        // Under the default idle policy our idle workers spin for 100 µs, then block in the kernel, taking no
        // core from the other backends' rounds (FORKUNION_IDLE=spin keeps them spinning through those too).
        dispatches[slot] += window.iterations + 1000;
        timed[slot].0 += window.iterations;
        timed[slot].1 += window.seconds;
        shares[slot] = census.off_caller_share();
        if index <= settings.backends.len() {
            println!("{}", census.describe(backend, threads));
        }
        window.median_seconds * 1e9
    });

    let total: usize = dispatches.iter().sum();
    let expected =
        settings.backends.iter().zip(&dispatches).map(|(_, &count)| count as u64 * threads as u64).sum::<u64>();
    assert!(lines.total() >= expected, "every dispatch touched every line");
    for (index, backend) in settings.backends.iter().enumerate() {
        let (rounds, count, share) = (&medians[index], &dispatches[index], &shares[index]);
        let ns = bench::median(rounds.clone());
        let mean_ns = timed[index].1 * 1e9 / timed[index].0.max(1) as f64;
        bench::Row::new("dispatch")
            .add("backend", backend)
            .add("threads", threads)
            .add("dispatches", count)
            .add_float("off_caller", *share)
            .add_float("ns_per_dispatch", ns)
            .add_float("ns_per_dispatch_mean", mean_ns)
            .add_float("floor_ns", floor_ns)
            .add_float("over_floor", if floor_ns > 0.0 { ns / floor_ns } else { 0.0 })
            .print();
    }
    println!("# {} dispatches in all", total);
    if settings.backends.len() > 1 {
        bench::print_summary("dispatch", "ns", &settings.backends, &medians, floor_ns);
    }
}
