# Figures that docs/c_api.md quotes from the code, recomputed from the build:
#   exports  with NM and LIBRARY: `nm -D --defined-only` on the shared C library counts its `fu_` symbols; the doc's
#            `**<N> symbols, all `fu_`**` must say that number;
#   output   with PROGRAM and ANCHOR: runs the program; every `quoted` span of the doc's sentence that starts with
#            ANCHOR (up to the first "`." that ends it) must be a line of what the program printed.
#   cmake -D DOC=docs/c_api.md -D NM=nm -D LIBRARY=libforkunion_shared.so -P doc_figures.cmake
#   cmake -D DOC=docs/c_api.md -D PROGRAM=split_dispatch -D "ANCHOR=It prints" -P doc_figures.cmake
file(READ "${DOC}" _doc)
string(REPLACE "\n" " " _doc "${_doc}") # a sentence may wrap anywhere

if(LIBRARY)
    execute_process(COMMAND "${NM}" -D --defined-only "${LIBRARY}" OUTPUT_VARIABLE _symbols RESULT_VARIABLE _result)
    if(NOT _result EQUAL 0)
        message(FATAL_ERROR "${NM} -D --defined-only ${LIBRARY} failed (${_result})")
    endif()
    string(REGEX MATCHALL " fu_[A-Za-z0-9_]+\n" _exported "${_symbols}")
    list(LENGTH _exported _count)
    if(NOT _doc MATCHES "\\*\\*([0-9]+) symbols, all `fu_`\\*\\*")
        message(FATAL_ERROR "${DOC} does not say `**<N> symbols, all `fu_`**`")
    endif()
    if(NOT CMAKE_MATCH_1 EQUAL _count)
        message(FATAL_ERROR "${DOC} says ${CMAKE_MATCH_1} exported symbols; ${LIBRARY} exports ${_count} fu_ symbols")
    endif()
    message(STATUS "${DOC}: ${_count} exported fu_ symbols, as the library has")
endif()

if(PROGRAM)
    string(FIND "${_doc}" "${ANCHOR}" _at)
    if(_at EQUAL -1)
        message(FATAL_ERROR "${DOC} has no sentence starting '${ANCHOR}'")
    endif()
    string(SUBSTRING "${_doc}" ${_at} -1 _sentence)
    string(FIND "${_sentence}" "`." _end)
    string(SUBSTRING "${_sentence}" 0 ${_end} _sentence)
    string(APPEND _sentence "`")
    execute_process(COMMAND "${PROGRAM}" RESULT_VARIABLE _result OUTPUT_VARIABLE _output ERROR_VARIABLE _output)
    if(NOT _result EQUAL 0)
        message(FATAL_ERROR "${PROGRAM} failed (${_result}):\n${_output}")
    endif()
    string(REGEX MATCHALL "`[^`]+`" _quotes "${_sentence}")
    if(NOT _quotes)
        message(FATAL_ERROR "${DOC}: the sentence '${ANCHOR}...' quotes nothing")
    endif()
    foreach(_quote IN LISTS _quotes)
        string(REGEX REPLACE "^`|`$" "" _quote "${_quote}")
        string(FIND "\n${_output}" "\n${_quote}\n" _found)
        if(_found EQUAL -1)
            message(FATAL_ERROR "${DOC} says the program prints `${_quote}`; it printed:\n${_output}")
        endif()
    endforeach()
    list(LENGTH _quotes _count)
    message(STATUS "${DOC}: the ${_count} lines quoted after '${ANCHOR}' are what ${PROGRAM} prints")
endif()
