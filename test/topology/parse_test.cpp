/**
 *  @file   parse_test.cpp
 *  @brief  Tests of `include/forkunion/topology/parse.hpp`: every parser on well-formed values, on the quirks real kernels
 *          write (trailing NULs, legacy masks), and on malformed, truncated and huge input, which must be refused
 *          with a reset output. The libFuzzer targets in `test/fuzz/` explore the rest.
 */
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <forkunion/topology/parse.hpp>

#include "topology_support.hpp"

namespace fu = forkunion;
using forkunion::testing::ids_of;

namespace {

bool list(std::string const &text, std::set<std::size_t> &ids) {
    fu::cpu_mask_t mask;
    mask.set(4000); // must be cleared either way
    bool const ok = fu::parse_cpulist(text.data(), text.size(), mask);
    ids = ids_of(mask);
    return ok;
}

bool hexmask(std::string const &text, std::set<std::size_t> &ids) {
    fu::cpu_mask_t mask;
    mask.set(4000);
    bool const ok = fu::parse_cpumask(text.data(), text.size(), mask);
    ids = ids_of(mask);
    return ok;
}

TEST(parse, cpulists_as_kernels_write_them) {
    std::set<std::size_t> ids;
    ASSERT_TRUE(list("0-3,8,10-11\n", ids));
    EXPECT_EQ(ids, (std::set<std::size_t>{0, 1, 2, 3, 8, 10, 11}));
    ASSERT_TRUE(list(std::string("0-31\n\0", 6), ids)) << "Kunpeng's trailing NUL";
    EXPECT_EQ(ids.size(), 32u);
    ASSERT_TRUE(list("\n", ids)) << "a CPU-less node";
    EXPECT_TRUE(ids.empty());
    ASSERT_TRUE(list("", ids));
    ASSERT_TRUE(list("8191", ids));
    EXPECT_EQ(ids, (std::set<std::size_t>{8191}));
    ASSERT_TRUE(list("5,1-2,2", ids)) << "unordered and repeated items are still a set";
    EXPECT_EQ(ids, (std::set<std::size_t>{1, 2, 5}));
}

TEST(parse, malformed_cpulists_are_refused_and_leave_nothing) {
    for (std::string const &bad :
         std::vector<std::string>{"0-", "-3", "3-1", "1,,2", "1,", ",1", "0-3 ,4", "1 2", "a", "0x1", "8192", "0-8192",
                                  "99999999999999999999", "1-2-3", std::string("0\0-1", 4), "+1", "٣"}) {
        std::set<std::size_t> ids;
        EXPECT_FALSE(list(bad, ids)) << bad;
        EXPECT_TRUE(ids.empty()) << bad;
    }
}

TEST(parse, hex_masks_as_kernels_write_them) {
    std::set<std::size_t> ids;
    ASSERT_TRUE(hexmask("00000000,000000ff\n", ids));
    EXPECT_EQ(ids, (std::set<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7}));
    ASSERT_TRUE(hexmask("1,00000000\n", ids)) << "the most significant word first";
    EXPECT_EQ(ids, (std::set<std::size_t>{32}));
    ASSERT_TRUE(hexmask("3", ids)) << "a short leading word";
    EXPECT_EQ(ids, (std::set<std::size_t>{0, 1}));
    ASSERT_TRUE(hexmask("FfFf0000", ids));
    EXPECT_EQ(ids.size(), 16u);
    ASSERT_TRUE(hexmask("00000000", ids));
    EXPECT_TRUE(ids.empty());
    // A kernel with more than 8192 CPUs pads with zero words: accepted while they are zero.
    std::string padded;
    for (int word = 0; word != 300; ++word) padded += "00000000,";
    ASSERT_TRUE(hexmask(padded + "00000001", ids));
    EXPECT_EQ(ids, (std::set<std::size_t>{0}));
    EXPECT_FALSE(hexmask("00000001," + padded + "00000001", ids)) << "an id past 8191";
    EXPECT_TRUE(ids.empty());
}

TEST(parse, malformed_hex_masks_are_refused_and_leave_nothing) {
    for (std::string const bad : {"", "\n", ",", "ff,", ",ff", "ff,,ff", "123456789", "0xff", "g", "ff ff", "-1"}) {
        std::set<std::size_t> ids;
        EXPECT_FALSE(hexmask(bad, ids)) << bad;
        EXPECT_TRUE(ids.empty()) << bad;
    }
}

