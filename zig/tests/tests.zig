//! The binding's tests (`zig build test`): every verb, every refusal as its Zig error, nested and concurrent
//! dispatch, the split API's token, `fork()`, counts at the edges of 8-bit indices through the C API's `size_t`
//! ones, domain memory and the arena allocator over it. Pools have more threads than this machine may have
//! cores: every wait is the pool's own join, never a sleep, and polls are bounded by a deadline.
const std = @import("std");
const fu = @import("forkunion");
const testing = std.testing;
const Atomic = std.atomic.Atomic;

fn topology() !fu.Topology {
    return fu.Topology.init();
}

fn spawned(top: fu.Topology, threads: usize, exclusivity: fu.Exclusivity) !fu.Pool {
    var pool = try fu.Pool.init("zigtest", fu.capability.all);
    errdefer pool.deinit();
    try pool.spawn(top, threads, exclusivity);
    return pool;
}

/// The static split of the C API's contract: thread t of T starts at q*t + min(t, r) and runs q + (t < r).
fn expectedBlock(n: usize, threads: usize, thread: usize) struct { first: usize, count: usize } {
    const q = n / threads;
    const r = n % threads;
    return .{ .first = q * thread + @min(thread, r), .count = q + @intFromBool(thread < r) };
}

/// Per-task hit counters and the thread that ran each task.
const Tally = struct {
    hits: []Atomic(u32),
    threads_of: []Atomic(usize),
    threads_count: usize,
    strays: Atomic(u32) = Atomic(u32).init(0),

    fn init(allocator: std.mem.Allocator, n: usize, threads_count: usize) !Tally {
        const hits = try allocator.alloc(Atomic(u32), n);
        for (hits) |*hit| hit.* = Atomic(u32).init(0);
        const threads_of = try allocator.alloc(Atomic(usize), n);
        for (threads_of) |*slot| slot.* = Atomic(usize).init(std.math.maxInt(usize));
        return .{ .hits = hits, .threads_of = threads_of, .threads_count = threads_count };
    }
    fn deinit(self: *Tally, allocator: std.mem.Allocator) void {
        allocator.free(self.hits);
        allocator.free(self.threads_of);
    }
    fn task(self: *Tally, prong: fu.Prong) void {
        if (prong.task >= self.hits.len or prong.thread >= self.threads_count) {
            _ = self.strays.fetchAdd(1, .Monotonic);
            return;
        }
        _ = self.hits[prong.task].fetchAdd(1, .Monotonic);
        self.threads_of[prong.task].store(prong.thread, .Monotonic);
    }
    fn expectEveryTaskOnce(self: *Tally) !void {
        try testing.expectEqual(@as(u32, 0), self.strays.load(.Monotonic));
        for (self.hits) |*hit| try testing.expectEqual(@as(u32, 1), hit.load(.Monotonic));
    }
    fn expectStaticSplit(self: *Tally) !void {
        for (0..self.threads_count) |thread| {
            const block = expectedBlock(self.hits.len, self.threads_count, thread);
            for (block.first..block.first + block.count) |i|
                try testing.expectEqual(thread, self.threads_of[i].load(.Monotonic));
        }
    }
};

// ---- Statuses, capabilities, version ----

test "every C status maps to its own error, success to none" {
    try fu.check(fu.c.fu_success_k);
    const pairs = .{
        .{ fu.c.fu_bad_alloc_k, error.OutOfMemory },            .{ fu.c.fu_invalid_argument_k, error.InvalidArgument },
        .{ fu.c.fu_already_spawned_k, error.AlreadySpawned },   .{ fu.c.fu_not_spawned_k, error.NotSpawned },
        .{ fu.c.fu_thread_refused_k, error.ThreadRefused },     .{ fu.c.fu_contended_k, error.Contended },
        .{ fu.c.fu_unsupported_k, error.Unsupported },          .{ fu.c.fu_placement_refused_k, error.PlacementRefused },
        .{ fu.c.fu_stale_generation_k, error.StaleGeneration }, .{ fu.c.fu_forked_k, error.Forked },
    };
    inline for (pairs) |pair| try testing.expectError(pair[1], fu.check(pair[0]));
    try testing.expectError(error.Unknown, fu.check(-99));
    try testing.expectError(error.Unknown, fu.check(1));
}

