//! Connected components by min-label propagation, the fork-join-frequency benchmark: billions of traversed edges
//! per second (GTEPS), one fork-join per round. The graph, the rounds and the reported rounds, components and
//! checksum are those of bench/propagation/propagation.cpp, whose file comment is the specification:
//!
//! - A "necklace" of C R-MAT communities of Vc = 2^scale vertices, R = C * Vc * edge_factor raw edges. Raw edge e
//!   starts at row = col = 0; for bit = scale-1 down to 0, r = draw(64e + bit) mod 100: r < 57 sets nothing, r < 76
//!   the column bit, r < 95 the row bit, else both; with base = floor(e / (Vc * edge_factor)) * Vc, a raw edge with
//!   row != col gives (base+row, base+col) and its reverse. When C > 1, ring bridges: for j in [0, C), hub =
//!   min(Vc, 64), B = 64R, u = j*Vc + draw(B + 2j) mod hub, v = ((j+1) mod C)*Vc + draw(B + 2j + 1) mod hub, giving
//!   (u, v) and (v, u). Sorted and deduplicated into a CSR (u64 offsets, u32 neighbours).
//! - Labels start as v; each round is one `forN` (or `forNDynamic`) over the vertices, next[v] = min(labels[v],
//!   labels[neighbours(v)]), counting changes in per-thread padded counters; a pass stops after the first round
//!   with no change. CHECK mode converges serially first and fails (status 3) on any difference.
//! - FORKUNION_PROPAGATION_CACHE reads and writes the C++ binary's cache files (same name, header and hash), so
//!   either binary reuses the other's graph.
const std = @import("std");
const fu = @import("forkunion");
const harness = @import("harness");

const backends = [_][]const u8{ "forkunion_static_shared", "forkunion_dynamic_shared" };

const Vertex = u32;
const Offset = u64;
const Graph = struct { vertices: usize = 0, offsets: []Offset = &.{}, neighbours: []Vertex = &.{} };
const Edge = struct { from: Vertex, to: Vertex };

const neither_below = 57;
const column_below = 76;
const row_below = 95;

/// One community's sorted, deduplicated adjacency: local degrees and the concatenated neighbour lists.
const Community = struct { degrees: []Offset = &.{}, neighbours: []Vertex = &.{} };

fn buildCommunity(allocator: std.mem.Allocator, draws: harness.Draws, scale: usize, edge_factor: usize, c: usize, bridges: []const Edge) !Community {
    const size = @as(usize, 1) << @intCast(scale);
    const base: Vertex = @intCast(c * size);
    const raw_per_community = @as(u64, size) * edge_factor;
    const first_raw = @as(u64, c) * raw_per_community;
    var scratch = std.ArrayList(Edge).init(allocator);
    defer scratch.deinit();
    var e = first_raw;
    while (e != first_raw + raw_per_community) : (e += 1) {
        var row: Vertex = 0;
        var col: Vertex = 0;
        var bit = scale;
        while (bit > 0) {
            bit -= 1;
            const r = draws.draw(64 * e + bit) % 100;
            const column = (r >= neither_below and r < column_below) or r >= row_below;
            const row_bit = r >= column_below;
            col |= @as(Vertex, @intFromBool(column)) << @intCast(bit);
            row |= @as(Vertex, @intFromBool(row_bit)) << @intCast(bit);
        }
        if (row == col) continue;
        try scratch.append(.{ .from = row, .to = base + col });
        try scratch.append(.{ .from = col, .to = base + row });
    }
    for (bridges) |bridge| {
        if (bridge.from >= base and bridge.from - base < size) try scratch.append(.{ .from = bridge.from - base, .to = bridge.to });
    }
    // Counting sort by local source, then sort and deduplicate each list.
    const starts = try allocator.alloc(Offset, size + 1);
    defer allocator.free(starts);
    @memset(starts, 0);
    for (scratch.items) |edge| starts[edge.from + 1] += 1;
    for (0..size) |v| starts[v + 1] += starts[v];
    const sorted = try allocator.alloc(Vertex, scratch.items.len);
    defer allocator.free(sorted);
    const cursor = try allocator.dupe(Offset, starts[0..size]);
    defer allocator.free(cursor);
    for (scratch.items) |edge| {
        sorted[cursor[edge.from]] = edge.to;
        cursor[edge.from] += 1;
    }
    var community = Community{ .degrees = try allocator.alloc(Offset, size) };
    var neighbours = try std.ArrayList(Vertex).initCapacity(allocator, sorted.len);
    for (0..size) |v| {
        const list = sorted[starts[v]..starts[v + 1]];
        std.sort.pdq(Vertex, list, {}, std.sort.asc(Vertex));
        var unique: usize = 0;
        for (list, 0..) |value, i| {
            if (i != 0 and value == list[unique - 1]) continue;
            list[unique] = value;
            unique += 1;
        }
        community.degrees[v] = unique;
        neighbours.appendSliceAssumeCapacity(list[0..unique]);
    }
    community.neighbours = neighbours.items;
    return community;
}

