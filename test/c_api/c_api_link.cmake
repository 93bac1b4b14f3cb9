# Links a C program against the C API with the C compiler driver, adding only what forkunion.pc says
# (`c_libs_static` or `c_libs`), then runs it.
#   cmake -D KIND=static|shared -D CC=cc -D C_FLAGS=a|b -D PC=forkunion.pc -D INCLUDE=include|dir -D LIBRARY=lib
#         -D SOURCE=program.c -D WORK_DIR=dir -P c_api_link.cmake
# INCLUDE: the library's include directory, then any the program needs of its own (bench/common for the examples'
# command-line helper, header-only).
file(STRINGS "${PC}" _line REGEX "^c_libs_${KIND}=|^c_libs=")
if(KIND STREQUAL "static")
    list(FILTER _line INCLUDE REGEX "^c_libs_static=")
else()
    list(FILTER _line INCLUDE REGEX "^c_libs=")
endif()
if(NOT _line)
    message(FATAL_ERROR "${PC} has no c_libs variable for ${KIND} linking")
endif()
string(REGEX REPLACE "^[a-z_]+=" "" _flags "${_line}")
separate_arguments(_flags UNIX_COMMAND "${_flags}")
# The library itself is the one just built: `-L${libdir}` and `-lforkunion_*` point at the build's file instead.
get_filename_component(_directory "${LIBRARY}" DIRECTORY)
set(_libs "")
foreach(_flag IN LISTS _flags)
    if(_flag MATCHES "^-L")
        list(APPEND _libs "-L${_directory}")
    else()
        list(APPEND _libs "${_flag}")
    endif()
endforeach()
string(REPLACE "|" ";" C_FLAGS "${C_FLAGS}")
string(REPLACE "|" ";" INCLUDE "${INCLUDE}")
list(TRANSFORM INCLUDE PREPEND "-I")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(_program "${WORK_DIR}/program")
execute_process(COMMAND "${CC}" ${C_FLAGS} -std=c99 -pedantic -Wall -Wextra -Werror ${INCLUDE} "${SOURCE}"
                        -o "${_program}" ${_libs}
                RESULT_VARIABLE _result ERROR_VARIABLE _errors OUTPUT_VARIABLE _output)
if(NOT _result EQUAL 0)
    message(FATAL_ERROR "${CC} ${SOURCE} ${_libs} failed:\n${_output}${_errors}")
endif()
message(STATUS "linked with: ${_libs}")
set(ENV{LD_LIBRARY_PATH} "${_directory}")
execute_process(COMMAND "${_program}" RESULT_VARIABLE _result OUTPUT_VARIABLE _output ERROR_VARIABLE _errors)
if(NOT _result EQUAL 0)
    message(FATAL_ERROR "${_program} returned ${_result}:\n${_output}${_errors}")
endif()
message(STATUS "${_output}")
