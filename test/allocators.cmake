# Memory placement: `include/forkunion/allocators*.hpp` <-> `test/allocators_test.cpp`.
# The huge-page tests reserve pages through sysfs when run as root (CI is), serialized by a file lock in /tmp, and
# restore the previous reservation; elsewhere they say why they skip and check the fallback to base pages.
forkunion_add_gtest(forkunion_test_allocators allocators_test.cpp)
