//! N-body, the dispatch-latency benchmark: microseconds per step, two fork-joins per step, forkunion against Rayon.
//!
//! The same bodies, kernels and state hash as the C++ `bench/nbody/nbody.cpp`, so its `state_after_8_steps` equals the
//! C++ binary's for the same seed and count, bit for bit: body i takes draws 7i..7i+6 for position xyz, velocity
//! xyz and mass (a uniform float is `float(draw >> 40) * 2^-24`, mass = 1e10 + u * (1e15 - 1e10) in `f32`); one
//! step is a force pass (each body sums the pull of every other body in index order, with the 0x5f3759df inverse
//! square root and one Newton step) and an apply pass (v += a dt, then x += v dt), each one parallel loop over the
//! bodies. Rust never contracts `a * b + c` into a fused multiply-add and has no fast-math, so the arithmetic is
//! strict IEEE binary32, as the C++ file's `-ffp-contract=off -fno-fast-math` makes it there.
//!
//! Backends, each with `FORKUNION_THREADS` threads and the whole timed loop run inside the runtime (Rayon's
//! `install`, so its caller is a worker, as ours is thread 0):
//! - `forkunion_static_shared`, `forkunion_dynamic_shared`: the pool's `for_n` / `for_n_dynamic`;
//! - `forkunion_iter_static`, `forkunion_iter_dynamic`: the parallel iterators over `0..n`;
//! - `rayon_static`: `with_min_len(ceil(n / threads))`, one contiguous run per thread;
//! - `rayon_dynamic`: `with_max_len(1)`, one body per task, the one-body grain of every dynamic backend;
//! - `rayon_default`: Rayon's adaptive split, what a plain `par_iter` gives.
use std::time::Duration;

use forkunion as fu;
use forkunion_bench as bench;
use fu::prelude::*;
// Rayon's adaptors by trait, without its `into_par_iter`, which would be ambiguous next to ours.
use rayon::iter::{IndexedParallelIterator as _, ParallelIterator as _};

const BACKENDS: [&str; 7] = [
    "forkunion_static_shared",
    "forkunion_dynamic_shared",
    "forkunion_iter_static",
    "forkunion_iter_dynamic",
    "rayon_static",
    "rayon_dynamic",
    "rayon_default",
];

const GRAVITY: f32 = 6.674e-11;
const TIME_STEP: f32 = 0.01;
const SOFTENING: f32 = 1e-9;
/// Steps after which every run hashes its state: enough for one differing bit to spread to every body.
const CHECKPOINT_STEPS: usize = 8;

#[derive(Clone, Copy, Default)]
struct Point {
    x: f32,
    y: f32,
    z: f32,
    mass: f32,
}

#[derive(Clone, Copy, Default)]
struct Vector {
    x: f32,
    y: f32,
    z: f32,
}

/// Quake III's inverse square root: the 0x5f3759df guess and one Newton step.
#[inline(always)]
fn fast_inverse_sqrt(x: f32) -> f32 {
    let half = 0.5 * x;
    let guess = f32::from_bits(0x5f37_59df - (x.to_bits() >> 1));
    guess * (1.5 - half * guess * guess)
}

/// Force pass for body `i`: the sum, over every other body j in order, of G m_j d / (|d|^2 + eps)^1.5.
#[inline(never)]
fn accumulate_force(points: &[Point], i: usize) -> Vector {
    let me = points[i];
    let (mut ax, mut ay, mut az) = (0f32, 0f32, 0f32);
    for (j, other) in points.iter().enumerate() {
        if j == i {
            continue;
        }
        let (dx, dy, dz) = (other.x - me.x, other.y - me.y, other.z - me.z);
        let distance_squared = dx * dx + dy * dy + dz * dz + SOFTENING;
        let inverse = fast_inverse_sqrt(distance_squared);
        let scale = GRAVITY * other.mass * (inverse * inverse * inverse);
        ax += dx * scale;
        ay += dy * scale;
        az += dz * scale;
    }
    Vector { x: ax, y: ay, z: az }
}

