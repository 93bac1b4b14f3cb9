#!/usr/bin/env bash
# The Rust crate's CI stage: run from the repository root (`bash rust/ci.sh`), offline, as root or not.
#   1. cargo test: unit, integration and doc tests (the C library built by the build script, with ccache);
#   2. the same with the `portable` and `place-memory-on-domain` features (another C build: FORKUNION_PORTABLE=ON);
#   3. the same against a C library built with ASan and UBSan, the sanitizer runtime linked into every test binary;
#   4. rust/bench built against Debian's Rayon (librust-rayon-dev), its settings refusals, a short N-body and dispatch
#      run of every backend, and the N-body's final state against the C++ binary's when the release workflow built it;
#   5. the compile_fail doc tests' error codes, which only a nightly rustdoc checks: skipped, saying so, without one;
#   6. editions/e2021 and editions/e2024: crates of each edition that depend on this one by path and run the README's
#      Rust section, the documented snippets and every doc-comment example as their own doc tests (sharing target/);
#   7. package.sh: `cargo package --offline` with the C sources vendored, the .crate built and tested unpacked in a
#      temporary folder outside the repository, and refused without them.
# Each step prints its wall time. Needs cargo (Rust >= 1.63), CMake >= 3.21, a C++20 compiler.
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TERM_COLOR=never
# rustup installs into ~/.cargo/bin, which a non-login shell may not have on PATH.
if ! command -v cargo >/dev/null && [[ -x "$HOME/.cargo/bin/cargo" ]]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null || { echo "rust/ci.sh: no cargo on PATH (Rust 1.63 or newer is needed)" >&2; exit 1; }

step() {
    local name=$1
    shift
    local start=$SECONDS
    echo "---- rust: ${name}"
    "$@"
    echo "---- rust: ${name}: passed in $((SECONDS - start)) s"
}

sanitized_tests() {
    local flags="-C link-arg=-fsanitize=address,undefined"
    FORKUNION_SANITIZE=address RUSTFLAGS="$flags" RUSTDOCFLAGS="$flags" \
        ASAN_OPTIONS="detect_leaks=1:abort_on_error=0" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
        cargo test --offline --target-dir target/sanitized
}

refuses() { # refuses VARIABLE=VALUE EXPECTED-MESSAGE-START: the binary exits 1 with that one line
    local output status=0
    output="$(env "$1" bench/target/release/nbody 2>&1 >/dev/null)" || status=$?
    if [[ $status -ne 1 || "$output" != "$2"* ]]; then
        echo "nbody with $1: expected status 1 and \"$2...\", got $status and \"$output\"" >&2
        return 1
    fi
}

benchmarks() {
    if [[ ! -d /usr/share/cargo/registry/rayon-1.6.1 && -z "$(ls -d /usr/share/cargo/registry/rayon-1.* 2>/dev/null)" ]]; then
        echo "skipped: Debian's Rayon is not installed (apt-get install -y librust-rayon-dev)"
        return 0
    fi
    (cd bench && cargo build --release --offline)
    refuses FORKUNION_SEED=-1 "FORKUNION_SEED: expected an integer from 0 to 4294967295 or \"random\""
    refuses FORKUNION_WARMUP=1.5s "FORKUNION_WARMUP: expected an integer followed by \"ms\" or \"s\""
    refuses FORKUNION_THREADS=two "FORKUNION_THREADS: expected an integer from 0 to"
    refuses FORKUNION_BACKEND=openmp "FORKUNION_BACKEND: expected one of forkunion_static_shared,"
    refuses FORKUNION_NBODY_CHECK=maybe "FORKUNION_NBODY_CHECK: expected 1, 0, true or false"
    refuses FORKUNION_IDLE=busy "FORKUNION_IDLE: expected spin, adaptive, nap or sleep"
    local short=(FORKUNION_WARMUP=50ms FORKUNION_TIME_LIMIT=300ms FORKUNION_ROUNDS=3)
    env "${short[@]}" FORKUNION_NBODY_CHECK=1 FORKUNION_NBODY_COUNT=64 \
        FORKUNION_BACKEND="$(bench/target/release/nbody --list | paste -sd, -)" bench/target/release/nbody
    env "${short[@]}" bench/target/release/dispatch
    bash bench/check_nbody.sh
}

nightly_error_codes() {
    if ! cargo +nightly --version >/dev/null 2>&1; then
        echo "skipped: no nightly toolchain, whose rustdoc alone checks the error codes of compile_fail doc tests"
        return 0
    fi
    cargo +nightly test --offline --doc --target-dir target/nightly
}

editions() {
    local edition minor
    minor="$(rustc --version | sed -n 's/^rustc 1\.\([0-9]*\).*/\1/p')"
    for edition in 2021 2024; do
        if [[ $edition == 2024 && ${minor:-0} -lt 85 ]]; then
            echo "skipped: edition 2024 needs Rust 1.85 or newer ($(rustc --version))"
            continue
        fi
        (cd "editions/e$edition" && cargo test --offline --target-dir ../../target)
    done
}

step "cargo test" cargo test --offline
step "cargo test --features portable,place-memory-on-domain" \
    cargo test --offline --features portable,place-memory-on-domain --target-dir target/features
step "cargo test against the C library with ASan and UBSan" sanitized_tests
step "benchmarks (against Debian's Rayon)" benchmarks
step "compile_fail error codes (nightly rustdoc)" nightly_error_codes
step "edition 2021 and 2024 crates" editions
step "cargo package, and the .crate built and tested alone" bash package.sh
