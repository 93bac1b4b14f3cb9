#!/usr/bin/env bash
# Boots a NUMA guest of the given shape under qemu-system-x86_64 and runs the guest suite inside it.
#
#   run.sh --guest BIN --shape-tool BIN [--state DIR] [--timeout S] [--accel auto|tcg|kvm] [--payload DIR]...
#          [--optional-payload DIR]... SHAPE [-- GUEST_ARGS...]
#
#   --guest       the statically linked suite (forkunion_numa_vm_guest), copied into the initramfs as is
#   --shape-tool  forkunion_numa_vm_shape, which turns SHAPE into the emulator's machine arguments
#   --state       where the accelerator probe's verdict, the initramfs, the console log and the JUnit XML go
#   --timeout     seconds the guest may run, boot included (default 150); past it the run fails
#   --accel       auto (default) probes once per state folder: KVM if a KVM guest boots, else TCG if an emulated
#                 one does, else every run skips; tcg or kvm force one
#   --payload     a folder laid out like a root file system, merged into the initramfs; after the suite the guest
#                 runs each executable /payload/*/run it brings (examples/mpi/guest_payload.sh makes one)
#   --optional-payload  the same, skipped with a note when the folder does not exist (not built here)
#   GUEST_ARGS    extra arguments of the suite, e.g. --gtest_filter='fabric.*'
#
# Environment: FORKUNION_NUMA_VM_KERNEL, a bzImage to boot instead of Debian's; FORKUNION_NUMA_VM_CACHE, where
# Debian's kernel is kept between runs (default ~/.cache/forkunion/numa_vm).
#
# Exit status: the guest's (the suite's, or the first failing payload's); 1 if the guest did not finish; 77 when a
# tool is missing (qemu-system-x86_64, busybox-static, a kernel package) or no accelerator boots a guest, after
# saying why.
set -euo pipefail

skip_code=77
skip() {
    echo "numa-vm: skipped: $*"
    exit "$skip_code"
}
fail() {
    echo "numa-vm: $*" >&2
    exit 1
}

here=$(cd "$(dirname "$0")" && pwd)
guest="" shape_tool="" state="$PWD/numa_vm_state" timeout_s=150 accel=auto shape="" payloads=() guest_args=()
while (($#)); do
    case $1 in
    --guest) guest=$2 && shift 2 ;;
    --shape-tool) shape_tool=$2 && shift 2 ;;
    --state) state=$2 && shift 2 ;;
    --timeout) timeout_s=$2 && shift 2 ;;
    --accel) accel=$2 && shift 2 ;;
    --payload) payloads+=("$2") && shift 2 ;;
    --optional-payload)
        if [[ -d $2 ]]; then payloads+=("$2"); else echo "numa-vm: no payload $2 (not built): not run"; fi
        shift 2
        ;;
    --) shift && guest_args=("$@") && break ;;
    -*) fail "unknown option $1 (see the comment at the top of $0)" ;;
    *) shape=$1 && shift ;;
    esac
done
[[ -n $shape && -f $shape ]] || fail "no shape file given, or '$shape' does not exist"
[[ -n $guest && -x $guest ]] || fail "--guest must name the built forkunion_numa_vm_guest"
[[ -n $shape_tool && -x $shape_tool ]] || fail "--shape-tool must name the built forkunion_numa_vm_shape"
[[ $accel == auto || $accel == tcg || $accel == kvm ]] || fail "--accel takes auto, tcg or kvm, not '$accel'"
name=$(basename "$shape" .shape)
mkdir -p "$state"

# ---- Tools ----
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
busybox=""
for candidate in /bin/busybox /usr/bin/busybox; do
    # The initramfs has no libraries: only a static busybox (Debian's busybox-static) runs there.
    if [[ -x $candidate ]] && ! ldd "$candidate" >/dev/null 2>&1; then busybox=$candidate && break; fi
