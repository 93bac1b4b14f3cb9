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
