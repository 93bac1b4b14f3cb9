# Builds and runs no_exceptions.cpp under -fno-exceptions with every compiler named in COMPILERS that exists here
# (g++ and clang++ by default), linking the C API translation unit built the same way. Each build must be free of
# warnings and the program must exit 0 having printed its success line; an absent compiler is skipped with a line.
# With no compiler found at all it prints "skipped: none of ..." (the ctest's SKIP_REGULAR_EXPRESSION).
#   cmake -D SOURCE_DIR=<repository> -D WORK_DIR=... [-D "COMPILERS=g++;clang++"] -P no_exceptions_check.cmake
if(NOT COMPILERS)
    set(COMPILERS "g++;clang++")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(_flags -std=c++20 -fno-exceptions -Wall -Wextra -Werror "-I${SOURCE_DIR}/include")

set(_built 0)
foreach(_name IN LISTS COMPILERS)
    find_program(_compiler_${_name} NAMES ${_name} ${_name}-14 ${_name}-12 NO_CACHE)
    set(_compiler "${_compiler_${_name}}")
    if(NOT _compiler)
        message(STATUS "${_name}: skipped, no such compiler here")
        continue()
    endif()
    set(_object "${WORK_DIR}/${_name}_c_api.o")
    set(_program "${WORK_DIR}/${_name}_no_exceptions")
    execute_process(COMMAND "${_compiler}" ${_flags} -DFORKUNION_C_BUILD=1 -c "${SOURCE_DIR}/c/forkunion.cpp"
                            -o "${_object}"
                    RESULT_VARIABLE _result OUTPUT_VARIABLE _output ERROR_VARIABLE _output)
    if(NOT _result EQUAL 0)
        message(FATAL_ERROR "${_compiler}: the C API does not build without exceptions:\n${_output}")
    endif()
    execute_process(COMMAND "${_compiler}" ${_flags} "${SOURCE_DIR}/test/pools/no_exceptions.cpp" "${_object}"
                            -pthread -o "${_program}"
                    RESULT_VARIABLE _result OUTPUT_VARIABLE _output ERROR_VARIABLE _output)
    if(NOT _result EQUAL 0)
        message(FATAL_ERROR "${_compiler}: the library does not build without exceptions:\n${_output}")
    endif()
    execute_process(COMMAND "${_program}" RESULT_VARIABLE _result OUTPUT_VARIABLE _output ERROR_VARIABLE _output)
    if(NOT _result EQUAL 0 OR NOT _output MATCHES "without exceptions: every pool")
        message(FATAL_ERROR "${_compiler}: built without exceptions, the program failed (${_result}):\n${_output}")
    endif()
    message(STATUS "${_compiler}: built without exceptions and ran: ${_output}")
    math(EXPR _built "${_built} + 1")
endforeach()
if(_built EQUAL 0)
    message(STATUS "skipped: none of ${COMPILERS} is installed")
endif()
