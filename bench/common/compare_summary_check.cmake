# The summary step of bench/compare.sh on real rows: runs PROGRAM (forkunion_bench_dispatch) once, briefly, on
# ForkUnion's backend, feeds its RESULT rows to SUMMARY (compare_summary.awk) with awk, and checks that awk accepts
# the program (a quote or brace slip fails here, not in the README's first command) and that the dispatch table
# has the `forkunion/for_n/empty` row with the median the run itself printed.
execute_process(COMMAND "${CMAKE_COMMAND}" -E env FORKUNION_BACKEND=forkunion_static_shared "${PROGRAM}"
                        --benchmark_min_time=0.01 RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE error
                        TIMEOUT 120)
if(NOT status EQUAL 0)
    message(FATAL_ERROR "the dispatch run failed (${status}):\n${output}\n${error}")
endif()
string(REGEX MATCHALL "RESULT [^\n]*" rows "${output}")
list(JOIN rows "\n" rows_text)
if(NOT rows_text MATCHES "row=forkunion/for_n/empty ns=([0-9]+)")
    message(FATAL_ERROR "no forkunion/for_n/empty RESULT row in the run's output:\n${output}")
endif()
set(ns "${CMAKE_MATCH_1}") # the integer part; the table rounds it (%.0f)
file(WRITE "${WORK}/rows.txt" "${rows_text}\n")
execute_process(COMMAND awk -v "check=edges=1 rounds=1 components=1 checksum=1, check=passed" -f "${SUMMARY}"
                        "${WORK}/rows.txt" RESULT_VARIABLE status OUTPUT_VARIABLE table ERROR_VARIABLE error)
if(NOT status EQUAL 0 OR NOT error STREQUAL "")
    message(FATAL_ERROR "the summary failed (${status}): ${error}")
endif()
if(NOT table MATCHES "\n\\| `forkunion/for_n/empty` \\| ([0-9]+) \\|")
    message(FATAL_ERROR "the dispatch table has no forkunion/for_n/empty row:\n${table}")
endif()
set(shown "${CMAKE_MATCH_1}")
math(EXPR difference "${shown} - ${ns}")
if(difference LESS 0 OR difference GREATER 1)
    message(FATAL_ERROR "the table shows ${shown} ns for forkunion/for_n/empty, the run measured ${ns}.x ns")
endif()
message(STATUS "summary row forkunion/for_n/empty: ${shown} ns (the run measured ${ns}.x ns)")
