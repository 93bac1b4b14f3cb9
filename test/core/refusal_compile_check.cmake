# The README's one-liner must not lose work silently: under -Werror, ignoring what `join()` returns and dropping a
# dispatch's guard unread both fail to compile, while the checked forms compile.
#   cmake -D CXX=... -D INCLUDE=... -D WORK_DIR=... -P refusal_compile_check.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(_prelude "#include <forkunion/flat.hpp>\nint main() {\n    forkunion::flat_pool_t pool;\n    if (!pool.spawn(2)) return 1;\n    auto f = [](std::size_t) noexcept {};\n")
set(_cases
    "discarded_join|    pool.for_n(10, f).join();\n|fail"
    "discarded_guard|    pool.for_n(10, f);\n|fail"
    "checked_join|    if (!pool.for_n(10, f).join()) return 2;\n|pass"
    "run_on_caller|    pool.for_n(10, f).join_or_run_on_caller();\n|pass")
foreach(_case IN LISTS _cases)
    string(REPLACE "|" ";" _parts "${_case}")
    list(GET _parts 0 _name)
    list(GET _parts 1 _body)
    list(GET _parts 2 _expect)
    file(WRITE "${WORK_DIR}/${_name}.cpp" "${_prelude}${_body}    return 0;\n}\n")
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
