# Compiles SOURCE (text) with CXX and FLAGS (a |-list) and passes only if the compiler refuses it with a message
# matching EXPECT: for diagnostics the headers promise, such as the C++20 requirement.
#   cmake -D CXX=g++ -D "FLAGS=-std=c++17|-Iinclude" -D "SOURCE=#include <forkunion.hpp>" -D EXPECT=... -D WORK_DIR=...
#         -P compile_fails.cmake
string(REPLACE "|" ";" FLAGS "${FLAGS}")
file(MAKE_DIRECTORY "${WORK_DIR}")
file(WRITE "${WORK_DIR}/unit.cpp" "${SOURCE}\n")
execute_process(COMMAND "${CXX}" ${FLAGS} -fsyntax-only "${WORK_DIR}/unit.cpp" RESULT_VARIABLE _result
                OUTPUT_VARIABLE _output ERROR_VARIABLE _errors)
if(_result EQUAL 0)
    message(FATAL_ERROR "${CXX} ${FLAGS} accepted:\n${SOURCE}")
endif()
if(NOT "${_output}${_errors}" MATCHES "${EXPECT}")
    message(FATAL_ERROR "refused, but without a message matching '${EXPECT}':\n${_output}${_errors}")
endif()
string(REGEX MATCH "[^\n]*${EXPECT}[^\n]*" _line "${_errors}")
message(STATUS "refused as expected: ${_line}")
