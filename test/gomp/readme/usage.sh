#!/usr/bin/env bash
# The README's commands, run as written: build an OpenMP program with GCC, run it under LD_PRELOAD, through the
# drop-in's libgomp.so.1, and linked against the drop-in. `prefix` holds lib/libforkunion_gomp.so and
# lib/forkunion/libgomp.so.1, as an install lays them out; every run must print what libgomp's run prints.
#   bash usage.sh <prefix> <work directory> <saxpy.c>
set -euo pipefail
prefix=$1
cd "$2"
cp "$3" saxpy.c
gcc -O2 -fopenmp saxpy.c -o saxpy
expected=$(./saxpy)

LD_PRELOAD="$prefix/lib/libforkunion_gomp.so" ./saxpy      # libgomp is loaded too, but serves no call
LD_LIBRARY_PATH="$prefix/lib/forkunion" ./saxpy            # this libgomp.so.1 is the drop-in: no libgomp at all
gcc -O2 -fopenmp -c saxpy.c && gcc saxpy.o -o saxpy_fu -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lforkunion_gomp
./saxpy_fu                                                 # linked against the drop-in, no -lgomp

for run in "env LD_PRELOAD=$prefix/lib/libforkunion_gomp.so ./saxpy" "env LD_LIBRARY_PATH=$prefix/lib/forkunion ./saxpy" ./saxpy_fu; do
    got=$($run)
    [[ $got == "$expected" ]] || { echo "usage.sh: '$run' printed '$got', libgomp printed '$expected'" >&2; exit 1; }
done
if ldd ./saxpy_fu | grep -q libgomp; then echo "usage.sh: saxpy_fu still needs libgomp" >&2; exit 1; fi
# The symlink route really keeps the system's libgomp out of the process.
if LD_LIBRARY_PATH="$prefix/lib/forkunion" LD_DEBUG=libs ./saxpy 2>&1 | grep "calling init: .*libgomp.so.1" |
    grep -qv "$prefix/lib/forkunion"; then
    echo "usage.sh: the system libgomp was loaded despite LD_LIBRARY_PATH" >&2
    exit 1
fi
echo "usage.sh: the same output under libgomp, LD_PRELOAD, LD_LIBRARY_PATH and direct linking: $expected"