TEST(parse, unsigned_values_are_whole_and_bounded) {
    std::uint64_t value = 7;
    EXPECT_TRUE(fu::parse_unsigned("1024\n", 5, value));
    EXPECT_EQ(value, 1024u);
    EXPECT_TRUE(fu::parse_unsigned("18446744073709551615", 20, value));
    EXPECT_EQ(value, ~std::uint64_t(0));
    EXPECT_FALSE(fu::parse_unsigned("18446744073709551616", 20, value));
    EXPECT_EQ(value, 0u);
    EXPECT_FALSE(fu::parse_unsigned("1025", 4, value, 1024));
    EXPECT_TRUE(fu::parse_unsigned("1024", 4, value, 1024));
    for (std::string const bad : {"", "\n", "-1", "1 2", "1x", "x1", "0x10", "+5"})
        EXPECT_FALSE(fu::parse_unsigned(bad.data(), bad.size(), value)) << bad;
}

TEST(parse, cache_sizes) {
    std::uint64_t bytes = 0;
    struct {
        char const *text;
        std::uint64_t bytes;
    } const good[] = {{"32K\n", 32768}, {"1024K", 1u << 20}, {"32M", 32u << 20}, {"1G", 1u << 30},
                      {"512", 512},     {"48k\n", 49152},    {"0K", 0},          {"307200K\n", 314572800}};
    for (auto const &[text, expected] : good) {
        EXPECT_TRUE(fu::parse_size_bytes(text, std::char_traits<char>::length(text), bytes)) << text;
        EXPECT_EQ(bytes, expected) << text;
    }
    for (std::string const bad : {"", "K", "32KB", "32 K", "3.5M", "-1K", "32T", "17179869184G", "1K1"}) {
        EXPECT_FALSE(fu::parse_size_bytes(bad.data(), bad.size(), bytes)) << bad;
        EXPECT_EQ(bytes, 0u) << bad;
    }
}

TEST(parse, huge_page_directory_names) {
    std::uint64_t bytes = 0;
    EXPECT_TRUE(fu::parse_hugepages_dir_name("hugepages-2048kB", 16, bytes));
    EXPECT_EQ(bytes, 2u << 20);
    EXPECT_TRUE(fu::parse_hugepages_dir_name("hugepages-1048576kB", 19, bytes));
    EXPECT_EQ(bytes, 1u << 30);
    for (std::string const bad :
         {"hugepages-kB", "hugepages-0kB", "hugepages-2048", "hugepages-2048KB", "hugepages-2048kB ",
          "hugepages-20x8kB", "hugepage-2048kB", "nr_hugepages", "hugepages-99999999999999999999kB"}) {
        EXPECT_FALSE(fu::parse_hugepages_dir_name(bad.data(), bad.size(), bytes)) << bad;
        EXPECT_EQ(bytes, 0u);
    }
}

TEST(parse, meminfo_fields_by_name) {
    std::string const node = "Node 0 MemTotal:       49075843 kB\n"
                             "Node 0 MemFree:        47000000 kB\n"
                             "Node 0 HugePages_Total:  2048\n";
    std::uint64_t value = 0;
    EXPECT_TRUE(fu::parse_meminfo_field(node.data(), node.size(), "MemTotal", value));
    EXPECT_EQ(value, 49075843ull * 1024);
    EXPECT_TRUE(fu::parse_meminfo_field(node.data(), node.size(), "HugePages_Total", value));
    EXPECT_EQ(value, 2048u) << "unitless values stay as they are";
    EXPECT_FALSE(fu::parse_meminfo_field(node.data(), node.size(), "MemUsed", value));
    EXPECT_FALSE(fu::parse_meminfo_field(node.data(), node.size(), "Mem", value)) << "a prefix is not a key";
    EXPECT_FALSE(fu::parse_meminfo_field(node.data(), node.size(), "", value));
    std::string const proc = "MemTotal:       24684092 kB\nMemFree: 1 kB\n";
    EXPECT_TRUE(fu::parse_meminfo_field(proc.data(), proc.size(), "MemTotal", value));
    EXPECT_EQ(value, 24684092ull * 1024);
    std::string const truncated = "Node 0 MemTotal:       4907";
    EXPECT_TRUE(fu::parse_meminfo_field(truncated.data(), truncated.size(), "MemTotal", value));
    EXPECT_EQ(value, 4907u) << "cut before its unit, a value reads as unitless";
    for (std::string const bad : {"Node 0 MemTotal: lots kB\n", "Node 0 MemTotal: 12 MB\n", "Node 0 MemTotal:\n",
                                  "Node 0 MemTotal: 18014398509481984 kB\n", "Node MemTotal: 1 kB\n",
                                  "MemTotal 12 kB\n", "Node 0 MemTotal: 1 kB extra\n"}) {
        value = 9;
        EXPECT_FALSE(fu::parse_meminfo_field(bad.data(), bad.size(), "MemTotal", value)) << bad;
        EXPECT_EQ(value, 0u) << bad;
    }
    std::string const first_wins = "MemTotal: x kB\nMemTotal: 5 kB\n";
    EXPECT_FALSE(fu::parse_meminfo_field(first_wins.data(), first_wins.size(), "MemTotal", value))
        << "the first line naming the key decides";
}

