# Runs one Spin verification of test/model/flat.pml (cmake -P script, registered by test/model/CMakeLists.txt):
#   spin -a <DEFINES> MODEL  ->  cc <OPT, -O1> -DSAFETY -DCOLLAPSE -DMEMLIM=<MEMLIM> pan.c  ->  ./pan -m<DEPTH>
# and fails unless the search is complete and its outcome is the expected one:
#   EXPECT empty:  no error at all (assertions, invalid end states), full state space explored;
#   EXPECT text:   a mutant: pan must report an error whose report contains EXPECT.
#   LIVENESS on:   the search is for non-progress cycles (-DNP, pan -l -f) with -DLIVENESS's progress label.
# Inputs: SPIN, CC, MODEL, WORK_DIR, DEFINES (a ;-list), EXPECT, MEMLIM (MiB), DEPTH, OPT and LIVENESS (optional).
foreach(_required SPIN CC MODEL WORK_DIR MEMLIM DEPTH)
    if(NOT DEFINED ${_required})
        message(FATAL_ERROR "run_spin.cmake: ${_required} is not set")
    endif()
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
file(COPY "${MODEL}" DESTINATION "${WORK_DIR}")
get_filename_component(_model_name "${MODEL}" NAME)

# LIVENESS: search for non-progress cycles under weak fairness (pan -l -f) instead of safety violations.
set(_mode -DSAFETY)
set(_pan_flags)
set(_spin_defines ${DEFINES})
if(LIVENESS)
    set(_mode -DNP -DNFAIR=3)
    set(_pan_flags -l -f)
    list(APPEND _spin_defines -DLIVENESS)
endif()
execute_process(COMMAND "${SPIN}" -a ${_spin_defines} "${_model_name}" WORKING_DIRECTORY "${WORK_DIR}"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "spin -a ${_spin_defines} failed (${_rc}):\n${_out}")
endif()

if(NOT DEFINED OPT)
    set(OPT -O1)
endif()
execute_process(COMMAND "${CC}" ${OPT} -w ${_mode} -DCOLLAPSE -DMEMLIM=${MEMLIM} -o pan pan.c
                WORKING_DIRECTORY "${WORK_DIR}" RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "compiling pan.c failed (${_rc}):\n${_out}")
endif()

execute_process(COMMAND ./pan ${_pan_flags} -m${DEPTH} WORKING_DIRECTORY "${WORK_DIR}"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _report ERROR_VARIABLE _report)
string(REGEX MATCH "errors: ([0-9]+)" _ "${_report}")
set(_errors "${CMAKE_MATCH_1}")
string(REGEX MATCH "([0-9]+) states, stored" _ "${_report}")
set(_states "${CMAKE_MATCH_1}")
string(REGEX MATCH "depth reached ([0-9]+)" _ "${_report}")
set(_depth "${CMAKE_MATCH_1}")
string(REGEX MATCH "([0-9.]+)[ \t]+total actual memory usage" _ "${_report}")
set(_memory "${CMAKE_MATCH_1}")
string(REGEX MATCH "elapsed time ([0-9.e+-]+) seconds" _ "${_report}")
set(_seconds "${CMAKE_MATCH_1}")
string(REGEX MATCH "pan:1: [^\n]*\\(at depth ([0-9]+)\\)" _ "${_report}")
set(_trail_depth "${CMAKE_MATCH_1}")
if(NOT _trail_depth STREQUAL "")
    set(_trail_depth ", counterexample of ${_trail_depth} steps")
endif()
message(STATUS "spin ${_spin_defines}: ${_states} states, depth ${_depth}, ${_memory} MB, ${_seconds} s, errors ${_errors}"
               "${_trail_depth}")

if(_errors STREQUAL "")
    message(FATAL_ERROR "pan gave no verdict (exit ${_rc}):\n${_report}")
endif()
if(_report MATCHES "max search depth too small|reached -DMEMLIM bound|out of memory")
    message(FATAL_ERROR "the search was cut short (depth ${DEPTH} or ${MEMLIM} MiB): not a proof\n${_report}")
endif()
if(EXPECT STREQUAL "")
    if(NOT _errors EQUAL 0)
        execute_process(COMMAND "${SPIN}" -t -p ${_spin_defines} "${_model_name}" WORKING_DIRECTORY "${WORK_DIR}"
                        OUTPUT_VARIABLE _trail ERROR_VARIABLE _trail)
        message(FATAL_ERROR "the model found an error:\n${_report}\ncounterexample (also in ${WORK_DIR}):\n${_trail}")
    endif()
else()
    string(FIND "${_report}" "${EXPECT}" _found)
    if(_errors EQUAL 0 OR _found EQUAL -1)
        message(FATAL_ERROR "expected the mutant's error '${EXPECT}', which the model no longer finds: the mutant "
                            "no longer puts its bug back, or another change hides it.\n${_report}")
    endif()
    message(STATUS "found the known error: ${EXPECT}")
endif()
