//! What the Zig benchmark binaries share, after the C++ harness's protocol (bench/common/harness.hpp) and the Rust
//! port's (rust/bench/src/lib.rs): the same `FORKUNION_*` settings, the counter-based SplitMix64 inputs, the timed
//! window, the in-process floor, interleaved rounds and the `RESULT` rows.
//!
//! Settings are read once, at start; unset or empty keeps the default; a value that does not parse prints one
//! line naming the variable and the expected form to stderr and exits with status 1.
//!
//! | variable                          | default                 | form                                          |
//! | --------------------------------- | ----------------------- | --------------------------------------------- |
//! | FORKUNION_SEED                    | 42                      | u32, or `random`                              |
//! | FORKUNION_WARMUP                  | 1s                      | integer + `ms` or `s`                         |
//! | FORKUNION_TIME_LIMIT              | 10s                     | same, per backend in all (split over rounds)  |
//! | FORKUNION_THREADS                 | all allowed cores       | count; 0 = all                                |
//! | FORKUNION_BACKEND                 | forkunion_static_shared | a name from `--list`, or several, with commas |
//! | FORKUNION_NBODY_COUNT             | thread count            | count                                         |
//! | FORKUNION_NBODY_CHECK             | false                   | 1/0/true/false                                |
//! | FORKUNION_PROPAGATION_SCALE       | 14                      | 0..31                                         |
//! | FORKUNION_PROPAGATION_COMMUNITIES | 64                      | count                                         |
//! | FORKUNION_PROPAGATION_EDGE_FACTOR | 16                      | count                                         |
//! | FORKUNION_PROPAGATION_CHECK       | false                   | 1/0/true/false                                |
//! | FORKUNION_PROPAGATION_CACHE       | none                    | an existing directory                         |
//! | FORKUNION_ROUNDS                  | 5                       | count: interleaved rounds, several backends   |
//! | FORKUNION_IDLE                    | adaptive                | the pools' idle policy: spin, adaptive, nap, sleep |
//!
//! Exit statuses: 0 success; 1 a bad setting; 2 a runtime could not start; 3 a CHECK found a difference.
const std = @import("std");
const fu = @import("forkunion");

pub const exit_bad_setting: u8 = 1;
pub const exit_unavailable: u8 = 2;
pub const exit_check_failed: u8 = 3;

/// Standard output, buffered by line by the callers' `print`.
pub fn print(comptime format: []const u8, arguments: anytype) void {
    std.io.getStdOut().writer().print(format, arguments) catch {};
}

/// Prints one line to stderr and exits with `status`.
pub fn fail(status: u8, comptime format: []const u8, arguments: anytype) noreturn {
    std.io.getStdErr().writer().print(format ++ "\n", arguments) catch {};
    std.process.exit(status);
}

// ---- Counter-based SplitMix64: inputs bit-identical across backends and languages ----

/// SplitMix64's output for state `(counter + 1) * golden`; all arithmetic mod 2^64.
pub fn mix(counter: u64) u64 {
    var x = (counter +% 1) *% 0x9E3779B97F4A7C15;
    x = (x ^ (x >> 30)) *% 0xBF58476D1CE4E5B9;
    x = (x ^ (x >> 27)) *% 0x94D049BB133111EB;
    return x ^ (x >> 31);
}

comptime {
    // The reference SplitMix64 from state 0 starts with these: a typo in a constant fails to compile.
    std.debug.assert(mix(0) == 0xE220A8397B1DCDAF and mix(1) == 0x6E789E6AA1B965F4 and mix(2) == 0x06C45D188009454F);
}

/// `draw(c) = mix(key + c)` with `key = mix(seed)`.
pub const Draws = struct {
    key: u64,
    pub fn init(seed: u32) Draws {
        return .{ .key = mix(seed) };
    }
    pub fn draw(self: Draws, counter: u64) u64 {
        return mix(self.key +% counter);
    }
    /// A uniform float in [0, 1): the top 24 bits of the draw, times 2^-24 (exact in binary32).
    pub fn uniform(self: Draws, counter: u64) f32 {
        return @as(f32, @floatFromInt(self.draw(counter) >> 40)) * (1.0 / 16777216.0);
    }
};