test "capability bits equal the C header's macros; names parse back" {
    const pairs = .{
        .{ fu.capability.none, fu.c.fu_capabilities_none_k },                       .{ fu.capability.all, fu.c.fu_capabilities_all_k },
        .{ fu.capability.x86_waitpkg, fu.c.fu_capability_x86_waitpkg_k },           .{ fu.capability.x86_cmpccxadd, fu.c.fu_capability_x86_cmpccxadd_k },
        .{ fu.capability.x86_raoint, fu.c.fu_capability_x86_raoint_k },             .{ fu.capability.x86_cldemote, fu.c.fu_capability_x86_cldemote_k },
        .{ fu.capability.arm64_lse, fu.c.fu_capability_arm64_lse_k },               .{ fu.capability.arm64_wfxt, fu.c.fu_capability_arm64_wfxt_k },
        .{ fu.capability.arm64_evtstrm, fu.c.fu_capability_arm64_evtstrm_k },       .{ fu.capability.riscv_amo, fu.c.fu_capability_riscv_amo_k },
        .{ fu.capability.riscv_zawrs, fu.c.fu_capability_riscv_zawrs_k },           .{ fu.capability.riscv_zacas, fu.c.fu_capability_riscv_zacas_k },
        .{ fu.capability.riscv_zicbom, fu.c.fu_capability_riscv_zicbom_k },         .{ fu.capability.os_threads, fu.c.fu_capability_os_threads_k },
        .{ fu.capability.topology, fu.c.fu_capability_topology_k },                 .{ fu.capability.thread_pinning, fu.c.fu_capability_thread_pinning_k },
        .{ fu.capability.memory_placement, fu.c.fu_capability_memory_placement_k }, .{ fu.capability.huge_pages, fu.c.fu_capability_huge_pages_k },
        .{ fu.capability.waits, fu.c.fu_capabilities_waits_k },
    };
    inline for (pairs) |pair| try testing.expectEqual(@as(u64, pair[1]), pair[0]);

    var buffer: [512]u8 = undefined;
    const mask = fu.comptimeCapabilities() & fu.runtimeCapabilities();
    try testing.expect(mask & fu.capability.os_threads != 0);
    const name = try fu.nameCapabilities(mask, &buffer);
    buffer[name.len] = 0;
    try testing.expectEqual(mask, try fu.parseCapabilities(buffer[0..name.len :0]));
    try testing.expectEqualStrings("none", try fu.nameCapabilities(0, &buffer));
    var tiny: [4]u8 = undefined;
    try testing.expectError(error.OutOfMemory, fu.nameCapabilities(fu.capability.os_threads, &tiny));
    try testing.expectError(error.InvalidArgument, fu.parseCapabilities("os_threads,no_such_thing"));
    try testing.expectEqual(@as(u64, 0), try fu.parseCapabilities(""));
    try testing.expectEqual(@as(usize, @intCast(fu.c.fu_version_major())), fu.version().major);
}

test "-Dportable compiles every instruction family out of the C library, and only it does" {
    const instructions: u64 = 0xFFFF_FFFF; // the low half: the CPU instruction families
    if (fu.portable) {
        try testing.expectEqual(@as(u64, 0), fu.comptimeCapabilities() & instructions);
    } else if (@import("builtin").cpu.arch == .x86_64) {
        try testing.expect(fu.comptimeCapabilities() & fu.capability.x86_waitpkg != 0);
    }
}

// ---- Topology ----

test "topology: the cores of the compute domains add up, queries out of range answer 0" {
    var top = try topology();
    defer top.deinit();
    const domains = top.computeDomainsCount();
    try testing.expect(domains >= 1);
    try testing.expect(top.memoryDomainsCount() >= 1);
    try testing.expectEqual(top.allowedCoresCount(), top.logicalCoresCount());
    try testing.expect(top.onlineCoresCount() >= top.allowedCoresCount());
    var sum: usize = 0;
    var cores: [4096]c_uint = undefined;
    for (0..domains) |domain| {
        const count = top.logicalCoresCountIn(domain);
        const listed = top.coresIn(domain, &cores);
        try testing.expectEqual(count, listed.len);
        try testing.expectEqual(count, top.coresCountIn(domain));
        for (1..listed.len) |i| try testing.expect(listed[i - 1] < listed[i]);
        try testing.expect(top.localMemoryOf(domain) < top.memoryDomainsCount());
        sum += count;
    }
    try testing.expectEqual(top.logicalCoresCount(), sum);
    try testing.expectEqual(@as(usize, 0), top.logicalCoresCountIn(domains));
    try testing.expectEqual(@as(usize, 0), top.coresIn(domains, &cores).len);
    try testing.expectEqual(@as(u64, 0), top.volumeRamIn(top.memoryDomainsCount()));
    try testing.expectEqual(@as(usize, 0), top.declaredDistance(top.memoryDomainsCount(), 0));
    if (top.harvested()) try testing.expect(top.volumeRam() > 0);
    try testing.expectError(error.InvalidArgument, fu.Topology.initFromSysfs("/nonexistent/forkunion"));
}

// ---- The verbs ----

