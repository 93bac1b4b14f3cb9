#!/bin/busybox sh
# shellcheck shell=dash
# The guest's /init: mounts the kernel's file systems, runs the suite on the shape it was booted with, then every
# executable /payload/*/run (the MPI example, where the initramfs carries it), and powers off. The host reads the
# verdict from the last console line, `forkunion-numa-vm: exit N`, and the suite's JUnit XML from the second port.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /dev/shm
hostname numa-vm
echo "forkunion-numa-vm: init at $(cut -d' ' -f1 /proc/uptime) s of uptime"

status=0
# shellcheck disable=SC2046 # the extra arguments are words, one per line
/forkunion_numa_vm_guest --shape=/shape --setup --gtest_color=no --gtest_output=xml:/tmp/guest.xml $(cat /guest_args) || status=$?
echo "forkunion-numa-vm: suite exit $status at $(cut -d' ' -f1 /proc/uptime) s"
for payload in /payload/*/run; do
    [ -x "$payload" ] || continue
    payload_status=0
    "$payload" || payload_status=$?
    echo "forkunion-numa-vm: $payload exit $payload_status at $(cut -d' ' -f1 /proc/uptime) s"
    [ "$status" -ne 0 ] || status=$payload_status
done
[ -f /tmp/guest.xml ] && cat /tmp/guest.xml >/dev/ttyS1
echo "forkunion-numa-vm: exit $status"
poweroff -f