const Generator = struct {
    allocator: std.mem.Allocator,
    draws: harness.Draws,
    settings: harness.Settings,
    bridges: []const Edge,
    parts: []Community,
    next: std.atomic.Atomic(usize) = std.atomic.Atomic(usize).init(0),
    failed: std.atomic.Atomic(bool) = std.atomic.Atomic(bool).init(false),

    fn work(self: *Generator) void {
        // Relaxed: a ticket dispenser; `join` publishes the parts.
        while (true) {
            const c = self.next.fetchAdd(1, .Monotonic);
            if (c >= self.parts.len) return;
            self.parts[c] = buildCommunity(self.allocator, self.draws, self.settings.propagation_scale, self.settings.propagation_edge_factor, c, self.bridges) catch {
                self.failed.store(true, .Monotonic);
                return;
            };
        }
    }
};

/// The whole necklace, communities built on `workers` threads (before anything is timed).
fn generate(allocator: std.mem.Allocator, settings: harness.Settings, workers: usize) !Graph {
    const draws = harness.Draws.init(settings.seed);
    const scale = settings.propagation_scale;
    const communities = settings.propagation_communities;
    const size = @as(usize, 1) << @intCast(scale);
    const raw_edges = @as(u64, communities) * size * settings.propagation_edge_factor;
    var bridges = std.ArrayList(Edge).init(allocator);
    if (communities > 1) {
        const hub: u64 = @min(size, 64);
        const bridge_base = 64 * raw_edges;
        for (0..communities) |j_| {
            const j: u64 = j_;
            const u: Vertex = @intCast(j * size + draws.draw(bridge_base + 2 * j) % hub);
            const v: Vertex = @intCast(((j + 1) % communities) * size + draws.draw(bridge_base + 2 * j + 1) % hub);
            try bridges.append(.{ .from = u, .to = v });
            try bridges.append(.{ .from = v, .to = u });
        }
    }
    var generator = Generator{ .allocator = std.heap.page_allocator, .draws = draws, .settings = settings, .bridges = bridges.items, .parts = try allocator.alloc(Community, communities) };
    var threads = std.ArrayList(std.Thread).init(allocator);
    for (1..@max(workers, 1)) |_| try threads.append(try std.Thread.spawn(.{}, Generator.work, .{&generator}));
    generator.work();
    for (threads.items) |thread| thread.join();
    if (generator.failed.load(.Monotonic)) return error.OutOfMemory;

    var graph = Graph{ .vertices = communities * size };
    graph.offsets = try allocator.alloc(Offset, graph.vertices + 1);
    var total: Offset = 0;
    var v: usize = 0;
    for (generator.parts) |part| {
        for (part.degrees) |degree| {
            graph.offsets[v] = total;
            v += 1;
            total += degree;
        }
    }
    graph.offsets[v] = total;
    graph.neighbours = try allocator.alloc(Vertex, total);
    var at: usize = 0;
    for (generator.parts) |part| {
        @memcpy(graph.neighbours[at..][0..part.neighbours.len], part.neighbours);
        at += part.neighbours.len;
        std.heap.page_allocator.free(part.degrees);
        std.heap.page_allocator.free(part.neighbours.ptr[0..part.neighbours.len]);
    }
    return graph;
}

// ---- The graph cache: the C++ binary's format ----

/// The header of a cached graph: then `vertices + 1` u64 offsets and `edges` u32 neighbours, in the machine's
/// byte order. Trusted only if every field matches the settings and `hash` matches the arrays.
const CacheHeader = extern struct {
    magic: [8]u8,
    seed: u64,
    scale: u64,
    communities: u64,
    edge_factor: u64,
    vertices: u64,
    edges: u64,
    hash: u64,
};
const cache_magic = "FUCSR001".*;

