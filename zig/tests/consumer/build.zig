//! A project that uses the binding from outside `zig/`, with the repository at `forkunion/` (a submodule, a copy or
//! a link): `.ci/zig.sh` builds and runs it from a temporary folder.
const std = @import("std");

pub fn build(b: *std.Build) void {
    const target = b.standardTargetOptions(.{});
    const optimize = b.standardOptimizeOption(.{});
    const forkunion = b.anonymousDependency("forkunion/zig", @import("forkunion/zig/build.zig"), .{ .target = target, .optimize = optimize });
    const app = b.addExecutable(.{ .name = "app", .root_source_file = .{ .path = "app.zig" }, .target = target, .optimize = optimize });
    app.addModule("forkunion", forkunion.module("forkunion"));
    app.linkLibrary(forkunion.artifact("forkunion_static"));
    b.step("run", "Run the app").dependOn(&b.addRunArtifact(app).step);
}
