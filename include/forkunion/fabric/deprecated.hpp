/**
 *  @file   forkunion/fabric/deprecated.hpp
 *  @brief  The fabric layer's deprecated spellings, kept for the 0.1 series (CHANGELOG.md lists each with its
 *          replacement); every use warns through `[[deprecated]]`. The rule of every layer's `deprecated.hpp` is
 *          in `forkunion/base/deprecated.hpp`.
 */
#pragma once

namespace forkunion {

template <typename platform_type_>
class basic_fabric_t;

// NOLINTBEGIN(readability-identifier-naming): the old names, spelled as they were.

template <typename... arguments_>
using basic_fabric [[deprecated("use basic_fabric_t")]] = basic_fabric_t<arguments_...>;

// NOLINTEND(readability-identifier-naming)

} // namespace forkunion
