//! Builds the C library (`libforkunion_static.a`) with the repository's own CMake project, so its source list, its
//! compile probes and the C++ runtime it needs are defined in one place, and links it into this crate.
//!
//! - The sources come from `vendor/forkunion/` inside the crate when it exists (a packaged `.crate` carries them
//!   there: `package.sh` copies the repository's `CMakeLists.txt`, `cmake/`, `include/`, `c/` but the OpenMP
//!   drop-in, and what the tests read), else from the repository around the crate (`..`). The folder chosen is
//!   passed to the crate's own compilation as `FORKUNION_SOURCE_ROOT` (the header the FFI tests parse, the README
//!   section and the sysfs fixture the tests read).
//! - Configures `..` (the repository root) into `$OUT_DIR/cmake` with the tests, benchmarks and examples off, and
//!   builds the one target `forkunion_static`, with `ccache` as the compiler launcher when it is on `PATH`.
//! - Cargo features map onto the C build: `portable` is `FORKUNION_PORTABLE=ON`; `place-memory-on-domain` has no
//!   CMake switch (the C build places memory wherever the OS can, on Linux through `mbind`), so it refuses targets
//!   without that backend here and makes allocations strict in the crate.
//! - The C++ runtime the static library needs (`-lstdc++ -lm` with GCC) is read from the `forkunion.pc` that the
//!   configure step writes (`c_libs_static`), never hard-coded.
//!
//! Environment (each also reruns this script when it changes):
//! - `FORKUNION_SANITIZE=address` builds the C library with ASan and UBSan (`thread`: TSan). The Rust side then
//!   links the sanitizer runtime itself: `RUSTFLAGS`/`RUSTDOCFLAGS` `-C link-arg=-fsanitize=address,undefined`.
//! - `FORKUNION_CMAKE_BUILD_TYPE` (default `Release`), `FORKUNION_CMAKE_ARGS` (extra `-D...` words, split on
//!   blanks), `FORKUNION_CCACHE=0` (no launcher), and CMake's own `CMAKE_GENERATOR`, `CC`, `CXX`.
use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let vendored = manifest.join("vendor").join("forkunion");
    let around = manifest.parent().map(Path::to_path_buf).unwrap_or_default();
    let root = if is_source_tree(&vendored) {
        if is_source_tree(&around) {
            println!(
                "cargo:warning=building the C library from {}, a copy that package.sh left, not from the repository \
                 around the crate: remove that folder to build the repository's sources",
                vendored.display()
            );
        }
        vendored.clone()
    } else if is_source_tree(&around) {
        around
    } else {
        fail(&format!(
            "the C sources are neither in {} (a packaged crate) nor at {} (the repository around the crate): \
             each needs CMakeLists.txt, c/forkunion.cpp and include/forkunion.h; a .crate made without rust/package.sh \
             lacks them",
            vendored.display(),
            around.display()
        ))
    };
    check_versions(&manifest, &root);
    println!("cargo:rustc-env=FORKUNION_SOURCE_ROOT={}", root.display());

    println!("cargo:rerun-if-changed={}", vendored.display());
    for path in ["CMakeLists.txt", "c", "include", "cmake"] {
        println!("cargo:rerun-if-changed={}", root.join(path).display());
    }
    println!("cargo:rerun-if-changed=build.rs");
    for name in [
        "FORKUNION_SANITIZE",
        "FORKUNION_CMAKE_BUILD_TYPE",
        "FORKUNION_CMAKE_ARGS",
        "FORKUNION_CCACHE",
        "CMAKE_GENERATOR",
        "CC",
        "CXX",
    ] {
        println!("cargo:rerun-if-env-changed={}", name);
    }

    let portable = env::var_os("CARGO_FEATURE_PORTABLE").is_some();
    let strict_placement = env::var_os("CARGO_FEATURE_PLACE_MEMORY_ON_DOMAIN").is_some();
    let target_os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if strict_placement && target_os != "linux" {
        fail(&format!(
            "feature `place-memory-on-domain` requires a target whose C build binds memory to NUMA nodes \
             (Linux, through mbind); `{}` has no such backend: build without the feature, and allocations fall \
             back to unplaced memory that `placed()` reports",
            target_os
        ));
    }
    if env::var("HOST").ok() != env::var("TARGET").ok() && env::var_os("FORKUNION_CMAKE_ARGS").is_none() {
        fail(
            "cross-compiling: pass the C++ toolchain to CMake through FORKUNION_CMAKE_ARGS \
              (for example -DCMAKE_TOOLCHAIN_FILE=...)",
        );
    }

    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let build = out.join("cmake");
    forget_other_sources(&build, &root);
    let build_type = env::var("FORKUNION_CMAKE_BUILD_TYPE").unwrap_or_else(|_| "Release".to_string());
    let mut configure = Command::new("cmake");
    configure
        .arg("-S")
        .arg(&root)
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_BUILD_TYPE={}", build_type))
        // The library target only: no tests, benchmarks or examples to probe for or build.
        .arg("-DFORKUNION_BUILD_TEST=OFF")
        .arg("-DFORKUNION_BUILD_BENCH=OFF")
        .arg("-DFORKUNION_BUILD_EXAMPLES=OFF")
        .arg("-DFORKUNION_BUILD_C=OFF")
        .arg("-DFORKUNION_FETCH_DEPENDENCIES=OFF")
        // Install rules stay unused; they are what writes forkunion.pc, which names the C++ runtime.
        .arg("-DFORKUNION_INSTALL=ON")
        .arg(format!("-DFORKUNION_PORTABLE={}", if portable { "ON" } else { "OFF" }));
    if env::var("FORKUNION_CCACHE").map(|v| v != "0").unwrap_or(true) && on_path("ccache") {
        configure.arg("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache").arg("-DCMAKE_C_COMPILER_LAUNCHER=ccache");
    }
    match env::var("FORKUNION_SANITIZE").unwrap_or_default().as_str() {
        // Set every time: the CMake cache outlives a change of this variable.
        "" => {
            configure.arg("-DCMAKE_CXX_FLAGS=").arg("-DFORKUNION_SANITIZER=");
        }
        "address" => {
            let flags = "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer";
            configure.arg(format!("-DCMAKE_CXX_FLAGS={}", flags)).arg("-DFORKUNION_SANITIZER=address");
        }
        "thread" => {
            configure
                .arg("-DCMAKE_CXX_FLAGS=-fsanitize=thread -fno-omit-frame-pointer")
                .arg("-DFORKUNION_SANITIZER=thread");
        }
        other => fail(&format!("FORKUNION_SANITIZE={:?}: expected `address` (ASan and UBSan) or `thread`", other)),
    }
    if let Ok(extra) = env::var("FORKUNION_CMAKE_ARGS") {
        configure.args(extra.split_whitespace());
    }
    run(&mut configure, "configure");

    let jobs = env::var("NUM_JOBS").unwrap_or_else(|_| "2".to_string());
    let mut compile = Command::new("cmake");
    compile
        .arg("--build")
        .arg(&build)
        .arg("--target")
        .arg("forkunion_static")
        .arg("--config")
        .arg(&build_type)
        .arg("--parallel")
        .arg(jobs);
    run(&mut compile, "build");

    let library = ["c", "c/Release", "c/Debug", "c/RelWithDebInfo", "."]
        .iter()
        .map(|dir| build.join(dir))
        .find(|dir| dir.join("libforkunion_static.a").is_file() || dir.join("forkunion_static.lib").is_file())
        .unwrap_or_else(|| fail(&format!("the build produced no forkunion_static library under {}", build.display())));
    println!("cargo:rustc-link-search=native={}", library.display());
    println!("cargo:rustc-link-lib=static=forkunion_static");
    for runtime in cxx_runtime(&build.join("forkunion.pc")) {
        println!("cargo:rustc-link-lib={}", runtime);
    }
    if target_os != "windows" {
        println!("cargo:rustc-link-lib=pthread");
    }
    // Read by dependents' build scripts as DEP_FORKUNION_ROOT: the source tree the library was built from.
    println!("cargo:root={}", root.display());
}