test "forThreads calls every thread once with its domain, for both exclusivities" {
    var top = try topology();
    defer top.deinit();
    inline for (.{ fu.Exclusivity.inclusive, fu.Exclusivity.exclusive }) |exclusivity| {
        var pool = try spawned(top, 5, exclusivity);
        defer pool.deinit();
        try testing.expectEqual(@as(usize, 5), pool.threadsCount());
        try testing.expectEqual(exclusivity, pool.exclusivity());
        const Seen = struct {
            calls: [5]Atomic(u32) = [_]Atomic(u32){Atomic(u32).init(0)} ** 5,
            domains: [5]usize = [_]usize{0} ** 5,
            fn thread(self: *@This(), index: usize, domain: usize) void {
                _ = self.calls[index].fetchAdd(1, .Monotonic);
                self.domains[index] = domain;
            }
        };
        var seen = Seen{};
        try pool.forThreads(&seen, Seen.thread);
        var per_domain = [_]usize{0} ** 64;
        for (&seen.calls, seen.domains) |*calls, domain| {
            try testing.expectEqual(@as(u32, 1), calls.load(.Monotonic));
            per_domain[domain] += 1;
        }
        for (0..top.computeDomainsCount()) |domain| try testing.expectEqual(pool.threadsCountIn(domain), per_domain[domain]);
    }
}

test "forN runs every task once in the documented static split; forNDynamic every task once" {
    var top = try topology();
    defer top.deinit();
    var pool = try spawned(top, 3, .inclusive);
    defer pool.deinit();
    for ([_]usize{ 0, 1, 2, 3, 4, 7, 100, 1000 }) |n| {
        var tally = try Tally.init(testing.allocator, n, 3);
        defer tally.deinit(testing.allocator);
        try pool.forN(n, &tally, Tally.task);
        try tally.expectEveryTaskOnce();
        try tally.expectStaticSplit();
        var dynamic = try Tally.init(testing.allocator, n, 3);
        defer dynamic.deinit(testing.allocator);
        try pool.forNDynamic(n, &dynamic, Tally.task);
        try dynamic.expectEveryTaskOnce();
    }
}

/// What `forSlices` handed to each thread (one call per thread at most).
const SliceLog = struct {
    firsts: [300]usize = [_]usize{0} ** 300,
    counts: [300]usize = [_]usize{0} ** 300,
    calls: [300]Atomic(u32) = [_]Atomic(u32){Atomic(u32).init(0)} ** 300,

    fn slice(self: *SliceLog, s: fu.Slice) void {
        _ = self.calls[s.thread].fetchAdd(1, .Monotonic);
        self.firsts[s.thread] = s.first;
        self.counts[s.thread] = s.count;
    }
    /// Each thread with a non-empty block was called once with exactly it; the others not at all.
    fn expectSplit(self: *SliceLog, n: usize, threads: usize) !void {
        for (0..threads) |thread| {
            const block = expectedBlock(n, threads, thread);
            try testing.expectEqual(@as(u32, @intFromBool(block.count != 0)), self.calls[thread].load(.Monotonic));
            if (block.count == 0) continue;
            try testing.expectEqual(block.first, self.firsts[thread]);
            try testing.expectEqual(block.count, self.counts[thread]);
        }
    }
};

test "forSlices hands each thread its static block; threads with nothing are not called" {
    var top = try topology();
    defer top.deinit();
    var pool = try spawned(top, 4, .exclusive);
    defer pool.deinit();
    for ([_]usize{ 0, 1, 3, 4, 5, 1001 }) |n| {
        var log = SliceLog{};
        try pool.forSlices(n, &log, SliceLog.slice);
        try log.expectSplit(n, 4);
    }
}

test "8-bit edges: 255, 256, 257 tasks and threads, and slices of a maxInt(usize) range" {
    var top = try topology();
    defer top.deinit();
    for ([_]usize{ 255, 256, 257 }) |threads| {
        var pool = try spawned(top, threads, .inclusive);
        defer pool.deinit();
        try testing.expectEqual(threads, pool.threadsCount());
        for ([_]usize{ 254, 255, 256, 257, 511, 512, 513 }) |n| {
            var tally = try Tally.init(testing.allocator, n, threads);
            defer tally.deinit(testing.allocator);
            try pool.forN(n, &tally, Tally.task);
            try tally.expectEveryTaskOnce();
            try tally.expectStaticSplit();
            var dynamic = try Tally.init(testing.allocator, n, threads);
            defer dynamic.deinit(testing.allocator);
            try pool.forNDynamic(n, &dynamic, Tally.task);
            try dynamic.expectEveryTaskOnce();
        }
        const Count = struct {
            calls: [300]Atomic(u32) = [_]Atomic(u32){Atomic(u32).init(0)} ** 300,
            fn thread(self: *@This(), index: usize, _: usize) void {
                _ = self.calls[index].fetchAdd(1, .Monotonic);
            }
        };
        var count = Count{};
        try pool.forThreads(&count, Count.thread);
        for (&count.calls, 0..) |*calls, index| try testing.expectEqual(@as(u32, @intFromBool(index < threads)), calls.load(.Monotonic));
        // Ranges whose split would overflow a careless q*t + min(t, r): the callbacks only record their block.
        for ([_]usize{ std.math.maxInt(usize), std.math.maxInt(usize) - 1, std.math.maxInt(usize) / 2 + 1, 255, 256 }) |n| {
            var log = SliceLog{};
            try pool.forSlices(n, &log, SliceLog.slice);
            try log.expectSplit(n, threads);
            var covered: usize = 0;
            for (0..threads) |thread| {
                if (log.counts[thread] == 0) continue;
                try testing.expectEqual(covered, log.firsts[thread]);
                covered += log.counts[thread];
            }
            try testing.expectEqual(n, covered);
        }
    }
}

