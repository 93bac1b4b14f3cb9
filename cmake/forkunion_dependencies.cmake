# Test and benchmark dependencies: `find_package` first; when a package is missing, build it from the sources a
# distribution ships (Debian's `googletest` puts them in /usr/src/googletest), else download it if
# FORKUNION_FETCH_DEPENDENCIES is ON, else stop with a message naming the package.
#
# GoogleTest is built from source, not taken prebuilt, when the build is sanitized with TSan (an uninstrumented
# gtest hides its own locks from TSan) or cross-compiled (the prebuilt one is for the build machine).
include(FetchContent)

function(_forkunion_fetch_or_fail name package hint)
    if(NOT FORKUNION_FETCH_DEPENDENCIES)
        message(FATAL_ERROR "forkunion: ${name} not found (find_package(${package})). ${hint} "
                            "or configure with -D FORKUNION_FETCH_DEPENDENCIES=ON to download it.")
    endif()
    message(STATUS "forkunion: ${name} not found; downloading it (FORKUNION_FETCH_DEPENDENCIES=ON)")
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
            if(EXISTS "/usr/src/googletest/CMakeLists.txt")
                add_subdirectory("/usr/src/googletest" "${CMAKE_BINARY_DIR}/_deps/googletest" EXCLUDE_FROM_ALL)
            else()
                _forkunion_fetch_or_fail("GoogleTest" "GTest" "Install it (Debian: apt-get install libgtest-dev googletest)")
                FetchContent_Declare(googletest URL https://github.com/google/googletest/archive/refs/tags/v1.14.0.tar.gz)
                FetchContent_MakeAvailable(googletest)
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
            _forkunion_fetch_or_fail("Catch2" "Catch2" "Install it (Debian: apt-get install catch2)")
            FetchContent_Declare(Catch2 URL https://github.com/catchorg/Catch2/archive/refs/tags/v3.5.2.tar.gz)
            FetchContent_MakeAvailable(Catch2)
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
            _forkunion_fetch_or_fail("Google Benchmark" "benchmark" "Install it (Debian: apt-get install libbenchmark-dev)")
            set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "" FORCE)
            set(BENCHMARK_ENABLE_INSTALL OFF CACHE BOOL "" FORCE)
            FetchContent_Declare(benchmark URL https://github.com/google/benchmark/archive/refs/tags/v1.8.3.tar.gz)
            FetchContent_MakeAvailable(benchmark)
        endif()
    endif()
endmacro()