/// Removes the CMake build folder when its cache was configured from another source tree (the repository and a
/// packaged copy of it can share one `OUT_DIR`: `cargo package` verifies in the same target folder), which CMake
/// refuses to reconfigure.
fn forget_other_sources(build: &Path, root: &Path) {
    let cache = match fs::read_to_string(build.join("CMakeCache.txt")) {
        Ok(text) => text,
        Err(_) => return,
    };
    let configured = cache.lines().find_map(|line| line.strip_prefix("CMAKE_HOME_DIRECTORY:INTERNAL="));
    let same = configured.map_or(false, |dir| {
        fs::canonicalize(dir).ok().zip(fs::canonicalize(root).ok()).map_or(false, |(a, b)| a == b)
    });
    if !same {
        fs::remove_dir_all(build).unwrap_or_else(|error| {
            fail(&format!("cannot remove {}, configured from other sources: {}", build.display(), error))
        });
    }
}

/// Whether `dir` holds the C library's CMake project: the repository's root, or its copy in a packaged crate.
fn is_source_tree(dir: &Path) -> bool {
    dir.join("CMakeLists.txt").is_file()
        && dir.join("c").join("forkunion.cpp").is_file()
        && dir.join("include").join("forkunion.h").is_file()
}

/// The `-l` libraries of `c_libs_static` in `forkunion.pc`, besides the library itself and threads.
fn cxx_runtime(pc: &Path) -> Vec<String> {
    let text = fs::read_to_string(pc).unwrap_or_else(|error| {
        fail(&format!("cannot read {} written by the configure step: {}", pc.display(), error))
    });
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix("c_libs_static="))
        .unwrap_or_else(|| fail(&format!("{} has no c_libs_static line", pc.display())));
    line.split_whitespace()
        .filter_map(|word| word.strip_prefix("-l"))
        .filter(|name| *name != "forkunion_static" && *name != "pthread")
        .map(str::to_string)
        .collect()
}

