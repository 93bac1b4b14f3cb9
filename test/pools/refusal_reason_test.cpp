/**
 *  @file   refusal_reason_test.cpp
 *  @brief  `last_refusal_reason()`: every `invalid_argument` of the pools says which argument and why.
 *
 *  Each refusal path of `spawn`, `spawn_on`, the setters and the dispatch guards is taken once, and the reason read
 *  right after it must name that path's argument. Each check first plants a marker reason, so a path that returned
 *  `invalid_argument` without setting its own reason fails (it would read the marker). The contract of `errno` is
 *  checked too: calls that succeed leave the reason as it was, and a refusal on another thread changes nothing here.
 */
#include <cstdint>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include <forkunion/pools/colocated.hpp>
#include <forkunion/pools/distributed.hpp>
#include <forkunion/pools/flat.hpp>

#include "pools_support.hpp"

namespace fu = forkunion;
using namespace forkunion::testing;

namespace {

constexpr char const *marker_k = "marker: no refusal since";

/**  Plants the marker, so that a refusal that forgets its reason is caught. */
void plant_marker() {
    (void)fu::detail::refuse(marker_k);
    ASSERT_STREQ(fu::last_refusal_reason(), marker_k);
}

/**  The reason of the refusal `status` came with, after checking it is `invalid_argument`. */
std::string reason_of(fu::status_t status) {
    EXPECT_EQ(status.code(), fu::status_code_t::invalid_argument_k);
    return fu::last_refusal_reason();
}

/**  A machine of `domains` compute domains with no cores: the refusals under test return before reading any core. */
struct empty_domains_t {
    std::size_t domains = 0;
    std::size_t compute_domains_count() const noexcept { return domains; }
    std::size_t logical_cores_count_in(std::size_t) const noexcept { return 1; }
    fu::core_ids_t cores_in(std::size_t) const noexcept { return {}; }
    std::size_t local_memory_of(std::size_t) const noexcept { return 0; }
    std::size_t memory_node_id(std::size_t) const noexcept { return 0; }
};

#define EXPECT_REASON(call, fragment)                                                                                  \
    do {                                                                                                               \
        plant_marker();                                                                                                \
        std::string const reason = reason_of(call);                                                                    \
        EXPECT_NE(reason.find(fragment), std::string::npos) << #call << " gave the reason: " << reason;                \
    } while (0)

} // namespace

TEST(refusal_reason, is_empty_before_any_refusal_on_a_thread) {
    std::string seen = "unset";
    std::thread([&] { seen = fu::last_refusal_reason(); }).join();
    EXPECT_EQ(seen, "");
}

TEST(refusal_reason, distributed_spawn_names_the_threads_argument) {
    fu::distributed_pool_t pool;
    EXPECT_REASON(pool.spawn(live_topology(), 0), "threads is 0");
    if (!fu::os_linux_k) GTEST_SKIP() << "recorded sysfs trees are read by the Linux back end only";
    fu::machine_topology_t const &eight = recorded(eight_nodes_k);
    ASSERT_EQ(eight.compute_domains_count(), 8u);
    // Four threads on an eight-domain machine: each domain needs one.
    EXPECT_REASON(pool.spawn(eight, 4), "threads is below the topology's compute domains");
    EXPECT_EQ(pool.threads_count(), 0u);
}

TEST(refusal_reason, colocated_spawn_on_names_threads_and_domain) {
    fu::colocated_pool_t pool;
    fu::machine_topology_t const &topology = live_topology();
    EXPECT_REASON(pool.spawn_on(topology, 0, 0), "threads is 0");
    EXPECT_REASON(pool.spawn_on(topology, topology.compute_domains_count(), 1), "domain is not below");
    EXPECT_EQ(pool.threads_count(), 0u);
}

