# The C99 API (include/forkunion.h): tests written in C, the fork test, and the ABI checks.
#   c_api.<group>          test/c_api_test.c against libforkunion_static.a, one ctest per group, each group run
#                          under four capability masks (everything, no waits beyond pause, no pinning, no placement)
#   c_api.shared           every group again against libforkunion_shared.so (not in emulated cross builds, where
#                          the groups run with one mask and a thinner thread grid)
#   c_api.fork             a fork()ed child of a process with spawned pools (not under TSan, whose runtime does not
#                          support threads started after a multi-threaded fork, nor under qemu-user, which asserts)
#   c_api.abi.exports      `nm -D --defined-only` on the shared library lists only `fu_` symbols
#   c_api.abi.link_static  a C program linked by the C compiler driver with only what forkunion.pc says
#   c_api.abi.link_shared  the same against the shared library
include(forkunion_sysfs_fixtures)

# C99, pedantic, every warning an error: what a C user's strictest build sees of forkunion.h.
function(forkunion_c_program name library)
    add_executable(${name} ${ARGN})
    target_link_libraries(${name} PRIVATE ${library} Threads::Threads)
    set_target_properties(${name} PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
    target_compile_options(${name} PRIVATE $<$<COMPILE_LANG_AND_ID:C,GNU,Clang>:-pedantic -Wall -Wextra -Werror>)
    target_compile_definitions(
        ${name} PRIVATE "FORKUNION_TEST_SYSFS=\"${FORKUNION_SYSFS_FIXTURES_ROOT}/32intel64-2p8co2t+8ve\""
                        FORKUNION_TEST_VERSION_MAJOR=${PROJECT_VERSION_MAJOR}
                        FORKUNION_TEST_VERSION_MINOR=${PROJECT_VERSION_MINOR}
                        FORKUNION_TEST_VERSION_PATCH=${PROJECT_VERSION_PATCH})
endfunction()

forkunion_c_program(forkunion_c_api_test forkunion::static c_api_test.c)
forkunion_c_program(forkunion_c_api_test_shared forkunion::shared c_api_test.c)
if(CMAKE_CROSSCOMPILING) # emulated: one mask, a thinner thread grid (as the C++ suites thin theirs)
    target_compile_definitions(forkunion_c_api_test PRIVATE FORKUNION_TEST_QUICK=1)
endif()
forkunion_c_program(forkunion_c_api_fork_test forkunion::static c_api_fork_test.c)

# `lifecycle` asks for a thread table too large to allocate: ASan's allocator must return null (so that
# `operator new` throws and the pool reports `bad_alloc`) instead of stopping the process.
set(_asan_options "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:allocator_may_return_null=1")
foreach(_group status capabilities topology lifecycle dispatch domains split contention idle memory fabric)
    add_test(NAME c_api.${_group} COMMAND forkunion_c_api_test ${_group})
    set_tests_properties(c_api.${_group} PROPERTIES TIMEOUT 300 ENVIRONMENT "${_asan_options}")
endforeach()
if(NOT CMAKE_CROSSCOMPILING)
    add_test(NAME c_api.shared COMMAND forkunion_c_api_test_shared)
    set_tests_properties(c_api.shared PROPERTIES TIMEOUT 300 ENVIRONMENT "${_asan_options}")
endif()
if(NOT FORKUNION_SANITIZER STREQUAL "thread" AND NOT CMAKE_CROSSCOMPILING)
    add_test(NAME c_api.fork COMMAND forkunion_c_api_fork_test)
    set_tests_properties(c_api.fork PROPERTIES TIMEOUT 300)
endif()

# ABI checks: host tools on host binaries only.
find_program(FORKUNION_NM NAMES nm)
if(FORKUNION_NM AND NOT CMAKE_CROSSCOMPILING)
    add_test(NAME c_api.abi.exports
             COMMAND "${CMAKE_COMMAND}" -D "NM=${FORKUNION_NM}" -D "LIBRARY=$<TARGET_FILE:forkunion_shared>"
                     -P "${CMAKE_CURRENT_SOURCE_DIR}/c_api_exports.cmake")
endif()
if(NOT CMAKE_CROSSCOMPILING AND EXISTS "${PROJECT_BINARY_DIR}/forkunion.pc")
    separate_arguments(_c_flags UNIX_COMMAND "${CMAKE_C_FLAGS}")
    string(REPLACE ";" "|" _c_flags "${_c_flags}") # a list through `-D`
    foreach(_kind static shared)
        add_test(NAME c_api.abi.link_${_kind}
                 COMMAND "${CMAKE_COMMAND}" -D "KIND=${_kind}" -D "CC=${CMAKE_C_COMPILER}" -D "C_FLAGS=${_c_flags}"
                         -D "PC=${PROJECT_BINARY_DIR}/forkunion.pc" -D "INCLUDE=${PROJECT_SOURCE_DIR}/include"
                         -D "LIBRARY=$<TARGET_FILE:forkunion_${_kind}>"
                         -D "SOURCE=${PROJECT_SOURCE_DIR}/examples/c/hello_callback.c"
                         -D "WORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/c_api_link_${_kind}"
                         -P "${CMAKE_CURRENT_SOURCE_DIR}/c_api_link.cmake")
        set_tests_properties(c_api.abi.link_${_kind} PROPERTIES TIMEOUT 120)
    endforeach()
endif()

# Hot path: no system call (strace, as for the C++ pool) and no heap call (interposed malloc) in 10^5 dispatches.
# Not under sanitizers, which interpose malloc and make their own system calls.
if(NOT FORKUNION_SANITIZER AND NOT CMAKE_CROSSCOMPILING)
    forkunion_c_program(forkunion_c_api_hotpath forkunion::static c_api_hotpath.c)
    foreach(_shape inclusive exclusive)
        add_test(NAME c_api.hotpath.allocations.${_shape} COMMAND forkunion_c_api_hotpath ${_shape})
        if(FORKUNION_STRACE)
            add_test(NAME c_api.hotpath.syscalls.${_shape}
                     COMMAND "${CMAKE_COMMAND}" -D "STRACE=${FORKUNION_STRACE}"
                             -D "PROGRAM=$<TARGET_FILE:forkunion_c_api_hotpath>" -D "ARGS=${_shape}"
                             -D "TRACE=${CMAKE_CURRENT_BINARY_DIR}/c_api_hotpath_${_shape}.strace"
                             -P "${CMAKE_CURRENT_SOURCE_DIR}/strace_check.cmake")
        endif()
    endforeach()
endif()

# The README's C snippets are compiled code: each is verbatim text of an example that CI builds and runs.
add_test(NAME c_api.readme COMMAND "${CMAKE_COMMAND}" -D "README=${PROJECT_SOURCE_DIR}/README.md"
                                   -D "EXAMPLES=${PROJECT_SOURCE_DIR}/examples/c"
                                   -P "${CMAKE_CURRENT_SOURCE_DIR}/c_api_readme.cmake")

# The install: libraries, header, package config and .pc, used from a C-only CMake project and from the C driver
# with pkg-config. Builds the libraries once more from scratch, so not in sanitizer or cross builds.
if(NOT CMAKE_CROSSCOMPILING AND NOT FORKUNION_SANITIZER)
    find_program(FORKUNION_PKG_CONFIG NAMES pkg-config pkgconf)
    add_test(NAME c_api.install
             COMMAND "${CMAKE_COMMAND}" -D "SOURCE_DIR=${PROJECT_SOURCE_DIR}" -D "WORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/c_api_install"
                     -D "CC=${CMAKE_C_COMPILER}" -D "CXX=${CMAKE_CXX_COMPILER}" -D "GENERATOR=${CMAKE_GENERATOR}"
                     -D "PKG_CONFIG=${FORKUNION_PKG_CONFIG}" -P "${CMAKE_CURRENT_SOURCE_DIR}/c_api_install.cmake")
    set_tests_properties(c_api.install PROPERTIES TIMEOUT 600)
endif()
