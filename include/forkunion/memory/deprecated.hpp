/**
 *  @file   forkunion/memory/deprecated.hpp
 *  @brief  The memory layer's deprecated spellings, kept for the 0.1 series (CHANGELOG.md lists each with its
 *          replacement); every use warns through `[[deprecated]]`. The rule of every layer's `deprecated.hpp` is
 *          in `forkunion/base/deprecated.hpp`.
 */
#pragma once

namespace forkunion {

template <typename backend_type_>
class basic_symmetric_memory_allocator_t;
template <typename pointer_type_>
struct allocation_result_t;
template <typename value_type_, typename backend_type_>
class basic_domain_allocator_t;
template <typename element_type_>
class array_view_t;
template <typename value_type_, typename backend_type_>
class sharded_array_t;
template <typename value_type_, typename backend_type_>
class replicated_array_t;

// NOLINTBEGIN(readability-identifier-naming): the old names, spelled as they were.

template <typename... arguments_>
using basic_symmetric_memory_allocator [[deprecated("use basic_symmetric_memory_allocator_t")]] =
    basic_symmetric_memory_allocator_t<arguments_...>;
template <typename pointer_type_>
using allocation_result [[deprecated("use allocation_result_t")]] = allocation_result_t<pointer_type_>;
template <typename... arguments_>
using basic_domain_allocator [[deprecated("use basic_domain_allocator_t")]] = basic_domain_allocator_t<arguments_...>;
template <typename element_type_>
using array_view [[deprecated("use array_view_t")]] = array_view_t<element_type_>;
template <typename... arguments_>
using sharded_array [[deprecated("use sharded_array_t")]] = sharded_array_t<arguments_...>;
template <typename... arguments_>
using replicated_array [[deprecated("use replicated_array_t")]] = replicated_array_t<arguments_...>;

// NOLINTEND(readability-identifier-naming)

} // namespace forkunion
