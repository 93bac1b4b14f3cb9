# Every deprecated public name still compiles and warns, through the umbrella and through the header that first
# declared it: for each header below, one translation unit that includes only that header, and one that includes
# only `<forkunion.hpp>`, each using every name of its rows once per line. The test fails if a unit does not
# compile, or if a row's line draws no deprecation warning (each row's last statement is the one deprecated use).
#   cmake -D CXX=g++ -D "FLAGS=-std=c++20|-Iinclude" -D WORK_DIR=... -P deprecated_names.cmake
# A row is `header|statement%statement...`: `%` separates statements, the last one uses the deprecated name.
set(_rows
    "forkunion/base/types.hpp|[[maybe_unused]] fu::local_prong<> value{}"
    "forkunion/base/types.hpp|[[maybe_unused]] fu::slice<> value{}"
    "forkunion/hardware/features.hpp|[[maybe_unused]] auto value = fu::capability_risc5_amo_k"
    "forkunion/hardware/features.hpp|[[maybe_unused]] auto value = fu::capability_risc5_zawrs_k"
    "forkunion/hardware/features.hpp|[[maybe_unused]] auto value = fu::capability_risc5_zacas_k"
    "forkunion/hardware/features.hpp|[[maybe_unused]] auto value = fu::capability_risc5_zicbom_k"
    "forkunion/hardware/atomics.hpp|int word = 0%[[maybe_unused]] fu::basic_atomic_ref<int> value(word)"
    "forkunion/hardware/wait.hpp|[[maybe_unused]] fu::basic_spin_mutex<> value"
    "forkunion/topology/affinity.hpp|[[maybe_unused]] fu::basic_saved_affinity<> *value = nullptr"
    "forkunion/topology/topology.hpp|[[maybe_unused]] fu::basic_machine_topology<> *value = nullptr"
    "forkunion/memory/allocators.hpp|[[maybe_unused]] fu::basic_symmetric_memory_allocator<> *value = nullptr"
    "forkunion/memory/allocators.hpp|[[maybe_unused]] fu::allocation_result<int *> value{}"
    "forkunion/memory/allocators.hpp|[[maybe_unused]] fu::basic_domain_allocator<int> *value = nullptr"
    "forkunion/memory/allocators.hpp|[[maybe_unused]] fu::array_view<int> value{}"
    "forkunion/memory/allocators.hpp|[[maybe_unused]] fu::sharded_array<int> *value = nullptr"
    "forkunion/memory/allocators.hpp|[[maybe_unused]] fu::replicated_array<int> *value = nullptr"
    "forkunion/pools/flat.hpp|[[maybe_unused]] fu::basic_pool<> *value = nullptr"
    "forkunion/pools/flat.hpp|[[maybe_unused]] fu::mood_t value{}"
    "forkunion/pools/flat.hpp|fu::flat_pool_t pool%(void)pool.nap()"
    "forkunion/pools/flat.hpp|fu::flat_pool_t pool%(void)pool.sleep(1)"
    "forkunion/pools/flat.hpp|fu::flat_pool_t pool%(void)pool.mood()"
    "forkunion/pools/colocated.hpp|[[maybe_unused]] fu::basic_colocated_pool<> *value = nullptr"
    "forkunion/pools/colocated.hpp|fu::colocated_pool_t pool%(void)pool.nap()"
    "forkunion/pools/colocated.hpp|fu::colocated_pool_t pool%(void)pool.sleep(1)"
    "forkunion/pools/colocated.hpp|fu::colocated_pool_t pool%(void)pool.mood()"
    "forkunion/pools/distributed.hpp|[[maybe_unused]] fu::basic_distributed_pool<> *value = nullptr"
    "forkunion/pools/distributed.hpp|fu::distributed_pool_t pool%(void)pool.nap()"
    "forkunion/pools/distributed.hpp|fu::distributed_pool_t pool%(void)pool.sleep(1)"
    "forkunion/pools/distributed.hpp|fu::distributed_pool_t pool%(void)pool.mood()"
    "forkunion/fabric/fabric.hpp|[[maybe_unused]] fu::basic_fabric<> *value = nullptr")

string(REPLACE "|" ";" FLAGS "${FLAGS}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(_headers "")
foreach(_row IN LISTS _rows)
    string(REGEX REPLACE "\\|.*" "" _header "${_row}")
    list(APPEND _headers "${_header}")
endforeach()
list(REMOVE_DUPLICATES _headers)
list(APPEND _headers forkunion.hpp) # the umbrella unit takes every row

set(_failures "")
foreach(_unit_header IN LISTS _headers)
    set(_source "#include <${_unit_header}>\nnamespace fu = forkunion;\n")
    set(_line 2)
    set(_expected "") # `<line>:<statement>` of every deprecated use
    set(_function 0)
    foreach(_row IN LISTS _rows)
        string(REGEX REPLACE "\\|.*" "" _header "${_row}")
        if(NOT _unit_header STREQUAL "forkunion.hpp" AND NOT _header STREQUAL _unit_header)
            continue()
        endif()
        string(REGEX REPLACE "^[^|]*\\|" "" _statements "${_row}")
        string(REPLACE "%" ";" _statements "${_statements}")
        math(EXPR _function "${_function} + 1")
        string(APPEND _source "void use_${_function}() {\n")
        math(EXPR _line "${_line} + 1")
        foreach(_statement IN LISTS _statements)
            string(APPEND _source "    ${_statement};\n")
            set(_last "${_statement}") # the loop variable is restored after the loop
            math(EXPR _line "${_line} + 1")
        endforeach()
        string(APPEND _source "}\n")
        math(EXPR _line "${_line} + 1")
        math(EXPR _use "${_line} - 1")
        list(APPEND _expected "${_use}")
        set(_statement_of_${_use} "${_last}")
    endforeach()
    string(MAKE_C_IDENTIFIER "${_unit_header}" _name)
    file(WRITE "${WORK_DIR}/${_name}.cpp" "${_source}")
    execute_process(COMMAND "${CXX}" ${FLAGS} -Wdeprecated-declarations -fsyntax-only "${WORK_DIR}/${_name}.cpp"
                    RESULT_VARIABLE _result OUTPUT_VARIABLE _output ERROR_VARIABLE _errors)
    if(NOT _result EQUAL 0)
        string(APPEND _failures "<${_unit_header}>: does not compile:\n${_output}${_errors}\n")
        continue()
    endif()
    set(_silent "")
    foreach(_use IN LISTS _expected)
        if(NOT _errors MATCHES "${_name}\\.cpp[:(]${_use}[:,][^\n]*deprecated")
            string(APPEND _silent "\n  line ${_use}: ${_statement_of_${_use}}")
        endif()
    endforeach()
    list(LENGTH _expected _count)
    if(NOT _silent STREQUAL "")
        string(APPEND _failures "<${_unit_header}>: no deprecation warning at${_silent}\n")
    else()
        message(STATUS "<${_unit_header}>: ${_count} deprecated uses compile and warn")
    endif()
endforeach()
if(NOT _failures STREQUAL "")
    message(FATAL_ERROR "${_failures}")
endif()
