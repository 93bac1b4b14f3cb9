# The layer check must be able to fail: a small tree with one upward include, one public header reaching into a
# lower layer's backends and one header outside the layer folders must be refused with a line for each.
# `cmake -D CHECK=<layer_check.cmake> -D WORK_DIR=<scratch> -P layer_check_refuses.cmake`
file(REMOVE_RECURSE "${WORK_DIR}")
file(WRITE "${WORK_DIR}/forkunion/base/types.hpp" "#pragma once\n#include <forkunion/pools/flat.hpp>\n")
file(WRITE "${WORK_DIR}/forkunion/pools/flat.hpp" "#pragma once\n#include <forkunion/memory/detail/linux.hpp>\n")
file(WRITE "${WORK_DIR}/forkunion/memory/detail/linux.hpp" "#pragma once\n#include <forkunion/base/types.hpp>\n")
file(WRITE "${WORK_DIR}/forkunion/misc/stray.hpp" "#pragma once\n")
execute_process(COMMAND "${CMAKE_COMMAND}" -D "ROOT=${WORK_DIR}" -P "${CHECK}" RESULT_VARIABLE _status
                ERROR_VARIABLE _output OUTPUT_VARIABLE _output)
foreach(_expected "base \\(rank 0\\) includes pools" "a public header reaches into memory's backends"
                  "'misc' is not a layer" "3 broken rule")
    if(NOT _output MATCHES "${_expected}")
        message(FATAL_ERROR "the layer check did not report '${_expected}' (status ${_status}):\n${_output}")
    endif()
endforeach()
if(_status EQUAL 0)
    message(FATAL_ERROR "the layer check passed a tree that breaks the rule:\n${_output}")
endif()
message(STATUS "the layer check refused the broken tree, naming every broken rule")
