# `programs.usage.<name>`: every executable target defined under bench/ and examples/ (found by walking their
# directories' targets, so a new program needs no registration), every program in the global property
# FORKUNION_PROGRAM_FILES (built outside add_executable), and every shell script under bench/ answers `--help`
# with its usage and refuses an unknown or extra argument with one line (bench/common/usage_check.cmake).
# Included once, after the bench/ and examples/ subdirectories.
include_guard(GLOBAL)

function(_forkunion_executables_under directory out)
    set(_found "")
    get_property(_targets DIRECTORY "${directory}" PROPERTY BUILDSYSTEM_TARGETS)
    foreach(_target IN LISTS _targets)
        get_target_property(_type ${_target} TYPE)
        if(_type STREQUAL "EXECUTABLE")
            list(APPEND _found ${_target})
        endif()
    endforeach()
    get_property(_subdirectories DIRECTORY "${directory}" PROPERTY SUBDIRECTORIES)
    foreach(_subdirectory IN LISTS _subdirectories)
        _forkunion_executables_under("${_subdirectory}" _more)
        list(APPEND _found ${_more})
    endforeach()
    set(${out} "${_found}" PARENT_SCOPE)
endfunction()

set(_forkunion_usage_check "${PROJECT_SOURCE_DIR}/bench/common/usage_check.cmake")
set(_forkunion_programs "")
foreach(_folder bench examples)
    if(IS_DIRECTORY "${PROJECT_BINARY_DIR}/${_folder}")
        _forkunion_executables_under("${PROJECT_SOURCE_DIR}/${_folder}" _executables)
        list(APPEND _forkunion_programs ${_executables})
    endif()
endforeach()
foreach(_target IN LISTS _forkunion_programs)
    add_test(NAME programs.usage.${_target}
             COMMAND "${CMAKE_COMMAND}" "-DPROGRAM=$<TARGET_FILE:${_target}>" -P "${_forkunion_usage_check}")
endforeach()
get_property(_forkunion_program_files GLOBAL PROPERTY FORKUNION_PROGRAM_FILES)
foreach(_file IN LISTS _forkunion_program_files)
    get_filename_component(_name "${_file}" NAME)
    add_test(NAME programs.usage.${_name} COMMAND "${CMAKE_COMMAND}" "-DPROGRAM=${_file}" -P "${_forkunion_usage_check}")
endforeach()

# The scripts: compare.sh has its own command line and tests; common.sh is sourced, never run.
file(GLOB_RECURSE _forkunion_scripts RELATIVE "${PROJECT_SOURCE_DIR}" "${PROJECT_SOURCE_DIR}/bench/*.sh")
list(REMOVE_ITEM _forkunion_scripts bench/compare.sh bench/common/common.sh)
find_program(FORKUNION_BASH bash)
if(FORKUNION_BASH)
    foreach(_script IN LISTS _forkunion_scripts)
        get_filename_component(_name "${_script}" NAME)
        add_test(NAME programs.usage.${_name}
                 COMMAND "${CMAKE_COMMAND}" "-DPROGRAM=${PROJECT_SOURCE_DIR}/${_script}" "-DINTERPRETER=${FORKUNION_BASH}"
                         -P "${_forkunion_usage_check}")
    endforeach()
endif()
list(LENGTH _forkunion_programs _count)
message(STATUS "forkunion: ${_count} programs of bench/ and examples/ checked for --help (ctest -R programs.usage)")
