/**
 *  @file   types_test.cpp
 *  @brief  Tests of `include/forkunion/base/types.hpp`: statuses, prongs, the static split and the coprime order.
 *          The exhaustive sweeps of the same functions live in `sweep_test.cpp`.
 */
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

#include <forkunion/base/types.hpp>

namespace fu = forkunion;

TEST(types, every_status_has_a_distinct_name) {
    std::set<std::string> names;
    for (int code = 0; code >= -9; --code) {
        fu::status_t const status = static_cast<fu::status_code_t>(code);
        std::string const name = status.name();
        EXPECT_NE(name, "unknown") << code;
        EXPECT_TRUE(names.insert(name).second) << "duplicate name " << name;
        EXPECT_EQ(static_cast<bool>(status), code == 0);
    }
    EXPECT_STREQ(fu::status_name(static_cast<fu::status_code_t>(-100)), "unknown");
}

TEST(types, status_converts_explicitly_and_compares) {
    static_assert(!std::is_convertible_v<fu::status_t, bool>, "only explicit conversion to bool");
    static_assert(std::is_constructible_v<bool, fu::status_t>);
    fu::status_t const refused = fu::status_code_t::contended_k;
    EXPECT_TRUE(refused == fu::status_code_t::contended_k);
    EXPECT_FALSE(refused == fu::status_t{});
    EXPECT_TRUE(!refused);
}

TEST(types, prong_converts_to_its_task) {
    fu::prong_t<std::uint16_t> const prong{42, 3, 1};
    std::uint16_t const task = prong;
    EXPECT_EQ(task, 42);
    auto generic = [](auto index) { return static_cast<std::size_t>(index) * 2; };
    EXPECT_EQ(generic(static_cast<std::uint16_t>(prong)), 84u);
}

TEST(types, static_split_matches_the_formula) {
    // q = 10 / 4 = 2, r = 2: blocks [0,3) [3,6) [6,8) [8,10)
    EXPECT_EQ(fu::static_slice<std::size_t>(10, 4, 0), (fu::slice_t<std::size_t>{0, 3}));
    EXPECT_EQ(fu::static_slice<std::size_t>(10, 4, 1), (fu::slice_t<std::size_t>{3, 3}));
    EXPECT_EQ(fu::static_slice<std::size_t>(10, 4, 2), (fu::slice_t<std::size_t>{6, 2}));
    EXPECT_EQ(fu::static_slice<std::size_t>(10, 4, 3), (fu::slice_t<std::size_t>{8, 2}));
    // Fewer tasks than threads: the first n threads get one each, the rest nothing.
    EXPECT_EQ(fu::static_slice<std::size_t>(2, 5, 1), (fu::slice_t<std::size_t>{1, 1}));
    EXPECT_EQ(fu::static_slice<std::size_t>(2, 5, 4), (fu::slice_t<std::size_t>{2, 0}));
    // The extremes of the widest type do not overflow.
    std::size_t const max = static_cast<std::size_t>(-1);
    auto const last = fu::static_slice<std::size_t>(max, 3, 2);
    EXPECT_EQ(last.first + last.count, max);
}

TEST(types, coprime_strides_are_coprime_and_seeded) {
    for (std::uint32_t count = 1; count <= 300; ++count)
        for (std::uint32_t seed = 0; seed < count; ++seed) {
            std::uint32_t const stride = fu::coprime_stride(count, seed);
            ASSERT_GE(stride, 1u);
            if (count > 1) {
                ASSERT_LT(stride, count);
            }
            ASSERT_EQ(fu::greatest_common_divisor(stride, count), 1u) << count << " " << seed;
        }
    // Different seeds give different walks where the count allows it.
    EXPECT_NE(fu::coprime_stride<std::uint32_t>(16, 0), fu::coprime_stride<std::uint32_t>(16, 2));
}

TEST(types, coprime_order_does_not_wrap_at_the_top_of_the_type) {
    std::uint8_t const count = 255;
    std::uint8_t const stride = fu::coprime_stride<std::uint8_t>(count, 200);
    std::uint8_t position = 254;
    std::set<int> seen;
    for (int step = 0; step < count; ++step) {
        ASSERT_LT(position, count);
        seen.insert(position);
        position = fu::next_in_coprime_order<std::uint8_t>(position, stride, count);
    }
    EXPECT_EQ(seen.size(), 255u);
    EXPECT_EQ(position, 254) << "count steps return to the start";
}
