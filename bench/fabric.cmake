# The measured fabric against hand-written baselines (issue 4 item 3): `forkunion_bench_fabric`, part of
# `--target forkunion_bench`. Included from bench/CMakeLists.txt, which defines `forkunion_bench_common`.
add_executable(forkunion_bench_fabric fabric.cpp)
target_link_libraries(forkunion_bench_fabric PRIVATE forkunion_bench_common)
add_dependencies(forkunion_bench forkunion_bench_fabric)

# A short run (64 MiB buffers, 2 ms latency windows) prints a row per edge and the baselines.
add_test(NAME bench.fabric.smoke COMMAND forkunion_bench_fabric)
set_tests_properties(bench.fabric.smoke PROPERTIES
    ENVIRONMENT "FORKUNION_FABRIC_BUFFER_MIB=64;FORKUNION_TIME_LIMIT=10ms"
    PASS_REGULAR_EXPRESSION "RESULT benchmark=fabric row=edge compute=0 memory=0 .*RESULT benchmark=fabric row=baseline_memcpy"
    TIMEOUT 300)

# Its own setting is refused like every other (SPEC §9): status 1, one line naming it.
add_test(NAME bench.settings.refuses.fabric.FORKUNION_FABRIC_BUFFER_MIB
         COMMAND "${CMAKE_COMMAND}" "-DPROGRAM=$<TARGET_FILE:forkunion_bench_fabric>"
                 "-DENV=FORKUNION_FABRIC_BUFFER_MIB=lots"
                 "-DMESSAGE=^FORKUNION_FABRIC_BUFFER_MIB: expected an integer from 0 to"
                 -P "${CMAKE_CURRENT_SOURCE_DIR}/expect_failure.cmake")
