/**
 *  @file   forkunion/topology/deprecated.hpp
 *  @brief  The topology layer's deprecated spellings, kept for the 0.1 series (CHANGELOG.md lists each with its
 *          replacement); every use warns through `[[deprecated]]`. The rule of every layer's `deprecated.hpp` is
 *          in `forkunion/base/deprecated.hpp`.
 */
#pragma once

namespace forkunion {

template <typename backend_t>
class basic_saved_affinity_t;
template <typename source_type_>
class basic_machine_topology_t;

// NOLINTBEGIN(readability-identifier-naming): the old names, spelled as they were.

template <typename... arguments_>
using basic_saved_affinity [[deprecated("use basic_saved_affinity_t")]] = basic_saved_affinity_t<arguments_...>;
template <typename... arguments_>
using basic_machine_topology [[deprecated("use basic_machine_topology_t")]] = basic_machine_topology_t<arguments_...>;

// NOLINTEND(readability-identifier-naming)

} // namespace forkunion