test "contexts: a pointer, a struct by value, and none" {
    var top = try topology();
    defer top.deinit();
    var pool = try spawned(top, 2, .inclusive);
    defer pool.deinit();
    var hits = [_]Atomic(u32){Atomic(u32).init(0)} ** 64;
    const ByValue = struct {
        hits: *[64]Atomic(u32),
        add: u32,
        fn task(self: @This(), prong: fu.Prong) void {
            _ = self.hits[prong.task].fetchAdd(self.add, .Monotonic);
        }
    };
    try pool.forN(64, ByValue{ .hits = &hits, .add = 3 }, ByValue.task);
    for (&hits) |*hit| try testing.expectEqual(@as(u32, 3), hit.load(.Monotonic));
    const Global = struct {
        var total = Atomic(usize).init(0);
        fn task(prong: fu.Prong) void {
            _ = total.fetchAdd(prong.task, .Monotonic);
        }
    };
    try pool.forNDynamic(100, {}, Global.task);
    try testing.expectEqual(@as(usize, 4950), Global.total.load(.Monotonic));
}

// ---- Refusals ----

test "refusals: unspawned, zero threads, twice spawned, domains out of range, bad policies" {
    var top = try topology();
    defer top.deinit();
    var pool = try fu.Pool.init(null, fu.capability.all);
    defer pool.deinit();
    var tally = try Tally.init(testing.allocator, 10, 1);
    defer tally.deinit(testing.allocator);
    var log = SliceLog{};
    const Nothing = struct {
        fn thread(_: usize, _: usize) void {}
    };
    try testing.expectError(error.NotSpawned, pool.forN(10, &tally, Tally.task));
    try testing.expectError(error.NotSpawned, pool.forNDynamic(10, &tally, Tally.task));
    try testing.expectError(error.NotSpawned, pool.forSlices(10, &log, SliceLog.slice));
    try testing.expectError(error.NotSpawned, pool.forThreads({}, Nothing.thread));
    try testing.expectError(error.NotSpawned, pool.terminate());
    try testing.expectEqual(@as(u32, 0), tally.hits[0].load(.Monotonic));
    // The fallbacks run on the caller, as a team of one.
    try pool.forNOrRunOnCaller(10, &tally, Tally.task);
    try tally.expectEveryTaskOnce();
    try pool.forSlicesOrRunOnCaller(10, &log, SliceLog.slice);
    try log.expectSplit(10, 1);

    try testing.expectError(error.InvalidArgument, pool.spawn(top, 0, .inclusive));
    try testing.expectError(error.InvalidArgument, pool.spawnOn(top, top.computeDomainsCount(), 2, .inclusive));
    try testing.expectError(error.InvalidArgument, pool.setIdlePolicy(.{ .sleep = @as(u64, 1) << 61 }));
    try testing.expectError(error.InvalidArgument, pool.setStackSize(1));
    try pool.spawnOn(top, 0, 2, .inclusive);
    try testing.expectEqual(@as(usize, 1), pool.computeDomainsCount());
    try testing.expectError(error.AlreadySpawned, pool.spawn(top, 2, .inclusive));
    try testing.expectEqual(@as(usize, 2), pool.threadsCount());
    try pool.terminate();
    try testing.expectEqual(@as(usize, 0), pool.threadsCount());

    var single = try fu.Pool.init("single", fu.capability.all & ~fu.capability.os_threads);
    defer single.deinit();
    try testing.expectError(error.Unsupported, single.spawn(top, 2, .inclusive));
    try testing.expectError(error.Unsupported, single.spawn(top, 1, .exclusive));
    try single.spawn(top, 1, .inclusive);
    var one = try Tally.init(testing.allocator, 5, 1);
    defer one.deinit(testing.allocator);
    try single.forN(5, &one, Tally.task);
    try one.expectEveryTaskOnce();
}

