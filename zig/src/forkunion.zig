//! Zig binding of forkunion, a NUMA-aware fork-join thread pool, over its C API (`include/forkunion.h`).
//!
//! - `Topology`: the machine's compute and memory domains.
//! - `Pool`: `spawn`, the blocking verbs `forThreads`, `forN`, `forNDynamic`, `forSlices`, each also as
//!   `...OrRunOnCaller`, the split dispatch `unsafeForThreads` / `isComplete` / `unsafeJoin` with its generation
//!   token, the idle policy and the workers' stack size.
//! - `Allocation` (memory bound to a memory domain) and `DomainArena`, a `std.mem.Allocator` over one allocation.
//! - `Fabric`: measured latencies and bandwidths of the compute-to-memory edges.
//!
//! Callbacks are a context value and a comptime-known function: `pool.forN(n, &sums, addTask)` calls
//! `addTask(&sums, prong)`. A `void` context drops the first argument (`pool.forN(n, {}, task)` calls
//! `task(prong)`). Nothing is allocated per dispatch: a context that is a single-item pointer is passed to the C
//! library as is, any other value through the address of a copy on the dispatching thread's stack. A verb
//! returns after every callback returned, so callbacks may use the caller's stack freely; they run on several
//! threads at once, so what they share must be synchronized by the caller (each task writing its own element
//! needs nothing more). A Zig panic inside a callback aborts the process.
//!
//! Refusals are Zig errors (`Error`): a refused dispatch ran nothing. `error.Contended`: another dispatch holds
//! the pool, concurrent or nested (called from inside one of its own callbacks); `error.NotSpawned`: the pool has
//! no threads; `error.Forked`: this process is a `fork()` child and the pool's threads are the parent's. The
//! `...OrRunOnCaller` verbs run every task anyway, on the calling thread as a team of one, when refused.
//!
//! Which threads may call what is the C API's rule: a pool is spawned, terminated and deinitialized by the thread
//! that controls it, never from inside its callbacks; dispatches come from any thread, one at a time, and every
//! other concurrent one is refused at once. A blocking dispatch happens-after everything its caller did before
//! it, and everything its callbacks did happens-before its return.
const std = @import("std");
const build_options = @import("forkunion_build_options");

/// The C API, as `@cImport` translates it: for what this module does not wrap.
pub const c = @cImport(@cInclude("forkunion.h"));

/// Every refusal of the C API, one to one with its negative status codes.
pub const Error = error{
    /// `fu_bad_alloc_k`: memory ran out, or an allocation too large to map.
    OutOfMemory,
    /// `fu_invalid_argument_k`: 0 threads, a domain out of range, a bad size or token.
    InvalidArgument,
    /// `fu_already_spawned_k`: `spawn` on a pool that has threads: terminate it first.
    AlreadySpawned,
    /// `fu_not_spawned_k`: a dispatch on a pool with no threads.
    NotSpawned,
    /// `fu_thread_refused_k`: the OS refused a thread; those that started were joined.
    ThreadRefused,
    /// `fu_contended_k`: another dispatch, concurrent or nested, holds the pool: nothing ran.
    Contended,
    /// `fu_unsupported_k`: the build, the platform or the pool's allowed capabilities lack the feature.
    Unsupported,
    /// `fu_placement_refused_k`: the OS refused to bind memory (or threads) where asked.
    PlacementRefused,
    /// `fu_stale_generation_k`: not the pool's pending split dispatch (already joined): nothing to do.
    StaleGeneration,
    /// `fu_forked_k`: the pool's threads belong to the parent of this `fork()`ed process.
    Forked,
    /// A status this binding does not know (a newer C library).
    Unknown,
};

/// The error of a C status, or nothing for `fu_success_k`.
pub fn check(status: c_int) Error!void {
    return switch (status) {
        c.fu_success_k => {},
        c.fu_bad_alloc_k => error.OutOfMemory,
        c.fu_invalid_argument_k => error.InvalidArgument,
        c.fu_already_spawned_k => error.AlreadySpawned,
        c.fu_not_spawned_k => error.NotSpawned,
        c.fu_thread_refused_k => error.ThreadRefused,
        c.fu_contended_k => error.Contended,
        c.fu_unsupported_k => error.Unsupported,
        c.fu_placement_refused_k => error.PlacementRefused,
        c.fu_stale_generation_k => error.StaleGeneration,
        c.fu_forked_k => error.Forked,
        else => error.Unknown,
    };
}

