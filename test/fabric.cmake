# The measured memory fabric: `include/forkunion/fabric*.hpp` <-> `test/fabric_test.cpp` (issue 4 item 3).
# Included from test/CMakeLists.txt, which defines `forkunion_add_gtest`. The recorded two-socket Xeon comes from
# the sysfs fixtures that `forkunion_sysfs_fixtures` unpacks into <build>/sysfs/.
include(forkunion_sysfs_fixtures)
forkunion_add_gtest(forkunion_test_fabric fabric_test.cpp)
target_compile_definitions(forkunion_test_fabric PRIVATE
    FORKUNION_SYSFS_FIXTURES_ROOT="${FORKUNION_SYSFS_FIXTURES_ROOT}")
