//! N-body, the dispatch-latency benchmark: microseconds per step, two fork-joins per step.
//!
//! The same bodies, kernels and state hash as bench/nbody/nbody.cpp and rust/bench/src/bin/nbody.rs, so its
//! `state_after_8_steps` equals theirs for the same seed and count, bit for bit: body i takes draws 7i..7i+6 for
//! position xyz, velocity xyz and mass (a uniform float is `float(draw >> 40) * 2^-24`, mass = 1e10 + u * (1e15 -
//! 1e10) in `f32`); one step is a force pass (each body sums the pull of every other body in index order, with the
//! 0x5f3759df inverse square root and one Newton step) and an apply pass (v += a dt, then x += v dt), each one
//! parallel loop over the bodies. Zig's float mode is strict unless a scope sets `@setFloatMode(.Optimized)`, and
//! it never contracts `a * b + c` into a fused multiply-add by itself, in every optimization mode.
//!
//! Backends, each a pool of `FORKUNION_THREADS` threads with the caller as thread 0:
//! `forkunion_static_shared` (`forN`) and `forkunion_dynamic_shared` (`forNDynamic`).
const std = @import("std");
const fu = @import("forkunion");
const harness = @import("harness");

const backends = [_][]const u8{ "forkunion_static_shared", "forkunion_dynamic_shared" };

const gravity: f32 = 6.674e-11;
const time_step: f32 = 0.01;
const softening: f32 = 1e-9;
/// Steps after which every run hashes its state: enough for one differing bit to spread to every body.
const checkpoint_steps = 8;

const Point = struct { x: f32, y: f32, z: f32, mass: f32 };
const Vector = struct { x: f32 = 0, y: f32 = 0, z: f32 = 0 };

/// Quake III's inverse square root: the 0x5f3759df guess and one Newton step.
inline fn fastInverseSqrt(x: f32) f32 {
    const half = 0.5 * x;
    const guess: f32 = @bitCast(@as(u32, 0x5f3759df) - (@as(u32, @bitCast(x)) >> 1));
    return guess * (1.5 - half * guess * guess);
}

/// Force pass for body `i`: the sum, over every other body j in order, of G m_j d / (|d|^2 + eps)^1.5.
noinline fn accumulateForce(points: []const Point, i: usize) Vector {
    const self = points[i];
    var ax: f32 = 0;
    var ay: f32 = 0;
    var az: f32 = 0;
    for (points, 0..) |other, j| {
        if (j == i) continue;
        const dx = other.x - self.x;
        const dy = other.y - self.y;
        const dz = other.z - self.z;
        const distance_squared = dx * dx + dy * dy + dz * dz + softening;
        const inverse = fastInverseSqrt(distance_squared);
        const scale = gravity * other.mass * (inverse * inverse * inverse);
        ax += dx * scale;
        ay += dy * scale;
        az += dz * scale;
    }
    return .{ .x = ax, .y = ay, .z = az };
}

/// Apply pass for body `i`: v += a dt, then x += v dt.
noinline fn applyMotion(point: *Point, velocity: *Vector, acceleration: Vector) void {
    velocity.x += acceleration.x * time_step;
    velocity.y += acceleration.y * time_step;
    velocity.z += acceleration.z * time_step;
    point.x += velocity.x * time_step;
    point.y += velocity.y * time_step;
    point.z += velocity.z * time_step;
}