/// The C library's version.
pub fn version() std.SemanticVersion {
    return .{
        .major = @intCast(c.fu_version_major()),
        .minor = @intCast(c.fu_version_minor()),
        .patch = @intCast(c.fu_version_patch()),
    };
}

/// Whether the C library was built with every optional instruction path compiled out (`-Dportable`).
pub const portable: bool = build_options.portable;

/// Whether this build requires memory placement (`-Dplace-memory-on-domain`).
pub const place_memory_on_domain: bool = build_options.place_memory_on_domain;

// ---- Capabilities ----------------------------------------------------------------------------------------------

/// A set of capability bits, the C API's `fu_capabilities_t`.
pub const Capabilities = u64;

/// The capability bits (the values of `forkunion.h`'s macros).
pub const capability = struct {
    pub const none: Capabilities = 0;
    pub const all: Capabilities = ~@as(Capabilities, 0);
    pub const x86_waitpkg: Capabilities = 1 << 0;
    pub const x86_cmpccxadd: Capabilities = 1 << 1;
    pub const x86_raoint: Capabilities = 1 << 2;
    pub const x86_cldemote: Capabilities = 1 << 3;
    pub const arm64_lse: Capabilities = 1 << 8;
    pub const arm64_wfxt: Capabilities = 1 << 9;
    pub const arm64_evtstrm: Capabilities = 1 << 10;
    pub const riscv_amo: Capabilities = 1 << 16;
    pub const riscv_zawrs: Capabilities = 1 << 17;
    pub const riscv_zacas: Capabilities = 1 << 18;
    pub const riscv_zicbom: Capabilities = 1 << 19;
    pub const os_threads: Capabilities = 1 << 32;
    pub const topology: Capabilities = 1 << 33;
    pub const thread_pinning: Capabilities = 1 << 34;
    pub const memory_placement: Capabilities = 1 << 35;
    pub const huge_pages: Capabilities = 1 << 36;
    /// Every wait beyond the pause hint.
    pub const waits: Capabilities = x86_waitpkg | arm64_wfxt | arm64_evtstrm | riscv_zawrs;
};

/// What this build of the C library may use.
pub fn comptimeCapabilities() Capabilities {
    return c.fu_comptime_capabilities();
}

/// What this machine offers (the first call detects, later ones read a cached word).
pub fn runtimeCapabilities() Capabilities {
    return c.fu_runtime_capabilities();
}

/// Names `mask` into `buffer` (`x86_cldemote,os_threads`, `none` if empty); `error.OutOfMemory` if it is too small.
pub fn nameCapabilities(mask: Capabilities, buffer: []u8) Error![]const u8 {
    const length = c.fu_name_capabilities(mask, buffer.ptr, buffer.len);
    if (length >= buffer.len) return error.OutOfMemory;
    return buffer[0..length];
}

/// Parses what `nameCapabilities` writes; `error.InvalidArgument` for a token that is no name.
pub fn parseCapabilities(text: [:0]const u8) Error!Capabilities {
    var mask: Capabilities = 0;
    try check(c.fu_parse_capabilities(text.ptr, &mask));
    return mask;
}

// ---- Topology --------------------------------------------------------------------------------------------------

