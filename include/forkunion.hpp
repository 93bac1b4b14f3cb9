/**
 *  @file   forkunion.hpp
 *  @brief  ForkUnion: a NUMA-aware fork-join thread pool. The umbrella header: includes only.
 *
 *  Layers, each including only the ones above it:
 *    types → features → capabilities → atomics → wait → cores → flat pool
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
#include <forkunion/flat.hpp>
