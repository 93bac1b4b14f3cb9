# Topology, its parsers, fuzz-corpus replays and affinity (issue 4 items 1, 2, 5, 6; issue 7 item 1).
# Included from test/CMakeLists.txt, which defines `forkunion_add_gtest`.
include(forkunion_sysfs_fixtures) # unpacks test/fixtures/sysfs/*/*.tar.gz into <build>/sysfs/

forkunion_add_gtest(forkunion_test_cpu_mask cpu_mask_test.cpp)
forkunion_add_gtest(forkunion_test_parse parse_test.cpp)
forkunion_add_gtest(forkunion_test_affinity affinity_test.cpp)
forkunion_add_gtest(forkunion_test_topology topology_test.cpp)
target_compile_definitions(forkunion_test_topology PRIVATE
    FORKUNION_SYSFS_FIXTURES_SOURCE="${FORKUNION_SYSFS_FIXTURES_SOURCE}"
    FORKUNION_SYSFS_FIXTURES_ROOT="${FORKUNION_SYSFS_FIXTURES_ROOT}")

# The live harvest honours the affinity mask: under `taskset -c 0` it sees exactly one core, CPU 0.
add_executable(forkunion_topology_probe topology_probe.cpp)
target_link_libraries(forkunion_topology_probe PRIVATE forkunion::header forkunion_warnings)
find_program(FORKUNION_TASKSET taskset)
if(FORKUNION_TASKSET)
    # In cross builds the probe runs under the emulator, itself started by taskset (the mask is inherited).
    add_test(NAME topology.taskset_one_core
             COMMAND "${FORKUNION_TASKSET}" -c 0 ${CMAKE_CROSSCOMPILING_EMULATOR} $<TARGET_FILE:forkunion_topology_probe> 0)
else()
    message(WARNING "forkunion: taskset not found, topology.taskset_one_core is not registered (apt-get install util-linux)")
endif()

# Cross-check of the live harvest against hwloc: PU count, NUMA nodes, per-node RAM and L3 sizes.
find_program(FORKUNION_LSTOPO lstopo-no-graphics)
if(FORKUNION_LSTOPO)
    forkunion_add_gtest(forkunion_test_topology_hwloc topology_hwloc_test.cpp)
    target_compile_definitions(forkunion_test_topology_hwloc PRIVATE FORKUNION_LSTOPO="${FORKUNION_LSTOPO}")
else()
    message(WARNING "forkunion: lstopo-no-graphics not found, the hwloc cross-check is not registered (apt-get install hwloc)")
endif()

# Every fuzz target's seed corpus, replayed through the same entry point with this build's compiler and
# sanitizers (libFuzzer itself runs in .ci/fuzz.sh with clang).
foreach(_parser cpulist cpumask meminfo distance cache_size)
    add_executable(forkunion_fuzz_replay_${_parser} fuzz/fuzz_${_parser}.cpp fuzz/replay_main.cpp)
    target_link_libraries(forkunion_fuzz_replay_${_parser} PRIVATE forkunion::header forkunion_warnings)
    add_test(NAME fuzz.replay.${_parser}
             COMMAND forkunion_fuzz_replay_${_parser} "${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${_parser}")
endforeach()
