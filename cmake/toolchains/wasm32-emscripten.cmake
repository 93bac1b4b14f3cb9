# WebAssembly without threads: emscripten, no `-pthread`, run under Node.js. `pthread_create` always fails here,
# so a pool has the calling thread only: `spawn(1)` works and a larger spawn is refused with `thread_refused`.
# See forkunion_emscripten.cmake for the flags and why.
set(FORKUNION_WASM_THREADS OFF)
include("${CMAKE_CURRENT_LIST_DIR}/forkunion_emscripten.cmake")
set(FORKUNION_CROSS_SWEEP_MAX_THREADS 1)
set(FORKUNION_CROSS_SWEEP_STRIDE 1)