/// The bodies' state. Each pass writes only element i of what it writes, from the task for body i; the force
/// pass only reads the points, which only the apply pass (a later fork-join) writes.
const State = struct {
    points: []Point,
    velocities: []Vector,
    accelerations: []Vector,
    census: ?*harness.Census = null,

    fn generate(allocator: std.mem.Allocator, seed: u32, count: usize) !State {
        const draws = harness.Draws.init(seed);
        const state = State{
            .points = try allocator.alloc(Point, count),
            .velocities = try allocator.alloc(Vector, count),
            .accelerations = try allocator.alloc(Vector, count),
        };
        for (0..count) |i| {
            const c = 7 * @as(u64, i);
            const mass = 1e10 + draws.uniform(c + 6) * (1e15 - 1e10);
            state.points[i] = .{ .x = draws.uniform(c), .y = draws.uniform(c + 1), .z = draws.uniform(c + 2), .mass = mass };
            state.velocities[i] = .{ .x = draws.uniform(c + 3), .y = draws.uniform(c + 4), .z = draws.uniform(c + 5) };
            state.accelerations[i] = .{};
        }
        return state;
    }
    fn force(self: *const State, prong: fu.Prong) void {
        if (self.census) |census| census.count();
        self.accelerations[prong.task] = accumulateForce(self.points, prong.task);
    }
    fn apply(self: *const State, prong: fu.Prong) void {
        applyMotion(&self.points[prong.task], &self.velocities[prong.task], self.accelerations[prong.task]);
    }
    /// A hash of every bit of positions, masses and velocities, folded as the C++ benchmark folds them.
    fn hash(self: *const State) u64 {
        var result: u64 = 0;
        for (self.points, self.velocities) |p, v| {
            for ([_]f32{ p.x, p.y, p.z, p.mass, v.x, v.y, v.z }) |value| result = harness.mix(result ^ @as(u32, @bitCast(value)));
        }
        return result;
    }
};

/// One step on `pool` in `backend`'s form: a force pass, then an apply pass.
fn step(pool: fu.Pool, dynamic: bool, state: *const State) void {
    const n = state.points.len;
    const outcome = if (dynamic) pool.forNDynamic(n, state, State.force) else pool.forN(n, state, State.force);
    outcome catch |err| harness.fail(harness.exit_unavailable, "the pool refused a dispatch: {s}", .{@errorName(err)});
    const second = if (dynamic) pool.forNDynamic(n, state, State.apply) else pool.forN(n, state, State.apply);
    second catch |err| harness.fail(harness.exit_unavailable, "the pool refused a dispatch: {s}", .{@errorName(err)});
}

/// The serial reference for CHECK mode: the same kernels in plain loops.
fn serialHash(allocator: std.mem.Allocator, seed: u32, count: usize) !u64 {
    const state = try State.generate(allocator, seed, count);
    for (0..checkpoint_steps) |_| {
        for (0..count) |i| state.force(.{ .task = i, .thread = 0, .compute_domain = 0 });
        for (0..count) |i| state.apply(.{ .task = i, .thread = 0, .compute_domain = 0 });
    }
    return state.hash();
}

const Run = struct {
    pool: fu.Pool,
    dynamic: bool,
    state: State,
    hash: ?u64 = null,
    steps: usize = 0,
    seconds: f64 = 0,
    off_caller: f64 = 0,
    medians: std.ArrayList(f64),
};

const Stepper = struct {
    run_: *Run,
    warm_steps: usize = 0,
    needs_hash: bool = false,
    pub fn run(self: *Stepper) void {
        step(self.run_.pool, self.run_.dynamic, &self.run_.state);
        self.warm_steps += 1;
        if (self.needs_hash and self.warm_steps == checkpoint_steps) self.run_.hash = self.run_.state.hash();
    }
};