/// Apply pass for body `i`: v += a dt, then x += v dt.
#[inline(never)]
fn apply_motion(point: &mut Point, velocity: &mut Vector, acceleration: &Vector) {
    velocity.x += acceleration.x * TIME_STEP;
    velocity.y += acceleration.y * TIME_STEP;
    velocity.z += acceleration.z * TIME_STEP;
    point.x += velocity.x * TIME_STEP;
    point.y += velocity.y * TIME_STEP;
    point.z += velocity.z * TIME_STEP;
}

/// The bodies' state, kept as raw arrays that tasks reach through their base pointers (no task ever forms a
/// reference to a whole vector while others write it). Each pass writes only element i of what it writes, from
/// the task for body i; the force pass only reads the points, which only the apply pass (a later fork-join)
/// writes: no element is written by two tasks of one pass, or read in a pass that writes it.
struct State {
    count: usize,
    points: *mut Point,
    velocities: *mut Vector,
    accelerations: *mut Vector,
}

// SAFETY: see the type's comment: tasks of one pass touch disjoint elements, and passes are separated by joins.
unsafe impl Sync for State {}
// SAFETY: the arrays are owned; moving the state moves their ownership.
unsafe impl Send for State {}

fn leak<T>(values: Vec<T>) -> *mut T {
    Box::leak(values.into_boxed_slice()).as_mut_ptr()
}

impl State {
    fn generate(seed: u32, count: usize) -> State {
        let draws = bench::Draws::new(seed);
        let mut points = Vec::with_capacity(count);
        let mut velocities = Vec::with_capacity(count);
        for i in 0..count as u64 {
            let c = 7 * i;
            let mass = 1e10f32 + draws.uniform(c + 6) * (1e15f32 - 1e10f32);
            points.push(Point { x: draws.uniform(c), y: draws.uniform(c + 1), z: draws.uniform(c + 2), mass });
            velocities.push(Vector { x: draws.uniform(c + 3), y: draws.uniform(c + 4), z: draws.uniform(c + 5) });
        }
        State {
            count,
            points: leak(points),
            velocities: leak(velocities),
            accelerations: leak(vec![Vector::default(); count]),
        }
    }

    fn len(&self) -> usize {
        self.count
    }

    /// The force pass's task `i`.
    fn force(&self, i: usize) {
        // SAFETY: the type's comment: the points are read-only in this pass, acceleration i is this task's.
        unsafe {
            let acceleration = accumulate_force(std::slice::from_raw_parts(self.points, self.count), i);
            self.accelerations.add(i).write(acceleration);
        }
    }

    /// The apply pass's task `i`.
    fn apply(&self, i: usize) {
        // SAFETY: the type's comment: point i, velocity i and acceleration i are this task's alone.
        unsafe { apply_motion(&mut *self.points.add(i), &mut *self.velocities.add(i), &*self.accelerations.add(i)) }
    }

    /// A hash of every bit of positions, masses and velocities, folded as the C++ benchmark folds them.
    fn hash(&self) -> u64 {
        // SAFETY: called between fork-joins, when no task runs.
        let (points, velocities) = unsafe {
            (
                std::slice::from_raw_parts(self.points, self.count),
                std::slice::from_raw_parts(self.velocities, self.count),
            )
        };
        let mut hash = 0u64;
        let mut fold = |value: f32| hash = bench::mix(hash ^ value.to_bits() as u64);
        for (point, velocity) in points.iter().zip(velocities) {
            [point.x, point.y, point.z, point.mass, velocity.x, velocity.y, velocity.z].iter().for_each(|&v| fold(v));
        }
        hash
    }
}

