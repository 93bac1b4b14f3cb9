/**
 *  @file   cpu_mask_test.cpp
 *  @brief  Tests of `include/forkunion/base/cpu_mask.hpp`: the fixed-size id set and the core-id view.
 */
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <span>
#include <vector>

#include <forkunion/base/cpu_mask.hpp>

#if FORKUNION_OS_LINUX
#include <sched.h> // `cpu_set_t`, `CPU_ISSET`
#endif

#include "topology_support.hpp"

namespace fu = forkunion;
using forkunion::testing::ids_of;

namespace {

TEST(cpu_mask, set_test_and_count_agree_at_every_boundary) {
    std::vector<std::size_t> const probes = {0, 1, 31, 32, 63, 64, 65, 127, 128, 1000, 4095, 4096, 8190, 8191};
    fu::cpu_mask_t mask;
    EXPECT_TRUE(mask.empty());
    EXPECT_EQ(mask.first(), fu::cpu_mask_t::npos_k);
    for (std::size_t id : probes) EXPECT_TRUE(mask.set(id)) << id;
    EXPECT_EQ(mask.count(), probes.size());
    EXPECT_EQ(ids_of(mask), std::set<std::size_t>(probes.begin(), probes.end()));
    EXPECT_FALSE(mask.set(8192));
    EXPECT_FALSE(mask.set(~std::size_t(0)));
    EXPECT_FALSE(mask.test(8192));
    EXPECT_EQ(mask.count(), probes.size()) << "refused ids change nothing";
    mask.reset(64);
    mask.reset(9000); // ignored
    EXPECT_FALSE(mask.test(64));
    EXPECT_EQ(mask.count(), probes.size() - 1);
}

TEST(cpu_mask, ranges_fill_exactly_their_ids) {
    for (std::size_t first : {0u, 1u, 31u, 63u, 64u, 100u, 8000u})
        for (std::size_t last :
             {first, first + 1, first + 62, first + 63, first + 64, first + 130, std::size_t(8191)}) {
            if (last < first || last >= fu::max_cpus_k) continue;
            fu::cpu_mask_t mask;
            ASSERT_TRUE(mask.set_range(first, last));
            EXPECT_EQ(mask.count(), last - first + 1) << first << "-" << last;
            EXPECT_EQ(mask.first(), first);
            EXPECT_FALSE(mask.test(first - 1));
            EXPECT_TRUE(mask.test(last));
            EXPECT_FALSE(mask.test(last + 1));
        }
    fu::cpu_mask_t mask;
    EXPECT_FALSE(mask.set_range(5, 4));
    EXPECT_FALSE(mask.set_range(0, 8192));
    EXPECT_TRUE(mask.empty());
}

TEST(cpu_mask, set_algebra) {
    fu::cpu_mask_t a, b;
    a.set_range(0, 9), b.set_range(5, 14);
    fu::cpu_mask_t both = a, either = a, only_a = a;
    both.intersect_with(b), either.unite_with(b), only_a.subtract(b);
    EXPECT_EQ(both.count(), 5u);
    EXPECT_EQ(either.count(), 15u);
    EXPECT_EQ(ids_of(only_a), (std::set<std::size_t>{0, 1, 2, 3, 4}));
    EXPECT_TRUE(both.is_subset_of(a));
    EXPECT_FALSE(a.is_subset_of(b));
    EXPECT_TRUE(fu::cpu_mask_t{}.is_subset_of(a));
    EXPECT_TRUE(a == a);
    EXPECT_FALSE(a == b);
}

#if FORKUNION_OS_LINUX
TEST(cpu_mask, has_the_layout_of_cpu_set_t) {
    fu::cpu_mask_t mask;
    mask.set(0), mask.set(77), mask.set(CPU_SETSIZE - 1);
    cpu_set_t const *set = reinterpret_cast<cpu_set_t const *>(mask.words());
    for (std::size_t id = 0; id != CPU_SETSIZE; ++id) EXPECT_EQ(CPU_ISSET(id, set) != 0, mask.test(id)) << id;
}
#else
TEST(cpu_mask, has_the_layout_of_cpu_set_t) {
    GTEST_SKIP() << "cpu_set_t is glibc's Linux type";
}
#endif

TEST(core_ids, views_ids_and_converts_to_span) {
    std::vector<std::uint32_t> const ids = {2, 3, 5, 9000};
    fu::core_ids_t const view(ids.data(), ids.size());
    EXPECT_EQ(view.size(), 4u);
    EXPECT_EQ(view[2], 5u);
    std::span<std::uint32_t const> const span = view;
    EXPECT_EQ(span.data(), ids.data());
    EXPECT_EQ(span.size(), ids.size());
    std::vector<std::uint32_t> walked(view.begin(), view.end());
    EXPECT_EQ(walked, ids);
    fu::cpu_mask_t const mask = view.to_mask();
    EXPECT_EQ(mask.count(), 3u) << "9000 does not fit a mask";
    EXPECT_TRUE(fu::core_ids_t{}.empty());
}

static_assert(
    [] {
        fu::cpu_mask_t mask;
        mask.set_range(3, 70);
        return mask.count() == 68 && mask.first() == 3 && mask.next_from(71) == fu::cpu_mask_t::npos_k;
    }(),
    "the mask is usable in constant expressions");

} // namespace