pub fn main() !void {
    var arena = std.heap.ArenaAllocator.init(std.heap.page_allocator);
    const allocator = arena.allocator();
    if (harness.listRequested(&backends)) return;
    const settings = harness.Settings.read(allocator, &backends);
    harness.printBanner("nbody", settings);
    harness.print("# nbody: FORKUNION_NBODY_COUNT={} bodies, FORKUNION_NBODY_CHECK={}, 2 dispatches per step, G=6.674e-11 dt=0.01 softening=1e-9, strict IEEE\n", .{ settings.nbody_count, @intFromBool(settings.nbody_check) });
    const expected: ?u64 = if (settings.nbody_check) try serialHash(allocator, settings.seed, settings.nbody_count) else null;
    const floor_ns = harness.measureFloorNs();
    harness.print("# floor: ping-pong over two cache lines: {d:.1} ns per round trip\n", .{floor_ns});

    var topology = fu.Topology.init() catch |err| harness.fail(harness.exit_unavailable, "topology: {s}", .{@errorName(err)});
    defer topology.deinit();
    const runs = try allocator.alloc(Run, settings.backends.len);
    for (runs, settings.backends) |*run, backend| run.* = .{
        .pool = harness.startPool(topology, backend, settings.threads, settings.idle),
        .dynamic = std.mem.eql(u8, backend, "forkunion_dynamic_shared"),
        .state = try State.generate(allocator, settings.seed, settings.nbody_count),
        .medians = std.ArrayList(f64).init(allocator),
    };

    const share = settings.time_limit_ns / settings.rounds;
    for (0..settings.rounds) |_| {
        for (runs, settings.backends) |*run, backend| {
            // The first round's warm-up takes the checkpoint: the state after exactly 8 steps from the inputs.
            var stepper = Stepper{ .run_ = run, .needs_hash = run.hash == null };
            const warm_limit = if (stepper.needs_hash) settings.warmup_ns else @min(settings.warmup_ns, 200 * std.time.ns_per_ms);
            const warm = harness.warmUp(warm_limit, if (stepper.needs_hash) checkpoint_steps else 1, &stepper);
            if (stepper.needs_hash) {
                // The census, once per backend: 100 extra force passes, untimed.
                var census = harness.Census{};
                harness.Census.markCaller(true);
                run.state.census = &census;
                for (0..100) |_| {
                    const n = run.state.points.len;
                    const outcome = if (run.dynamic) run.pool.forNDynamic(n, &run.state, State.force) else run.pool.forN(n, &run.state, State.force);
                    outcome catch |err| harness.fail(harness.exit_unavailable, "the pool refused a dispatch: {s}", .{@errorName(err)});
                }
                run.state.census = null;
                harness.Census.markCaller(false);
                census.describe(backend, settings.threads);
                run.off_caller = census.offCallerShare();
            }
            stepper.needs_hash = false;
            const stride = harness.checkpointStride(warm.seconds / @as(f64, @floatFromInt(warm.iterations)));
            const window = harness.timedWindow(allocator, share, stride, &stepper);
            run.steps += window.iterations;
            run.seconds += window.seconds;
            try run.medians.append(window.median_seconds * 1e6);
        }
    }

    const medians = try allocator.alloc([]f64, runs.len);
    for (runs, settings.backends, medians) |*run, backend, *rounds| {
        const hash = run.hash.?;
        var check: []const u8 = "skipped";
        if (expected) |serial| {
            if (serial != hash)
                harness.fail(harness.exit_check_failed, "CHECK failed: {s} state after 8 steps 0x{x:0>16}, serial 0x{x:0>16}", .{ backend, hash, serial });
            check = "passed";
        }
        rounds.* = run.medians.items;
        const us_per_step = harness.median(try allocator.dupe(f64, run.medians.items));
        harness.print("RESULT benchmark=nbody backend={s} threads={} bodies={} steps={} off_caller={d:.6} us_per_step={d:.6} us_per_step_mean={d:.6} floor_ns={d:.6} dispatch_over_floor={d:.6} state_after_8_steps=0x{x:0>16} check={s}\n", .{
            backend,                                                         settings.threads, settings.nbody_count,                                        run.steps, run.off_caller, us_per_step,
            run.seconds * 1e6 / @as(f64, @floatFromInt(@max(run.steps, 1))), floor_ns,         if (floor_ns > 0) us_per_step * 1e3 / 2.0 / floor_ns else 0, hash,      check,
        });
        run.pool.deinit();
    }
    if (runs.len > 1) harness.printSummary("nbody", "us_per_step", settings.backends, medians);
}
