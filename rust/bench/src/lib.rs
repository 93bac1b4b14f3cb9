//! What the Rust benchmark binaries share, after the C++ harness's protocol (`bench/` of the repository): strict
//! settings from the environment, the counter-based SplitMix64 inputs, the timed window, the in-process floor,
//! interleaved rounds and the result rows.
//!
//! # Settings
//! Read once, at start; unset or empty keeps the default; a value that does not parse prints one line naming the
//! variable and the expected form to stderr and exits with status 1.
//!
//! | variable               | default                 | form                                              |
//! | ---------------------- | ----------------------- | ------------------------------------------------- |
//! | FORKUNION_SEED         | 42                      | u32, or `random`                                  |
//! | FORKUNION_WARMUP       | 1s                      | integer + `ms` or `s`                             |
//! | FORKUNION_TIME_LIMIT   | 10s                     | same, per backend and in all (split over rounds)  |
//! | FORKUNION_THREADS      | all allowed cores       | count; 0 = all                                    |
//! | FORKUNION_BACKEND      | forkunion_static_shared | a name from `--list`, or several, comma-separated |
//! | FORKUNION_NBODY_COUNT  | thread count            | count                                             |
//! | FORKUNION_NBODY_CHECK  | false                   | 1/0/true/false                                    |
//! | FORKUNION_ROUNDS       | 5                       | count: interleaved rounds when several backends   |
//! | FORKUNION_IDLE         | adaptive                | our pools' idle policy: spin, adaptive, nap, sleep |
//!
//! Several backends in `FORKUNION_BACKEND` run in interleaved rounds in one process (A B C A B C ...), each round
//! `time limit / rounds` long, and the summary reports each backend's median of its rounds' medians and its
//! ratio to the first backend: performance is quoted only as such same-run ratios.
//!
//! # Exit statuses
//! 0 success; 1 a bad setting; 2 a runtime could not start; 3 a CHECK found a difference.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub const EXIT_BAD_SETTING: i32 = 1;
pub const EXIT_UNAVAILABLE: i32 = 2;
pub const EXIT_CHECK_FAILED: i32 = 3;

/// Prints one line to stderr and exits with `status`.
pub fn fail(status: i32, message: &str) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    eprintln!("{}", message);
    std::process::exit(status)
}

// ---- Counter-based SplitMix64: inputs bit-identical across backends and languages ----

