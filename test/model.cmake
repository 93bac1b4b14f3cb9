# Protocol models of the flat pool (test/model/): a Spin model of claim/publish/retire/join and the sleep ticket,
# and a brute-force sweep of the u8 claim cursors. See the README comment at the top of test/model/flat.pml.

# I5 for std::uint8_t: every n and T in [0, 255] under adversarial interleavings (~15 s of one core); sanitized
# and emulated builds (several times slower) sweep only the thread counts where the bound is tight.
add_executable(forkunion_model_cursor_sweep model/cursor_sweep.cpp)
target_link_libraries(forkunion_model_cursor_sweep PRIVATE forkunion::header forkunion_warnings)
if(FORKUNION_SANITIZER OR CMAKE_CROSSCOMPILING)
    add_test(NAME model.cursor_sweep_u8 COMMAND forkunion_model_cursor_sweep --quick)
else()
    add_test(NAME model.cursor_sweep_u8 COMMAND forkunion_model_cursor_sweep)
endif()
set_tests_properties(model.cursor_sweep_u8 PROPERTIES TIMEOUT 600 LABELS model)

# Regressions of the bugs the protocol review found, one deterministic program each (see the comment at the top of
# each): they exited 1 before the fixes in flat.hpp and must exit 0 now.
foreach(_repro nested_dynamic_clobbers_cursors nested_generation_aliases_outer stale_join_runs_foreign_slice)
    add_executable(forkunion_repro_${_repro} model/repro/${_repro}.cpp)
    target_link_libraries(forkunion_repro_${_repro} PRIVATE forkunion::header forkunion_warnings)
    add_test(NAME model.regression.${_repro} COMMAND forkunion_repro_${_repro})
    set_tests_properties(model.regression.${_repro} PROPERTIES TIMEOUT 120 LABELS model)
endforeach()

# The Spin runs need `spin` and a host C compiler for its generated verifier. They depend neither on the build
# flavour nor on the target CPU (the verifier runs on the host), so sanitizer and cross builds skip them.
if(CMAKE_CROSSCOMPILING)
    return()
endif()
find_program(FORKUNION_SPIN spin)
if(CMAKE_C_COMPILER)
    set(FORKUNION_MODEL_CC "${CMAKE_C_COMPILER}")
else()
    find_program(FORKUNION_MODEL_CC NAMES cc gcc clang)
endif()
if(NOT FORKUNION_SPIN OR NOT FORKUNION_MODEL_CC)
    message(STATUS "forkunion: spin or a C compiler not found, the protocol model checks are not registered "
                   "(apt-get install spin)")
    return()
endif()
if(FORKUNION_SANITIZER)
    return()
endif()

# forkunion_add_model(<name> EXPECT <text or ""> DEFINES <-D...>...): one exhaustive Spin search of flat.pml.
# Bounds: 1 GiB of states (-DCOLLAPSE) and a search depth of 10^5 steps; each run below needs at most ~0.9 GiB
# and 10 s of one core here, ~45 s for all of them. A cut-short search fails the test rather than passing.
function(forkunion_add_model name)
    cmake_parse_arguments(_model "" "EXPECT" "DEFINES" ${ARGN})
    add_test(NAME model.flat.${name}
             COMMAND "${CMAKE_COMMAND}" -D "SPIN=${FORKUNION_SPIN}" -D "CC=${FORKUNION_MODEL_CC}"
                     -D "MODEL=${CMAKE_CURRENT_SOURCE_DIR}/model/flat.pml"
                     -D "WORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/model_${name}" -D "DEFINES=${_model_DEFINES}"
                     -D "EXPECT=${_model_EXPECT}" -D "MEMLIM=1024" -D "DEPTH=100000"
                     -P "${CMAKE_CURRENT_SOURCE_DIR}/model/run_spin.cmake")
    set_tests_properties(model.flat.${name} PROPERTIES TIMEOUT 300 LABELS model)
endfunction()

# The protocol as flat.hpp implements it, within its contract: each run must explore every state without error.
forkunion_add_model(inclusive EXPECT "" DEFINES -DT=3 -DK=2 -DK1=2)
forkunion_add_model(inclusive_sleep EXPECT "" DEFINES -DSLEEP_MODE -DT=3 -DK=3 -DK1=0)
forkunion_add_model(exclusive_nested EXPECT "" DEFINES -DEXCLUSIVE -DT=2 -DK=1 -DK1=1 -DNEST=3 -DDEPTH=3)
forkunion_add_model(exclusive_sleep EXPECT "" DEFINES -DEXCLUSIVE -DSLEEP_MODE -DT=2 -DK=2 -DK1=0)
forkunion_add_model(terminate_sleep EXPECT "" DEFINES -DTERMINATE -DSLEEP_MODE -DT=3 -DK=2 -DK1=0)

# The review's counterexamples, now fixed: the same shapes must explore every state without error.
forkunion_add_model(nested_alias EXPECT "" DEFINES -DEXCLUSIVE -DT=2 -DK=1 -DK1=1 -DNEST=4 -DDEPTH=1)
forkunion_add_model(stale_rejoin EXPECT "" DEFINES -DSTALE_REJOIN -DEMOD=4)
forkunion_add_model(sleep_race EXPECT "" DEFINES -DSLEEP_MODE -DT=2 -DK=2 -DK1=2)
forkunion_add_model(terminate_race EXPECT "" DEFINES -DTERMINATE -DTERMINATE_RACE)

# Mutations that reintroduce each bug: every one must still find its counterexample, proving the model can fail.
forkunion_add_model(mutate_nested_alias EXPECT "pan:1: invalid end state"
                    DEFINES -DMUTATE_NESTED_ALIAS -DEXCLUSIVE -DT=2 -DK=1 -DK1=0 -DNEST=4 -DDEPTH=1)
forkunion_add_model(mutate_pending EXPECT "pan:1: assertion violated (owner[q]==me)"
                    DEFINES -DMUTATE_PENDING -DSTALE_REJOIN -DEMOD=4)
forkunion_add_model(mutate_sleep_race EXPECT "pan:1: invalid end state"
                    DEFINES -DMUTATE_SLEEP_RACE -DSLEEP_MODE -DT=3 -DK=2 -DK1=2)
forkunion_add_model(mutate_nap_lost_wake EXPECT "pan:1: invalid end state"
                    DEFINES -DMUTATE_NAP_LOST_WAKE -DSLEEP_MODE -DT=2 -DK=2 -DK1=0)
forkunion_add_model(mutate_terminate_open EXPECT "pan:1: invalid end state"
                    DEFINES -DMUTATE_TERMINATE_OPEN -DTERMINATE -DTERMINATE_RACE)