TEST(refusal_reason, colocated_spawn_on_names_a_domain_the_index_type_cannot_hold) {
    fu::basic_colocated_pool_t<fu::default_micro_yield_t, std::uint8_t> pool;
    EXPECT_REASON(pool.spawn_on(empty_domains_t{300}, 256, 1), "domain does not fit the pool's index type");
}

TEST(refusal_reason, distributed_spawn_names_a_topology_without_domains_and_too_many_threads) {
    fu::distributed_pool_t pool;
    EXPECT_REASON(pool.spawn(empty_domains_t{0}, 4), "the topology has no compute domain");
    EXPECT_REASON(pool.spawn(empty_domains_t{2}, std::size_t(1) << 31), "threads is 2^31 or more");
}

TEST(refusal_reason, flat_spawn_and_setters_name_their_argument) {
    fu::flat_pool_t pool;
    EXPECT_REASON(pool.spawn(0), "threads is 0");
    EXPECT_REASON(pool.set_idle_policy({static_cast<fu::idle_mode_t>(200), 0}), "policy.mode");
    EXPECT_REASON(pool.set_idle_policy(fu::idle_policy_t::sleep(std::uint64_t(1) << 61)), "policy.microseconds");
    if constexpr (fu::os_thread_t::sets_stack_size_k)
        if (fu::os_thread_t::minimum_stack_bytes() > 1) EXPECT_REASON(pool.set_stack_size(1), "bytes is below");
}

TEST(refusal_reason, distributed_set_idle_policy_names_the_field) {
    fu::distributed_pool_t pool;
    EXPECT_REASON(pool.set_idle_policy({static_cast<fu::idle_mode_t>(200), 0}), "policy.mode");
    EXPECT_REASON(pool.set_idle_policy(fu::idle_policy_t::sleep(std::uint64_t(1) << 61)), "policy.microseconds");
}

TEST(refusal_reason, dispatch_names_a_count_the_index_type_cannot_hold) {
    using small_t = fu::basic_pool_t<std::allocator<std::thread>, fu::default_micro_yield_t, std::uint8_t>;
    small_t pool;
    ASSERT_TRUE(pool.spawn(1));
    plant_marker();
    auto guard = pool.for_n(std::size_t(1000), [](auto) noexcept {});
    EXPECT_EQ(guard.status().code(), fu::status_code_t::invalid_argument_k);
    EXPECT_NE(std::string(fu::last_refusal_reason()).find("task count does not fit"), std::string::npos)
        << fu::last_refusal_reason();
}

TEST(refusal_reason, join_from_another_thread_names_the_thread) {
    fu::flat_pool_t pool;
    ASSERT_TRUE(pool.spawn(1));
    auto guard = pool.for_n(4, [](std::size_t) noexcept {});
    std::string reason;
    fu::status_code_t code = fu::status_code_t::success_k;
    std::thread([&] {
        plant_marker();
        code = guard.join().code();
        reason = fu::last_refusal_reason();
    }).join();
    EXPECT_EQ(code, fu::status_code_t::invalid_argument_k);
    EXPECT_NE(reason.find("thread other than the guard's creator"), std::string::npos) << reason;
    EXPECT_TRUE(guard.join());
}

TEST(refusal_reason, success_leaves_it_and_other_threads_never_touch_it) {
    fu::flat_pool_t pool;
    plant_marker();
    ASSERT_TRUE(pool.spawn(2));
    ASSERT_TRUE(pool.for_n(8, [](std::size_t) noexcept {}).join());
    ASSERT_TRUE(pool.set_idle_policy(fu::idle_policy_t::spin()));
    EXPECT_STREQ(fu::last_refusal_reason(), marker_k) << "a success wrote the reason";
    std::thread([] {
        fu::flat_pool_t other;
        EXPECT_EQ(other.spawn(0).code(), fu::status_code_t::invalid_argument_k);
    }).join();
    EXPECT_STREQ(fu::last_refusal_reason(), marker_k) << "another thread's refusal changed this thread's reason";
}