/// The machine's compute and memory domains: immutable, queried from any thread. Queries out of range answer 0.
pub const Topology = struct {
    handle: c.fu_topology_t,

    /// Harvests the running machine (a single-domain stand-in where nothing can be harvested).
    pub fn init() Error!Topology {
        return .{ .handle = c.fu_topology_new() orelse return error.OutOfMemory };
    }
    /// Harvests a recorded sysfs tree in which `root` stands for `/`.
    pub fn initFromSysfs(root: [:0]const u8) Error!Topology {
        return .{ .handle = c.fu_topology_new_from_sysfs(root.ptr) orelse return error.InvalidArgument };
    }
    pub fn deinit(self: *Topology) void {
        c.fu_topology_delete(self.handle);
        self.* = undefined;
    }
    pub fn harvested(self: Topology) bool {
        return c.fu_topology_harvested(self.handle) != 0;
    }
    pub fn computeDomainsCount(self: Topology) usize {
        return c.fu_compute_domains_count(self.handle);
    }
    pub fn computeLevelsCount(self: Topology) usize {
        return c.fu_compute_levels_count(self.handle);
    }
    pub fn computeLevelIn(self: Topology, domain: usize) usize {
        return c.fu_compute_level_in(self.handle, domain);
    }
    pub fn logicalCoresCount(self: Topology) usize {
        return c.fu_logical_cores_count(self.handle);
    }
    pub fn logicalCoresCountIn(self: Topology, domain: usize) usize {
        return c.fu_logical_cores_count_in(self.handle, domain);
    }
    pub fn computeCapacityIn(self: Topology, domain: usize) usize {
        return c.fu_compute_capacity_in(self.handle, domain);
    }
    pub fn computeCacheBytesIn(self: Topology, domain: usize) u64 {
        return c.fu_compute_cache_bytes_in(self.handle, domain);
    }
    pub fn localMemoryOf(self: Topology, domain: usize) usize {
        return c.fu_local_memory_of(self.handle, domain);
    }
    /// Copies the OS CPU ids of compute domain `domain` into `cores` and returns those that fit, ascending;
    /// `coresCountIn` says how many the domain has.
    pub fn coresIn(self: Topology, domain: usize, cores: []c_uint) []c_uint {
        const count = c.fu_cores_in(self.handle, domain, cores.ptr, cores.len);
        return cores[0..@min(count, cores.len)];
    }
    pub fn coresCountIn(self: Topology, domain: usize) usize {
        return c.fu_cores_in(self.handle, domain, null, 0);
    }
    pub fn allowedCoresCount(self: Topology) usize {
        return c.fu_allowed_cores_count(self.handle);
    }
    pub fn onlineCoresCount(self: Topology) usize {
        return c.fu_online_cores_count(self.handle);
    }
    pub fn memoryDomainsCount(self: Topology) usize {
        return c.fu_memory_domains_count(self.handle);
    }
    pub fn memoryNodeId(self: Topology, memory_domain: usize) usize {
        return c.fu_memory_node_id(self.handle, memory_domain);
    }
    pub fn volumeRam(self: Topology) u64 {
        return c.fu_volume_ram(self.handle);
    }
    pub fn volumeRamIn(self: Topology, memory_domain: usize) u64 {
        return c.fu_volume_ram_in(self.handle, memory_domain);
    }
    pub fn hugePagesCount(self: Topology) usize {
        return c.fu_huge_pages_count(self.handle);
    }
    pub fn hugePagesCountIn(self: Topology, memory_domain: usize) usize {
        return c.fu_huge_pages_count_in(self.handle, memory_domain);
    }
    pub fn volumeHugePages(self: Topology) u64 {
        return c.fu_volume_huge_pages(self.handle);
    }
    pub fn volumeHugePagesIn(self: Topology, memory_domain: usize) u64 {
        return c.fu_volume_huge_pages_in(self.handle, memory_domain);
    }
    pub fn hugePageSizesCountIn(self: Topology, memory_domain: usize) usize {
        return c.fu_huge_page_sizes_count_in(self.handle, memory_domain);
    }
    pub fn hugePageSizeIn(self: Topology, memory_domain: usize, index: usize) u64 {
        return c.fu_huge_page_size_in(self.handle, memory_domain, index);
    }
    /// The firmware's (ACPI SLIT) distance: 10 = local, 0 = unknown.
    pub fn declaredDistance(self: Topology, from_memory_domain: usize, to_memory_domain: usize) usize {
        return c.fu_declared_distance(self.handle, from_memory_domain, to_memory_domain);
    }
};

// ---- Pools -----------------------------------------------------------------------------------------------------

/// Whether the dispatching thread works as thread 0 (inclusive) or only submits and joins (exclusive).
pub const Exclusivity = enum { inclusive, exclusive };

/// One task of `forN` / `forNDynamic`: its index, the thread running it, that thread's compute domain.
pub const Prong = struct { task: usize, thread: usize, compute_domain: usize };

/// One thread's block of `forSlices`: tasks `[first, first + count)`, never empty.
pub const Slice = struct { first: usize, count: usize, thread: usize, compute_domain: usize };