TEST(parse, distance_rows) {
    std::uint8_t row[8] = {};
    std::size_t count = 0;
    std::string const text = "10 21 31\t255\n";
    ASSERT_TRUE(fu::parse_distance_row(text.data(), text.size(), row, 8, count));
    EXPECT_EQ(count, 4u);
    EXPECT_EQ(row[0], 10);
    EXPECT_EQ(row[3], 255);
    EXPECT_FALSE(fu::parse_distance_row(text.data(), text.size(), row, 3, count)) << "longer than capacity";
    EXPECT_EQ(count, 0u);
    for (std::string const bad : {"", "\n", "10 256", "10 0", "10,20", "10 -20", "10 2a", "ten"}) {
        EXPECT_FALSE(fu::parse_distance_row(bad.data(), bad.size(), row, 8, count)) << bad;
        EXPECT_EQ(count, 0u) << bad;
    }
}

TEST(parse, cache_types) {
    fu::cache_type_t type = fu::cache_type_t::data_k;
    EXPECT_TRUE(fu::parse_cache_type("Unified\n", 8, type));
    EXPECT_EQ(type, fu::cache_type_t::unified_k);
    EXPECT_TRUE(fu::parse_cache_type("Instruction", 11, type));
    EXPECT_EQ(type, fu::cache_type_t::instruction_k);
    EXPECT_TRUE(fu::parse_cache_type("Data", 4, type));
    EXPECT_EQ(type, fu::cache_type_t::data_k);
    for (std::string const bad : {"", "data", "Dat", "Datas", "Unknown", "Unified2"})
        EXPECT_FALSE(fu::parse_cache_type(bad.data(), bad.size(), type)) << bad;
}

TEST(parse, formatted_lists_parse_back) {
    std::vector<std::vector<std::uint32_t>> const cases = {
        {}, {0}, {0, 1}, {0, 1, 2, 3, 8, 10, 11}, {5, 7, 9}, {8191}, {0, 2, 4, 5, 6, 100, 8190, 8191}};
    for (std::vector<std::uint32_t> const &ids : cases) {
        char text[128];
        std::size_t const length = fu::format_cpulist(ids.data(), ids.size(), text, sizeof text);
        ASSERT_LT(length, sizeof text);
        fu::cpu_mask_t mask;
        ASSERT_TRUE(fu::parse_cpulist(text, length, mask)) << text;
        EXPECT_EQ(ids_of(mask), std::set<std::size_t>(ids.begin(), ids.end())) << text;
    }
    std::vector<std::uint32_t> const ids = {0, 1, 2, 3, 8, 10, 11};
    char text[64];
    EXPECT_EQ(fu::format_cpulist(ids.data(), ids.size(), text, sizeof text), 11u);
    EXPECT_STREQ(text, "0-3,8,10-11");
    char small[5];
    EXPECT_EQ(fu::format_cpulist(ids.data(), ids.size(), small, sizeof small), 11u) << "the length it needs";
    EXPECT_STREQ(small, "0-3,") << "cut short, still terminated";
    EXPECT_EQ(fu::format_cpulist(ids.data(), ids.size(), nullptr, 0), 11u);
}

static_assert(
    [] {
        fu::cpu_mask_t mask;
        return fu::parse_cpulist("0-3,8", 5, mask) && mask.count() == 5;
    }(),
    "parsers run in constant expressions");

} // namespace
