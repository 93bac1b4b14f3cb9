//! Checks that every ```zig block of the given Markdown files is verbatim text of a file under the given source
//! folder, which `zig build test` compiles: documentation quotes only compiled code.
//!
//!   zig run tests/snippets.zig -- SOURCE_DIR FILE.md...
const std = @import("std");

pub fn main() !void {
    var arena = std.heap.ArenaAllocator.init(std.heap.page_allocator);
    const allocator = arena.allocator();
    const arguments = try std.process.argsAlloc(allocator);
    if (arguments.len < 2) return error.Usage;

    var sources = std.ArrayList([]const u8).init(allocator);
    var directory = try std.fs.cwd().openIterableDir(arguments[1], .{});
    var walker = try directory.walk(allocator);
    while (try walker.next()) |entry| {
        if (entry.kind != .file or !std.mem.endsWith(u8, entry.path, ".zig")) continue;
        if (std.mem.indexOf(u8, entry.path, "zig-cache") != null) continue;
        try sources.append(try entry.dir.readFileAlloc(allocator, entry.basename, 1 << 24));
    }

    var failures: usize = 0;
    var blocks: usize = 0;
    for (arguments[2..]) |path| {
        const text = std.fs.cwd().readFileAlloc(allocator, path, 1 << 24) catch |err| {
            std.debug.print("{s}: {s}\n", .{ path, @errorName(err) });
            failures += 1;
            continue;
        };
        var rest = text;
        while (std.mem.indexOf(u8, rest, "```zig\n")) |start| {
            const body_start = start + "```zig\n".len;
            const end = std.mem.indexOfPos(u8, rest, body_start, "```") orelse break;
            const block = rest[body_start..end];
            blocks += 1;
            var found = false;
            for (sources.items) |source| found = found or std.mem.indexOf(u8, source, block) != null;
            if (!found) {
                std.debug.print("{s}: this ```zig block is no verbatim excerpt of a .zig file under {s}:\n{s}\n", .{ path, arguments[1], block });
                failures += 1;
            }
            rest = rest[end + 3 ..];
        }
    }
    std.debug.print("{} zig blocks checked, {} not found\n", .{ blocks, failures });
    if (failures != 0) std.process.exit(1);
}
