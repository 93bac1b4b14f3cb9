#!/bin/sh
# Inside the two-node guest: the MPI example with two ranks bound one NUMA node each, first by a rankfile (rank 0
# gets node 0's CPUs 0-1, rank 1 node 1's CPUs 2-3), then by Open MPI's own `--map-by numa --bind-to numa`. Each
# rank's pool must take exactly its node's two CPUs, and the two pools must share none.
set -u
cd "$(dirname "$0")" || exit 1
export PATH=/usr/bin:/bin
ip link set lo up
# Root in the guest: what `--allow-run-as-root` says, as environment variables. No ssh: the single-node launcher.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_plm=isolated OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo
export OMPI_MCA_btl_vader_single_copy_mechanism=none
printf 'rank 0=%s slot=0-1\nrank 1=%s slot=2-3\n' "$(hostname)" "$(hostname)" >/tmp/ranks.txt
node0="rank 0 of 2: allowed cores 0,1; pool: 2 threads over 1 compute domain, on cores 0,1"
node1="rank 1 of 2: allowed cores 2,3; pool: 2 threads over 1 compute domain, on cores 2,3"
verdict="ids equal the serial scan's exactly"
status=0
check() { # name, exit code of mpirun; the log is /tmp/mpi.log
    code=$2
    cat /tmp/mpi.log
    for line in "$node0" "$node1" "$verdict"; do
        grep -qF "$line" /tmp/mpi.log || { echo "mpi-in-guest: $1: missing '$line'" && code=1; }
    done
    echo "mpi-in-guest: $1: exit $code"
    [ "$code" -eq 0 ] || status=1
}
echo "mpi-in-guest: mpirun -np 2 --rankfile /tmp/ranks.txt (rank 0: CPUs 0-1, rank 1: CPUs 2-3)"
mpirun -np 2 --rankfile /tmp/ranks.txt --mca rmaps_rank_file_physical 1 ./forkunion_example_mpi_search --vectors 50000 --expect-disjoint >/tmp/mpi.log 2>&1
check rankfile $?
echo "mpi-in-guest: mpirun -np 2 --map-by numa --bind-to numa"
mpirun -np 2 --map-by numa --bind-to numa ./forkunion_example_mpi_search --vectors 50000 --expect-disjoint >/tmp/mpi.log 2>&1
check numa $?
exit $status
