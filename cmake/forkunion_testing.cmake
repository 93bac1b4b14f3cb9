# Helpers of the test and example folders.
include_guard(GLOBAL)

# `forkunion_skipped_test(name reason)`: stands for a test whose tool is missing here. ctest counts it as skipped
# (not passed, not failed) and prints `skipped: <reason>` with `--output-on-failure` or `-V`. Configure says so once,
# not on every reconfigure.
function(forkunion_skipped_test name reason)
    add_test(NAME ${name} COMMAND "${CMAKE_COMMAND}" -E echo "skipped: ${reason}")
    set_tests_properties(${name} PROPERTIES SKIP_REGULAR_EXPRESSION "^skipped: ")
    string(MAKE_C_IDENTIFIER "FORKUNION_SKIP_NOTED_${reason}" _noted)
    if(NOT ${_noted})
        message(STATUS "forkunion: ${reason}; the tests that need it are skipped (${name}, ...)")
        set(${_noted} ON CACHE INTERNAL "")
    endif()
endfunction()
