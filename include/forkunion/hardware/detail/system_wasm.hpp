/**
 *  @file   forkunion/hardware/detail/system_wasm.hpp
 *  @brief  What every WebAssembly backend shares: whether this build has threads.
 *
 *  `FORKUNION_WASM_THREADS` is 1 in an emscripten build with `-pthread` (`__EMSCRIPTEN_PTHREADS__`: threads are
 *  Web Workers over one shared `WebAssembly.Memory`, and `memory.atomic.wait32` exists), else 0 (a build without
 *  threads, where `pthread_create` always fails). Mirrored as `wasm_threads_k`.
 */
#pragma once
#include <forkunion/base/types.hpp>

#if FORKUNION_OS_WASM && defined(__EMSCRIPTEN_PTHREADS__)
#define FORKUNION_WASM_THREADS 1
#else
#define FORKUNION_WASM_THREADS 0
#endif

namespace forkunion::detail {

inline constexpr bool wasm_threads_k = FORKUNION_WASM_THREADS;

} // namespace forkunion::detail