// ---- Settings ----

pub const Settings = struct {
    seed: u32 = 42,
    seed_is_random: bool = false,
    warmup_ns: u64 = std.time.ns_per_s,
    time_limit_ns: u64 = 10 * std.time.ns_per_s,
    threads: usize = 0,
    backends: [][]const u8 = &.{},
    nbody_count: usize = 0,
    nbody_check: bool = false,
    propagation_scale: usize = 14,
    propagation_communities: usize = 64,
    propagation_edge_factor: usize = 16,
    propagation_check: bool = false,
    propagation_cache: ?[]const u8 = null,
    rounds: usize = 5,
    idle: fu.IdlePolicy = fu.IdlePolicy.default,

    /// Reads every variable once; `backends` is this binary's list, the first one the default.
    pub fn read(allocator: std.mem.Allocator, backends: []const []const u8) Settings {
        var settings = Settings{};
        if (text("FORKUNION_SEED")) |value| {
            if (std.mem.eql(u8, value, "random")) {
                settings.seed = @truncate(mix(@as(u64, @truncate(@as(u128, @bitCast(std.time.nanoTimestamp()))))));
                settings.seed_is_random = true;
            } else {
                settings.seed = @intCast(parseUnsigned(value, 0xFFFFFFFF) orelse
                    fail(exit_bad_setting, "FORKUNION_SEED: expected an integer from 0 to 4294967295 or \"random\", got \"{s}\"", .{value}));
            }
        }
        if (duration("FORKUNION_WARMUP")) |ns| settings.warmup_ns = ns;
        if (duration("FORKUNION_TIME_LIMIT")) |ns| settings.time_limit_ns = ns;
        settings.threads = count("FORKUNION_THREADS", 0, 1 << 16) orelse 0;
        if (settings.threads == 0) settings.threads = allowedCores();
        const chosen = text("FORKUNION_BACKEND") orelse backends[0];
        var list = std.ArrayList([]const u8).init(allocator);
        var names = std.mem.splitScalar(u8, chosen, ',');
        while (names.next()) |raw| {
            const name = std.mem.trim(u8, raw, " ");
            var known = false;
            for (backends) |backend| known = known or std.mem.eql(u8, backend, name);
            if (!known) {
                const all = std.mem.join(allocator, ", ", backends) catch "";
                fail(exit_bad_setting, "FORKUNION_BACKEND: expected one of {s} (or several, comma-separated), got \"{s}\"", .{ all, name });
            }
            list.append(name) catch fail(exit_unavailable, "out of memory", .{});
        }
        settings.backends = list.items;
        // 2^30 bodies already take ~10^18 interactions per step: anything larger is a typo.
        settings.nbody_count = count("FORKUNION_NBODY_COUNT", 1, 1 << 30) orelse settings.threads;
        settings.nbody_check = flag("FORKUNION_NBODY_CHECK") orelse false;
        settings.propagation_scale = count("FORKUNION_PROPAGATION_SCALE", 0, 31) orelse 14;
        settings.propagation_communities = count("FORKUNION_PROPAGATION_COMMUNITIES", 1, 0xFFFFFFFF) orelse 64;
        settings.propagation_edge_factor = count("FORKUNION_PROPAGATION_EDGE_FACTOR", 1, 1 << 20) orelse 16;
        settings.propagation_check = flag("FORKUNION_PROPAGATION_CHECK") orelse false;
        if (text("FORKUNION_PROPAGATION_CACHE")) |directory| {
            var opened = std.fs.cwd().openDir(directory, .{}) catch
                fail(exit_bad_setting, "FORKUNION_PROPAGATION_CACHE: expected an existing directory, got \"{s}\"", .{directory});
            opened.close();
            settings.propagation_cache = directory;
        }
        const vertices = @as(u64, settings.propagation_communities) << @intCast(settings.propagation_scale);
        if (vertices > 0xFFFFFFFF)
            fail(exit_bad_setting, "FORKUNION_PROPAGATION_SCALE, FORKUNION_PROPAGATION_COMMUNITIES: 2^{} x {} = {} vertices overflow u32 (at most 4294967295)", .{ settings.propagation_scale, settings.propagation_communities, vertices });
        settings.rounds = count("FORKUNION_ROUNDS", 1, 1000) orelse 5;
        if (text("FORKUNION_IDLE")) |value| {
            settings.idle = if (std.mem.eql(u8, value, "spin")) .spin else if (std.mem.eql(u8, value, "adaptive")) fu.IdlePolicy.default else if (std.mem.eql(u8, value, "nap")) .nap else if (std.mem.eql(u8, value, "sleep")) .{ .sleep = 0 } else fail(exit_bad_setting, "FORKUNION_IDLE: expected spin, adaptive, nap or sleep, got \"{s}\"", .{value});
        }
        return settings;
    }
};

