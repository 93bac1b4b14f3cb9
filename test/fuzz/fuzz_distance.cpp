/**  @file fuzz_distance.cpp  @brief libFuzzer target of `forkunion::parse_distance_row`. */
#include <string>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const *data, std::size_t size) {
    namespace fu = forkunion;
    if (size == 0) return 0;
    std::size_t const capacity = data[0] % 33; // 0..32 columns, so "longer than capacity" is explored too
    char const *text = reinterpret_cast<char const *>(data + 1);
    std::uint8_t row[32];
    std::size_t count = 99;
    bool const ok = fu::parse_distance_row(text, size - 1, row, capacity, count);
    if (!ok) {
        fu::fuzzing::require(count == 0, "a refused row has no columns");
        return 0;
    }
    fu::fuzzing::require(count >= 1 && count <= capacity, "an accepted row fits its capacity");
    std::string formatted;
    for (std::size_t i = 0; i != count; ++i) {
        fu::fuzzing::require(row[i] >= 1, "distances are 1..255");
        if (i) formatted += ' ';
        formatted += std::to_string(row[i]);
    }
    std::uint8_t again[32];
    std::size_t again_count = 0;
    fu::fuzzing::require(fu::parse_distance_row(formatted.data(), formatted.size(), again, capacity, again_count) &&
                             again_count == count,
                         "a formatted row parses back");
    for (std::size_t i = 0; i != count; ++i) fu::fuzzing::require(again[i] == row[i], "the same distances");
    return 0;
}