fn hashGraph(graph: Graph) u64 {
    var hash: u64 = graph.vertices;
    for (graph.offsets) |offset| hash = harness.mix(hash ^ offset);
    var e: usize = 0;
    while (e + 1 < graph.neighbours.len) : (e += 2)
        hash = harness.mix(hash ^ (@as(u64, graph.neighbours[e]) << 32 | graph.neighbours[e + 1]));
    if (graph.neighbours.len % 2 == 1) hash = harness.mix(hash ^ graph.neighbours[graph.neighbours.len - 1]);
    return hash;
}

fn cachePath(allocator: std.mem.Allocator, settings: harness.Settings) ![]u8 {
    return std.fmt.allocPrint(allocator, "{s}/necklace_seed{}_scale{}_communities{}_factor{}.csr", .{ settings.propagation_cache.?, settings.seed, settings.propagation_scale, settings.propagation_communities, settings.propagation_edge_factor });
}

fn expectedHeader(settings: harness.Settings) CacheHeader {
    return .{ .magic = cache_magic, .seed = settings.seed, .scale = settings.propagation_scale, .communities = settings.propagation_communities, .edge_factor = settings.propagation_edge_factor, .vertices = @as(u64, settings.propagation_communities) << @intCast(settings.propagation_scale), .edges = 0, .hash = 0 };
}

fn loadCached(allocator: std.mem.Allocator, settings: harness.Settings) ?Graph {
    const path = cachePath(allocator, settings) catch return null;
    const file = std.fs.cwd().openFile(path, .{}) catch return null;
    defer file.close();
    const reader = file.reader();
    const header = reader.readStruct(CacheHeader) catch return null;
    const expected = expectedHeader(settings);
    if (!std.mem.eql(u8, &header.magic, &expected.magic) or header.seed != expected.seed or header.scale != expected.scale or
        header.communities != expected.communities or header.edge_factor != expected.edge_factor or
        header.vertices != expected.vertices or header.edges > (@as(u64, 1) << 40)) return null;
    var graph = Graph{ .vertices = header.vertices };
    graph.offsets = allocator.alloc(Offset, graph.vertices + 1) catch return null;
    graph.neighbours = allocator.alloc(Vertex, header.edges) catch return null;
    reader.readNoEof(std.mem.sliceAsBytes(graph.offsets)) catch return null;
    reader.readNoEof(std.mem.sliceAsBytes(graph.neighbours)) catch return null;
    if (graph.offsets[graph.vertices] != header.edges or hashGraph(graph) != header.hash) return null;
    return graph;
}

/// Writes the graph next to its final name, then renames it: a concurrent reader sees all of it or none.
fn storeCached(allocator: std.mem.Allocator, settings: harness.Settings, graph: Graph) bool {
    const path = cachePath(allocator, settings) catch return false;
    const temporary = std.fmt.allocPrint(allocator, "{s}.tmp{}", .{ path, std.os.linux.getpid() }) catch return false;
    var header = expectedHeader(settings);
    header.edges = graph.neighbours.len;
    header.hash = hashGraph(graph);
    const written = blk: {
        const file = std.fs.cwd().createFile(temporary, .{ .truncate = true }) catch return false;
        defer file.close();
        file.writeAll(std.mem.asBytes(&header)) catch break :blk false;
        file.writeAll(std.mem.sliceAsBytes(graph.offsets)) catch break :blk false;
        file.writeAll(std.mem.sliceAsBytes(graph.neighbours)) catch break :blk false;
        break :blk true;
    };
    if (written) {
        std.fs.cwd().rename(temporary, path) catch {
            std.fs.cwd().deleteFile(temporary) catch {};
            return false;
        };
        return true;
    }
    std.fs.cwd().deleteFile(temporary) catch {};
    return false;
}

/// One vertex of one round: the smallest label among itself and its neighbours.
inline fn relax(graph: Graph, labels: []const Vertex, v: usize) Vertex {
    var best = labels[v];
    for (graph.neighbours[graph.offsets[v]..graph.offsets[v + 1]]) |neighbour| best = @min(best, labels[neighbour]);
    return best;
}

/// What a converged pass ends with.
const Outcome = struct { rounds: usize = 0, components: usize = 0, checksum: u64 = 0, labels: ?[]Vertex = null };

