# Configures, builds and runs the consumer project in one MODE, from scratch, in WORK_DIR.
#   cmake -D MODE=... -D SOURCE_DIR=... -D BUILD_DIR=... -D WORK_DIR=... -D CXX=... -D GENERATOR=... -P consumer_run.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(_project "${WORK_DIR}/project")
file(COPY "${CMAKE_CURRENT_LIST_DIR}/consumer/CMakeLists.txt" "${CMAKE_CURRENT_LIST_DIR}/consumer/main.cpp"
     DESTINATION "${_project}")
set(_extra "")
if(MODE STREQUAL "copy")
    file(COPY "${SOURCE_DIR}/include" DESTINATION "${_project}/third_party")
elseif(MODE STREQUAL "find_package")
    set(_prefix "${WORK_DIR}/prefix")
    # A fresh configure of the library itself, installed into a temporary prefix.
    execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/library" -G "${GENERATOR}"
                            -D "CMAKE_CXX_COMPILER=${CXX}" -D CMAKE_BUILD_TYPE=Release -D FORKUNION_BUILD_TEST=OFF
                            -D FORKUNION_BUILD_BENCH=OFF -D FORKUNION_BUILD_EXAMPLES=OFF -D FORKUNION_INSTALL=ON
                            -D "CMAKE_INSTALL_PREFIX=${_prefix}"
                    RESULT_VARIABLE _result)
    if(NOT _result EQUAL 0)
        message(FATAL_ERROR "configuring the library for install failed")
    endif()
    execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}/library" RESULT_VARIABLE _result)
    execute_process(COMMAND "${CMAKE_COMMAND}" --install "${WORK_DIR}/library" RESULT_VARIABLE _result)
    if(NOT _result EQUAL 0)
        message(FATAL_ERROR "cmake --install failed")
    endif()
    foreach(_file include/forkunion.hpp lib/cmake/forkunion/forkunionConfig.cmake
                  lib/cmake/forkunion/forkunionConfigVersion.cmake lib/pkgconfig/forkunion.pc)
        if(NOT EXISTS "${_prefix}/${_file}")
            message(FATAL_ERROR "the install lacks ${_file}")
        endif()
    endforeach()
    set(_extra "-DCMAKE_PREFIX_PATH=${_prefix}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${_project}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
                        -D "CMAKE_CXX_COMPILER=${CXX}" -D "FORKUNION_CONSUME=${MODE}" -D "FORKUNION_SOURCE=${SOURCE_DIR}"
                        ${_extra}
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