/// A callback that dispatches on its own pool: the blocking verb is refused, the fallback runs every task.
const Nested = struct {
    pool: fu.Pool,
    refusals: Atomic(u32) = Atomic(u32).init(0),
    /// Nested blocking dispatches that ran, from the thread that records its block here.
    accepted: [3]Atomic(u32) = [_]Atomic(u32){Atomic(u32).init(0)} ** 3,
    other: Atomic(u32) = Atomic(u32).init(0),
    inner: [8]Atomic(u32) = [_]Atomic(u32){Atomic(u32).init(0)} ** 8,
    inner_off_thread_zero: Atomic(u32) = Atomic(u32).init(0),

    fn outer(self: *Nested, prong: fu.Prong) void {
        if (self.pool.forN(8, self, Nested.innerTask)) |_| {
            _ = self.accepted[prong.thread].fetchAdd(1, .Monotonic);
        } else |err| {
            if (err == error.Contended) _ = self.refusals.fetchAdd(1, .Monotonic) else _ = self.other.fetchAdd(1, .Monotonic);
        }
        self.pool.forNOrRunOnCaller(8, self, Nested.innerTask) catch {
            _ = self.other.fetchAdd(1, .Monotonic);
        };
    }
    fn innerTask(self: *Nested, prong: fu.Prong) void {
        _ = self.inner[prong.task].fetchAdd(1, .Monotonic);
        if (prong.thread != 0 or prong.compute_domain != 0) _ = self.inner_off_thread_zero.fetchAdd(1, .Monotonic);
    }
};

test "nested dispatch is refused as contended; the fallback runs it on the calling thread" {
    var top = try topology();
    defer top.deinit();
    inline for (.{ fu.Exclusivity.inclusive, fu.Exclusivity.exclusive }) |exclusivity| {
        var pool = try spawned(top, 3, exclusivity);
        defer pool.deinit();
        var nested = Nested{ .pool = pool };
        try pool.forN(6, &nested, Nested.outer);
        try testing.expectEqual(@as(u32, 0), nested.other.load(.Monotonic));
        // The C API's one exception: thread 0 of a caller-exclusive pool on one compute domain dispatches
        // blocking forms from inside its own slice (its block is tasks 0 and 1). Every other nested one is refused.
        const exception = exclusivity == .exclusive and pool.computeDomainsCount() == 1;
        const accepted: u32 = if (exception) 2 else 0;
        try testing.expectEqual(accepted, nested.accepted[0].load(.Monotonic));
        try testing.expectEqual(@as(u32, 0), nested.accepted[1].load(.Monotonic) + nested.accepted[2].load(.Monotonic));
        try testing.expectEqual(6 - accepted, nested.refusals.load(.Monotonic));
        for (&nested.inner) |*hit| try testing.expectEqual(6 + accepted, hit.load(.Monotonic));
        if (exclusivity == .inclusive) try testing.expectEqual(@as(u32, 0), nested.inner_off_thread_zero.load(.Monotonic));
    }
}

/// A dispatch that holds the pool until another thread has tried its own: no sleeps, only flags.
const Holder = struct {
    started: Atomic(bool) = Atomic(bool).init(false),
    release: Atomic(bool) = Atomic(bool).init(false),
    fn task(self: *Holder, prong: fu.Prong) void {
        if (prong.task != 0) return;
        self.started.store(true, .Release);
        while (!self.release.load(.Acquire)) std.atomic.spinLoopHint();
    }
};

const Contender = struct {
    fn run(pool: fu.Pool, holder: *Holder, refused: *?fu.Error, fallback: *Tally) void {
        while (!holder.started.load(.Acquire)) std.atomic.spinLoopHint();
        pool.forN(40, fallback, Tally.task) catch |err| {
            refused.* = err;
        };
        pool.forNOrRunOnCaller(40, fallback, Tally.task) catch {};
        holder.release.store(true, .Release);
    }
};

test "a concurrent dispatch from another thread is refused at once; any thread may dispatch in turn" {
    var top = try topology();
    defer top.deinit();
    var pool = try spawned(top, 3, .inclusive);
    defer pool.deinit();
    var holder = Holder{};
    var refused: ?fu.Error = null;
    var fallback = try Tally.init(testing.allocator, 40, 3);
    defer fallback.deinit(testing.allocator);
    const contender = try std.Thread.spawn(.{}, Contender.run, .{ pool, &holder, &refused, &fallback });
    try pool.forN(6, &holder, Holder.task); // returns only after the contender released it
    contender.join();
    try testing.expectEqual(@as(?fu.Error, error.Contended), refused);
    try fallback.expectEveryTaskOnce();
    for (fallback.threads_of) |*thread| try testing.expectEqual(@as(usize, 0), thread.load(.Monotonic));

    // Once free, another thread's dispatch runs on the pool.
    const Other = struct {
        fn run(p: fu.Pool, tally: *Tally, result: *?fu.Error) void {
            p.forN(40, tally, Tally.task) catch |err| {
                result.* = err;
            };
        }
    };
    var tally = try Tally.init(testing.allocator, 40, 3);
    defer tally.deinit(testing.allocator);
    var result: ?fu.Error = null;
    const other = try std.Thread.spawn(.{}, Other.run, .{ pool, &tally, &result });
    other.join();
    try testing.expectEqual(@as(?fu.Error, null), result);
    try tally.expectEveryTaskOnce();
    try tally.expectStaticSplit();
}

