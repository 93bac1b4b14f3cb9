# Test and benchmark dependencies, resolved right after `project()` so that a missing one stops configure within
# seconds, before any feature probe. Each is taken from `find_package` first; GoogleTest also from the sources a
# distribution ships (Debian's `googletest` puts them in /usr/src/googletest).
#
# A package that is still missing stops configure with one line naming it and the Debian package that provides it.
# Nothing is downloaded unless FORKUNION_FETCH_DEPENDENCIES=ON; then each archive is fetched once (no retries),
# giving up after 10 s without progress or 120 s in all, so a machine without network fails in seconds, not minutes.
# `-D CMAKE_DISABLE_FIND_PACKAGE_<P>=ON` (GTest, Catch2, benchmark) makes a package count as missing, which is how
# CI proves that a command needs no more than the README says (`.ci/bare.sh`).
#
# GoogleTest is built from source, not taken prebuilt, when the build is sanitized with TSan (an uninstrumented
# gtest hides its own locks from TSan) or cross-compiled (the prebuilt one is for the build machine).
include_guard(GLOBAL)
include(FetchContent)

# Stops configure when `name` is missing and may not be downloaded; otherwise downloads `url` (one attempt, short
# timeouts) and makes it available as FetchContent project `content`.
function(_forkunion_fetch_or_fail name packages content url)
    set(_install "apt-get install ${packages}")
    if(NOT FORKUNION_FETCH_DEPENDENCIES)
        message(FATAL_ERROR "forkunion: ${name} not found: ${_install}\n"
                            "(or configure with -D FORKUNION_FETCH_DEPENDENCIES=ON to download it)")
    endif()
    string(REGEX REPLACE ".*/" "" _archive "${url}")
    set(_file "${CMAKE_BINARY_DIR}/_deps/${content}-${_archive}")
    if(NOT EXISTS "${_file}")
        message(STATUS "forkunion: ${name} not found; downloading ${url}")
        file(DOWNLOAD "${url}" "${_file}.part" INACTIVITY_TIMEOUT 10 TIMEOUT 120 STATUS _status)
        list(GET _status 0 _code)
        if(NOT _code EQUAL 0)
            list(GET _status 1 _reason)
            file(REMOVE "${_file}.part")
            message(FATAL_ERROR "forkunion: ${name} not found: ${_install}\n"
                                "(FORKUNION_FETCH_DEPENDENCIES=ON, but downloading ${url} failed: ${_reason})")
        endif()
        file(RENAME "${_file}.part" "${_file}")
    endif()
    FetchContent_Declare(${content} URL "${_file}")
    FetchContent_MakeAvailable(${content})
endfunction()

macro(forkunion_require_gtest)
    if(NOT TARGET GTest::gtest)
        set(_forkunion_gtest_from_source OFF)
        if(CMAKE_CROSSCOMPILING OR FORKUNION_SANITIZER STREQUAL "thread")
            set(_forkunion_gtest_from_source ON)
        else()
            find_package(GTest QUIET)
        endif()
        if(NOT TARGET GTest::gtest)
            set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
            set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
            set(gtest_force_shared_crt ON CACHE BOOL "" FORCE)
            if(EXISTS "/usr/src/googletest/CMakeLists.txt" AND NOT CMAKE_DISABLE_FIND_PACKAGE_GTest)
                add_subdirectory("/usr/src/googletest" "${CMAKE_BINARY_DIR}/_deps/googletest" EXCLUDE_FROM_ALL)
            else()
                _forkunion_fetch_or_fail("GoogleTest" "libgtest-dev" googletest
                                         "https://github.com/google/googletest/archive/refs/tags/v1.14.0.tar.gz")
            endif()
            if(NOT TARGET GTest::gtest) # googletest >= 1.11 defines these aliases itself
                add_library(GTest::gtest ALIAS gtest)
                add_library(GTest::gtest_main ALIAS gtest_main)
            endif()
        endif()
    endif()
endmacro()

# Defines `forkunion_catch2` (an INTERFACE target) that hides the Catch2 v2/v3 split: link it and include
# "catch_compat.hpp". v2 (Debian 12) is a single header with its own main; v3 ships `Catch2::Catch2WithMain`.
macro(forkunion_require_catch2)
    if(NOT TARGET forkunion_catch2)
        find_package(Catch2 QUIET)
        if(NOT Catch2_FOUND)
            _forkunion_fetch_or_fail("Catch2" "catch2" Catch2
                                     "https://github.com/catchorg/Catch2/archive/refs/tags/v3.5.2.tar.gz")
            set(Catch2_VERSION 3)
        endif()
        add_library(forkunion_catch2 INTERFACE)
        if(TARGET Catch2::Catch2WithMain AND NOT Catch2_VERSION VERSION_LESS 3)
            target_link_libraries(forkunion_catch2 INTERFACE Catch2::Catch2WithMain)
            target_compile_definitions(forkunion_catch2 INTERFACE FORKUNION_CATCH2_V3=1)
        else()
            # A host package's include directory is the host's /usr/include, whose C headers a compiler for
            # another OS (MinGW-w64, emscripten) must not see: such builds get a copy of the header alone.
            get_target_property(_forkunion_catch2_includes Catch2::Catch2 INTERFACE_INCLUDE_DIRECTORIES)
            if(CMAKE_CROSSCOMPILING AND NOT CMAKE_SYSTEM_NAME STREQUAL "Linux"
               AND _forkunion_catch2_includes STREQUAL "/usr/include" AND EXISTS "/usr/include/catch2/catch.hpp")
                file(COPY "/usr/include/catch2" DESTINATION "${CMAKE_BINARY_DIR}/_deps/catch2_header")
                target_include_directories(forkunion_catch2 SYSTEM INTERFACE "${CMAKE_BINARY_DIR}/_deps/catch2_header")
            else()
                target_link_libraries(forkunion_catch2 INTERFACE Catch2::Catch2)
            endif()
            target_compile_definitions(forkunion_catch2 INTERFACE FORKUNION_CATCH2_V3=0)
        endif()
    endif()
endmacro()

macro(forkunion_require_benchmark)
    if(NOT TARGET benchmark::benchmark)
        find_package(benchmark QUIET)
        if(NOT benchmark_FOUND)
            set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "" FORCE)
            set(BENCHMARK_ENABLE_INSTALL OFF CACHE BOOL "" FORCE)
            _forkunion_fetch_or_fail("Google Benchmark" "libbenchmark-dev" benchmark
                                     "https://github.com/google/benchmark/archive/refs/tags/v1.8.3.tar.gz")
        endif()
    endif()
endmacro()
