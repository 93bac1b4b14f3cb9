# Configures, builds and runs the consumer project in one MODE (copy, subdirectory, fetchcontent), from scratch, in
# WORK_DIR. The installed package is consumed by readme_recipe.cmake.
#   cmake -D MODE=... -D SOURCE_DIR=... -D WORK_DIR=... -D CXX=... -D GENERATOR=... -P consumer_run.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(_project "${WORK_DIR}/project")
file(COPY "${CMAKE_CURRENT_LIST_DIR}/consumer/CMakeLists.txt" "${CMAKE_CURRENT_LIST_DIR}/consumer/main.cpp"
     DESTINATION "${_project}")
if(MODE STREQUAL "copy")
    file(COPY "${SOURCE_DIR}/include" DESTINATION "${_project}/third_party")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${_project}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
                        -D "CMAKE_CXX_COMPILER=${CXX}" -D "FORKUNION_CONSUME=${MODE}" -D "FORKUNION_SOURCE=${SOURCE_DIR}"
                RESULT_VARIABLE _result)
if(NOT _result EQUAL 0)
    message(FATAL_ERROR "configuring the consumer (${MODE}) failed")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}/build" RESULT_VARIABLE _result)
if(NOT _result EQUAL 0)
    message(FATAL_ERROR "building the consumer (${MODE}) failed")
endif()
execute_process(COMMAND "${WORK_DIR}/build/consumer" RESULT_VARIABLE _result)
if(NOT _result EQUAL 0)
    message(FATAL_ERROR "the consumer (${MODE}) returned ${_result}")
endif()
