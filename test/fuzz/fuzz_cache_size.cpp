/**
 *  @file  fuzz_cache_size.cpp
 *  @brief libFuzzer target of `forkunion::parse_size_bytes` (cache sizes), and of the small field parsers that
 *         share its shape: `parse_unsigned`, `parse_hugepages_dir_name` and `parse_cache_type`.
 */
#include <string>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const *data, std::size_t size) {
    namespace fu = forkunion;
    char const *text = reinterpret_cast<char const *>(data);
    std::uint64_t bytes = 7;
    if (!fu::parse_size_bytes(text, size, bytes))
        fu::fuzzing::require(bytes == 0, "a refused size reads 0");
    else {
        // Written back as plain bytes, the size parses to itself.
        std::string const plain = std::to_string(bytes);
        std::uint64_t again = 0;
        fu::fuzzing::require(fu::parse_size_bytes(plain.data(), plain.size(), again) && again == bytes,
                             "a size parses back from its byte count");
    }
    std::uint64_t value = 7;
    if (!fu::parse_unsigned(text, size, value))
        fu::fuzzing::require(value == 0, "a refused number reads 0");
    else {
        std::uint64_t sized = 0;
        fu::fuzzing::require(fu::parse_size_bytes(text, size, sized) && sized == value,
                             "a plain number is a size in bytes");
    }
    std::uint64_t page = 7;
    if (!fu::parse_hugepages_dir_name(text, size, page))
        fu::fuzzing::require(page == 0, "a refused name reads 0");
    else
        fu::fuzzing::require(page != 0 && page % 1024 == 0, "a page size is a positive number of KiB");
    fu::cache_type_t type;
    (void)fu::parse_cache_type(text, size, type);
    return 0;
}
