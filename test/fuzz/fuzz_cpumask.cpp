/**  @file fuzz_cpumask.cpp  @brief libFuzzer target of `forkunion::parse_cpumask`. */
#include <cstdio>
#include <string>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const *data, std::size_t size) {
    namespace fu = forkunion;
    fu::cpu_mask_t mask;
    mask.set(7);
    bool const ok = fu::parse_cpumask(reinterpret_cast<char const *>(data), size, mask);
    if (!ok) {
        fu::fuzzing::require(mask.empty(), "a refused mask leaves an empty mask");
        return 0;
    }
    fu::fuzzing::require_list_round_trip(mask);
    // Re-encode as the kernel would (32-bit words, most significant first) and parse again.
    std::string text;
    for (std::size_t word = fu::max_cpus_k / 32; word-- > 0;) {
        std::uint32_t bits = 0;
        for (std::size_t bit = 0; bit != 32; ++bit)
            if (mask.test(word * 32 + bit)) bits |= std::uint32_t(1) << bit;
        char group[12];
        std::snprintf(group, sizeof group, word ? "%08x," : "%08x", static_cast<unsigned>(bits));
        text += group;
    }
    fu::cpu_mask_t again;
    fu::fuzzing::require(fu::parse_cpumask(text.data(), text.size(), again) && again == mask,
                         "a re-encoded mask parses back to the same set");
    return 0;
}