/// The crate's version must be the C library's (`FORKUNION_VERSION_*` in include/forkunion/base/types.hpp).
fn check_versions(manifest: &Path, root: &Path) {
    let header = root.join("include").join("forkunion").join("base").join("types.hpp");
    let text = fs::read_to_string(&header)
        .unwrap_or_else(|error| fail(&format!("cannot read {}: {}", header.display(), error)));
    let part = |name: &str| -> String {
        let prefix = format!("#define FORKUNION_VERSION_{} ", name);
        text.lines()
            .find_map(|line| line.strip_prefix(prefix.as_str()))
            .map(|value| value.trim().to_string())
            .unwrap_or_else(|| fail(&format!("{} defines no FORKUNION_VERSION_{}", header.display(), name)))
    };
    let c_version = format!("{}.{}.{}", part("MAJOR"), part("MINOR"), part("PATCH"));
    let crate_version = env::var("CARGO_PKG_VERSION").unwrap_or_default();
    if c_version != crate_version {
        fail(&format!(
            "{}/Cargo.toml says version {}, the C library {} says {}: bump them together",
            manifest.display(),
            crate_version,
            header.display(),
            c_version
        ));
    }
}

fn on_path(program: &str) -> bool {
    env::var_os("PATH").map_or(false, |paths| env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

fn run(command: &mut Command, step: &str) {
    let status = command
        .status()
        .unwrap_or_else(|error| fail(&format!("cannot run cmake for the C library's {} step: {}", step, error)));
    if !status.success() {
        fail(&format!("the C library's CMake {} step failed ({}): {:?}", step, status, command));
    }
}

fn fail(message: &str) -> ! {
    eprintln!("forkunion build script: {}", message);
    std::process::exit(1);
}
