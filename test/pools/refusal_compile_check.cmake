# The README's one-liner must not lose work silently: under -Werror, ignoring what `join()` returns and dropping a
# dispatch's guard unread both fail to compile, while the checked forms compile.
#   cmake -D CXX=... -D INCLUDE=... -D WORK_DIR=... -P refusal_compile_check.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(_prelude "#include <forkunion/pools/flat.hpp>\nint main() {\n    forkunion::flat_pool_t pool;\n    if (!pool.spawn(2)) return 1;\n    auto f = [](std::size_t) noexcept {};\n")
# One case per name: the statement (without its `;`, which a CMake list would split on) and the verdict.
set(_discarded_join_body "pool.for_n(10, f).join()")
set(_discarded_join_expect fail)
set(_discarded_guard_body "pool.for_n(10, f)")
set(_discarded_guard_expect fail)
set(_checked_join_body "if (!pool.for_n(10, f).join()) return 2")
set(_checked_join_expect pass)
set(_run_on_caller_body "pool.for_n(10, f).join_or_run_on_caller()")
set(_run_on_caller_expect pass)
foreach(_name discarded_join discarded_guard checked_join run_on_caller)
    set(_expect "${_${_name}_expect}")
    file(WRITE "${WORK_DIR}/${_name}.cpp" "${_prelude}    ${_${_name}_body};\n    return 0;\n}\n")
    execute_process(COMMAND "${CXX}" -std=c++20 -Wall -Wextra -Werror -fsyntax-only "-I${INCLUDE}" "${WORK_DIR}/${_name}.cpp"
                    RESULT_VARIABLE _result OUTPUT_VARIABLE _output ERROR_VARIABLE _errors)
    if(_expect STREQUAL "fail" AND _result EQUAL 0)
        message(FATAL_ERROR "${_name}: compiled under -Werror, so a refusal could be dropped silently")
    elseif(_expect STREQUAL "fail" AND NOT _errors MATCHES "nodiscard|unused-result|ignoring return value")
        message(FATAL_ERROR "${_name}: failed, but not for the discarded status:\n${_errors}")
    elseif(_expect STREQUAL "pass" AND NOT _result EQUAL 0)
        message(FATAL_ERROR "${_name}: the checked form does not compile:\n${_errors}")
    endif()
    message(STATUS "${_name}: ${_expect}s as it must")
endforeach()
