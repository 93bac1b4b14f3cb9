/**
 *  @file   forkunion.hpp
 *  @brief  ForkUnion: a NUMA-aware fork-join thread pool. The umbrella header: includes only.
 *
 *  Layers, each including only the ones above it:
 *    types → wait → cores → cpu masks and parsers → affinity → topology → allocators (memory placement)
 *    → flat pool → colocated pool (one compute domain) → distributed pool (every compute domain)
 *    → fabric (measured latency, bandwidth, distances and memory levels, through a pool)
 *  Include a single concern (for example `<forkunion/flat.hpp>`) to compile less.
 */
#pragma once
#include <forkunion/types.hpp>
#include <forkunion/features.hpp>     // hardware layer: build switches and capability bits,
#include <forkunion/capabilities.hpp> // their run-time detection and names,
#include <forkunion/atomics.hpp>      // atomic references with the verbs the standard lacks
#include <forkunion/wait.hpp>
#include <forkunion/wait_kernel.hpp>
#include <forkunion/cores.hpp>
#include <forkunion/cpu_mask.hpp>
#include <forkunion/parse.hpp>
#include <forkunion/affinity.hpp>
#include <forkunion/topology.hpp>
#include <forkunion/allocators_common.hpp>
#include <forkunion/allocators_linux.hpp>
#include <forkunion/allocators_portable.hpp>
#include <forkunion/allocators.hpp>
#include <forkunion/flat.hpp>
#include <forkunion/colocated.hpp>
#include <forkunion/distributed.hpp>
#include <forkunion/fabric_linux.hpp>
#include <forkunion/fabric.hpp>