/// A split dispatch's token (odd), from `Pool.unsafeForThreads`.
pub const Generation = enum(usize) { _ };

/// How idle workers wait between dispatches; microseconds for `adaptive` (the spin window) and `sleep` (the
/// period at which they wake to look; 0: only a dispatch wakes them).
pub const IdlePolicy = union(enum) {
    spin,
    adaptive: u64,
    nap,
    sleep: u64,

    /// The C library's default: adaptive with a 100 µs window.
    pub const default: IdlePolicy = .{ .adaptive = c.FU_DEFAULT_IDLE_WINDOW_US };
};

/// Calls `callback` with `context` first unless the context is `void`.
inline fn invoke(comptime callback: anytype, context: anytype, arguments: anytype) void {
    if (@TypeOf(context) == void) @call(.auto, callback, arguments) else @call(.auto, callback, .{context} ++ arguments);
}

/// Whether a context travels to the C library as is (a single-item pointer) or through a stack copy.
fn passedAsIs(comptime Context: type) bool {
    return switch (@typeInfo(Context)) {
        .Pointer => |pointer| pointer.size == .One,
        else => false,
    };
}

/// The C trampolines of one context type and one callback: no state beyond the context pointer.
fn Trampolines(comptime Context: type, comptime callback: anytype) type {
    return struct {
        fn context(raw: ?*anyopaque) Context {
            if (Context == void) return {};
            if (comptime passedAsIs(Context)) return @ptrCast(@alignCast(raw));
            const copy: *const Context = @ptrCast(@alignCast(raw));
            return copy.*;
        }
        fn thread(raw: ?*anyopaque, index: usize, domain: usize) callconv(.C) void {
            invoke(callback, context(raw), .{ index, domain });
        }
        fn task(raw: ?*anyopaque, index: usize, worker: usize, domain: usize) callconv(.C) void {
            invoke(callback, context(raw), .{Prong{ .task = index, .thread = worker, .compute_domain = domain }});
        }
        fn slice(raw: ?*anyopaque, first: usize, count: usize, worker: usize, domain: usize) callconv(.C) void {
            invoke(callback, context(raw), .{Slice{ .first = first, .count = count, .thread = worker, .compute_domain = domain }});
        }
    };
}

/// The `void *` the C library hands back: the pointer itself, or the address of `copy`.
inline fn rawContext(context: anytype, copy: *const @TypeOf(context)) ?*anyopaque {
    if (@TypeOf(context) == void) return null;
    if (comptime passedAsIs(@TypeOf(context))) return @ptrCast(@constCast(context));
    return @ptrCast(@constCast(copy));
}