impl Drop for State {
    fn drop(&mut self) {
        // SAFETY: the three arrays `generate` leaked, each of `count` elements, freed once.
        unsafe {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.points, self.count)));
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.velocities, self.count)));
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.accelerations, self.count)));
        }
    }
}

/// The runtime behind a backend.
enum Runtime {
    Forkunion(fu::ThreadPool),
    Rayon(rayon::ThreadPool),
}

impl Runtime {
    fn start(backend: &str, threads: usize, idle: fu::IdlePolicy) -> Runtime {
        if backend.starts_with("forkunion") {
            let topology = fu::Topology::new().unwrap_or_else(|e| bench::fail(bench::EXIT_UNAVAILABLE, &e.to_string()));
            match fu::ThreadPool::builder().name("nbody").idle_policy(idle).try_spawn(&topology, threads) {
                Ok(pool) => Runtime::Forkunion(pool),
                Err(error) => bench::fail(bench::EXIT_UNAVAILABLE, &format!("{}: {}", backend, error)),
            }
        } else {
            match rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("rayon:{:03}", i))
                .build()
            {
                Ok(pool) => Runtime::Rayon(pool),
                Err(error) => bench::fail(bench::EXIT_UNAVAILABLE, &format!("{}: {}", backend, error)),
            }
        }
    }

    /// Runs `body` inside the runtime: on Rayon, as one of its workers.
    fn enter<R: Send>(&self, body: impl FnOnce() -> R + Send) -> R {
        match self {
            Runtime::Forkunion(_) => body(),
            Runtime::Rayon(pool) => pool.install(body),
        }
    }

    /// One parallel loop over `0..n` in `backend`'s form.
    fn for_n(&self, backend: &str, n: usize, f: impl Fn(usize) + Sync + Send) {
        match self {
            Runtime::Forkunion(pool) => match backend {
                "forkunion_static_shared" => pool.for_n(n, |prong| f(prong.task_index)).unwrap(),
                "forkunion_dynamic_shared" => pool.for_n_dynamic(n, |prong| f(prong.task_index)).unwrap(),
                "forkunion_iter_static" => (0..n).into_par_iter().with_pool(pool).for_each(f),
                _ => (0..n).into_par_iter().with_schedule(pool, DynamicScheduler).for_each(f),
            },
            Runtime::Rayon(pool) => {
                let threads = pool.current_num_threads();
                let items = rayon::iter::IntoParallelIterator::into_par_iter(0..n);
                match backend {
                    "rayon_static" => items.with_min_len((n + threads - 1) / threads).for_each(f),
                    "rayon_dynamic" => items.with_max_len(1).for_each(f),
                    _ => items.for_each(f),
                }
            }
        }
    }
}

fn step(runtime: &Runtime, backend: &str, state: &State) {
    runtime.for_n(backend, state.len(), |i| state.force(i));
    runtime.for_n(backend, state.len(), |i| state.apply(i));
}

/// The serial reference for CHECK mode: the same kernels in plain loops.
fn serial_hash(seed: u32, count: usize) -> u64 {
    let state = State::generate(seed, count);
    for _ in 0..CHECKPOINT_STEPS {
        (0..count).for_each(|i| state.force(i));
        (0..count).for_each(|i| state.apply(i));
    }
    state.hash()
}

struct Run {
    runtime: Runtime,
    state: State,
    hash: Option<u64>,
    steps: usize,
    seconds: f64,
    off_caller: f64,
}