fn text(name: [:0]const u8) ?[]const u8 {
    const value = std.os.getenv(name) orelse return null;
    return if (value.len == 0) null else value;
}

/// All of `value` as decimal digits, at most `max`; null on anything else or overflow.
fn parseUnsigned(value: []const u8, max: u64) ?u64 {
    if (value.len == 0) return null;
    var result: u64 = 0;
    for (value) |char| {
        if (char < '0' or char > '9') return null;
        const digit: u64 = char - '0';
        if (result > (max - digit) / 10) return null;
        result = result * 10 + digit;
    }
    return result;
}

fn count(name: [:0]const u8, min: u64, max: u64) ?usize {
    const value = text(name) orelse return null;
    const parsed = parseUnsigned(value, max) orelse max + 1;
    if (parsed < min or parsed > max)
        fail(exit_bad_setting, "{s}: expected an integer from {} to {}, got \"{s}\"", .{ name, min, max, value });
    return @intCast(parsed);
}

fn duration(name: [:0]const u8) ?u64 {
    const value = text(name) orelse return null;
    var digits: []const u8 = value;
    var unit: u64 = 0;
    var max: u64 = 0;
    if (std.mem.endsWith(u8, value, "ms") and value.len > 2) {
        digits = value[0 .. value.len - 2];
        unit = std.time.ns_per_ms;
        max = 604_800_000;
    } else if (std.mem.endsWith(u8, value, "s") and value.len > 1) {
        digits = value[0 .. value.len - 1];
        unit = std.time.ns_per_s;
        max = 604_800;
    }
    const parsed = if (unit == 0) null else parseUnsigned(digits, max);
    return (parsed orelse fail(exit_bad_setting, "{s}: expected an integer followed by \"ms\" or \"s\" (like 500ms or 10s, at most a week), got \"{s}\"", .{ name, value })) * unit;
}

fn flag(name: [:0]const u8) ?bool {
    const value = text(name) orelse return null;
    if (std.mem.eql(u8, value, "1") or std.mem.eql(u8, value, "true")) return true;
    if (std.mem.eql(u8, value, "0") or std.mem.eql(u8, value, "false")) return false;
    fail(exit_bad_setting, "{s}: expected 1, 0, true or false, got \"{s}\"", .{ name, value });
}

/// The CPUs this process may run on, from the live topology.
pub fn allowedCores() usize {
    var topology = fu.Topology.init() catch return 1;
    defer topology.deinit();
    return @max(topology.allowedCoresCount(), 1);
}

/// Prints one backend name per line for `--list` and returns true if the arguments asked for it.
pub fn listRequested(backends: []const []const u8) bool {
    var arguments = std.process.args();
    _ = arguments.skip();
    while (arguments.next()) |argument| {
        if (std.mem.eql(u8, argument, "--list")) {
            for (backends) |name| print("{s}\n", .{name});
            return true;
        }
    }
    return false;
}

