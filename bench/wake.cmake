# Benchmarks of the hardware layer, included by bench/CMakeLists.txt:
# - forkunion_bench_wake: wake-up latency and idle CPU of spin, nap and sleep(0), as a markdown table;
# - forkunion_bench_atomics: the cost of atomic_ref_t's run-time selection against a direct call and a pointer.
add_executable(forkunion_bench_wake wake.cpp)
target_link_libraries(forkunion_bench_wake PRIVATE forkunion::header forkunion_warnings)
add_test(NAME bench.wake.smoke COMMAND forkunion_bench_wake)
set_tests_properties(bench.wake.smoke PROPERTIES TIMEOUT 120 ENVIRONMENT
                     "FORKUNION_TIME_LIMIT=200ms;FORKUNION_WARMUP=10ms")
add_test(NAME bench.wake.rejects_malformed_environment COMMAND forkunion_bench_wake)
set_tests_properties(bench.wake.rejects_malformed_environment PROPERTIES
                     ENVIRONMENT "FORKUNION_TIME_LIMIT=10 seconds" WILL_FAIL ON)

add_executable(forkunion_bench_atomics atomics.cpp)
target_link_libraries(forkunion_bench_atomics PRIVATE forkunion::header forkunion_warnings benchmark::benchmark)
add_test(NAME bench.atomics.smoke COMMAND forkunion_bench_atomics --benchmark_min_time=0.01)
set_tests_properties(bench.atomics.smoke PROPERTIES TIMEOUT 120)
