# Installs the library into a temporary prefix, checks that the C API is in it, then uses it from C twice: a C-only
# CMake project with find_package(forkunion) linking forkunion::static and forkunion::shared, and the C compiler
# driver with what `pkg-config --variable=c_libs_static forkunion` says.
#   cmake -D SOURCE_DIR=... -D WORK_DIR=... -D CC=... -D CXX=... -D GENERATOR=... -D PKG_CONFIG=... -P c_install.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
set(_prefix "${WORK_DIR}/prefix")
function(run)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE _result OUTPUT_VARIABLE _output ERROR_VARIABLE _errors)
    if(NOT _result EQUAL 0)
        string(REPLACE ";" " " _command "${ARGN}")
        message(FATAL_ERROR "${_command} failed (${_result}):\n${_output}${_errors}")
    endif()
    set(run_output "${_output}" PARENT_SCOPE)
endfunction()

run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/library" -G "${GENERATOR}" -D CMAKE_BUILD_TYPE=Release
    -D "CMAKE_C_COMPILER=${CC}" -D "CMAKE_CXX_COMPILER=${CXX}" -D FORKUNION_BUILD_TEST=OFF -D FORKUNION_BUILD_BENCH=OFF
    -D FORKUNION_BUILD_EXAMPLES=OFF -D FORKUNION_INSTALL=ON -D "CMAKE_INSTALL_PREFIX=${_prefix}"
    -D CMAKE_INSTALL_LIBDIR=lib)
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/library" --target forkunion_static forkunion_shared)
run("${CMAKE_COMMAND}" --install "${WORK_DIR}/library")

file(STRINGS "${SOURCE_DIR}/include/forkunion/types.hpp" _major REGEX "^#define FORKUNION_VERSION_MAJOR ")
string(REGEX REPLACE ".* " "" _major "${_major}")
foreach(_file include/forkunion.h lib/libforkunion_static.a lib/libforkunion_shared.so
              lib/libforkunion_shared.so.${_major} lib/pkgconfig/forkunion.pc lib/cmake/forkunion/forkunionTargets.cmake)
    if(NOT EXISTS "${_prefix}/${_file}")
        message(FATAL_ERROR "the install lacks ${_file}")
    endif()
endforeach()

# CMake: a C-only project.
run("${CMAKE_COMMAND}" -S "${CMAKE_CURRENT_LIST_DIR}/c_consumer" -B "${WORK_DIR}/consumer" -G "${GENERATOR}"
    -D "CMAKE_C_COMPILER=${CC}" -D "CMAKE_PREFIX_PATH=${_prefix}" -D "FORKUNION_LIBDIR=${_prefix}/lib"
    -D "FORKUNION_EXAMPLE=${SOURCE_DIR}/examples/c/hello_callback.c")
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/consumer")
run("${WORK_DIR}/consumer/consumer_static")
run("${WORK_DIR}/consumer/consumer_shared")

# pkg-config: the C driver, the installed headers and the static library, and only the flags the .pc gives.
if(PKG_CONFIG)
    set(ENV{PKG_CONFIG_PATH} "${_prefix}/lib/pkgconfig")
    run("${PKG_CONFIG}" --variable=includedir forkunion)
    string(STRIP "${run_output}" _includedir)
    run("${PKG_CONFIG}" --variable=c_libs_static forkunion)
    string(STRIP "${run_output}" _libs)
    separate_arguments(_libs UNIX_COMMAND "${_libs}")
    run("${CC}" -std=c99 -pedantic -Wall -Wextra -Werror "-I${_includedir}" "${SOURCE_DIR}/examples/c/hello_callback.c"
        -o "${WORK_DIR}/pkg_config_static" ${_libs})
    run("${WORK_DIR}/pkg_config_static")
    message(STATUS "pkg-config c_libs_static: ${_libs}")
endif()
message(STATUS "installed C API used from CMake (static, shared) and the C driver")
