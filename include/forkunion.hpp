/**
 *  @file   forkunion.hpp
 *  @brief  forkunion: a NUMA-aware fork-join thread pool. The umbrella header: includes every layer's public
 *          headers (each picks its platform backend from its layer's `detail/` itself) and nothing else.
 *
 *  One folder per layer, each including only its own and the ones below it (docs/design.md, "Layers"; the test
 *  `layers.every_include_goes_down` keeps it so):
 *    base        types, cpu masks, the small array
 *    hardware    features, capabilities, atomics, waits, kernel waits, cores, threads, CPUID caches
 *    topology    parsers, affinity, the harvested topology
 *    memory      allocators (memory placement)
 *    pools       the dispatch vocabulary, the flat pool, colocated (one compute domain), distributed (every domain)
 *    fabric      measured latency, bandwidth, distances and memory levels      (above pools, beside algorithms)
 *    algorithms  reductions, searches, scans and sorts over any of the pools   (above pools, beside fabric)
 *  Include a single concern (for example `<forkunion/pools/flat.hpp>`) to compile less.
 */
#pragma once
// The headers use concepts, defaulted comparisons and `std::atomic_ref`: under an older standard say so in one
// line and stop, instead of failing deep inside them. The message is the name of a file that does not exist: a
// missing include is fatal in every compiler, so the caller's own uses of `forkunion::` report nothing more (an
// `#error` would let compilation go on). MSVC reports the standard in `_MSVC_LANG` (`__cplusplus` stays 199711L
// without /Zc:__cplusplus).
#if defined(_MSVC_LANG)
#define FORKUNION_CXX_STANDARD _MSVC_LANG
#else
#define FORKUNION_CXX_STANDARD __cplusplus
#endif
#if FORKUNION_CXX_STANDARD < 202002L
#include "forkunion needs C++20: compile with -std=c++20 (MSVC: /std:c++20) or later"
#else
#include <forkunion/base/types.hpp>
#include <forkunion/base/cpu_mask.hpp>
#include <forkunion/hardware/features.hpp>
#include <forkunion/hardware/capabilities.hpp>
#include <forkunion/hardware/atomics.hpp>
#include <forkunion/hardware/wait.hpp>
#include <forkunion/hardware/wait_kernel.hpp>
#include <forkunion/hardware/cores.hpp>
#include <forkunion/hardware/threads.hpp>
#include <forkunion/hardware/caches.hpp>
#include <forkunion/topology/parse.hpp>
#include <forkunion/topology/affinity.hpp>
#include <forkunion/topology/topology.hpp>
#include <forkunion/memory/allocators.hpp>
#include <forkunion/memory/os_capabilities.hpp>
#include <forkunion/pools/dispatch.hpp>
#include <forkunion/pools/flat.hpp>
#include <forkunion/pools/colocated.hpp>
#include <forkunion/pools/distributed.hpp>
#include <forkunion/fabric/fabric.hpp>
#include <forkunion/algorithms/sort.hpp>
#include <forkunion/algorithms/algorithms.hpp>
#endif
