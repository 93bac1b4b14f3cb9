# The README's install recipe, exactly as written, then the installed package used every documented way.
#   1. extracts the ```sh block that follows `<!-- install recipe -->` in README.md and runs it with bash in a fresh
#      folder where `forkunion` is the source tree and HOME is empty, so `~/.local` is a fresh prefix;
#   2. checks that the build, given no build type, compiled optimized libraries, and that the prefix holds the
#      headers, both C API libraries, the CMake package and forkunion.pc;
#   3. builds and runs programs against the prefix: the C++ consumer through find_package and through the README's
#      pkg-config line (the block after `<!-- install pkg-config -->`), the C consumer through find_package
#      (forkunion::static, forkunion::shared) and with the C driver and `c_libs_static`;
#   3b. runs the README's C link lines (the block after `<!-- install c -->`) as written, and the programs they build;
#   4. moves the prefix elsewhere and builds the C++ and C consumers from there again: package and .pc are
#      relocatable.
#   With GOMP=1 (hosts that build the OpenMP drop-in) the prefix must also hold libforkunion_gomp.so and the
#   lib/forkunion/libgomp.so.1 link that OpenMP programs load in libgomp's place.
#   cmake -D SOURCE_DIR=... -D WORK_DIR=... -D CC=... -D CXX=... -D PKG_CONFIG=... -D BASH=... [-D GOMP=1]
#         -P readme_recipe.cmake
include("${CMAKE_CURRENT_LIST_DIR}/../docs/markdown_blocks.cmake") # forkunion_markdown_block

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/home")
set(ENV{HOME} "${WORK_DIR}/home")
set(_prefix "${WORK_DIR}/home/.local")

function(run)
    execute_process(COMMAND ${ARGN} WORKING_DIRECTORY "${WORK_DIR}" RESULT_VARIABLE _result OUTPUT_VARIABLE _output
                    ERROR_VARIABLE _errors)
    if(NOT _result EQUAL 0)
        string(REPLACE ";" " " _command "${ARGN}")
        message(FATAL_ERROR "${_command} failed (${_result}):\n${_output}${_errors}")
    endif()
    set(run_output "${_output}" PARENT_SCOPE)
endfunction()

# 1. The recipe, as the README has it.
forkunion_markdown_block("${SOURCE_DIR}/README.md" "<!-- install recipe -->" sh _recipe)
file(WRITE "${WORK_DIR}/recipe.sh" "set -euo pipefail\n${_recipe}\n")
file(CREATE_LINK "${SOURCE_DIR}" "${WORK_DIR}/forkunion" SYMBOLIC)
message(STATUS "the README's install recipe:\n${_recipe}")
run("${BASH}" "${WORK_DIR}/recipe.sh")

# 2. Optimized without being asked, and complete.
file(GLOB_RECURSE _flags "${WORK_DIR}/*/c/CMakeFiles/forkunion_static.dir/flags.make")
if(NOT _flags)
    message(FATAL_ERROR "the recipe's build folder has no flags.make for forkunion_static")
endif()
file(STRINGS "${_flags}" _cxx_flags REGEX "^CXX_FLAGS")
if(NOT _cxx_flags MATCHES " -O[23s] ")
    message(FATAL_ERROR "the recipe built the C API without optimization: ${_cxx_flags}")
endif()
file(STRINGS "${SOURCE_DIR}/include/forkunion/base/types.hpp" _major REGEX "^#define FORKUNION_VERSION_MAJOR ")
string(REGEX REPLACE ".* " "" _major "${_major}")
file(GLOB _libdirs LIST_DIRECTORIES true "${_prefix}/lib*")
list(GET _libdirs 0 _libdir)
set(_files "${_prefix}/include/forkunion.hpp" "${_prefix}/include/forkunion.h" "${_libdir}/libforkunion_static.a"
           "${_libdir}/libforkunion_shared.so.${_major}" "${_libdir}/pkgconfig/forkunion.pc"
           "${_libdir}/cmake/forkunion/forkunionConfig.cmake")
if(GOMP)
    list(APPEND _files "${_libdir}/libforkunion_gomp.so" "${_libdir}/forkunion/libgomp.so.1")
endif()
foreach(_file IN LISTS _files)
    if(NOT EXISTS "${_file}")
        message(FATAL_ERROR "the install lacks ${_file}")
    endif()
endforeach()

