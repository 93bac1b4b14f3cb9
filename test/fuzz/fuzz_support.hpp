/**
 *  @file   fuzz_support.hpp
 *  @brief  Shared by the libFuzzer targets of `include/forkunion/topology/parse.hpp`: a property check that aborts (so
 *          libFuzzer records the input) and a list formatter buffer large enough for any mask.
 *
 *  Each target checks more than "no crash": a refused parse leaves an empty output, and an accepted one survives
 *  a round trip through `format_cpulist` (or its own encoder) unchanged.
 */
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <forkunion/topology/parse.hpp>

namespace forkunion::fuzzing {

inline void require(bool condition, char const *what) {
    if (condition) return;
    std::fprintf(stderr, "fuzz property violated: %s\n", what);
    std::abort();
}

/**  `parse_cpulist(format_cpulist(mask)) == mask`. */
inline void require_list_round_trip(cpu_mask_t const &mask) {
    static std::uint32_t ids[max_cpus_k];
    static char text[max_cpus_k * 6]; // "8191," per id at most
    std::size_t count = 0;
    for (std::size_t id = mask.first(); id != cpu_mask_t::npos_k; id = mask.next_from(id + 1))
        ids[count++] = static_cast<std::uint32_t>(id);
    require(count == mask.count(), "iteration visits every id once");
    std::size_t const length = format_cpulist(ids, count, text, sizeof text);
    require(length < sizeof text, "a formatted list fits its bound");
    cpu_mask_t again;
    require(parse_cpulist(text, length, again), "a formatted list parses");
    require(again == mask, "a formatted list parses back to the same set");
}

} // namespace forkunion::fuzzing
