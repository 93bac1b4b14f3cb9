# Checks that bad build switches stop the build with a message naming the problem.
#   MODE=compile:   cmake -D MODE=compile -D CXX=... [-D CXX_TARGET=...] -D INCLUDE=... -D FOREIGN=... -D WORK_DIR=... -P
#     compiles a translation unit with contradictory FORKUNION_* macros and expects each `#error`;
#   MODE=configure: cmake -D MODE=configure -D SOURCE_DIR=... -D CXX=... -D GENERATOR=... -D FOREIGN=... -D WORK_DIR=... -P
#     configures the project with a typo, a feature this target cannot emit forced ON, and a feature forced ON
#     next to FORKUNION_PORTABLE, and expects each to fail with its message.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(expect_failure what expected)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE _result OUTPUT_VARIABLE _output ERROR_VARIABLE _error)
    if(_result EQUAL 0)
        message(FATAL_ERROR "${what}: succeeded, but must fail")
    endif()
    # CMake wraps long messages: compare with every run of blanks and newlines folded to one space.
    string(REGEX REPLACE "[ \t\r\n]+" " " _said "${_output}${_error}")
    string(FIND "${_said}" "${expected}" _at)
    if(_at EQUAL -1)
        message(FATAL_ERROR "${what}: failed without saying \"${expected}\":\n${_output}\n${_error}")
    endif()
    message(STATUS "${what}: fails with \"${expected}\"")
endfunction()

if(MODE STREQUAL "compile")
    set(_unit "${WORK_DIR}/unit.cpp")
    file(WRITE "${_unit}" "#include <forkunion/hardware/features.hpp>\nint main() { return 0; }\n")
    set(_compile "${CXX}" ${CXX_TARGET} -std=c++20 -fsyntax-only "-I${INCLUDE}" "${_unit}")
    expect_failure("FORKUNION_PORTABLE=1 with FORKUNION_WITH_${FOREIGN}=1"
                   "FORKUNION_PORTABLE=1 compiles every optional instruction out" ${_compile} -DFORKUNION_PORTABLE=1
                   -DFORKUNION_WITH_${FOREIGN}=1)
    expect_failure("FORKUNION_WITH_${FOREIGN}=1 on this target" "FORKUNION_WITH_${FOREIGN}=1 needs"
                   ${_compile} -DFORKUNION_WITH_${FOREIGN}=1)
    # And the defaults compile: the switches are consistent when nobody sets them.
    execute_process(COMMAND ${_compile} RESULT_VARIABLE _result ERROR_VARIABLE _error)
    if(NOT _result EQUAL 0)
        message(FATAL_ERROR "the header does not compile with its defaults:\n${_error}")
    endif()
elseif(MODE STREQUAL "configure")
    set(_configure "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -G "${GENERATOR}" -D "CMAKE_CXX_COMPILER=${CXX}"
                   -D FORKUNION_BUILD_TEST=OFF -D FORKUNION_BUILD_BENCH=OFF -D FORKUNION_BUILD_EXAMPLES=OFF
                   -D FORKUNION_INSTALL=OFF)
    expect_failure("FORKUNION_WITH_ZAWRS=maybe" "FORKUNION_WITH_ZAWRS='maybe' is not one of AUTO, ON, OFF"
                   ${_configure} -B "${WORK_DIR}/typo" -D FORKUNION_WITH_ZAWRS=maybe)
    expect_failure("FORKUNION_WITH_${FOREIGN}=ON on this target"
                   "FORKUNION_WITH_${FOREIGN}=ON, but the compiler cannot emit"
                   ${_configure} -B "${WORK_DIR}/foreign" -D FORKUNION_WITH_${FOREIGN}=ON)
    expect_failure("FORKUNION_PORTABLE=ON with FORKUNION_WITH_WAITPKG=ON"
                   "FORKUNION_PORTABLE=ON compiles every optional path out, but FORKUNION_WITH_WAITPKG=ON"
                   ${_configure} -B "${WORK_DIR}/portable" -D FORKUNION_PORTABLE=ON -D FORKUNION_WITH_WAITPKG=ON)
else()
    message(FATAL_ERROR "MODE must be compile or configure")
endif()