/// A fork-join thread pool (`fu_pool_t`). See the file's comment for callbacks, refusals and threads.
pub const Pool = struct {
    handle: c.fu_pool_t,

    /// An unspawned pool. Workers are named `name:NNN` (none: names left alone); `allowed` narrows what it may
    /// use (`capability.all` for everything this build and machine have).
    pub fn init(name: ?[:0]const u8, allowed: Capabilities) Error!Pool {
        const text: [*c]const u8 = if (name) |n| n.ptr else null;
        return .{ .handle = c.fu_pool_new(text, allowed) orelse return error.OutOfMemory };
    }
    /// Terminates the pool (completing what is in flight) and frees it. Controlling thread, outside callbacks.
    pub fn deinit(self: *Pool) void {
        c.fu_pool_delete(self.handle);
        self.* = undefined;
    }
    /// Starts `threads` contributors over every compute domain of `topology` (inclusive: the caller is thread 0).
    pub fn spawn(self: Pool, topology: Topology, threads: usize, caller: Exclusivity) Error!void {
        try check(c.fu_pool_spawn(topology.handle, self.handle, threads, cExclusivity(caller)));
    }
    /// Like `spawn`, every thread on compute domain `compute_domain`.
    pub fn spawnOn(self: Pool, topology: Topology, compute_domain: usize, threads: usize, caller: Exclusivity) Error!void {
        try check(c.fu_pool_spawn_on(topology.handle, self.handle, compute_domain, threads, cExclusivity(caller)));
    }
    /// Completes the dispatch in flight, stops and joins every worker; the pool may be spawned again.
    pub fn terminate(self: Pool) Error!void {
        try check(c.fu_pool_terminate(self.handle));
    }

    pub fn threadsCount(self: Pool) usize {
        return c.fu_pool_threads_count(self.handle);
    }
    pub fn exclusivity(self: Pool) Exclusivity {
        return if (c.fu_pool_caller_exclusivity(self.handle) == c.fu_caller_exclusive_k) .exclusive else .inclusive;
    }
    pub fn capabilities(self: Pool) Capabilities {
        return c.fu_pool_capabilities(self.handle);
    }
    pub fn computeDomainsCount(self: Pool) usize {
        return c.fu_pool_compute_domains_count(self.handle);
    }
    pub fn threadsCountIn(self: Pool, compute_domain: usize) usize {
        return c.fu_pool_threads_count_in(self.handle, compute_domain);
    }
    pub fn unpinnedThreadsCount(self: Pool) usize {
        return c.fu_pool_unpinned_threads_count(self.handle);
    }
    pub fn memoryPlaced(self: Pool) bool {
        return c.fu_pool_memory_placed(self.handle) != 0;
    }
    pub fn memoryUsage(self: Pool) usize {
        return c.fu_pool_memory_usage(self.handle);
    }

    /// `callback(context, thread, compute_domain)` once on every thread.
    /// Serial equivalent: `for (0..threads) |t| callback(context, t, domain_of(t))`.
    pub fn forThreads(self: Pool, context: anytype, comptime callback: anytype) Error!void {
        const copy = context;
        const T = Trampolines(@TypeOf(context), callback);
        try check(c.fu_pool_for_threads(self.handle, T.thread, rawContext(context, &copy)));
    }
    /// `callback(context, prong)` for every task in `[0, n)`, statically split: thread t of T runs the block
    /// starting at `q*t + min(t, r)` of length `q + (t < r)`, `q = n / T`, `r = n % T`.
    /// Serial equivalent: `for (0..n) |i| callback(context, .{ .task = i, ... })`.
    pub fn forN(self: Pool, n: usize, context: anytype, comptime callback: anytype) Error!void {
        const copy = context;
        const T = Trampolines(@TypeOf(context), callback);
        try check(c.fu_pool_for_n(self.handle, n, T.task, rawContext(context, &copy)));
    }
    /// The same loop for tasks of uneven cost: each thread drains its block, then steals single tasks.
    pub fn forNDynamic(self: Pool, n: usize, context: anytype, comptime callback: anytype) Error!void {
        const copy = context;
        const T = Trampolines(@TypeOf(context), callback);
        try check(c.fu_pool_for_n_dynamic(self.handle, n, T.task, rawContext(context, &copy)));
    }
    /// `callback(context, slice)` once per thread whose block of `forN`'s split is non-empty.
    pub fn forSlices(self: Pool, n: usize, context: anytype, comptime callback: anytype) Error!void {
        const copy = context;
        const T = Trampolines(@TypeOf(context), callback);
        try check(c.fu_pool_for_slices(self.handle, n, T.slice, rawContext(context, &copy)));
    }

    /// `forThreads` that, when refused, calls the callback once on this thread (thread 0, domain 0).
    pub fn forThreadsOrRunOnCaller(self: Pool, context: anytype, comptime callback: anytype) Error!void {
        const copy = context;
        const T = Trampolines(@TypeOf(context), callback);
        try check(c.fu_pool_for_threads_or_run_on_caller(self.handle, T.thread, rawContext(context, &copy)));
    }
    /// `forN` that, when refused, runs every task on this thread (thread 0, domain 0).
    pub fn forNOrRunOnCaller(self: Pool, n: usize, context: anytype, comptime callback: anytype) Error!void {
        const copy = context;
        const T = Trampolines(@TypeOf(context), callback);
        try check(c.fu_pool_for_n_or_run_on_caller(self.handle, n, T.task, rawContext(context, &copy)));
    }
    /// `forNDynamic` that, when refused, runs every task on this thread (thread 0, domain 0).
    pub fn forNDynamicOrRunOnCaller(self: Pool, n: usize, context: anytype, comptime callback: anytype) Error!void {
        const copy = context;
        const T = Trampolines(@TypeOf(context), callback);
        try check(c.fu_pool_for_n_dynamic_or_run_on_caller(self.handle, n, T.task, rawContext(context, &copy)));
    }
    /// `forSlices` that, when refused, calls the callback once with the whole range on this thread.
    pub fn forSlicesOrRunOnCaller(self: Pool, n: usize, context: anytype, comptime callback: anytype) Error!void {
        const copy = context;
        const T = Trampolines(@TypeOf(context), callback);
        try check(c.fu_pool_for_slices_or_run_on_caller(self.handle, n, T.slice, rawContext(context, &copy)));
    }

    /// Broadcasts `callback(context, thread, compute_domain)` without waiting. `context` must be a single-item
    /// pointer that stays valid until the dispatch completes. Exclusive pools start now (poll `isComplete`,
    /// then `unsafeJoin`); on inclusive pools thread 0's slice runs inside `unsafeJoin`, which the same thread
    /// must call. Until it is joined every other dispatch of the pool is refused with `error.Contended`.
    pub fn unsafeForThreads(self: Pool, context: anytype, comptime callback: anytype) Error!Generation {
        comptime if (!passedAsIs(@TypeOf(context)))
            @compileError("unsafeForThreads needs a single-item pointer context that outlives the dispatch");
        const T = Trampolines(@TypeOf(context), callback);
        var generation: usize = 0;
        try check(c.fu_pool_unsafe_for_threads(self.handle, T.thread, rawContext(context, &context), &generation));
        return @enumFromInt(generation);
    }
    /// Whether split dispatch `generation` completed on every thread (also for older, joined ones). Never
    /// blocks; any thread. A `true` makes every slice's writes visible to the caller.
    pub fn isComplete(self: Pool, generation: Generation) bool {
        return c.fu_pool_is_complete(self.handle, @intFromEnum(generation)) == 1;
    }
    /// Runs thread 0's slice (inclusive pools) and blocks until `generation` completes.
    /// `error.StaleGeneration`: already joined (harmless); `error.InvalidArgument`: an inclusive pool's dispatch
    /// joined from another thread than the dispatching one (nothing changed).
    pub fn unsafeJoin(self: Pool, generation: Generation) Error!void {
        try check(c.fu_pool_unsafe_join(self.handle, @intFromEnum(generation)));
    }

    /// How idle workers wait from now on, across respawns. Any thread, any time.
    pub fn setIdlePolicy(self: Pool, policy: IdlePolicy) Error!void {
        try check(switch (policy) {
            .spin => c.fu_pool_set_idle_policy(self.handle, c.fu_idle_spin_k, 0),
            .adaptive => |window| c.fu_pool_set_idle_policy(self.handle, c.fu_idle_adaptive_k, window),
            .nap => c.fu_pool_set_idle_policy(self.handle, c.fu_idle_nap_k, 0),
            .sleep => |period| c.fu_pool_set_idle_policy(self.handle, c.fu_idle_sleep_k, period),
        });
    }
    /// The idle policy in force.
    pub fn idlePolicy(self: Pool) Error!IdlePolicy {
        var mode: c.fu_idle_mode_t = undefined;
        var microseconds: u64 = 0;
        try check(c.fu_pool_idle_policy(self.handle, &mode, &microseconds));
        return switch (mode) {
            c.fu_idle_spin_k => .spin,
            c.fu_idle_adaptive_k => .{ .adaptive = microseconds },
            c.fu_idle_nap_k => .nap,
            c.fu_idle_sleep_k => .{ .sleep = microseconds },
            else => error.Unknown,
        };
    }
    /// Workers blocked in the kernel right now: a snapshot.
    pub fn parkedThreadsCount(self: Pool) usize {
        return c.fu_pool_parked_threads_count(self.handle);
    }
    /// The stack size of the workers the next spawn starts (0: the platform's default). Between spawns.
    pub fn setStackSize(self: Pool, bytes: usize) Error!void {
        try check(c.fu_pool_set_stack_size(self.handle, bytes));
    }
    pub fn stackSize(self: Pool) usize {
        return c.fu_pool_stack_size(self.handle);
    }

    fn cExclusivity(value: Exclusivity) c.fu_caller_exclusivity_t {
        return switch (value) {
            .inclusive => c.fu_caller_inclusive_k,
            .exclusive => c.fu_caller_exclusive_k,
        };
    }
};

