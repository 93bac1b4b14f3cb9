# The README's smallest program, built with the README's own command line as a user types it at the repository root,
# then the same line under -std=c++17, which must stop with exactly one error line: the header's message.
#   1. finds the inline command `g++ ... hello.cpp ...` in README.md and runs it with bash in a fresh folder that has
#      the repository's include/, examples/ and bench/ (links to them), so nothing is written into the source tree;
#   2. runs the program it built (exit status 0);
#   3. runs the line again with -std=c++17 in place of -std=c++20 (and with CXX2, a second compiler, when given):
#      the compiler must fail and print one line containing `error:`, naming "forkunion needs C++20".
#   cmake -D README=README.md -D SOURCE_DIR=... -D WORK_DIR=... -D BASH=bash [-D CXX2=clang++] -P readme_hello.cmake
file(READ "${README}" _text)
string(REGEX MATCH "`(g\\+\\+ [^`]*hello\\.cpp[^`]*)`" _match "${_text}")
if(NOT _match)
    message(FATAL_ERROR "${README} has no inline command `g++ ... hello.cpp`")
endif()
set(_line "${CMAKE_MATCH_1}")
message(STATUS "the README's line: ${_line}")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
file(CREATE_LINK "${SOURCE_DIR}/include" "${WORK_DIR}/include" SYMBOLIC)
file(CREATE_LINK "${SOURCE_DIR}/examples" "${WORK_DIR}/examples" SYMBOLIC)
file(CREATE_LINK "${SOURCE_DIR}/bench" "${WORK_DIR}/bench" SYMBOLIC) # the examples' `usage.h`

function(run_line line out_result out_output)
    execute_process(COMMAND "${BASH}" -c "${line}" WORKING_DIRECTORY "${WORK_DIR}" RESULT_VARIABLE _result
                    OUTPUT_VARIABLE _output ERROR_VARIABLE _errors)
    set(${out_result} "${_result}" PARENT_SCOPE)
    set(${out_output} "${_output}${_errors}" PARENT_SCOPE)
endfunction()

# 1 and 2. As typed.
run_line("${_line}" _result _output)
if(NOT _result EQUAL 0)
    message(FATAL_ERROR "the README's line failed at the repository root (${_result}):\n${_line}\n${_output}")
endif()
if(_line MATCHES " -o ([^ ]+)")
    set(_program "${WORK_DIR}/${CMAKE_MATCH_1}")
else()
    set(_program "${WORK_DIR}/a.out")
endif()
execute_process(COMMAND "${_program}" RESULT_VARIABLE _result)
if(NOT _result EQUAL 0)
    message(FATAL_ERROR "${_program}, built by the README's line, exited with ${_result}")
endif()

# 3. One error under C++17, with the README's compiler and with CXX2.
string(FIND "${_line}" "-std=c++20" _at)
if(_at EQUAL -1)
    message(FATAL_ERROR "the README's line has no -std=c++20 to replace: ${_line}")
endif()
string(REPLACE "-std=c++20" "-std=c++17" _old_standard "${_line}")
set(_lines "${_old_standard}")
if(CXX2)
    string(REGEX REPLACE "^g\\+\\+ " "\"${CXX2}\" " _other "${_old_standard}")
    list(APPEND _lines "${_other}")
endif()
foreach(_try IN LISTS _lines)
    run_line("${_try}" _result _output)
    if(_result EQUAL 0)
        message(FATAL_ERROR "accepted under C++17: ${_try}")
    endif()
    string(REGEX MATCHALL "[^\n]*error:[^\n]*" _errors "${_output}")
    list(LENGTH _errors _count)
    if(NOT _count EQUAL 1 OR NOT _output MATCHES "forkunion needs C\\+\\+20")
        message(FATAL_ERROR "${_try}: expected one error line naming \"forkunion needs C++20\", got ${_count}:\n"
                            "${_output}")
    endif()
    message(STATUS "refused with one line: ${_errors}")
endforeach()