/// SplitMix64's output for state `(counter + 1) * golden`; all arithmetic mod 2^64.
pub const fn mix(counter: u64) -> u64 {
    let mut x = counter.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

// The reference SplitMix64 from state 0 starts with these: a typo in a constant fails to compile.
const _: () = assert!(mix(0) == 0xE220_A839_7B1D_CDAF && mix(1) == 0x6E78_9E6A_A1B9_65F4);
const _: () = assert!(mix(2) == 0x06C4_5D18_8009_454F);

/// `draw(c) = mix(key + c)` with `key = mix(seed)`.
#[derive(Clone, Copy)]
pub struct Draws {
    key: u64,
}

impl Draws {
    pub fn new(seed: u32) -> Draws {
        Draws { key: mix(seed as u64) }
    }
    pub fn draw(&self, counter: u64) -> u64 {
        mix(self.key.wrapping_add(counter))
    }
    /// A uniform float in [0, 1): the top 24 bits of the draw, times 2^-24 (exact in binary32).
    pub fn uniform(&self, counter: u64) -> f32 {
        (self.draw(counter) >> 40) as f32 * (1.0 / 16_777_216.0)
    }
}

// ---- Settings ----

pub struct Settings {
    pub seed: u32,
    pub seed_is_random: bool,
    pub warmup: Duration,
    pub time_limit: Duration,
    pub threads: usize,
    pub backends: Vec<String>,
    pub nbody_count: usize,
    pub nbody_check: bool,
    pub rounds: usize,
    /// The idle policy of our pools (`spin`, `adaptive` with the default window, `nap`, `sleep` with no period).
    pub idle: forkunion::IdlePolicy,
}

fn text(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

fn count(name: &str, min: u64, max: u64) -> Option<u64> {
    let value = text(name)?;
    match value.parse::<u64>() {
        Ok(parsed) if (min..=max).contains(&parsed) && value.bytes().all(|b| b.is_ascii_digit()) => Some(parsed),
        _ => {
            fail(EXIT_BAD_SETTING, &format!("{}: expected an integer from {} to {}, got \"{}\"", name, min, max, value))
        }
    }
}

fn duration(name: &str) -> Option<Duration> {
    let value = text(name)?;
    let parsed = if let Some(digits) = value.strip_suffix("ms") {
        digits.parse::<u64>().ok().filter(|&ms| ms <= 604_800_000).map(Duration::from_millis)
    } else if let Some(digits) = value.strip_suffix('s') {
        digits.parse::<u64>().ok().filter(|&s| s <= 604_800).map(Duration::from_secs)
    } else {
        None
    };
    match parsed {
        Some(parsed) if value.trim_end_matches(['m', 's']).bytes().all(|b| b.is_ascii_digit()) => Some(parsed),
        _ => fail(
            EXIT_BAD_SETTING,
            &format!(
                "{}: expected an integer followed by \"ms\" or \"s\" (like 500ms or 10s), got \"{}\"",
                name, value
            ),
        ),
    }
}

fn idle_policy(name: &str) -> Option<forkunion::IdlePolicy> {
    use forkunion::IdlePolicy;
    match text(name)?.as_str() {
        "spin" => Some(IdlePolicy::Spin),
        "adaptive" => Some(IdlePolicy::default()),
        "nap" => Some(IdlePolicy::Nap),
        "sleep" => Some(IdlePolicy::Sleep(Duration::ZERO)),
        other => fail(EXIT_BAD_SETTING, &format!("{}: expected spin, adaptive, nap or sleep, got \"{}\"", name, other)),
    }
}

fn flag(name: &str) -> Option<bool> {
    match text(name)?.as_str() {
        "1" | "true" => Some(true),
        "0" | "false" => Some(false),
        other => fail(EXIT_BAD_SETTING, &format!("{}: expected 1, 0, true or false, got \"{}\"", name, other)),
    }
}

/// The CPUs this process may run on, from the live topology.
pub fn allowed_cores() -> usize {
    forkunion::Topology::new().map(|t| t.allowed_cores_count()).unwrap_or(1).max(1)
}

impl Settings {
    /// Reads every variable once; `backends` is this binary's list, `default_backend` the one used when unset.
    pub fn read(backends: &[&str], default_backend: &str) -> Settings {
        let seed_text = text("FORKUNION_SEED");
        let (seed, seed_is_random) = match seed_text.as_deref() {
            None => (42, false),
            Some("random") => {
                let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
                (mix(nanos as u64) as u32, true)
            }
            Some(value) => match value.parse::<u32>() {
                Ok(seed) if value.bytes().all(|b| b.is_ascii_digit()) => (seed, false),
                _ => fail(
                    EXIT_BAD_SETTING,
                    &format!(
                        "FORKUNION_SEED: expected an integer from 0 to 4294967295 or \"random\", got \"{}\"",
                        value
                    ),
                ),
            },
        };
        let threads = count("FORKUNION_THREADS", 0, 1 << 16).unwrap_or(0) as usize;
        let threads = if threads == 0 { allowed_cores() } else { threads };
        let chosen = text("FORKUNION_BACKEND").unwrap_or_else(|| default_backend.to_string());
        let chosen: Vec<String> = chosen.split(',').map(|name| name.trim().to_string()).collect();
        for name in &chosen {
            if !backends.contains(&name.as_str()) {
                fail(
                    EXIT_BAD_SETTING,
                    &format!(
                        "FORKUNION_BACKEND: expected one of {} (or several, comma-separated), got \"{}\"",
                        backends.join(", "),
                        name
                    ),
                );
            }
        }
        Settings {
            seed,
            seed_is_random,
            warmup: duration("FORKUNION_WARMUP").unwrap_or(Duration::from_secs(1)),
            time_limit: duration("FORKUNION_TIME_LIMIT").unwrap_or(Duration::from_secs(10)),
            threads,
            backends: chosen,
            // 2^30 bodies already take ~10^18 interactions per step: anything larger is a typo.
            nbody_count: count("FORKUNION_NBODY_COUNT", 1, 1 << 30).map(|n| n as usize).unwrap_or(threads),
            nbody_check: flag("FORKUNION_NBODY_CHECK").unwrap_or(false),
            rounds: count("FORKUNION_ROUNDS", 1, 1000).unwrap_or(5) as usize,
            idle: idle_policy("FORKUNION_IDLE").unwrap_or_default(),
        }
    }
}

/// Prints one backend name per line for `--list` and returns true if the arguments asked for it.
pub fn list_requested(backends: &[&str]) -> bool {
    if std::env::args().skip(1).any(|argument| argument == "--list") {
        backends.iter().for_each(|name| println!("{}", name));
        return true;
    }
    false
}

pub fn print_banner(benchmark: &str, settings: &Settings) {
    let version = forkunion::version();
    println!(
        "# forkunion {}, rust/bench/{}, {} allowed cpus, capabilities: {}",
        version,
        benchmark,
        allowed_cores(),
        forkunion::runtime_capabilities() & forkunion::comptime_capabilities()
    );
    println!(
        "# settings: FORKUNION_SEED={}{} FORKUNION_WARMUP={:.3}s FORKUNION_TIME_LIMIT={:.3}s FORKUNION_THREADS={} \
         FORKUNION_BACKEND={} FORKUNION_ROUNDS={}",
        settings.seed,
        if settings.seed_is_random { " (random)" } else { "" },
        settings.warmup.as_secs_f64(),
        settings.time_limit.as_secs_f64(),
        settings.threads,
        settings.backends.join(","),
        settings.rounds
    );
}

// ---- Timing ----

/// Iterations between clock reads, so that a read happens about every millisecond: the read's cost (tens of
/// nanoseconds) then stays under 0.01% of the window.
pub fn checkpoint_stride(seconds_per_iteration: f64) -> usize {
    if seconds_per_iteration.is_nan() || seconds_per_iteration <= 0.0 {
        return 1;
    }
    (1e-3 / seconds_per_iteration).clamp(1.0, 1e6) as usize
}

/// The median of `values` (the upper one of an even count); 0 when empty.
pub fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    values[values.len() / 2]
}

/// What a timed window ran: the median over ~1 ms checkpoints is what a preemption moves least.
#[derive(Clone, Copy, Debug, Default)]
pub struct Window {
    pub iterations: usize,
    pub seconds: f64,
    pub median_seconds: f64,
}

/// Runs `step` at least `min_iterations` times and until `limit` passes (untimed).
pub fn warm_up(limit: Duration, min_iterations: usize, mut step: impl FnMut()) -> Window {
    let start = Instant::now();
    let mut iterations = 0;
    while iterations < min_iterations || start.elapsed() < limit {
        step();
        iterations += 1;
    }
    Window { iterations, seconds: start.elapsed().as_secs_f64(), median_seconds: 0.0 }
}

/// Runs `step` in strides, reading the clock between strides, until `limit` passed.
pub fn timed_window(limit: Duration, stride: usize, mut step: impl FnMut()) -> Window {
    let mut checkpoints = Vec::with_capacity(1 << 16);
    let start = Instant::now();
    let mut last = start;
    let mut iterations = 0;
    loop {
        for _ in 0..stride {
            step();
        }
        iterations += stride;
        let now = Instant::now();
        checkpoints.push((now - last).as_secs_f64() / stride as f64);
        last = now;
        if now - start >= limit {
            break;
        }
    }
    Window { iterations, seconds: start.elapsed().as_secs_f64(), median_seconds: median(checkpoints) }
}

// ---- The floor: two threads bouncing a counter over two cache lines ----

#[repr(align(128))]
struct Line(AtomicU64);

/// The median round trip, in nanoseconds, of a counter bounced between this thread and a helper over two cache
/// lines, one writer each: the smallest fork-join any pool can make. Measured in this process, right before the
/// runtimes exist, because a shared machine's round trip drifts from minute to minute: only ratios to it, or
/// between runtimes measured together, are stable. 0 with fewer than 2 allowed cores.
pub fn measure_floor_ns() -> f64 {
    if allowed_cores() < 2 {
        return 0.0;
    }
    let (ping, pong, stop) = (Line(AtomicU64::new(0)), Line(AtomicU64::new(0)), AtomicBool::new(false));
    let mut batches = Vec::new();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut k = 1;
            loop {
                // Acquire pairs with the release store of `ping` below.
                while ping.0.load(Ordering::Acquire) < k {
                    std::hint::spin_loop();
                }
                if stop.load(Ordering::Relaxed) {
                    return; // stored before the final ping
                }
                pong.0.store(k, Ordering::Release); // pairs with the acquire load of `pong`
                k += 1;
            }
        });
        let mut sent = 0;
        // 63 batches of 256 round trips: a tenant taking a CPU for a scheduler slice spoils a few batches only.
        for _ in 0..63 {
            let start = Instant::now();
            for _ in 0..256 {
                sent += 1;
                ping.0.store(sent, Ordering::Release);
                while pong.0.load(Ordering::Acquire) != sent {
                    std::hint::spin_loop();
                }
            }
            batches.push(start.elapsed().as_secs_f64() * 1e9 / 256.0);
        }
        stop.store(true, Ordering::Relaxed);
        ping.0.store(sent + 1, Ordering::Release);
    });
    median(batches)
}

