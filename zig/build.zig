//! Builds the Zig binding of forkunion over its C API (`../include/forkunion.h`): the C library
//! (`../c/forkunion.cpp`, compiled here with `zig c++`, linked statically), the module `forkunion`
//! (`src/forkunion.zig`), its tests and the N-body and propagation benchmarks. Tested with Zig 0.11.0 only; newer
//! releases changed the build API, which is why every build-API call of the package lives in this one file.
//!
//!   zig build test                        the binding's tests
//!   zig build bench -Doptimize=ReleaseFast the benchmarks, into zig-out/bin (forkunion_zig_nbody, ..._propagation)
//!
//! Options, mapped onto the C build:
//! - `-Dportable=true`: the C build's `FORKUNION_PORTABLE=1`, every optional instruction path compiled out.
//! - `-Dplace-memory-on-domain=true`: the C build has no such switch (it binds memory wherever the OS can; on
//!   Linux through `mbind`), so this refuses targets without that backend, and the module refuses memory that the
//!   kernel left unplaced although placement was allowed (`error.Unsupported` instead of `placed() == false`).
const std = @import("std");

pub fn build(b: *std.Build) void {
    const target = b.standardTargetOptions(.{});
    const optimize = b.standardOptimizeOption(.{});
    const portable = b.option(bool, "portable", "Compile every optional instruction path of the C library out") orelse false;
    const strict = b.option(bool, "place-memory-on-domain", "Refuse domain memory the OS left unplaced") orelse false;
    if (strict and target.getOsTag() != .linux) {
        std.debug.print("-Dplace-memory-on-domain needs a target whose C build binds memory (Linux, mbind)\n", .{});
        std.process.exit(1);
    }

    // The C library, at least ReleaseSafe: Zig's Debug mode would instrument the C++ with trapping UBSan,
    // which is kept for `-Dc-debug=true`.
    const c_debug = b.option(bool, "c-debug", "Build the C library in Debug mode (trapping UBSan)") orelse false;
    const library = b.addStaticLibrary(.{
        .name = "forkunion_static",
        .target = target,
        .optimize = if (c_debug) .Debug else if (optimize == .Debug) .ReleaseSafe else optimize,
    });
    library.addCSourceFile(.{ .file = .{ .path = "../c/forkunion.cpp" }, .flags = &.{
        "-std=c++20",
        "-DFORKUNION_C_BUILD=1",
        if (portable) "-DFORKUNION_PORTABLE=1" else "-DFORKUNION_PORTABLE=0",
    } });
    library.addIncludePath(.{ .path = "../include" });
    library.linkLibCpp();
    // Programs that link the library get the header's folder on their include path, for the module's @cImport.
    library.installHeader("../include/forkunion.h", "forkunion.h");
    b.installArtifact(library);

    const options = b.addOptions();
    options.addOption(bool, "place_memory_on_domain", strict);
    options.addOption(bool, "portable", portable);
    const module = b.addModule("forkunion", .{
        .source_file = .{ .path = "src/forkunion.zig" },
        .dependencies = &.{.{ .name = "forkunion_build_options", .module = options.createModule() }},
    });

    const tests = b.addTest(.{ .root_source_file = .{ .path = "tests/tests.zig" }, .target = target, .optimize = optimize });
    tests.addModule("forkunion", module);
    link(tests, library);
    const test_step = b.step("test", "Run the binding's tests and the README's example");
    const run_tests = b.addRunArtifact(tests);
    run_tests.has_side_effects = true; // run every time: a passing result is not reused from Zig's cache
    test_step.dependOn(&run_tests.step);
    const example = b.addExecutable(.{ .name = "squares", .root_source_file = .{ .path = "examples/squares.zig" }, .target = target, .optimize = optimize });
    example.addModule("forkunion", module);
    link(example, library);
    const run_example = b.addRunArtifact(example);
    run_example.has_side_effects = true;
    test_step.dependOn(&run_example.step);

    const bench_step = b.step("bench", "Build the N-body and propagation benchmarks");
    inline for (.{ "nbody", "propagation" }) |name| {
        const exe = b.addExecutable(.{
            .name = "forkunion_zig_" ++ name,
            .root_source_file = .{ .path = "bench/" ++ name ++ ".zig" },
            .target = target,
            .optimize = optimize,
        });
        exe.addModule("forkunion", module);
        exe.addAnonymousModule("harness", .{
            .source_file = .{ .path = "bench/harness.zig" },
            .dependencies = &.{.{ .name = "forkunion", .module = module }},
        });
        link(exe, library);
        bench_step.dependOn(&b.addInstallArtifact(exe, .{}).step);
    }
}

/// What a program using the module links: the C library, with its C++ runtime (Zig's libc++) and its header.
pub fn link(artifact: *std.Build.Step.Compile, library: *std.Build.Step.Compile) void {
    artifact.linkLibrary(library);
    artifact.linkLibC();
}