// ---- Fabric ----------------------------------------------------------------------------------------------------

/// The memory fabric as measured: latency and bandwidth of every compute-to-memory edge. Queries read 0 (levels:
/// the levels count) until a harvest, and for unreached edges.
pub const Fabric = struct {
    handle: c.fu_fabric_t,

    pub fn init() Error!Fabric {
        return .{ .handle = c.fu_fabric_new() orelse return error.OutOfMemory };
    }
    pub fn deinit(self: *Fabric) void {
        c.fu_fabric_delete(self.handle);
        self.* = undefined;
    }
    /// Measures every edge through `pool`'s workers, pinned to each compute domain in turn, with buffers of
    /// `buffer_bytes` per memory domain (0: the default). Seconds of work; from the pool's controlling thread.
    /// A failed harvest leaves the fabric as it was.
    pub fn harvest(self: Fabric, topology: Topology, pool: Pool, buffer_bytes: usize) Error!void {
        try check(c.fu_fabric_harvest(self.handle, topology.handle, pool.handle, buffer_bytes));
    }
    pub fn harvested(self: Fabric) bool {
        return c.fu_fabric_harvested(self.handle) != 0;
    }
    pub fn memoryLevelsCount(self: Fabric) usize {
        return c.fu_fabric_memory_levels_count(self.handle);
    }
    pub fn memoryLevelIn(self: Fabric, memory_domain: usize) usize {
        return c.fu_fabric_memory_level_in(self.handle, memory_domain);
    }
    /// Measured distance on the SLIT scale (10 = local).
    pub fn memoryDistance(self: Fabric, compute_domain: usize, memory_domain: usize) usize {
        return c.fu_fabric_memory_distance(self.handle, compute_domain, memory_domain);
    }
    pub fn memoryLatencyNs(self: Fabric, compute_domain: usize, memory_domain: usize) f64 {
        return c.fu_fabric_memory_latency_ns(self.handle, compute_domain, memory_domain);
    }
    /// Saturated read bandwidth in bytes per second.
    pub fn memoryBandwidth(self: Fabric, compute_domain: usize, memory_domain: usize) f64 {
        return c.fu_fabric_memory_bandwidth(self.handle, compute_domain, memory_domain);
    }
};