// ---- The split API ----

/// Bounded poll: true once `isComplete`, false after ten seconds (a hung pool fails instead of hanging CI).
fn eventuallyComplete(pool: fu.Pool, generation: fu.Generation) bool {
    var timer = std.time.Timer.start() catch return false;
    while (timer.read() < 10 * std.time.ns_per_s) {
        if (pool.isComplete(generation)) return true;
        std.Thread.yield() catch {};
    }
    return false;
}

const Broadcast = struct {
    calls: [4]Atomic(u32) = [_]Atomic(u32){Atomic(u32).init(0)} ** 4,
    fn thread(self: *Broadcast, index: usize, _: usize) void {
        _ = self.calls[index].fetchAdd(1, .Monotonic);
    }
    fn expectOnce(self: *Broadcast) !void {
        for (&self.calls) |*calls| try testing.expectEqual(@as(u32, 1), calls.load(.Monotonic));
    }
};

test "split dispatch: tokens, completion, refusal of others while pending, stale joins" {
    var top = try topology();
    defer top.deinit();
    {
        var pool = try spawned(top, 4, .exclusive);
        defer pool.deinit();
        var broadcast = Broadcast{};
        const generation = try pool.unsafeForThreads(&broadcast, Broadcast.thread);
        try testing.expect(@intFromEnum(generation) % 2 == 1);
        try testing.expect(eventuallyComplete(pool, generation));
        try broadcast.expectOnce();
        try pool.unsafeJoin(generation);
        try testing.expectError(error.StaleGeneration, pool.unsafeJoin(generation));
        try testing.expect(pool.isComplete(generation));
        try testing.expectError(error.InvalidArgument, pool.unsafeJoin(@enumFromInt(0)));
        try testing.expectError(error.InvalidArgument, pool.unsafeJoin(@enumFromInt(2)));
    }
    {
        // Inclusive: thread 0's slice runs inside the join, so nothing completes before it and every blocking
        // verb is refused meanwhile, while the fallbacks run on this thread.
        var pool = try spawned(top, 4, .inclusive);
        defer pool.deinit();
        var broadcast = Broadcast{};
        const generation = try pool.unsafeForThreads(&broadcast, Broadcast.thread);
        try testing.expect(!pool.isComplete(generation));
        var tally = try Tally.init(testing.allocator, 50, 4);
        defer tally.deinit(testing.allocator);
        try testing.expectError(error.Contended, pool.forN(50, &tally, Tally.task));
        try testing.expectError(error.Contended, pool.unsafeForThreads(&broadcast, Broadcast.thread));
        try pool.forNDynamicOrRunOnCaller(50, &tally, Tally.task);
        try tally.expectEveryTaskOnce();
        for (tally.threads_of) |*thread| try testing.expectEqual(@as(usize, 0), thread.load(.Monotonic));
        // Another thread cannot join an inclusive dispatch: only the dispatching one runs slice 0.
        const Joiner = struct {
            fn join(p: fu.Pool, g: fu.Generation, result: *?fu.Error) void {
                p.unsafeJoin(g) catch |err| {
                    result.* = err;
                };
            }
        };
        var result: ?fu.Error = null;
        const joiner = try std.Thread.spawn(.{}, Joiner.join, .{ pool, generation, &result });
        joiner.join();
        try testing.expectEqual(@as(?fu.Error, error.InvalidArgument), result);
        try pool.unsafeJoin(generation);
        try testing.expect(pool.isComplete(generation));
        try broadcast.expectOnce();
        const next = try pool.unsafeForThreads(&broadcast, Broadcast.thread);
        try testing.expect(@intFromEnum(next) > @intFromEnum(generation));
        try pool.unsafeJoin(next);
    }
}

test "terminate completes a pending inclusive split dispatch, running the caller's slice" {
    var top = try topology();
    defer top.deinit();
    var pool = try spawned(top, 4, .inclusive);
    defer pool.deinit();
    var broadcast = Broadcast{};
    _ = try pool.unsafeForThreads(&broadcast, Broadcast.thread);
    try pool.terminate();
    try broadcast.expectOnce();
}

// ---- Idle policy and stack size ----