fn summarize(allocator: std.mem.Allocator, labels: []const Vertex, rounds: usize, keep_labels: bool) !Outcome {
    var outcome = Outcome{ .rounds = rounds };
    for (labels, 0..) |label, v| {
        outcome.components += @intFromBool(label == v);
        outcome.checksum += label;
    }
    if (keep_labels) outcome.labels = try allocator.dupe(Vertex, labels);
    return outcome;
}

/// CHECK mode's reference: the same rounds with plain loops on the calling thread.
fn convergeSerially(allocator: std.mem.Allocator, graph: Graph) !Outcome {
    var labels = try allocator.alloc(Vertex, graph.vertices);
    var next = try allocator.alloc(Vertex, graph.vertices);
    for (labels, 0..) |*label, v| label.* = @intCast(v);
    var rounds: usize = 0;
    var changed = true;
    while (changed) {
        changed = false;
        for (0..graph.vertices) |v| {
            next[v] = relax(graph, labels, v);
            changed = changed or next[v] != labels[v];
        }
        std.mem.swap([]Vertex, &labels, &next);
        rounds += 1;
    }
    return summarize(allocator, labels, rounds, true);
}

const PaddedCount = struct { value: usize align(128) = 0 };

/// The state of one backend's rounds: the kernel reads `labels`, writes `next` and its thread's change counter.
const Rounds = struct {
    allocator: std.mem.Allocator,
    pool: fu.Pool,
    dynamic: bool,
    graph: Graph,
    labels: []Vertex,
    next: []Vertex,
    changes: []PaddedCount,
    census: ?*harness.Census = null,
    keep_labels: bool,
    expected: bool,
    rounds_in_pass: usize = 0,
    passes: usize = 0,
    first: Outcome = .{},

    fn kernel(self: *Rounds, prong: fu.Prong) void {
        if (self.census) |census| census.count();
        const best = relax(self.graph, self.labels, prong.task);
        self.next[prong.task] = best;
        self.changes[prong.thread].value += @intFromBool(best != self.labels[prong.task]);
    }
    pub fn run(self: *Rounds) void {
        const outcome = if (self.dynamic) self.pool.forNDynamic(self.graph.vertices, self, Rounds.kernel) else self.pool.forN(self.graph.vertices, self, Rounds.kernel);
        outcome catch |err| harness.fail(harness.exit_unavailable, "the pool refused a dispatch: {s}", .{@errorName(err)});
        self.finishRound();
    }
    /// CHECK mode keeps the window open until the first pass converged.
    pub fn more(self: *Rounds) bool {
        return self.expected and self.passes == 0;
    }
    fn finishRound(self: *Rounds) void {
        var changed: usize = 0;
        for (self.changes) |*slot| {
            changed += slot.value;
            slot.value = 0;
        }
        std.mem.swap([]Vertex, &self.labels, &self.next);
        self.rounds_in_pass += 1;
        if (changed != 0) return;
        if (self.passes == 0) {
            self.first = summarize(self.allocator, self.labels, self.rounds_in_pass, self.keep_labels) catch
                harness.fail(harness.exit_unavailable, "out of memory", .{});
        } else if (self.rounds_in_pass != self.first.rounds) {
            harness.fail(harness.exit_check_failed, "pass {} converged in {} rounds, the first in {}", .{ self.passes + 1, self.rounds_in_pass, self.first.rounds });
        }
        self.passes += 1;
        self.rounds_in_pass = 0;
        for (self.labels, 0..) |*label, v| label.* = @intCast(v);
    }
};

