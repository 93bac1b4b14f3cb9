/**
 *  @file   topology_probe.cpp
 *  @brief  Harvests the live topology and checks that it holds exactly the cores listed on the command line.
 *
 *  `taskset -c 0 forkunion_topology_probe 0` is the ctest `topology.taskset_one_core`: the live harvest must
 *  honour the affinity mask it is started with. Exits 0 on a match, 1 with a message otherwise.
 */
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <forkunion/hardware/cores.hpp>
#include <forkunion/topology/topology.hpp>

namespace fu = forkunion;

int main(int argc, char **argv) {
    std::vector<unsigned long> expected;
    for (int i = 1; i < argc; ++i) expected.push_back(std::strtoul(argv[i], nullptr, 10));
    fu::machine_topology_t topology;
    if (!topology.try_harvest()) return std::puts("probe: the live harvest failed"), EXIT_FAILURE;
    std::vector<unsigned long> seen;
    for (std::size_t d = 0; d != topology.compute_domains_count(); ++d)
        for (std::uint32_t core : topology.cores_in(d)) seen.push_back(core);
    std::printf("probe: %zu compute domain(s), %zu of %zu online cores allowed:", topology.compute_domains_count(),
                topology.logical_cores_count(), topology.online_cores_count());
    for (unsigned long core : seen) std::printf(" %lu", core);
    std::printf("\n");
    bool const match = seen == expected && topology.logical_cores_count() == expected.size() &&
                       topology.allowed_cores_count() == expected.size() &&
                       fu::allowed_cores_count() == expected.size();
    if (!match) std::puts("probe: the harvest does not hold exactly the expected cores");
    return match ? EXIT_SUCCESS : EXIT_FAILURE;
}