done
[[ -n $busybox ]] || skip "no statically linked busybox (apt-get install busybox-static)"
if ldd "$guest" >/dev/null 2>&1; then fail "$guest is dynamically linked; the guest has no libraries"; fi
mapfile -t machine < <("$shape_tool" --qemu-args "$shape")
if ((${#machine[@]} == 0)); then fail "$shape does not parse: $("$shape_tool" --describe "$shape" 2>&1)"; fi

# ---- The kernel: Debian's linux-image-amd64, downloaded once and extracted without its install scripts ----
kernel=${FORKUNION_NUMA_VM_KERNEL:-}
if [[ -z $kernel ]]; then
    if ! command -v apt-cache >/dev/null || ! command -v dpkg-deb >/dev/null; then
        skip "no apt-cache/dpkg-deb to fetch Debian's kernel (or set FORKUNION_NUMA_VM_KERNEL to a bzImage)"
    fi
    package=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}' || true)
    version=$(apt-cache policy "$package" 2>/dev/null | awk '/Candidate:/ {print $2; exit}' || true)
    [[ -n $package && -n $version && $version != "(none)" ]] ||
        skip "apt knows no linux-image-amd64 package (apt-get update, or set FORKUNION_NUMA_VM_KERNEL)"
    cache=${FORKUNION_NUMA_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/forkunion/numa_vm}
    kernel=$cache/${package}_$version/vmlinuz
    mkdir -p "$cache"
    exec 9>"$cache/.lock"
    flock 9 # parallel runs share one download
    if [[ ! -s $kernel ]]; then
        start=$SECONDS
        download=$(mktemp -d "$cache/download.XXXXXX")
        if (cd "$download" && apt-get download -q -o APT::Sandbox::User=root "$package=$version" >/dev/null); then
            dpkg-deb --fsys-tarfile "$download"/*.deb | tar -x -C "$download" --wildcards './boot/vmlinuz-*'
            mkdir -p "$(dirname "$kernel")"
            mv "$download"/boot/vmlinuz-* "$kernel"
            echo "numa-vm: fetched $package $version into $(dirname "$kernel") in $((SECONDS - start)) s"
        else
            # Stale package lists name a version the mirror dropped: an earlier download still serves.
            earlier=$(find "$cache" -mindepth 2 -maxdepth 2 -name vmlinuz -size +0 | sort -V | tail -n 1)
            [[ -n $earlier ]] || { rm -rf "$download" && skip "apt-get download $package=$version failed" \
                "(no network, or stale package lists: apt-get update)"; }
            echo "numa-vm: apt-get download $package=$version failed; booting the earlier $earlier"
            kernel=$earlier
        fi
        rm -rf "$download"
    fi
    exec 9>&-
fi
[[ -s $kernel ]] || skip "no kernel at $kernel"

# ---- Initramfs ----
# gzip -1: the emulated guest decompresses it, and a stronger level saves little on static binaries.
make_initramfs() { # root folder, output
    (cd "$1" && find . -print | "$busybox" cpio -o -H newc 2>/dev/null) | gzip -1 >"$2"
}

# ---- Accelerator: KVM only if a KVM guest really boots (the device may exist and never run a guest) ----
boots_with() { # accelerator, seconds, initramfs: whether the probe guest prints its marker in time
    timeout --kill-after=5 "$2" qemu-system-x86_64 -accel "$1" -nodefaults -no-reboot -display none -monitor none \
        -m 256 -smp 1 -kernel "$kernel" -initrd "$3" -append "console=ttyS0 quiet panic=-1" -serial stdio 2>&1 |
        tr -d '\r' | grep -q forkunion-probe-ok
}
probe_accelerator() {
    local probe start=$SECONDS why
    probe=$(mktemp -d "$state/probe.XXXXXX")
    mkdir -p "$probe/root/bin"
    cp "$busybox" "$probe/root/bin/busybox"
    printf '#!/bin/busybox sh\n/bin/busybox echo forkunion-probe-ok\n/bin/busybox poweroff -f\n' >"$probe/root/init"
    chmod +x "$probe/root/init"
    make_initramfs "$probe/root" "$probe/initramfs.gz"
    # 10 s for KVM: a working one prints the marker within ~1 s, an emulated boot needs ~4 s to reach init on the CI
    # machine, and a KVM that never runs a guest spins a host core in the kernel for as long as it is given.
    if [[ ! -r /dev/kvm || ! -w /dev/kvm ]]; then
        why="no usable /dev/kvm"
    elif boots_with kvm 10 "$probe/initramfs.gz"; then
        echo "kvm (a KVM guest booted in $((SECONDS - start)) s)"
        rm -rf "$probe"
        return
    else
        why="a KVM guest did not boot within 10 s"
    fi
    # 90 s for TCG: ~4 s on an idle CI machine, many times that beside other work.
    start=$SECONDS
    if boots_with tcg 90 "$probe/initramfs.gz"; then
        echo "tcg ($why; an emulated guest booted in $((SECONDS - start)) s)"
    else
        echo "none ($why, and an emulated guest did not boot within 90 s either)"
    fi
    rm -rf "$probe"
}
if [[ $accel == auto ]]; then
    exec 8>"$state/.probe.lock"
    flock 8
    [[ -s $state/accelerator ]] || probe_accelerator >"$state/accelerator"
    exec 8>&-
    verdict=$(cat "$state/accelerator")
    accel=${verdict%% *}
    [[ $accel != none ]] || skip "neither KVM nor TCG boots a guest here: ${verdict#none }"
else
    verdict="$accel (forced)"
fi
if [[ $accel == kvm ]]; then
    accelerator=(-accel kvm)
else
    accelerator=(-accel "tcg,thread=multi")
fi

# ---- Boot ----
work="$state/$name"
rm -rf "$work"
mkdir -p "$work/root/bin" "$work/root/proc" "$work/root/sys" "$work/root/dev" "$work/root/payload"
cp "$busybox" "$work/root/bin/busybox"
cp "$here/init.sh" "$work/root/init"
chmod +x "$work/root/init"
cp "$guest" "$work/root/forkunion_numa_vm_guest"
cp "$shape" "$work/root/shape"
printf '%s\n' "${guest_args[@]}" >"$work/root/guest_args"
for payload in "${payloads[@]}"; do
    [[ -d $payload ]] || fail "--payload $payload is not a folder"
    cp -a "$payload/." "$work/root/"
done
make_initramfs "$work/root" "$work/initramfs.gz"

echo "numa-vm: $name: $("$shape_tool" --describe "$shape"), accelerator $verdict"
echo "numa-vm: qemu-system-x86_64 ${machine[*]}"
start=$(date +%s.%N)
set +e
timeout --kill-after=10 "$timeout_s" qemu-system-x86_64 "${accelerator[@]}" -nodefaults -no-reboot -display none \
    -monitor none "${machine[@]}" -kernel "$kernel" -initrd "$work/initramfs.gz" \
    -append "console=ttyS0 quiet panic=-1 nokaslr numa_balancing=disable" \
    -serial stdio -serial "file:$work/guest.xml" </dev/null 2>&1 | tr -d '\r' | tee "$work/console.log"
qemu_status=${PIPESTATUS[0]}
set -e
elapsed=$(awk -v start="$start" -v end="$(date +%s.%N)" 'BEGIN { printf "%.1f", end - start }')

verdict_line=$(grep -a '^forkunion-numa-vm: exit ' "$work/console.log" | tail -n 1 || true)
if [[ -z $verdict_line ]]; then
    if ((qemu_status == 124 || qemu_status == 137)); then
        fail "$name: the guest did not finish within $timeout_s s (console: $work/console.log)"
    fi
    fail "$name: the guest stopped without a verdict, qemu exit $qemu_status (console: $work/console.log)"
fi
guest_status=${verdict_line##* }
booted=$(sed -n 's/^forkunion-numa-vm: init at \([0-9.]*\) s.*/\1/p' "$work/console.log" | head -n 1)
echo "numa-vm: $name: guest exit $guest_status; init reached after ${booted:-?} s of guest uptime;" \
    "$elapsed s wall in all (JUnit XML: $work/guest.xml)"
exit "$guest_status"
