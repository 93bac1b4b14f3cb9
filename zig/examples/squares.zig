//! The README's example: a pool over every allowed core, one parallel loop, a refusal as a Zig error.
const std = @import("std");
const fu = @import("forkunion");

fn square(squares: []u64, prong: fu.Prong) void {
    squares[prong.task] = prong.task * prong.task;
}

pub fn main() !void {
    var topology = try fu.Topology.init();
    defer topology.deinit();
    var pool = try fu.Pool.init("squares", fu.capability.all);
    defer pool.deinit();
    var arena = try fu.DomainArena.init(topology, 0, 1 << 20, .{}); // memory on memory domain 0
    defer arena.deinit();
    const squares = try arena.allocator().alloc(u64, 1000);

    try pool.spawn(topology, topology.logicalCoresCount(), .inclusive);
    try pool.forN(squares.len, squares, square); // or forNDynamic, forSlices, forThreads
    std.debug.assert(squares[999] == 999 * 999);
    pool.forN(squares.len, squares, square) catch |err| switch (err) {
        error.Contended => {}, // another thread or a callback of this pool is dispatching: nothing ran
        else => return err,
    };
}
