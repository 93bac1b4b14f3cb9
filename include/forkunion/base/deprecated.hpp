/**
 *  @file   forkunion/base/deprecated.hpp
 *  @brief  The base layer's deprecated spellings, kept for the 0.1 series (CHANGELOG.md lists each with its
 *          replacement); every use warns through `[[deprecated]]`.
 *
 *  Each layer keeps its deprecated names in one `deprecated.hpp` of its own (the layer rule forbids one file for
 *  all: an alias must see what it names), and every header that used to declare one of them includes it, so the
 *  old names compile through the umbrella and through the header that first declared them. The file declares the
 *  templates it names, so it depends on nothing of its layer and any header of the layer may include it.
 */
#pragma once
#include <cstddef> // `std::size_t`

namespace forkunion {

template <typename index_type_>
struct prong_t;
template <typename index_type_>
struct slice_t;

// NOLINTBEGIN(readability-identifier-naming): the old names, spelled as they were.

template <typename index_type_ = std::size_t>
using local_prong [[deprecated("use prong_t")]] = prong_t<index_type_>;
template <typename index_type_ = std::size_t>
using slice [[deprecated("use slice_t")]] = slice_t<index_type_>;

// NOLINTEND(readability-identifier-naming)

} // namespace forkunion
