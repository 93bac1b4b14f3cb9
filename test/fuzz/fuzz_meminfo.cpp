/**  @file fuzz_meminfo.cpp  @brief libFuzzer target of `forkunion::parse_meminfo_field`. */
#include <string>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const *data, std::size_t size) {
    namespace fu = forkunion;
    char const *text = reinterpret_cast<char const *>(data);
    for (char const *key : {"MemTotal", "MemFree", "HugePages_Total", "N"}) {
        std::uint64_t value = 12345;
        bool const ok = fu::parse_meminfo_field(text, size, key, value);
        if (!ok) fu::fuzzing::require(value == 0, "a refused field reads 0");
        std::uint64_t again = 0;
        fu::fuzzing::require(fu::parse_meminfo_field(text, size, key, again) == ok && again == value,
                             "parsing is deterministic");
        if (ok) {
            // Appending more lines never changes the first line that names the key.
            std::string longer(text, size);
            longer += "\nNode 0 ";
            longer += key;
            longer += ": 1 kB\n";
            std::uint64_t extended = 0;
            bool const still = fu::parse_meminfo_field(longer.data(), longer.size(), key, extended);
            fu::fuzzing::require(!still || extended == value, "the first line naming the key decides");
        }
    }
    return 0;
}