pub fn printBanner(benchmark: []const u8, settings: Settings) void {
    var names: [512]u8 = undefined;
    const mask = fu.runtimeCapabilities() & fu.comptimeCapabilities();
    print("# forkunion {}, zig/bench/{s}, {} allowed cpus, capabilities: {s}\n", .{ fu.version(), benchmark, allowedCores(), fu.nameCapabilities(mask, &names) catch "?" });
    print("# settings: FORKUNION_SEED={}{s} FORKUNION_WARMUP={d:.3}s FORKUNION_TIME_LIMIT={d:.3}s FORKUNION_THREADS={} FORKUNION_BACKEND=", .{ settings.seed, if (settings.seed_is_random) " (random)" else "", seconds(settings.warmup_ns), seconds(settings.time_limit_ns), settings.threads });
    for (settings.backends, 0..) |backend, i| print("{s}{s}", .{ if (i == 0) "" else ",", backend });
    print(" FORKUNION_ROUNDS={}\n", .{settings.rounds});
}

pub fn seconds(ns: u64) f64 {
    return @as(f64, @floatFromInt(ns)) / 1e9;
}

// ---- Timing ----

/// Iterations between clock reads, so that a read happens about every millisecond.
pub fn checkpointStride(seconds_per_iteration: f64) usize {
    if (std.math.isNan(seconds_per_iteration) or seconds_per_iteration <= 0) return 1;
    return @intFromFloat(std.math.clamp(1e-3 / seconds_per_iteration, 1.0, 1e6));
}

/// The median of `values` (the upper one of an even count); 0 when empty. Sorts `values`.
pub fn median(values: []f64) f64 {
    if (values.len == 0) return 0;
    std.sort.heap(f64, values, {}, std.sort.asc(f64));
    return values[values.len / 2];
}

/// What a timed window ran: the median over ~1 ms checkpoints is what a preemption moves least.
pub const Window = struct { iterations: usize = 0, seconds: f64 = 0, median_seconds: f64 = 0 };

/// Runs `step.run()` at least `min_iterations` times and until `limit_ns` passes (untimed).
pub fn warmUp(limit_ns: u64, min_iterations: usize, step: anytype) Window {
    var timer = std.time.Timer.start() catch unreachable;
    var iterations: usize = 0;
    while (iterations < min_iterations or timer.read() < limit_ns) : (iterations += 1) step.run();
    return .{ .iterations = iterations, .seconds = seconds(timer.read()) };
}

/// Runs `step.run()` in strides, reading the clock between strides, until `limit_ns` passed and
/// `step.more()` (if it has one) says no more is needed.
pub fn timedWindow(allocator: std.mem.Allocator, limit_ns: u64, stride: usize, step: anytype) Window {
    var checkpoints = std.ArrayList(f64).init(allocator);
    defer checkpoints.deinit();
    var timer = std.time.Timer.start() catch unreachable;
    var last: u64 = 0;
    var iterations: usize = 0;
    while (true) {
        for (0..stride) |_| step.run();
        iterations += stride;
        const now = timer.read();
        checkpoints.append(seconds(now - last) / @as(f64, @floatFromInt(stride))) catch {};
        last = now;
        const more = if (@hasDecl(@TypeOf(step.*), "more")) step.more() else false;
        if (now >= limit_ns and !more) break;
    }
    return .{ .iterations = iterations, .seconds = seconds(timer.read()), .median_seconds = median(checkpoints.items) };
}

// ---- The floor: two threads bouncing a counter over two cache lines ----

const Line = struct { value: std.atomic.Atomic(u64) align(128) = std.atomic.Atomic(u64).init(0) };

/// The median round trip, in nanoseconds, of a counter bounced between this thread and a helper over two cache
/// lines, one writer each: the smallest fork-join any pool can make. 0 with fewer than 2 allowed cores.
pub fn measureFloorNs() f64 {
    if (allowedCores() < 2) return 0;
    const Shared = struct {
        ping: Line = .{},
        pong: Line = .{},
        stop: std.atomic.Atomic(bool) = std.atomic.Atomic(bool).init(false),
        fn helper(self: *@This()) void {
            var k: u64 = 1;
            while (true) : (k += 1) {
                // Acquire pairs with the release store of `ping`.
                while (self.ping.value.load(.Acquire) < k) std.atomic.spinLoopHint();
                if (self.stop.load(.Monotonic)) return; // stored before the final ping
                self.pong.value.store(k, .Release);
            }
        }
    };
    var shared = Shared{};
    const thread = std.Thread.spawn(.{}, Shared.helper, .{&shared}) catch return 0;
    var batches: [63]f64 = undefined;
    var sent: u64 = 0;
    // 63 batches of 256 round trips: a tenant taking a CPU for a scheduler slice spoils a few batches only.
    for (&batches) |*batch| {
        var timer = std.time.Timer.start() catch unreachable;
        for (0..256) |_| {
            sent += 1;
            shared.ping.value.store(sent, .Release);
            while (shared.pong.value.load(.Acquire) != sent) std.atomic.spinLoopHint();
        }
        batch.* = @as(f64, @floatFromInt(timer.read())) / 256.0;
    }
    shared.stop.store(true, .Monotonic);
    shared.ping.value.store(sent + 1, .Release);
    thread.join();
    return median(&batches);
}