// ---- Result rows ----

/// `RESULT benchmark=... key=value ...`: one machine-readable row per backend, values without spaces.
pub struct Row {
    text: String,
}

impl Row {
    pub fn new(benchmark: &str) -> Row {
        Row { text: format!("RESULT benchmark={}", benchmark) }
    }
    pub fn add(mut self, key: &str, value: impl std::fmt::Display) -> Row {
        self.text.push_str(&format!(" {}={}", key, value));
        self
    }
    pub fn add_float(self, key: &str, value: f64) -> Row {
        self.add(key, format!("{:.6}", value))
    }
    pub fn print(self) {
        println!("{}", self.text);
    }
}

/// Runs each backend's `round(backend, limit)` in `rounds` interleaved rounds of `time_limit / rounds`, collecting
/// the per-round medians; returns them per backend, in `backends` order.
pub fn interleave(
    backends: &[String],
    rounds: usize,
    time_limit: Duration,
    mut round: impl FnMut(&str, Duration) -> f64,
) -> Vec<Vec<f64>> {
    let share = time_limit / rounds.max(1) as u32;
    let mut medians = vec![Vec::new(); backends.len()];
    for _ in 0..rounds {
        for (index, backend) in backends.iter().enumerate() {
            medians[index].push(round(backend, share));
        }
    }
    medians
}

