//! The consumer's program: one loop over the threads of a pool spawned on every allowed core.
const std = @import("std");
const fu = @import("forkunion");

fn count(calls: *std.atomic.Atomic(usize), _: usize, _: usize) void {
    _ = calls.fetchAdd(1, .Monotonic);
}

pub fn main() !void {
    var topology = try fu.Topology.init();
    defer topology.deinit();
    var pool = try fu.Pool.init("app", fu.capability.all);
    defer pool.deinit();
    try pool.spawn(topology, topology.logicalCoresCount(), .inclusive);
    var calls = std.atomic.Atomic(usize).init(0);
    try pool.forThreads(&calls, count);
    if (calls.load(.Monotonic) != pool.threadsCount()) return error.MissingThreads;
    std.debug.print("consumer: {} threads of forkunion {} ran\n", .{ calls.load(.Monotonic), fu.version() });
}