// ---- Rounds, summaries, the census ----

/// Prints each backend's median of round medians, the spread, and its ratio to the first backend.
pub fn printSummary(benchmark: []const u8, unit: []const u8, backends: []const []const u8, medians: [][]f64) void {
    const central = std.heap.page_allocator.alloc(f64, medians.len) catch return;
    defer std.heap.page_allocator.free(central);
    for (medians, central) |rounds, *value| {
        const copy = std.heap.page_allocator.dupe(f64, rounds) catch return;
        defer std.heap.page_allocator.free(copy);
        value.* = median(copy);
    }
    for (backends, 0..) |backend, i| {
        var low: f64 = std.math.floatMax(f64);
        var high: f64 = 0;
        for (medians[i]) |value| {
            low = @min(low, value);
            high = @max(high, value);
        }
        print("RATIO benchmark={s} backend={s} {s}={d:.4} rounds={} min={d:.4} max={d:.4} over_{s}={d:.3}\n", .{ benchmark, backend, unit, central[i], medians[i].len, low, high, backends[0], central[i] / central[0] });
    }
}

/// Counts tasks run on the thread that dispatched them (thread 0 of an inclusive pool) and on others.
pub const Census = struct {
    on_caller: std.atomic.Atomic(u64) = std.atomic.Atomic(u64).init(0),
    off_caller: std.atomic.Atomic(u64) = std.atomic.Atomic(u64).init(0),
    threadlocal var is_caller: bool = false;

    pub fn markCaller(value: bool) void {
        is_caller = value;
    }
    /// Counts one task on the current thread (relaxed: read after the joins).
    pub fn count(self: *Census) void {
        _ = (if (is_caller) &self.on_caller else &self.off_caller).fetchAdd(1, .Monotonic);
    }
    /// Share of the tasks that ran off the calling thread: 0 means no fork really happened.
    pub fn offCallerShare(self: *Census) f64 {
        const on: f64 = @floatFromInt(self.on_caller.load(.Monotonic));
        const off: f64 = @floatFromInt(self.off_caller.load(.Monotonic));
        return if (on + off == 0) 0 else off / (on + off);
    }
    pub fn describe(self: *Census, backend: []const u8, threads: usize) void {
        const share = self.offCallerShare();
        // Below 5%, far under any real split's (T-1)/T, the caller ran (almost) everything itself.
        const warning = if (threads > 1 and share < 0.05) " -- the caller ran (almost) every task: no real fork" else "";
        print("# census {s}: {d:.1}% of tasks off the calling thread{s}\n", .{ backend, 100 * share, warning });
    }
};

/// A pool for a backend, with `threads` threads, the caller inclusive, and the chosen idle policy.
pub fn startPool(topology: fu.Topology, backend: []const u8, threads: usize, idle: fu.IdlePolicy) fu.Pool {
    var pool = fu.Pool.init("bench", fu.capability.all) catch |err| fail(exit_unavailable, "{s}: {s}", .{ backend, @errorName(err) });
    pool.spawn(topology, threads, .inclusive) catch |err| fail(exit_unavailable, "{s}: {s}", .{ backend, @errorName(err) });
    pool.setIdlePolicy(idle) catch |err| fail(exit_unavailable, "{s}: {s}", .{ backend, @errorName(err) });
    return pool;
}