test "idle policy round trips every mode; stack size is kept" {
    var top = try topology();
    defer top.deinit();
    var pool = try spawned(top, 3, .inclusive);
    defer pool.deinit();
    try testing.expectEqual(fu.IdlePolicy.default, try pool.idlePolicy());
    const policies = [_]fu.IdlePolicy{ .spin, .{ .adaptive = 50 }, .nap, .{ .sleep = 0 }, .{ .sleep = 200 }, fu.IdlePolicy.default };
    for (policies) |policy| {
        try pool.setIdlePolicy(policy);
        // A pool whose capabilities have no monitor wait naps on the pause hint: it reads back as spinning.
        const napless = policy == .nap and pool.capabilities() & fu.capability.waits == 0;
        try testing.expectEqual(if (napless) fu.IdlePolicy.spin else policy, try pool.idlePolicy());
        var tally = try Tally.init(testing.allocator, 33, 3);
        defer tally.deinit(testing.allocator);
        try pool.forNDynamic(33, &tally, Tally.task);
        try tally.expectEveryTaskOnce();
    }
    try pool.terminate();
    try pool.setStackSize(1 << 20);
    try testing.expectEqual(@as(usize, 1 << 20), pool.stackSize());
    try pool.spawn(top, 2, .exclusive);
    var tally = try Tally.init(testing.allocator, 9, 2);
    defer tally.deinit(testing.allocator);
    try pool.forN(9, &tally, Tally.task);
    try tally.expectEveryTaskOnce();
}

// ---- fork() ----

test "fork: the child's inherited pool refuses as forked, runs on the caller, respawns; the parent's works" {
    if (@import("builtin").os.tag != .linux) return error.SkipZigTest;
    var top = try topology();
    defer top.deinit();
    var pool = try spawned(top, 3, .inclusive);
    defer pool.deinit();
    const pid = try std.os.fork();
    if (pid == 0) {
        // The child: no test-runner output, no exit handlers; the status carries the first failed step.
        const step = childSteps(top, pool) catch 100;
        std.os.linux.exit_group(step);
    }
    const waited = std.os.waitpid(pid, 0);
    try testing.expect(std.os.W.IFEXITED(waited.status));
    try testing.expectEqual(@as(u32, 0), std.os.W.EXITSTATUS(waited.status));
    var tally = try Tally.init(testing.allocator, 40, 3);
    defer tally.deinit(testing.allocator);
    try pool.forN(40, &tally, Tally.task);
    try tally.expectEveryTaskOnce();
}

/// 0 if every step held, else the number of the first that did not.
fn childSteps(top: fu.Topology, inherited: fu.Pool) !i32 {
    if (inherited.threadsCount() != 0) return 1;
    var tally = try Tally.init(std.heap.c_allocator, 30, 3);
    if (inherited.forN(30, &tally, Tally.task)) |_| return 2 else |err| if (err != error.Forked) return 3;
    if (inherited.forNDynamic(30, &tally, Tally.task)) |_| return 4 else |err| if (err != error.Forked) return 5;
    var broadcast = Broadcast{};
    if (inherited.unsafeForThreads(&broadcast, Broadcast.thread)) |_| return 6 else |err| if (err != error.Forked) return 7;
    if (tally.hits[0].load(.Monotonic) != 0) return 8;
    try inherited.forNOrRunOnCaller(30, &tally, Tally.task);
    tally.expectEveryTaskOnce() catch return 9;
    try inherited.spawn(top, 3, .exclusive);
    var again = try Tally.init(std.heap.c_allocator, 30, 3);
    try inherited.forNDynamic(30, &again, Tally.task);
    again.expectEveryTaskOnce() catch return 10;
    try inherited.terminate();
    return 0;
}

test "fabric: zeros before a harvest; harvests refused by an unspawned pool or one that may not pin" {
    var top = try topology();
    defer top.deinit();
    var fabric = try fu.Fabric.init();
    defer fabric.deinit();
    try testing.expect(!fabric.harvested());
    try testing.expectEqual(@as(usize, 0), fabric.memoryLevelsCount());
    try testing.expectEqual(@as(usize, 0), fabric.memoryDistance(0, 0));
    try testing.expectEqual(@as(f64, 0), fabric.memoryLatencyNs(0, 0));
    try testing.expectEqual(@as(f64, 0), fabric.memoryBandwidth(0, 0));
    var unspawned = try fu.Pool.init(null, fu.capability.all);
    defer unspawned.deinit();
    try testing.expectError(error.NotSpawned, fabric.harvest(top, unspawned, 1 << 20));
    var unpinned = try fu.Pool.init(null, fu.capability.all & ~fu.capability.thread_pinning);
    defer unpinned.deinit();
    try unpinned.spawn(top, 2, .inclusive);
    try testing.expectError(error.Unsupported, fabric.harvest(top, unpinned, 1 << 20));
    try testing.expect(!fabric.harvested());
}

// ---- Memory ----