pub fn main() !void {
    var arena = std.heap.ArenaAllocator.init(std.heap.page_allocator);
    const allocator = arena.allocator();
    if (harness.listRequested(&backends)) return;
    const settings = harness.Settings.read(allocator, &backends);
    harness.printBanner("propagation", settings);

    var timer = try std.time.Timer.start();
    var origin: []const u8 = "generated";
    const graph = if (settings.propagation_cache != null) loadCached(allocator, settings) else null;
    const final = graph orelse blk: {
        const generated = try generate(allocator, settings, harness.allowedCores());
        if (settings.propagation_cache != null)
            origin = if (storeCached(allocator, settings, generated)) "generated and cached" else "generated (caching it failed)";
        break :blk generated;
    };
    if (graph != null) origin = "read from the cache";
    harness.print("# graph: {} communities x 2^{} vertices = {} vertices, edge factor {}, {} edges (CSR, u64 offsets, u32 neighbours), {s} in {d:.2} s; FORKUNION_PROPAGATION_CHECK={}\n", .{ settings.propagation_communities, settings.propagation_scale, final.vertices, settings.propagation_edge_factor, final.neighbours.len, origin, harness.seconds(timer.read()), @intFromBool(settings.propagation_check) });

    var expected: ?Outcome = null;
    if (settings.propagation_check) {
        timer.reset();
        expected = try convergeSerially(allocator, final);
        harness.print("# serial: rounds={} components={} checksum={} in {d:.2} s\n", .{ expected.?.rounds, expected.?.components, expected.?.checksum, harness.seconds(timer.read()) });
    }
    const floor_ns = harness.measureFloorNs();
    harness.print("# floor: ping-pong over two cache lines: {d:.1} ns per round trip\n", .{floor_ns});

    var topology = fu.Topology.init() catch |err| harness.fail(harness.exit_unavailable, "topology: {s}", .{@errorName(err)});
    defer topology.deinit();
    // One backend at a time, each for the whole time limit (the C++ binary runs one backend per process).
    for (settings.backends) |backend| {
        var pool = harness.startPool(topology, backend, settings.threads, settings.idle);
        defer pool.deinit();
        var rounds = Rounds{
            .allocator = allocator,
            .pool = pool,
            .dynamic = std.mem.eql(u8, backend, "forkunion_dynamic_shared"),
            .graph = final,
            .labels = try allocator.alloc(Vertex, final.vertices),
            .next = try allocator.alloc(Vertex, final.vertices),
            .changes = try allocator.alloc(PaddedCount, settings.threads),
            .keep_labels = expected != null,
            .expected = expected != null,
        };
        for (rounds.labels, 0..) |*label, v| label.* = @intCast(v);
        for (rounds.changes) |*slot| slot.* = .{};

        var census = harness.Census{};
        harness.Census.markCaller(true);
        rounds.census = &census;
        const Warm = struct {
            rounds: *Rounds,
            pub fn run(self: *@This()) void {
                self.rounds.run();
            }
        };
        var warm_step = Warm{ .rounds = &rounds };
        const warm = harness.warmUp(settings.warmup_ns, 1, &warm_step);
        rounds.census = null;
        harness.Census.markCaller(false);
        census.describe(backend, settings.threads);

        const passes_before = rounds.passes;
        const stride = harness.checkpointStride(warm.seconds / @as(f64, @floatFromInt(warm.iterations)));
        const window = harness.timedWindow(allocator, settings.time_limit_ns, stride, &rounds);
        if (rounds.passes == 0)
            harness.print("# no pass converged within the window ({} rounds timed): rounds, components and checksum are reported as 0; a longer FORKUNION_TIME_LIMIT, or CHECK mode, finishes one\n", .{window.iterations});
        var check: []const u8 = "skipped";
        if (expected) |serial| {
            const first = rounds.first;
            const same_labels = first.labels != null and std.mem.eql(Vertex, first.labels.?, serial.labels.?);
            if (first.rounds != serial.rounds or first.components != serial.components or first.checksum != serial.checksum or !same_labels)
                harness.fail(harness.exit_check_failed, "CHECK failed: {s} converged to rounds={} components={} checksum={}, serially rounds={} components={} checksum={}{s}", .{ backend, first.rounds, first.components, first.checksum, serial.rounds, serial.components, serial.checksum, if (same_labels) "" else ", and labels differ" });
            check = "passed";
            harness.print("# check: rounds, components, checksum and all {} labels match the serial run\n", .{final.vertices});
        }
        const edges: f64 = @floatFromInt(final.neighbours.len);
        harness.print("RESULT benchmark=propagation backend={s} threads={} vertices={} edges={} rounds={} components={} checksum={} passes={} passes_timed={} timed_rounds={} seconds={d:.6} gteps={d:.6} gteps_mean={d:.6} ms_per_round={d:.6} floor_ns={d:.6} off_caller={d:.6} check={s}\n", .{
            backend,       settings.threads,              final.vertices,    final.neighbours.len, rounds.first.rounds,                 rounds.first.components,                                                   rounds.first.checksum,
            rounds.passes, rounds.passes - passes_before, window.iterations, window.seconds,       edges / window.median_seconds / 1e9, @as(f64, @floatFromInt(window.iterations)) * edges / window.seconds / 1e9, window.median_seconds * 1e3,
            floor_ns,      census.offCallerShare(),       check,
        });
    }
}
