# Optional instruction families of the hardware layer (see include/forkunion/hardware/features.hpp).
#
# - FORKUNION_WITH_<FEATURE> = AUTO | ON | OFF (cache strings, default AUTO; anything else fails configure):
#     AUTO  use the feature if the compiler can emit it for this target;
#     ON    require it: configure fails if the compiler cannot;
#     OFF   compile it out.
# - FORKUNION_TARGET_<FEATURE>: the result of the compile probe (cmake/forkunion_probe.cpp, try_compile), which
#   builds the very code the headers emit for the feature.
# - FORKUNION_PORTABLE = ON compiles every optional path out; a feature forced ON next to it is a contradiction.
# The outcome reaches the code as 0/1 definitions on forkunion::header, exported to consumers with the target.
# A new instruction family takes a doc line, an entry in `_forkunion_features` and a section in the probe.
option(FORKUNION_PORTABLE "Compile every optional instruction path out: std::atomic and the pause hint only" OFF)

set(_forkunion_features_doc_WAITPKG "x86 UMONITOR/UMWAIT/TPAUSE waits")
set(_forkunion_features_doc_CMPCCXADD "x86-64 CMPccXADD conditional adds")
set(_forkunion_features_doc_RAOINT "x86-64 RAO-INT no-return atomics")
set(_forkunion_features_doc_LSE "AArch64 LSE atomics")
set(_forkunion_features_doc_WFXT "AArch64 WFET timed waits")
set(_forkunion_features_doc_ZAWRS "RISC-V Zawrs WRS waits")
set(_forkunion_features_doc_ZACAS "RISC-V Zacas AMOCAS")
set(_forkunion_features WAITPKG CMPCCXADD RAOINT LSE WFXT ZAWRS ZACAS)

# Validate every value before any probe runs, so a typo fails at once and names itself.
foreach(_feature IN LISTS _forkunion_features)
    set(FORKUNION_WITH_${_feature} AUTO CACHE STRING "${_forkunion_features_doc_${_feature}}: AUTO, ON or OFF")
    set_property(CACHE FORKUNION_WITH_${_feature} PROPERTY STRINGS AUTO ON OFF)
    string(TOUPPER "${FORKUNION_WITH_${_feature}}" _value)
    if(NOT _value MATCHES "^(AUTO|ON|OFF)$")
        message(FATAL_ERROR "forkunion: FORKUNION_WITH_${_feature}='${FORKUNION_WITH_${_feature}}' is not one of "
                            "AUTO, ON, OFF (${_forkunion_features_doc_${_feature}})")
    endif()
    if(FORKUNION_PORTABLE AND _value STREQUAL "ON")
        message(FATAL_ERROR "forkunion: FORKUNION_PORTABLE=ON compiles every optional path out, "
                            "but FORKUNION_WITH_${_feature}=ON asks for ${_forkunion_features_doc_${_feature}}")
    endif()
endforeach()

# Sets FORKUNION_TARGET_<feature> (cached) from the compile probe.
function(_forkunion_probe feature)
    if(DEFINED CACHE{FORKUNION_TARGET_${feature}})
        return()
    endif()
    set(_previous_type "${CMAKE_TRY_COMPILE_TARGET_TYPE}")
    set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY) # compile and assemble; a cross linker is not needed
    try_compile(_compiles "${PROJECT_BINARY_DIR}/forkunion_probes/${feature}"
                SOURCES "${PROJECT_SOURCE_DIR}/cmake/forkunion_probe.cpp"
                CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${PROJECT_SOURCE_DIR}/include"
                COMPILE_DEFINITIONS -DFORKUNION_PROBE_${feature} -DFORKUNION_WITH_${feature}=1
                CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
                OUTPUT_VARIABLE _output)
    set(CMAKE_TRY_COMPILE_TARGET_TYPE "${_previous_type}")
    set(FORKUNION_TARGET_${feature} ${_compiles} CACHE INTERNAL "the compiler can emit ${feature} for this target")
    file(WRITE "${PROJECT_BINARY_DIR}/forkunion_probes/${feature}.log" "${_output}")
endfunction()

set(_forkunion_summary "")
foreach(_feature IN LISTS _forkunion_features)
    string(TOUPPER "${FORKUNION_WITH_${_feature}}" _value)
    set(_enabled 0)
    if(NOT FORKUNION_PORTABLE AND NOT _value STREQUAL "OFF")
        _forkunion_probe(${_feature})
        if(FORKUNION_TARGET_${_feature})
            set(_enabled 1)
        elseif(_value STREQUAL "ON")
            file(READ "${PROJECT_BINARY_DIR}/forkunion_probes/${_feature}.log" _log)
            message(FATAL_ERROR "forkunion: FORKUNION_WITH_${_feature}=ON, but the compiler cannot emit "
                                "${_forkunion_features_doc_${_feature}} for this target. The probe "
                                "(cmake/forkunion_probe.cpp) said:\n${_log}")
        endif()
    endif()
    target_compile_definitions(forkunion_header INTERFACE FORKUNION_WITH_${_feature}=${_enabled})
    string(APPEND _forkunion_summary " ${_feature}=${_enabled}")
endforeach()
if(FORKUNION_PORTABLE)
    target_compile_definitions(forkunion_header INTERFACE FORKUNION_PORTABLE=1)
else()
    target_compile_definitions(forkunion_header INTERFACE FORKUNION_PORTABLE=0)
endif()
if(FORKUNION_PORTABLE)
    string(APPEND _forkunion_summary " PORTABLE=1")
endif()
message(STATUS "forkunion: instruction families:${_forkunion_summary}")