fn main() {
    if bench::list_requested(&BACKENDS) {
        return;
    }
    let settings = bench::Settings::read(&BACKENDS, BACKENDS[0]);
    bench::print_banner("nbody", &settings);
    println!(
        "# nbody: FORKUNION_NBODY_COUNT={} bodies, FORKUNION_NBODY_CHECK={}, 2 dispatches per step, G=6.674e-11 \
         dt=0.01 softening=1e-9, strict IEEE",
        settings.nbody_count, settings.nbody_check as u8
    );
    let expected = if settings.nbody_check { Some(serial_hash(settings.seed, settings.nbody_count)) } else { None };
    let floor_ns = bench::measure_floor_ns();
    println!("# floor: ping-pong over two cache lines: {:.1} ns per round trip", floor_ns);

    let mut runs: Vec<Run> = settings
        .backends
        .iter()
        .map(|backend| Run {
            runtime: Runtime::start(backend, settings.threads, settings.idle),
            state: State::generate(settings.seed, settings.nbody_count),
            hash: None,
            steps: 0,
            seconds: 0.0,
            off_caller: 0.0,
        })
        .collect();

    let mut index = 0;
    let medians = bench::interleave(&settings.backends, settings.rounds, settings.time_limit, |backend, limit| {
        let run = &mut runs[index % settings.backends.len()];
        index += 1;
        let (runtime, state) = (&run.runtime, &run.state);
        let (window, hash) = runtime.enter(|| {
            // The first round's warm-up takes the checkpoint: the state after exactly 8 steps from the inputs.
            let mut hash = None;
            let mut warm_steps = 0;
            let needs_hash = run.hash.is_none();
            let warm_limit = if needs_hash { settings.warmup } else { settings.warmup.min(Duration::from_millis(200)) };
            let warm = bench::warm_up(warm_limit, if needs_hash { CHECKPOINT_STEPS } else { 1 }, || {
                step(runtime, backend, state);
                warm_steps += 1;
                if needs_hash && warm_steps == CHECKPOINT_STEPS {
                    hash = Some(state.hash());
                }
            });
            // The census, once per backend: 100 extra force passes, untimed.
            let census = bench::Census::default();
            if needs_hash {
                let _mark = bench::Census::mark_caller();
                for _ in 0..100 {
                    runtime.for_n(backend, state.len(), |i| {
                        census.count();
                        state.force(i);
                    });
                }
            }
            let stride = bench::checkpoint_stride(warm.seconds / warm.iterations as f64);
            (bench::timed_window(limit, stride, || step(runtime, backend, state)), hash.map(|h| (h, census)))
        });
        // Between rounds our workers block in the kernel by themselves, taking no core from the next backend:
        // the default idle policy spins for 100 µs, then parks (Rayon's workers also go to sleep on their own).
        if let Some((hash, census)) = hash {
            println!("{}", census.describe(backend, settings.threads));
            run.hash = Some(hash);
            run.off_caller = census.off_caller_share();
        }
        run.steps += window.iterations;
        run.seconds += window.seconds;
        window.median_seconds * 1e6
    });

    for ((backend, run), rounds) in settings.backends.iter().zip(&runs).zip(&medians) {
        let hash = run.hash.expect("the first round hashed");
        let check = match expected {
            Some(expected) if expected != hash => bench::fail(
                bench::EXIT_CHECK_FAILED,
                &format!("CHECK failed: {} state after 8 steps 0x{:016x}, serial 0x{:016x}", backend, hash, expected),
            ),
            Some(_) => "passed",
            None => "skipped",
        };
        let us_per_step = bench::median(rounds.clone());
        bench::Row::new("nbody")
            .add("backend", backend)
            .add("threads", settings.threads)
            .add("bodies", settings.nbody_count)
            .add("steps", run.steps)
            .add_float("off_caller", run.off_caller)
            .add_float("us_per_step", us_per_step)
            .add_float("us_per_step_mean", run.seconds * 1e6 / run.steps.max(1) as f64)
            .add_float("floor_ns", floor_ns)
            .add_float("dispatch_over_floor", if floor_ns > 0.0 { us_per_step * 1e3 / 2.0 / floor_ns } else { 0.0 })
            .add("state_after_8_steps", format!("0x{:016x}", hash))
            .add("check", check)
            .print();
    }
    if settings.backends.len() > 1 {
        bench::print_summary("nbody", "us_per_step", &settings.backends, &medians, floor_ns);
    }
}