// ---- Memory ----------------------------------------------------------------------------------------------------

/// How to map domain memory: huge pages of `huge_page_bytes` (0: base pages) with fallback to base pages, and
/// what the mapping may use (without `capability.memory_placement` nothing is bound).
pub const AllocationOptions = struct {
    huge_page_bytes: usize = 0,
    allowed: Capabilities = capability.all,
};

/// Zeroed memory bound to a memory domain (`fu_allocation_t`); free it with `deinit`. Any thread.
pub const Allocation = struct {
    raw: c.fu_allocation_t,

    /// At least `bytes` bytes on memory domain `memory_domain` of `topology`.
    pub fn initOn(topology: Topology, memory_domain: usize, size: usize, options: AllocationOptions) Error!Allocation {
        var raw = std.mem.zeroes(c.fu_allocation_t);
        try check(c.fu_allocate_on(topology.handle, memory_domain, size, options.huge_page_bytes, options.allowed, &raw));
        return strict(.{ .raw = raw }, options);
    }
    /// One slice of at least `slice_bytes` per memory domain, slice d bound to domain d: all placed, or none.
    pub fn initSymmetric(topology: Topology, slice_bytes: usize, options: AllocationOptions) Error!Allocation {
        var raw = std.mem.zeroes(c.fu_allocation_t);
        try check(c.fu_allocate_symmetric(topology.handle, slice_bytes, options.huge_page_bytes, options.allowed, &raw));
        return strict(.{ .raw = raw }, options);
    }
    /// With `-Dplace-memory-on-domain`, refuses (and unmaps) memory left unplaced although placement was allowed.
    fn strict(allocation: Allocation, options: AllocationOptions) Error!Allocation {
        var self = allocation;
        const required = place_memory_on_domain and options.allowed & capability.memory_placement != 0;
        if (required and self.raw.address != null and self.raw.placed == 0) {
            self.deinit();
            return error.Unsupported;
        }
        return self;
    }
    /// Unmaps the memory; nothing may access it afterwards.
    pub fn deinit(self: *Allocation) void {
        _ = c.fu_deallocate(&self.raw);
    }
    /// Every byte mapped (empty for a 0-byte request).
    pub fn bytes(self: Allocation) []align(std.mem.page_size) u8 {
        const address = self.raw.address orelse return &[_]u8{};
        return @as([*]align(std.mem.page_size) u8, @ptrCast(@alignCast(address)))[0..self.raw.bytes];
    }
    /// Slice `index` of a symmetric allocation (the one slice of `initOn`).
    pub fn slice(self: Allocation, index: usize) []align(std.mem.page_size) u8 {
        const all = self.bytes();
        return @alignCast(all[index * self.raw.slice_bytes ..][0..self.raw.slice_bytes]);
    }
    pub fn slicesCount(self: Allocation) usize {
        return self.raw.slices_count;
    }
    pub fn pageBytes(self: Allocation) usize {
        return self.raw.page_bytes;
    }
    /// Whether the memory is bound to the domain(s) asked for (else the OS places it on first touch).
    pub fn placed(self: Allocation) bool {
        return self.raw.placed != 0;
    }
};

