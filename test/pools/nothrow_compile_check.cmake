# A callback a pool's threads run must be noexcept: handing one that may throw to any verb of the pool kind POOL
# (0 flat, 1 colocated, 2 distributed) fails to compile with the rule's message, one verb at a time, while the
# same file with `noexcept` on every callback compiles (the positive control, so that the refusals are the rule's
# and not some other error). With NO_EXCEPTIONS, every pool and verb compiles under -fno-exceptions without
# `noexcept`: nothing can throw there, and the check is off.
#   cmake -D CXX=... -D INCLUDE=... -D SOURCE=nothrow_callbacks.cpp -D POOL=0 -D WORK_DIR=... -P nothrow_compile_check.cmake
#   cmake -D CXX=... -D INCLUDE=... -D SOURCE=nothrow_callbacks.cpp -D NO_EXCEPTIONS=ON -D WORK_DIR=... -P ...
set(_rule "forkunion: a callback run by the pool's threads must be noexcept: write `\\[&\\]\\(\\.\\.\\.\\) noexcept")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# Compiles SOURCE for one case; sets `_result` and `_errors` in the caller.
macro(_compile pool verb noexcept_word)
    execute_process(COMMAND "${CXX}" -std=c++20 -Wall -Wextra -Werror -fsyntax-only ${ARGN} "-I${INCLUDE}"
                            "-DFORKUNION_TEST_POOL=${pool}" "-DFORKUNION_TEST_VERB=${verb}"
                            "-DFORKUNION_TEST_NOEXCEPT=${noexcept_word}" "${SOURCE}"
                    RESULT_VARIABLE _result OUTPUT_VARIABLE _output ERROR_VARIABLE _errors)
    string(APPEND _errors "${_output}")
endmacro()

if(NO_EXCEPTIONS)
    _compile(-1 -1 "" -fno-exceptions)
    if(NOT _result EQUAL 0)
        message(FATAL_ERROR "without exceptions, a callback without noexcept must compile:\n${_errors}")
    endif()
    message(STATUS "-fno-exceptions: every verb of every pool takes a callback without noexcept")
    return()
endif()

_compile(${POOL} -1 noexcept)
if(NOT _result EQUAL 0)
    message(FATAL_ERROR "pool ${POOL}: the noexcept callbacks must compile (positive control):\n${_errors}")
endif()
message(STATUS "pool ${POOL}: every verb compiles with noexcept callbacks")

# The cases of nothrow_callbacks.cpp: every verb (0..5) on every pool; the callback shapes (6..10) where a pool calls
# them its own way (the flat pool's jobs, which the distributed pool shares, and the colocated pool's adapter); the
# flat pool's sole-claimer split API (11).
set(_verbs 0 1 2 3 4 5)
if(POOL EQUAL 0)
    list(APPEND _verbs 6 7 8 9 10 11)
elseif(POOL EQUAL 1)
    list(APPEND _verbs 6 7 8 9 10)
endif()
foreach(_verb IN LISTS _verbs)
    _compile(${POOL} ${_verb} "")
    if(_result EQUAL 0)
        message(FATAL_ERROR "pool ${POOL}, verb ${_verb}: a callback that may throw compiled")
    endif()
    if(NOT _errors MATCHES "${_rule}")
        message(FATAL_ERROR "pool ${POOL}, verb ${_verb}: refused, but not by the noexcept rule:\n${_errors}")
    endif()
    message(STATUS "pool ${POOL}, verb ${_verb}: a callback that may throw is refused with the rule's message")
endforeach()
