/**
 *  @file   forkunion.hpp
 *  @brief  forkunion: a NUMA-aware fork-join thread pool. The umbrella header: includes every concern's public
 *          header (each picks its platform backend from `forkunion/detail/` itself) and nothing else.
 *
 *  Layers, each including only the ones above it:
 *    types → features, capabilities → atomics → wait, kernel wait → cores → cpu masks and parsers → affinity
 *    → topology → allocators (memory placement) → flat pool → colocated pool (one compute domain)
 *    → distributed pool (every compute domain) → fabric (measured latency, bandwidth, distances, memory levels)
 *    → algorithms (reductions, searches, scans and sorts over any of the pools)
 *  Include a single concern (for example `<forkunion/flat.hpp>`) to compile less.
 */
#pragma once
// The headers use concepts, defaulted comparisons and `std::atomic_ref`: under an older standard say so in one
// line and include nothing, instead of failing deep inside them. MSVC reports the standard in `_MSVC_LANG`
// (`__cplusplus` stays 199711L without /Zc:__cplusplus).
#if defined(_MSVC_LANG)
#define FORKUNION_CXX_STANDARD _MSVC_LANG
#else
#define FORKUNION_CXX_STANDARD __cplusplus
#endif
#if FORKUNION_CXX_STANDARD < 202002L
#error "forkunion needs C++20: compile with -std=c++20 (MSVC: /std:c++20) or later"
#else
#include <forkunion/types.hpp>
#include <forkunion/features.hpp>
#include <forkunion/capabilities.hpp>
#include <forkunion/atomics.hpp>
#include <forkunion/wait.hpp>
#include <forkunion/wait_kernel.hpp>
#include <forkunion/cores.hpp>
#include <forkunion/cpu_mask.hpp>
#include <forkunion/parse.hpp>
#include <forkunion/affinity.hpp>
#include <forkunion/topology.hpp>
#include <forkunion/allocators.hpp>
#include <forkunion/flat.hpp>
#include <forkunion/colocated.hpp>
#include <forkunion/distributed.hpp>
#include <forkunion/fabric.hpp>
#include <forkunion/algorithms.hpp>
#endif
