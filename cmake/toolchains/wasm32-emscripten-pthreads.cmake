# WebAssembly with threads: emscripten, `-pthread` (Web Workers over one shared memory), run under Node.js.
# See forkunion_emscripten.cmake for the flags and why.
set(FORKUNION_WASM_THREADS ON)
include("${CMAKE_CURRENT_LIST_DIR}/forkunion_emscripten.cmake")
# The real-thread sweeps stop at the worker pool: every thread is a Web Worker, a JavaScript engine instance of its
# own (tens of MiB, ~0.2 s to start beyond the pool), so 255 of them would cost minutes and gigabytes.
set(FORKUNION_CROSS_SWEEP_MAX_THREADS 7)
set(FORKUNION_CROSS_SWEEP_STRIDE 1)
# The hot-path allocation proof makes 10^3 dispatches per pool here, not 10^4 as under qemu-user: a dispatch that
# wakes Web Workers costs ~0.8 ms under Node.js (47 s for the suite at 10^4), and every allocation the proof looks for
# would show in the first of them; the native, sanitized and qemu-user runs keep the larger counts.
set(FORKUNION_CROSS_DISPATCH_DIVISOR 100)