# 3 and 4. Consumers of a prefix: `tag` names the round.
function(consume prefix tag)
    file(GLOB _libdirs LIST_DIRECTORIES true "${prefix}/lib*")
    list(GET _libdirs 0 _libdir)
    set(_work "${WORK_DIR}/${tag}")
    file(MAKE_DIRECTORY "${_work}")
    # C++ through find_package.
    run("${CMAKE_COMMAND}" -S "${CMAKE_CURRENT_LIST_DIR}/consumer" -B "${_work}/cxx" -D "CMAKE_CXX_COMPILER=${CXX}"
        -D FORKUNION_CONSUME=find_package -D "CMAKE_PREFIX_PATH=${prefix}")
    run("${CMAKE_COMMAND}" --build "${_work}/cxx")
    run("${_work}/cxx/consumer")
    # C through find_package, static and shared.
    run("${CMAKE_COMMAND}" -S "${CMAKE_CURRENT_LIST_DIR}/c_consumer" -B "${_work}/c" -D "CMAKE_C_COMPILER=${CC}"
        -D "CMAKE_PREFIX_PATH=${prefix}" -D "FORKUNION_LIBDIR=${_libdir}"
        -D "FORKUNION_EXAMPLE=${SOURCE_DIR}/examples/c/hello_callback.c"
        -D "FORKUNION_EXAMPLE_INCLUDE=${SOURCE_DIR}/bench/common")
    run("${CMAKE_COMMAND}" --build "${_work}/c")
    run("${_work}/c/consumer_static")
    run("${_work}/c/consumer_shared")
    if(NOT PKG_CONFIG)
        message(STATUS "pkg-config not found: the .pc is checked by find_package consumers only")
        return()
    endif()
    set(ENV{PKG_CONFIG_PATH} "${_libdir}/pkgconfig")
    run("${PKG_CONFIG}" --cflags forkunion)
    string(FIND "${run_output}" "-I${prefix}/" _inside)
    if(_inside EQUAL -1)
        message(FATAL_ERROR "pkg-config --cflags forkunion points outside ${prefix}: ${run_output}")
    endif()
    # C with the C driver and only what the .pc says.
    run("${PKG_CONFIG}" --variable=includedir forkunion)
    string(STRIP "${run_output}" _includedir)
    run("${PKG_CONFIG}" --variable=c_libs_static forkunion)
    string(STRIP "${run_output}" _libs)
    separate_arguments(_libs UNIX_COMMAND "${_libs}")
    # `-I bench/common`: the example's command-line helper (`usage.h`, header-only), not part of the library.
    run("${CC}" -std=c99 -pedantic -Wall -Wextra -Werror "-I${_includedir}" "-I${SOURCE_DIR}/bench/common"
        "${SOURCE_DIR}/examples/c/hello_callback.c" -o "${_work}/pkg_config_c" ${_libs})
    run("${_work}/pkg_config_c")
endfunction()

# The README's pkg-config line compiles `app.cpp` into `app` from the current folder, with PKG_CONFIG_PATH at
# `~/.local`: run it as written on the consumer program.
forkunion_markdown_block("${SOURCE_DIR}/README.md" "<!-- install pkg-config -->" sh _pkg_config_line)
file(MAKE_DIRECTORY "${WORK_DIR}/app")
file(COPY_FILE "${CMAKE_CURRENT_LIST_DIR}/consumer/main.cpp" "${WORK_DIR}/app/app.cpp")
file(WRITE "${WORK_DIR}/app/build.sh" "set -euo pipefail\ncd \"${WORK_DIR}/app\"\n${_pkg_config_line}\n")
if(PKG_CONFIG)
    run("${BASH}" "${WORK_DIR}/app/build.sh")
    run("${WORK_DIR}/app/app")
endif()
consume("${_prefix}" installed)

# The README's C link lines (the block after `<!-- install c -->`), each run as written from a folder holding `app.c`
# with HOME at the recipe's: every line must build `app`, which must then run with no LD_LIBRARY_PATH (the shared
# line finds its library through the rpath it sets).
forkunion_markdown_block("${SOURCE_DIR}/README.md" "<!-- install c -->" sh _c_lines)
string(REPLACE "\n" ";" _c_lines "${_c_lines}")
list(LENGTH _c_lines _c_count)
if(_c_count LESS 2)
    message(FATAL_ERROR "the README's C link block has ${_c_count} lines; it shows a static and a shared link")
endif()
unset(ENV{LD_LIBRARY_PATH})
set(_c_index 0)
foreach(_c_line IN LISTS _c_lines)
    math(EXPR _c_index "${_c_index} + 1")
    set(_c_dir "${WORK_DIR}/c_line_${_c_index}")
    file(MAKE_DIRECTORY "${_c_dir}")
    file(COPY_FILE "${SOURCE_DIR}/examples/c/hello_callback.c" "${_c_dir}/app.c")
    # The example's command-line helper, found beside `app.c` (`#include "usage.h"`): not part of the library.
    file(COPY_FILE "${SOURCE_DIR}/bench/common/usage.h" "${_c_dir}/usage.h")
    file(WRITE "${_c_dir}/build.sh" "set -euo pipefail\ncd \"${_c_dir}\"\n${_c_line}\n")
    message(STATUS "the README's C link line ${_c_index}: ${_c_line}")
    run("${BASH}" "${_c_dir}/build.sh")
    run("${_c_dir}/app")
endforeach()

# Relocated: the whole prefix moves; nothing may still point at the old place.
set(_moved "${WORK_DIR}/moved/prefix")
file(MAKE_DIRECTORY "${WORK_DIR}/moved")
file(RENAME "${_prefix}" "${_moved}")
consume("${_moved}" moved)
message(STATUS "the README's install recipe installed an optimized, relocatable package into ${_prefix}")
