#!/usr/bin/env bash
# Runs the hybrid example under Open MPI with two ranks, with the command lines the README shows, and checks what
# it printed:
#
#   run_mpi.sh [--rankfile|--unbound] EXAMPLE
#
#   (default)   `--bind-to core`: Open MPI gives each rank a core of its own where there are two (and, with
#               `--oversubscribe`, overlaps them where there are fewer). The ids must equal the serial scan's.
#   --rankfile  ranks.txt gives rank r the r-th core of this process's allowed set, and `--expect-disjoint` makes the
#               example fail if two ranks' pools share a core: each pool must run on exactly its rank's core.
#               Skips (77) with fewer than two allowed cores.
#   --unbound   `--bind-to none` with `--expect-disjoint`: both pools span every core, and the example must refuse
#               the run (so the check the rankfile run passes can fail).
#
# As root (CI), Open MPI refuses to start unless told it may: OMPI_ALLOW_RUN_AS_ROOT=1 and
# OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (the same as `--allow-run-as-root`). Exit: 0 if the run went as its mode says,
# 1 otherwise, 77 when skipped.
set -uo pipefail
mode=default
if [[ ${1:-} == --rankfile || ${1:-} == --unbound ]]; then mode=${1#--} && shift; fi
example=$(readlink -f "$1")
command -v mpirun >/dev/null || { echo "mpi: skipped: no mpirun (apt-get install openmpi-bin)" && exit 77; }
if [[ $(id -u) == 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" && ln -s "$example" forkunion_example_mpi_search
expected=("ids equal the serial scan's exactly")
run() { # the command, echoed, its output kept in ./log
    echo "mpi: $*"
    "$@" 2>&1 | tee log
    status=${PIPESTATUS[0]}
}
case $mode in
rankfile)
    mapfile -t cores < <(taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' |
        awk -F- '{ last = NF > 1 ? $2 : $1; for (c = $1; c <= last; ++c) print c }')
    ((${#cores[@]} >= 2)) || { echo "mpi: skipped: ${#cores[@]} allowed core, a rankfile needs two" && exit 77; }
    printf 'rank 0=%s slot=%s\nrank 1=%s slot=%s\n' "$(hostname)" "${cores[0]}" "$(hostname)" "${cores[1]}" >ranks.txt
    echo "mpi: ranks.txt: $(tr '\n' ';' <ranks.txt)"
    for rank in 0 1; do
        expected+=("rank $rank of 2: allowed cores ${cores[$rank]}; pool: 1 thread over 1 compute domain, on cores ${cores[$rank]}")
    done
    expected+=("the ranks' pools share no core")
    # `rmaps_rank_file_physical`: ranks.txt names OS CPU ids, as the affinity mask does.
    run mpirun -np 2 --rankfile ranks.txt --mca rmaps_rank_file_physical 1 ./forkunion_example_mpi_search --expect-disjoint
    ;;
unbound)
    expected+=("(refused)")
    run mpirun -np 2 --oversubscribe --bind-to none ./forkunion_example_mpi_search --expect-disjoint
    ;;
*) run mpirun -np 2 --oversubscribe --bind-to core ./forkunion_example_mpi_search ;;
esac
verdict=0
for line in "${expected[@]}"; do
    grep -qF "$line" log || { echo "mpi: expected '$line'" && verdict=1; }
done
if [[ $mode == unbound ]]; then
    ((status != 0)) || { echo "mpi: the overlapping run was not refused" && verdict=1; }
else
    ((status == 0)) || { echo "mpi: mpirun exited $status" && verdict=1; }
fi
echo "mpi: $mode: $([[ $verdict == 0 ]] && echo passed || echo FAILED)"
exit $verdict