/// A `std.mem.Allocator` over one `Allocation` on a memory domain: a bump arena of fixed capacity. Allocations are
/// carved in order; `free` and `resize` reclaim or grow only the most recent one; `reset` reclaims everything;
/// `deinit` unmaps the whole arena. One thread at a time (wrap it in `std.heap.ThreadSafeAllocator` otherwise):
/// allocate before a dispatch, use the memory inside it. Exhausting the capacity is `error.OutOfMemory`.
pub const DomainArena = struct {
    region: Allocation,
    used: usize = 0,
    /// Start of the most recent allocation, for `free` and `resize` of it.
    last: usize = 0,

    pub fn init(topology: Topology, memory_domain: usize, size: usize, options: AllocationOptions) Error!DomainArena {
        return .{ .region = try Allocation.initOn(topology, memory_domain, size, options) };
    }
    pub fn deinit(self: *DomainArena) void {
        self.region.deinit();
        self.* = undefined;
    }
    /// Forgets every allocation; the memory stays mapped (and keeps what was written).
    pub fn reset(self: *DomainArena) void {
        self.used = 0;
        self.last = 0;
    }
    pub fn capacity(self: DomainArena) usize {
        return self.region.raw.bytes;
    }
    pub fn allocator(self: *DomainArena) std.mem.Allocator {
        return .{ .ptr = self, .vtable = &.{ .alloc = alloc, .resize = resize, .free = free } };
    }
    /// Whether `memory` belongs to this arena.
    pub fn owns(self: *const DomainArena, memory: []const u8) bool {
        const base = @intFromPtr(self.region.bytes().ptr);
        const start = @intFromPtr(memory.ptr);
        return start >= base and start - base <= self.capacity() and memory.len <= self.capacity() - (start - base);
    }

    fn alloc(context: *anyopaque, len: usize, log2_align: u8, return_address: usize) ?[*]u8 {
        _ = return_address;
        const self: *DomainArena = @ptrCast(@alignCast(context));
        const memory = self.region.bytes();
        if (memory.len == 0) return null;
        const base = @intFromPtr(memory.ptr);
        const alignment = @as(usize, 1) << @intCast(log2_align);
        const start = std.mem.alignForward(usize, base + self.used, alignment) - base;
        if (start > memory.len or len > memory.len - start) return null;
        self.last = start;
        self.used = start + len;
        return memory.ptr + start;
    }
    fn resize(context: *anyopaque, buffer: []u8, log2_align: u8, new_len: usize, return_address: usize) bool {
        _ = .{ log2_align, return_address };
        const self: *DomainArena = @ptrCast(@alignCast(context));
        const start = @intFromPtr(buffer.ptr) - @intFromPtr(self.region.bytes().ptr);
        if (start != self.last or start + buffer.len != self.used) return new_len <= buffer.len;
        if (new_len > self.capacity() - start) return false;
        self.used = start + new_len;
        return true;
    }
    fn free(context: *anyopaque, buffer: []u8, log2_align: u8, return_address: usize) void {
        _ = .{ log2_align, return_address };
        const self: *DomainArena = @ptrCast(@alignCast(context));
        const start = @intFromPtr(buffer.ptr) - @intFromPtr(self.region.bytes().ptr);
        if (start == self.last and start + buffer.len == self.used) self.used = start;
    }
};
