#!/usr/bin/env bash
# Packages the crate and proves the package stands alone: run from anywhere (`bash rust/package.sh`), offline.
#   1. copies into rust/vendor/forkunion/ what the build script and the tests read from the repository: the whole
#      CMake project that builds the C library (CMakeLists.txt, cmake/, include/, c/ but the OpenMP drop-in in c/gomp,
#      whose add_subdirectory gets an empty stand-in), the README's Rust section and the sysfs fixture the tests use;
#   2. `cargo package --offline` (which also builds the unpacked copy: cargo's verification), the .crate in
#      rust/target/packaged/package/;
#   3. unpacks the .crate into a temporary folder outside the repository and runs `cargo test` (every unit,
#      integration and doc test) there, offline, after checking that the build script there cannot see a repository around it;
#   4. packages once more without the vendored copy and expects the build script's refusal, so that step 3 could
#      have failed.
# rust/vendor/ is removed on exit, whatever happens: a copy left behind would shadow the repository's sources
# (the build script warns when it finds one). Needs what rust/ci.sh needs.
set -euo pipefail
crate="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$crate")"
cd "$crate"
export CARGO_TERM_COLOR=never
scratch="$(mktemp -d "${TMPDIR:-/tmp}/forkunion-package.XXXXXX")"
cleanup() { rm -rf "$crate/vendor" "$scratch"; }
trap cleanup EXIT

vendor="$crate/vendor/forkunion"
# A target folder of its own: the repository's builds keep their CMake configuration, and the .crate lands in
# rust/target/packaged/package/.
target="$crate/target/packaged"
rm -rf "$crate/vendor"
mkdir -p "$vendor/c" "$vendor/c/gomp" "$vendor/docs/readme-sections" "$vendor/test/fixtures/sysfs"
cp "$repo/CMakeLists.txt" "$vendor/"
cp -R "$repo/cmake" "$repo/include" "$vendor/"
for entry in "$repo"/c/*; do
    [[ "$(basename "$entry")" == gomp ]] || cp -R "$entry" "$vendor/c/"
done
printf '%s\n' "# The OpenMP drop-in's sources are not part of the Rust crate's package: nothing to build here." \
    >"$vendor/c/gomp/CMakeLists.txt"
cp "$repo/docs/readme-sections/rust.md" "$vendor/docs/readme-sections/"
cp -R "$repo/test/fixtures/sysfs/32intel64-2p8co2t+8ve" "$vendor/test/fixtures/sysfs/"

# --allow-dirty: this checks the package's contents and build, not that the working tree is committed.
cargo package --offline --allow-dirty --target-dir "$target"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
package="$target/package/forkunion-$version.crate"
[[ -f "$package" ]] || { echo "package.sh: cargo package wrote no $package" >&2; exit 1; }
contents="$(tar -tzf "$package")"
echo "package.sh: $package: $(wc -c <"$package") bytes, $(wc -l <<<"$contents") files"
for needed in CMakeLists.txt cmake/forkunion_features.cmake include/forkunion.h include/forkunion.hpp c/forkunion.cpp; do
    grep -qx "forkunion-$version/vendor/forkunion/$needed" <<<"$contents" ||
        { echo "package.sh: the .crate lacks vendor/forkunion/$needed" >&2; exit 1; }
done

tar -xzf "$package" -C "$scratch"
unpacked="$scratch/forkunion-$version"
for outside in CMakeLists.txt c include; do
    if [[ -e "$scratch/$outside" ]]; then
        echo "package.sh: $scratch/$outside exists: the unpacked crate is not alone" >&2
        exit 1
    fi
done
# `cargo test` builds the library as `cargo build` does (and cargo's verification above already built it there).
(cd "$unpacked" && cargo test --offline --target-dir "$target")

# Without the vendored sources the package must be refused by its own build script.
rm -rf "$crate/vendor"
status=0
output="$(cargo package --offline --allow-dirty --target-dir "$target" 2>&1)" || status=$?
if [[ $status -eq 0 || "$output" != *"the C sources are neither in"* ]]; then
    echo "package.sh: a package without vendor/ was not refused (status $status):" >&2
    echo "$output" | tail -5 >&2
    exit 1
fi
echo "package.sh: without vendor/, cargo package fails as it should: the C sources are neither in ..."
