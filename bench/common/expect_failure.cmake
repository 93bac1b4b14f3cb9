# Runs PROGRAM with the environment assignments in ENV (a ;-list of NAME=VALUE) and checks that it refuses them the
# way every benchmark must: exit status 1, nothing on stdout (settings are read before the banner), and exactly one
# line on stderr that matches MESSAGE (a regular expression naming the variable and the expected form). ARGS, if
# given, are the program's arguments.
execute_process(COMMAND "${CMAKE_COMMAND}" -E env ${ENV} "${PROGRAM}" ${ARGS} RESULT_VARIABLE status OUTPUT_VARIABLE output
                ERROR_VARIABLE error TIMEOUT 60)
if(NOT status EQUAL 1)
    message(FATAL_ERROR "expected exit status 1, got '${status}'\nstdout: ${output}\nstderr: ${error}")
endif()
string(REGEX MATCHALL "\n" newlines "${error}")
list(LENGTH newlines lines)
if(NOT lines EQUAL 1)
    message(FATAL_ERROR "expected exactly one line on stderr, got ${lines}: ${error}")
endif()
if(NOT error MATCHES "${MESSAGE}")
    message(FATAL_ERROR "stderr does not match '${MESSAGE}': ${error}")
endif()
if(NOT output STREQUAL "")
    message(FATAL_ERROR "expected nothing on stdout before the refusal, got: ${output}")
endif()
message(STATUS "refused as expected: ${error}")
