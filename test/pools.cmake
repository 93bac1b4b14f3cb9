# Placement-aware pools (issue 7): `include/forkunion/colocated.hpp` <-> `test/colocated_test.cpp`,
# `include/forkunion/distributed.hpp` <-> `test/distributed_test.cpp`. Both instantiate the shared pool suite
# (test/pool_suite.hpp) and read recorded machines from the unpacked sysfs fixtures.
# Included from test/CMakeLists.txt, which defines `forkunion_add_gtest`.
include(forkunion_sysfs_fixtures) # unpacks test/fixtures/sysfs/*/*.tar.gz into <build>/sysfs/

foreach(_pool colocated distributed)
    forkunion_add_gtest(forkunion_test_${_pool} ${_pool}_test.cpp)
    target_compile_definitions(forkunion_test_${_pool} PRIVATE
        FORKUNION_SYSFS_FIXTURES_ROOT="${FORKUNION_SYSFS_FIXTURES_ROOT}")
endforeach()
