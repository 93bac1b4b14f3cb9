/**  @file fuzz_cpulist.cpp  @brief libFuzzer target of `forkunion::parse_cpulist`. */
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const *data, std::size_t size) {
    namespace fu = forkunion;
    fu::cpu_mask_t mask;
    mask.set(7); // must be reset either way
    bool const ok = fu::parse_cpulist(reinterpret_cast<char const *>(data), size, mask);
    if (!ok)
        fu::fuzzing::require(mask.empty(), "a refused list leaves an empty mask");
    else
        fu::fuzzing::require_list_round_trip(mask);
    return 0;
}
