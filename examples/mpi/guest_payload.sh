#!/usr/bin/env bash
# Lays out what the NUMA guest needs to run the MPI example: Open MPI and PMIx as Debian installed them (the
# files of openmpi-bin, openmpi-common, libopenmpi3 and libpmix2, without documentation), every shared library
# their programs, plugins and the example load, the example, and the guest's script as payload/mpi/run.
#
#   guest_payload.sh OUT EXAMPLE
#
# OUT mirrors the root file system (merged /usr, as on Debian 12): test/numa_vm/run.sh --payload OUT merges it into
# the initramfs. Exit 1, saying what is missing, if a package or a library cannot be found.
set -euo pipefail
out=$1 example=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out"
mkdir -p "$out/usr/lib" "$out/usr/lib64" "$out/usr/bin" "$out/payload/mpi"
ln -s usr/lib "$out/lib"
ln -s usr/lib64 "$out/lib64"

elves=()
for package in openmpi-bin openmpi-common libopenmpi3 libpmix2; do
    dpkg-query -W "$package" >/dev/null 2>&1 || { echo "guest_payload: $package is not installed" >&2 && exit 1; }
    while IFS= read -r path; do
        [[ -f $path || -L $path ]] || continue
        [[ $path == /usr/share/doc/* || $path == /usr/share/man/* || $path == /usr/share/lintian/* ]] && continue
        mkdir -p "$out$(dirname "$path")"
        cp -a "$path" "$out$path"
        [[ -f $path && ! -L $path ]] && head -c 4 "$path" | grep -q ELF && elves+=("$path")
    done < <(dpkg -L "$package")
done
ln -sf orterun "$out/usr/bin/mpirun"
cp "$example" "$out/payload/mpi/forkunion_example_mpi_search"
cp "$here/guest_run.sh" "$out/payload/mpi/run"
chmod +x "$out/payload/mpi/run"
elves+=("$example")

# Every library those load, placed at its real path with its soname beside it; a plugin's missing library (a
# network fabric this machine lacks) only keeps that plugin from loading, as on the host.
declare -A copied=()
for elf in "${elves[@]}"; do
    while read -r library; do
        [[ -n $library && -z ${copied[$library]:-} ]] || continue
        copied[$library]=1
        real=$(readlink -f "$library")
        folder=$(readlink -f "$(dirname "$library")")
        mkdir -p "$out$folder"
        [[ -e $out$folder/$(basename "$real") ]] || cp "$real" "$out$folder/"
        [[ $(basename "$library") == "$(basename "$real")" ]] || ln -sf "$(basename "$real")" "$out$folder/$(basename "$library")"
    done < <(ldd "$elf" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }')
done
echo "guest_payload: $(find "$out" -type f | wc -l) files, $(du -sh "$out" | cut -f1) in $out"
