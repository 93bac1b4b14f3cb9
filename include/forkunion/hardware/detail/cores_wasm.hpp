/**
 *  @file   forkunion/hardware/detail/cores_wasm.hpp
 *  @brief  WebAssembly backend of `allowed_cores_count()`: `wasm_cores_t`.
 *
 *  - With threads (`-pthread`): `emscripten_num_logical_cores()`, the host's `navigator.hardwareConcurrency`
 *    (in Node.js, `os.cpus().length`). The host grants no affinity, so this is every core it reports.
 *  - Without threads: 1. No second thread can ever start, so the only pool that can spawn is a team of one.
 *  Declared only for emscripten targets. Any thread; no allocation.
 */
#pragma once
#include <cstddef> // `std::size_t`

#include <forkunion/hardware/detail/system_wasm.hpp>
#include <forkunion/base/types.hpp>

#if FORKUNION_OS_WASM && FORKUNION_WASM_THREADS
#include <emscripten/threading.h> // `emscripten_num_logical_cores`

namespace forkunion::detail {

struct wasm_cores_t {
    /**  The host's logical cores; at least 1. */
    static std::size_t allowed_count() noexcept {
        int const count = ::emscripten_num_logical_cores();
        return count > 0 ? static_cast<std::size_t>(count) : 1;
    }
};

} // namespace forkunion::detail
#elif FORKUNION_OS_WASM
namespace forkunion::detail {

struct wasm_cores_t {
    /**  A build without threads runs on exactly one. */
    static constexpr std::size_t allowed_count() noexcept { return 1; }
};

} // namespace forkunion::detail
#endif
