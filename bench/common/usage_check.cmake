# The command-line contract of one program (bench/common/usage.h), checked without running its workload:
#   cmake -D PROGRAM=<path> [-D INTERPRETER=bash] -P usage_check.cmake
# - `--help` and `-h`: exit status 0, a first line `usage: <name> ...` on stdout, nothing on stderr;
# - an unknown option, and three extra positional arguments (no program here takes more than one): a non-zero
#   status, nothing on stdout, exactly one line on stderr that names the argument.
# INTERPRETER runs scripts (`bash script.sh --help`).
get_filename_component(_name "${PROGRAM}" NAME)
function(run out_status out_output out_error)
    execute_process(COMMAND ${INTERPRETER} "${PROGRAM}" ${ARGN} RESULT_VARIABLE _status OUTPUT_VARIABLE _output
                    ERROR_VARIABLE _error TIMEOUT 60)
    set(${out_status} "${_status}" PARENT_SCOPE)
    set(${out_output} "${_output}" PARENT_SCOPE)
    set(${out_error} "${_error}" PARENT_SCOPE)
endfunction()

foreach(_help --help -h)
    run(status output error ${_help})
    if(NOT status EQUAL 0)
        message(FATAL_ERROR "${_name} ${_help}: expected exit status 0, got '${status}'\nstdout: ${output}\nstderr: ${error}")
    endif()
    if(NOT output MATCHES "^usage: ${_name}( |\n)")
        message(FATAL_ERROR "${_name} ${_help}: stdout does not start with 'usage: ${_name}':\n${output}")
    endif()
    if(NOT error STREQUAL "")
        message(FATAL_ERROR "${_name} ${_help}: expected nothing on stderr, got:\n${error}")
    endif()
endforeach()

foreach(_bad "--no-such-option" "first-extra;second-extra;third-extra")
    run(status output error ${_bad})
    list(GET _bad -1 _named)
    if(status EQUAL 0 OR NOT status MATCHES "^[0-9]+$")
        message(FATAL_ERROR "${_name} ${_bad}: expected a non-zero exit status, got '${status}'\nstdout: ${output}\nstderr: ${error}")
    endif()
    string(REGEX MATCHALL "\n" _newlines "${error}")
    list(LENGTH _newlines _lines)
    if(NOT _lines EQUAL 1 OR NOT error MATCHES "(--no-such-option|first-extra|second-extra|third-extra)")
        message(FATAL_ERROR "${_name} ${_bad}: expected one line on stderr naming the argument, got ${_lines}:\n${error}")
    endif()
    if(NOT output STREQUAL "")
        message(FATAL_ERROR "${_name} ${_bad}: expected nothing on stdout, got:\n${output}")
    endif()
endforeach()
message(STATUS "${_name}: answers --help and -h, refuses an unknown option and extra arguments")
