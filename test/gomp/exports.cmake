# No silent fall-through. Under LD_PRELOAD any entry point the drop-in lacks would bind to the real libgomp, which
# is still loaded, and mix two runtimes. So: every function libgomp.so.1 exports, with its symbol version (Fortran
# spellings and the OMP_1.0 lock ABI included), is exported by the drop-in with the same version, unless it is on
# the documented list below; the drop-in exports nothing else; and every entry point it refuses (the FORKUNION_GOMP_*
# lists of refused.cpp) aborts at the call, naming itself and the construct.
#
# The documented list: libgomp entry points the drop-in deliberately does not define. Empty: GCC 12's whole table
# is defined (implemented or refused). A newer libgomp adds entry points, which then fail here by name.
set(_unexported "")

cmake_policy(VERSION 3.21)
foreach(_required LIBGOMP DROPIN PROBE REFUSED)
    if(NOT DEFINED ${_required})
        message(FATAL_ERROR "exports.cmake: ${_required} is not set")
    endif()
endforeach()
find_program(_nm NAMES nm REQUIRED)

function(read_exports library out)
    execute_process(COMMAND "${_nm}" -D --defined-only --with-symbol-versions "${library}" OUTPUT_VARIABLE _text
                    RESULT_VARIABLE _status)
    if(NOT _status EQUAL 0)
        message(FATAL_ERROR "nm failed on ${library}")
    endif()
    string(REPLACE "\n" ";" _lines "${_text}")
    set(_names "")
    foreach(_line IN LISTS _lines)
        # `address T name@@VERSION` for functions; the version nodes themselves are absolute `A` symbols.
        if(_line MATCHES "^[0-9a-f]+ [TtWi] ([A-Za-z0-9_]+@@?[A-Za-z0-9_.]+)$")
            list(APPEND _names "${CMAKE_MATCH_1}")
        endif()
    endforeach()
    list(SORT _names)
    set(${out} "${_names}" PARENT_SCOPE)
endfunction()

read_exports("${LIBGOMP}" _theirs)
read_exports("${DROPIN}" _ours)
list(LENGTH _theirs _their_count)
if(_their_count LESS 100)
    message(FATAL_ERROR "${LIBGOMP} exports only ${_their_count} versioned functions: not a libgomp")
endif()
set(_missing "")
foreach(_symbol IN LISTS _theirs)
    string(REGEX REPLACE "@.*" "" _name "${_symbol}")
    if(NOT _symbol IN_LIST _ours AND NOT _name IN_LIST _unexported)
        list(APPEND _missing "${_symbol}")
    endif()
endforeach()
set(_extra "")
foreach(_symbol IN LISTS _ours)
    if(NOT _symbol IN_LIST _theirs)
        list(APPEND _extra "${_symbol}")
    endif()
endforeach()
if(_missing OR _extra)
    list(JOIN _missing "\n  " _missing_text)
    list(JOIN _extra "\n  " _extra_text)
    message(FATAL_ERROR "export tables differ\nmissing from the drop-in:\n  ${_missing_text}\n"
                        "exported by the drop-in only:\n  ${_extra_text}")
endif()

# The refused entry points, as refused.cpp lists them, each called once in a process of its own.
file(READ "${REFUSED}" _source)
string(REGEX MATCHALL "FORKUNION_GOMP_(OPENACC|PLUGIN|TARGET|REDUCTION|OLD_LOCK)\\([A-Za-z0-9_]+\\)" _entries "${_source}")
set(_refused_count 0)
foreach(_entry IN LISTS _entries)
    string(REGEX MATCH "^FORKUNION_GOMP_([A-Z_]+)\\(([A-Za-z0-9_]+)\\)$" _ "${_entry}")
    set(_kind "${CMAKE_MATCH_1}")
    set(_name "${CMAKE_MATCH_2}")
    if(_name STREQUAL "name")
        continue() # the macros' own definitions
    endif()
    set(_version "")
    set(_shown "${_name}")
    if(_kind STREQUAL "OLD_LOCK")
        set(_version "OMP_1.0")
        set(_shown "${_name}@OMP_1.0")
    endif()
    execute_process(COMMAND "${PROBE}" "${DROPIN}" "${_name}" ${_version} OUTPUT_QUIET ERROR_VARIABLE _err
                    RESULT_VARIABLE _status)
    string(FIND "${_err}" "forkunion gomp: ${_shown}" _named)
    if(_status EQUAL 0 OR _named LESS 0 OR NOT _err MATCHES "is not supported \\(")
        message(FATAL_ERROR "${_shown} should abort naming itself and the construct; it ended with '${_status}':\n${_err}")
    endif()
    math(EXPR _refused_count "${_refused_count} + 1")
endforeach()
if(_refused_count LESS 150)
    message(FATAL_ERROR "only ${_refused_count} refused entry points found in ${REFUSED}")
endif()
list(LENGTH _ours _our_count)
list(LENGTH _unexported _unexported_count)
math(EXPR _implemented "${_our_count} - ${_refused_count}")
message(STATUS "libgomp: ${_their_count} versioned functions; drop-in: ${_our_count} (${_implemented} implemented, "
               "${_refused_count} refused loudly), ${_unexported_count} on the documented list")