test "domain memory: zeroed, page-rounded, slices per domain, refusals" {
    var top = try topology();
    defer top.deinit();
    var allocation = try fu.Allocation.initOn(top, 0, 10000, placeable());
    defer allocation.deinit();
    const bytes = allocation.bytes();
    try testing.expect(bytes.len >= 10000 and bytes.len % std.mem.page_size == 0);
    for (bytes) |byte| try testing.expectEqual(@as(u8, 0), byte);
    @memset(bytes, 0xAB);
    try testing.expectEqual(@as(usize, 1), allocation.slicesCount());

    var symmetric = try fu.Allocation.initSymmetric(top, 5000, placeable());
    defer symmetric.deinit();
    try testing.expectEqual(top.memoryDomainsCount(), symmetric.slicesCount());
    for (0..symmetric.slicesCount()) |domain| try testing.expect(symmetric.slice(domain).len >= 5000);

    var unbound = try fu.Allocation.initOn(top, 0, 100, .{ .allowed = fu.capability.none });
    defer unbound.deinit();
    try testing.expect(!unbound.placed());
    var empty = try fu.Allocation.initOn(top, 0, 0, placeable());
    defer empty.deinit();
    try testing.expectEqual(@as(usize, 0), empty.bytes().len);

    try testing.expectError(error.InvalidArgument, fu.Allocation.initOn(top, top.memoryDomainsCount(), 100, .{}));
    try testing.expectError(error.InvalidArgument, fu.Allocation.initOn(top, 0, 100, .{ .huge_page_bytes = 3 << 20 }));
    try testing.expectError(error.OutOfMemory, fu.Allocation.initOn(top, 0, std.math.maxInt(usize), .{}));
}

/// Options that every build accepts: without placement where this machine cannot place memory, which
/// `-Dplace-memory-on-domain` would refuse.
fn placeable() fu.AllocationOptions {
    const can_place = fu.runtimeCapabilities() & fu.comptimeCapabilities() & fu.capability.memory_placement != 0;
    return .{ .allowed = if (can_place) fu.capability.all else fu.capability.none };
}

test "place-memory-on-domain: memory is placed, or refused as unsupported, unless placement is opted out of" {
    var top = try topology();
    defer top.deinit();
    const can_place = fu.runtimeCapabilities() & fu.comptimeCapabilities() & fu.capability.memory_placement != 0;
    if (fu.Allocation.initOn(top, 0, 4096, .{})) |result| {
        var allocation = result;
        defer allocation.deinit();
        if (fu.place_memory_on_domain) try testing.expect(allocation.placed());
        if (can_place) try testing.expect(allocation.placed());
    } else |err| {
        try testing.expect(fu.place_memory_on_domain and !can_place and err == error.Unsupported);
    }
    var unbound = try fu.Allocation.initOn(top, 0, 4096, .{ .allowed = fu.capability.none });
    defer unbound.deinit();
    try testing.expect(!unbound.placed());
}

test "DomainArena is a std.mem.Allocator: alignment, growth in place, reuse of the last block, exhaustion" {
    var top = try topology();
    defer top.deinit();
    var arena = try fu.DomainArena.init(top, 0, 1 << 16, placeable());
    defer arena.deinit();
    const allocator = arena.allocator();
    try testing.expect(arena.capacity() >= 1 << 16);

    const byte = try allocator.alloc(u8, 1);
    const wide = try allocator.alignedAlloc(u64, 64, 10);
    try testing.expect(@intFromPtr(wide.ptr) % 64 == 0);
    try testing.expect(@intFromPtr(wide.ptr) >= @intFromPtr(byte.ptr) + 1);
    try testing.expect(arena.owns(std.mem.sliceAsBytes(wide)) and arena.owns(byte));
    // The most recent block grows in place and its memory is reused once freed.
    try testing.expect(allocator.resize(wide, 100));
    const grown = wide.ptr[0..100];
    allocator.free(grown);
    const again = try allocator.alignedAlloc(u64, 64, 10);
    try testing.expectEqual(wide.ptr, again.ptr);

    // An ArrayList grows inside it, then the arena runs out with OutOfMemory, not a crash.
    var list = std.ArrayList(u32).init(allocator);
    try list.appendSlice(&[_]u32{ 1, 2, 3 });
    for (0..1000) |i| try list.append(@intCast(i));
    try testing.expectEqual(@as(usize, 1003), list.items.len);
    try testing.expectError(error.OutOfMemory, allocator.alloc(u8, arena.capacity()));
    try testing.expectError(error.OutOfMemory, allocator.alloc(u8, std.math.maxInt(usize)));
    arena.reset();
    const whole = try allocator.alloc(u8, arena.capacity());
    try testing.expectEqual(arena.capacity(), whole.len);

    // Memory of the arena, written by the pool's threads.
    arena.reset();
    var pool = try spawned(top, 3, .inclusive);
    defer pool.deinit();
    const squares = try allocator.alloc(u64, 1000);
    const Square = struct {
        fn task(out: []u64, prong: fu.Prong) void {
            out[prong.task] = prong.task * prong.task;
        }
    };
    try pool.forN(squares.len, squares, Square.task);
    for (squares, 0..) |square, i| try testing.expectEqual(@as(u64, i * i), square);
}
