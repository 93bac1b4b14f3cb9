# The drop-in under LD_PRELOAD is loaded by every process of a command line, wrappers included (`env`, `timeout`,
# the shell); the environment's warnings must still come once, from the process that makes OpenMP calls:
#   LD_PRELOAD=DROPIN env <bad settings> timeout 60 sh -c PROGRAM
# runs four processes with the drop-in loaded and must print exactly one warning per malformed variable.
cmake_policy(VERSION 3.21)
foreach(_required PROGRAM DROPIN)
    if(NOT DEFINED ${_required})
        message(FATAL_ERROR "wrappers.cmake: ${_required} is not set")
    endif()
endforeach()
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "LD_PRELOAD=${DROPIN}"
                        env OMP_NUM_THREADS=4x OMP_WAIT_POLICY=lazy OMP_SCHEDULE=sometimes
                        timeout 60 sh -c "'${PROGRAM}'"
                OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _status)
if(NOT _status EQUAL 0)
    message(FATAL_ERROR "the wrapped program failed (${_status})\n--- stderr\n${_err}")
endif()
string(REPLACE ";" "," _text "${_err}") # a list separator would split a match
foreach(_variable OMP_NUM_THREADS OMP_WAIT_POLICY OMP_SCHEDULE)
    string(REGEX MATCHALL "forkunion gomp: ${_variable}='[^\n]*\n" _lines "${_text}")
    list(LENGTH _lines _count)
    if(NOT _count EQUAL 1)
        message(FATAL_ERROR "${_variable}: ${_count} warnings, expected exactly one\n--- stderr\n${_err}")
    endif()
endforeach()
message(STATUS "one warning per malformed variable across env, timeout, sh and the program")
