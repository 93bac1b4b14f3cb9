# Tests of the hardware layer (atomics, capabilities, waits, build switches), included by test/CMakeLists.txt.
#
# Cross builds (cmake/toolchains/*.cmake) run every test under qemu-user; their toolchain files say what the
# emulated CPU offers (FORKUNION_CROSS_EXPECTED_CAPABILITIES), which the capability test asserts, and may name a
# second, older emulated CPU (FORKUNION_CROSS_BASELINE_EMULATOR) that runs the atomics and capability tests again,
# so the run-time fallbacks run there too.

forkunion_add_gtest(forkunion_test_atomics atomics_test.cpp)

# Under emulation every minute counts (.ci/cross.sh runs four targets on two cores): the one-translation-unit-per-
# header check, which tests the includes rather than the target, runs in the native builds only.
if(CMAKE_CROSSCOMPILING AND TARGET forkunion_header_check)
    set_target_properties(forkunion_header_check PROPERTIES EXCLUDE_FROM_ALL ON)
endif()

add_executable(forkunion_test_capabilities capabilities_test.cpp)
target_link_libraries(forkunion_test_capabilities PRIVATE forkunion::header forkunion_warnings GTest::gtest
                                                          GTest::gtest_main)
if(CMAKE_CROSSCOMPILING)
    # qemu-user shows the host's /proc/cpuinfo: the emulated CPU is checked against the list its toolchain file
    # gives instead (a toolchain file of your own may leave it out; then that check is not built).
    target_compile_definitions(forkunion_test_capabilities PRIVATE FORKUNION_TEST_EMULATED=1)
    if(DEFINED FORKUNION_CROSS_EXPECTED_CAPABILITIES)
        target_compile_definitions(forkunion_test_capabilities PRIVATE FORKUNION_TEST_EXPECTS_CAPABILITIES=1)
    else()
        message(STATUS "forkunion: no FORKUNION_CROSS_EXPECTED_CAPABILITIES; the emulated CPU's list is not checked")
    endif()
    gtest_discover_tests(forkunion_test_capabilities DISCOVERY_TIMEOUT 60
                         PROPERTIES TIMEOUT 300
                                    ENVIRONMENT "FORKUNION_TEST_EXPECT_CAPABILITIES=${FORKUNION_CROSS_EXPECTED_CAPABILITIES}")
else()
    gtest_discover_tests(forkunion_test_capabilities DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
endif()

if(CMAKE_CROSSCOMPILING AND FORKUNION_CROSS_BASELINE_EMULATOR)
    foreach(_target forkunion_test_atomics forkunion_test_capabilities)
        string(REPLACE "forkunion_test_" "" _name "${_target}")
        add_test(NAME ${_name}.on_baseline_cpu COMMAND ${FORKUNION_CROSS_BASELINE_EMULATOR} $<TARGET_FILE:${_target}>)
        set_tests_properties(${_name}.on_baseline_cpu PROPERTIES TIMEOUT 900 ENVIRONMENT
                             "FORKUNION_TEST_EXPECT_CAPABILITIES=${FORKUNION_CROSS_BASELINE_CAPABILITIES}")
    endforeach()
endif()

# No system call on the dispatch path in nap mode either (the capability word is detected before the window).
add_executable(forkunion_nap_syscalls nap_syscalls.cpp)
target_link_libraries(forkunion_nap_syscalls PRIVATE forkunion::header forkunion_warnings)
if(FORKUNION_STRACE AND NOT FORKUNION_SANITIZER)
    add_test(NAME hotpath.syscalls.nap
             COMMAND "${CMAKE_COMMAND}" -D "STRACE=${FORKUNION_STRACE}" -D "PROGRAM=$<TARGET_FILE:forkunion_nap_syscalls>"
                     -D "ARGS=" -D "TRACE=${CMAKE_CURRENT_BINARY_DIR}/hotpath_nap.strace"
                     -P "${CMAKE_CURRENT_SOURCE_DIR}/strace_check.cmake")
endif()

# Build switches: a typo and each contradiction must stop the build with a message naming the problem.
set(_foreign_feature LSE) # a feature this target cannot encode
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
    set(_foreign_feature WAITPKG)
endif()
set(_compile_target "")
if(CMAKE_CXX_COMPILER_TARGET)
    set(_compile_target "${CMAKE_CXX_COMPILE_OPTIONS_TARGET}${CMAKE_CXX_COMPILER_TARGET}")
endif()
add_test(NAME features.contradictions_fail_to_compile
         COMMAND "${CMAKE_COMMAND}" -D MODE=compile -D "CXX=${CMAKE_CXX_COMPILER}" -D "CXX_TARGET=${_compile_target}"
                 -D "INCLUDE=${PROJECT_SOURCE_DIR}/include" -D "FOREIGN=${_foreign_feature}"
                 -D "WORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/features_check"
                 -P "${CMAKE_CURRENT_SOURCE_DIR}/features_check.cmake")
if(NOT CMAKE_CROSSCOMPILING)
    add_test(NAME features.bad_options_fail_to_configure
             COMMAND "${CMAKE_COMMAND}" -D MODE=configure -D "SOURCE_DIR=${PROJECT_SOURCE_DIR}"
                     -D "CXX=${CMAKE_CXX_COMPILER}" -D "GENERATOR=${CMAKE_GENERATOR}" -D "FOREIGN=${_foreign_feature}"
                     -D "WORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/features_configure"
                     -P "${CMAKE_CURRENT_SOURCE_DIR}/features_check.cmake")
    set_tests_properties(features.bad_options_fail_to_configure PROPERTIES TIMEOUT 300)
endif()
