# Shared part of the WebAssembly toolchain files: emscripten's own toolchain file, the flags every program of the
# suites needs, and Node.js as the emulator. Set FORKUNION_WASM_THREADS (ON or OFF) before including it.
#
# - Emscripten is found through `em-config` (Debian's `emscripten` package: 3.1.6, LLVM 14).
# - Every object and program is built with `-fexceptions`: the suites check that allocators throw `std::bad_alloc`,
#   and emscripten otherwise aborts at any `throw`.
# - Programs run under Node.js with the host file system (`-sNODERAWFS`), so the suites read their fixtures by
#   their host paths, and with `-sEXIT_RUNTIME` so that `main`'s return ends the process with its code.
# - `-sALLOW_MEMORY_GROWTH` with a 2 GiB ceiling: the allocator suites map hundreds of MiB.
# - With threads: `-pthread` everywhere (shared memory, atomics, `memory.atomic.wait32`), `-sPROXY_TO_PTHREAD`
#   (`main` runs in a Web Worker, so it may block, and the main JS thread stays free to start more workers), and
#   `-sPTHREAD_POOL_SIZE=8`: workers are created before `main` starts, 8 of them, the proxied `main` plus the 7
#   threads the suites use at most at once on the 2-core CI machine (3 x cores + 1). A thread beyond the pool
#   starts on demand, from the main JS thread, as a new Web Worker (about 0.2 s each here).
# - Node.js 18 and later expose `fetch`, which emscripten 3.1.6 then uses to load the `.wasm` beside the `.js` by
#   a bare path, which `fetch` refuses: the emulator runs node with `--no-experimental-fetch`.
# - Linking runs emscripten's JavaScript optimizer, which needs `acorn`; Debian installs it under
#   /usr/share/nodejs, which a node from elsewhere (NodeSource's) does not search: the link step gets NODE_PATH.
execute_process(COMMAND em-config EMSCRIPTEN_ROOT OUTPUT_VARIABLE _forkunion_emscripten_root
                OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _forkunion_em_config)
if(NOT _forkunion_em_config EQUAL 0 OR NOT EXISTS "${_forkunion_emscripten_root}/cmake/Modules/Platform/Emscripten.cmake")
    message(FATAL_ERROR "forkunion: emscripten not found (em-config EMSCRIPTEN_ROOT); apt-get install emscripten")
endif()

find_program(FORKUNION_NODE NAMES node nodejs REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR "${FORKUNION_NODE};--no-experimental-fetch")
include("${_forkunion_emscripten_root}/cmake/Modules/Platform/Emscripten.cmake")
# Header-only Catch2's package config lives on the host, outside emscripten's sysroot (only its header is used).
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

set(_forkunion_wasm_compile "-fexceptions")
set(_forkunion_wasm_link "-fexceptions -sEXIT_RUNTIME=1 -sNODERAWFS=1 -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=2GB")
if(FORKUNION_WASM_THREADS)
    string(APPEND _forkunion_wasm_compile " -pthread")
    string(APPEND _forkunion_wasm_link " -pthread -sPROXY_TO_PTHREAD=1 -sPTHREAD_POOL_SIZE=8 -sENVIRONMENT=node,worker")
    set(FORKUNION_WASM_PTHREAD_POOL_SIZE 8)
else()
    string(APPEND _forkunion_wasm_link " -sENVIRONMENT=node")
    set(FORKUNION_WASM_PTHREAD_POOL_SIZE 0)
endif()
set(CMAKE_C_FLAGS_INIT "${_forkunion_wasm_compile}")
set(CMAKE_CXX_FLAGS_INIT "${_forkunion_wasm_compile}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${_forkunion_wasm_link}")

if(EXISTS "/usr/share/nodejs/acorn")
    set(CMAKE_C_LINKER_LAUNCHER "${CMAKE_COMMAND};-E;env;NODE_PATH=/usr/share/nodejs")
    set(CMAKE_CXX_LINKER_LAUNCHER "${CMAKE_COMMAND};-E;env;NODE_PATH=/usr/share/nodejs")
endif()
# Each GoogleTest program is one ctest test: a process start under the emulator costs more than most cases.
set(FORKUNION_CROSS_WHOLE_PROGRAM_TESTS ON)
