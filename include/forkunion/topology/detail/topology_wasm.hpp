/**
 *  @file   forkunion/topology/detail/topology_wasm.hpp
 *  @brief  The WebAssembly back end of `forkunion/topology/topology.hpp`: `wasm_topology_source_t`.
 *
 *  A WebAssembly module sees no processor, cache or memory structure: one compute domain over the threads the
 *  host can run (`wasm_cores_t`: the host's logical cores with `-pthread`, one without), ids `0 .. n-1`, and one
 *  memory domain of unknown size (the module's linear memory is one flat space). The rules are the portable
 *  back end's (`single_domain_topology_source_t`); only the core count differs. Declared only for emscripten
 *  targets.
 */
#pragma once
#include <forkunion/hardware/detail/cores_wasm.hpp>
#include <forkunion/topology/detail/topology_portable.hpp>
#include <forkunion/base/types.hpp>

#if FORKUNION_OS_WASM
namespace forkunion::detail {

using wasm_topology_source_t = single_domain_topology_source_t<wasm_cores_t>;

} // namespace forkunion::detail
#endif // FORKUNION_OS_WASM