/// Prints each backend's median of round medians, the spread, and its ratio to the first backend.
pub fn print_summary(benchmark: &str, unit: &str, backends: &[String], medians: &[Vec<f64>], floor_ns: f64) {
    let central: Vec<f64> = medians.iter().map(|rounds| median(rounds.clone())).collect();
    for (index, backend) in backends.iter().enumerate() {
        let rounds = &medians[index];
        let (low, high) = rounds.iter().fold((f64::MAX, 0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        println!(
            "RATIO benchmark={} backend={} {}={:.4} rounds={} min={:.4} max={:.4} over_{}={:.3}{}",
            benchmark,
            backend,
            unit,
            central[index],
            rounds.len(),
            low,
            high,
            backends[0],
            central[index] / central[0],
            if floor_ns > 0.0 && unit == "ns" {
                format!(" over_floor={:.2}", central[index] / floor_ns)
            } else {
                String::new()
            }
        );
    }
}

// ---- The census: did the tasks really leave the calling thread? ----

thread_local! {
    static IS_CALLER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Counts tasks run on the thread that dispatched them and on others, in an untimed pass: a work-stealing runtime
/// may run a small loop entirely on its caller, which is then no fork-join at all, and the row must say so.
#[derive(Default)]
pub struct Census {
    on_caller: AtomicU64,
    off_caller: AtomicU64,
}

impl Census {
    /// Marks the calling thread as the dispatcher (inside the runtime, for runtimes that run their caller there)
    /// until the returned guard drops: pool threads outlive a census, and may dispatch the next one.
    pub fn mark_caller() -> CallerMark {
        IS_CALLER.with(|flag| flag.set(true));
        CallerMark(std::marker::PhantomData)
    }
    /// Counts one task on the current thread (relaxed: read after the joins).
    pub fn count(&self) {
        let counter = if IS_CALLER.with(|flag| flag.get()) { &self.on_caller } else { &self.off_caller };
        counter.fetch_add(1, Ordering::Relaxed);
    }
    /// Share of the tasks that ran off the calling thread: 0 means no fork really happened.
    pub fn off_caller_share(&self) -> f64 {
        let (on, off) = (self.on_caller.load(Ordering::Relaxed), self.off_caller.load(Ordering::Relaxed));
        if on + off == 0 {
            0.0
        } else {
            off as f64 / (on + off) as f64
        }
    }
    /// The census line, with a warning when (almost) every task stayed on the caller.
    pub fn describe(&self, backend: &str, threads: usize) -> String {
        let share = self.off_caller_share();
        // Below 5%, far under any real split's (T-1)/T, the caller ran (almost) everything itself.
        let warning =
            if threads > 1 && share < 0.05 { " -- the caller ran (almost) every task: no real fork" } else { "" };
        format!("# census {}: {:.1}% of tasks off the calling thread{}", backend, 100.0 * share, warning)
    }
}

/// Unmarks the dispatching thread when dropped (see [`Census::mark_caller`]); not `Send`: it belongs to its thread.
pub struct CallerMark(std::marker::PhantomData<*const ()>);

impl Drop for CallerMark {
    fn drop(&mut self) {
        IS_CALLER.with(|flag| flag.set(false));
    }
}
