/**
 *  @file   c_api_race_test.cpp
 *  @brief  The C API's race windows, held open through the pools' test hooks: `c/forkunion.cpp` is compiled into
 *          this program with `FORKUNION_TEST_HOOKS=1`, so a thread inside a C call stops at a named point of the
 *          C++ protocol beneath it while the test runs the interleaving that used to break the C layer:
 *
 *  - a foreign split dispatch stopped while it sets up (it holds the split slot, before its publication claims the
 *    pool), while the controlling thread terminates, respawns and makes a split dispatch of its own (a terminate
 *    that freed the slot let both dispatchers hold it: the foreign one then overwrote the owner's token, so the
 *    owner's join answered `stale_generation` and its slice 0 never ran).
 *  - a dispatcher's join stopped after it completed its split dispatch and before it gave the slot back, while another
 *    thread's split dispatch takes the slot (the join then answered `stale_generation` for work it had done).
 *  - a split dispatcher that reads its completed token's slot taken ("being set up") by another thread, and reuses
 *    what its slices wrote (the taker's exchange did not release, so that answer ordered nothing: ThreadSanitizer).
 *  - a foreign split dispatch published on the colocated pool whose token is stored after a terminate and a respawn
 *    onto the distributed pool (its generation read as the distributed pool's dispatch of the same number).
 *  Each stop is a spin on an atomic the test releases: synchronization, never a sleep.
 */
#include <atomic>
#include <cstddef>
#include <thread>

#include <gtest/gtest.h>

#include <forkunion.h>
#include <forkunion/pools/dispatch.hpp>

#include "test_support.hpp"

namespace fu = forkunion;
using namespace forkunion::testing;

static_assert(FORKUNION_TEST_HOOKS, "this suite needs the protocol's test hooks compiled in");

namespace {

/**  The thread that carries the mark stops at its first `stop_point` on any pool, once, until `go`. */
thread_local bool stops_at_claim = false;
std::atomic<fu::hook_point_t> stop_point{fu::hook_point_t::before_claim_k};
std::atomic<bool> reached{false}, go{false};

void hook(fu::hook_point_t point, void const *) {
    if (point != stop_point.load(std::memory_order_acquire) || !stops_at_claim) return;
    stops_at_claim = false;
    reached.store(true, std::memory_order_release);
    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
}

void count_thread(void *context, size_t, size_t) {
    static_cast<std::atomic<std::size_t> *>(context)->fetch_add(1, std::memory_order_relaxed);
}

/**  Nothing is left held: the next split dispatch on `pool` (of 2 threads) is accepted, joined, and ran on both. */
void expect_split_slot_free(fu_pool_t pool) {
    std::atomic<std::size_t> next_ran{0};
    std::size_t next_token = 0;
    EXPECT_EQ(fu_pool_unsafe_for_threads(pool, count_thread, &next_ran, &next_token), fu_success_k);
    if (next_token) {
        EXPECT_EQ(fu_pool_unsafe_join(pool, next_token), fu_success_k);
    }
    EXPECT_EQ(next_ran.load(), 2u);
}

} // namespace

TEST(c_api_race, a_split_dispatch_set_up_across_a_terminate_never_takes_the_next_ones_token) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    fu_topology_t topology = fu_topology_new();
    ASSERT_NE(topology, nullptr);
    for (fu_caller_exclusivity_t first : {fu_caller_inclusive_k, fu_caller_exclusive_k}) {
        SCOPED_TRACE(first == fu_caller_exclusive_k ? "first spawn exclusive" : "first spawn inclusive");
        fu_pool_t pool = fu_pool_new("race", fu_capabilities_all_k);
        ASSERT_NE(pool, nullptr);
        ASSERT_EQ(fu_pool_spawn_on(topology, pool, 0, 2, first), fu_success_k);
        reached = false, go = false;
        stop_point = fu::hook_point_t::before_claim_k;
        fu::detail::test_hook_k.store(&hook, std::memory_order_release);

        std::atomic<std::size_t> foreign_ran{0}, own_ran{0};
        std::size_t foreign_token = 0;
        fu_status_t foreign = fu_success_k, foreign_joined = fu_success_k;
        std::thread dispatcher([&] {
            stops_at_claim = true; // stops inside the call, holding the split slot
            foreign = fu_pool_unsafe_for_threads(pool, count_thread, &foreign_ran, &foreign_token);
            if (foreign == fu_success_k) foreign_joined = fu_pool_unsafe_join(pool, foreign_token);
        });
        ASSERT_TRUE(eventually([] { return reached.load(std::memory_order_acquire); }));

        // The controlling thread: terminate, respawn inclusive, and a split dispatch of its own.
        EXPECT_EQ(fu_pool_terminate(pool), fu_success_k);
        ASSERT_EQ(fu_pool_spawn_on(topology, pool, 0, 2, fu_caller_inclusive_k), fu_success_k);
        std::size_t own_token = 0;
        fu_status_t const own = fu_pool_unsafe_for_threads(pool, count_thread, &own_ran, &own_token);
        go.store(true, std::memory_order_release);
        dispatcher.join();
        fu::detail::test_hook_k.store(nullptr, std::memory_order_release);

        // Accepted, the owner's dispatch is the one its token names: the join runs slice 0 and succeeds. Or it
        // was refused, with a status, while the other dispatcher held the slot.
        if (own == fu_success_k) {
            EXPECT_EQ(fu_pool_unsafe_join(pool, own_token), fu_success_k)
                << "the owner's split token was taken by a dispatch set up across the terminate";
            EXPECT_EQ(own_ran.load(), 2u) << "every slice of the owner's split dispatch ran";
        } else {
            EXPECT_EQ(own, fu_contended_k) << fu_status_to_string(own);
            EXPECT_EQ(own_ran.load(), 0u);
        }
        // The stopped dispatcher resumed after the respawn: refused (its claim read the old pool), or, if it ran,
        // it ran whole and its own join answered for it.
        if (foreign == fu_success_k) {
            EXPECT_EQ(foreign_joined, fu_success_k) << fu_status_to_string(foreign_joined);
            EXPECT_EQ(foreign_ran.load(), 2u);
        } else {
            EXPECT_EQ(foreign, fu_contended_k) << fu_status_to_string(foreign);
            EXPECT_EQ(foreign_ran.load(), 0u);
        }
        expect_split_slot_free(pool);
        fu_pool_delete(pool);
    }
    fu_topology_delete(topology);
}

/**
 *  The dispatcher's own join completes its split dispatch (inclusive: it runs slice 0 and releases the pool; exclusive:
 *  it sees the dispatch done), and only then gives the slot back. In between, another thread's split dispatch may
 *  take the slot of the completed dispatch. The join did its work: it must say so, not `stale_generation`, which
 *  would tell the dispatcher that its dispatch had been joined by someone else, or superseded unjoined.
 */
TEST(c_api_race, a_join_that_completed_its_dispatch_succeeds_though_the_slot_was_taken_meanwhile) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    fu_topology_t topology = fu_topology_new();
    ASSERT_NE(topology, nullptr);
    for (fu_caller_exclusivity_t exclusivity : {fu_caller_inclusive_k, fu_caller_exclusive_k}) {
        SCOPED_TRACE(exclusivity == fu_caller_exclusive_k ? "exclusive" : "inclusive");
        fu_pool_t pool = fu_pool_new("race", fu_capabilities_all_k);
        ASSERT_NE(pool, nullptr);
        ASSERT_EQ(fu_pool_spawn_on(topology, pool, 0, 2, exclusivity), fu_success_k);
        reached = false, go = false;
        stop_point = fu::hook_point_t::after_join_k;
        fu::detail::test_hook_k.store(&hook, std::memory_order_release);

        std::atomic<std::size_t> own_ran{0}, next_ran{0};
        fu_status_t own = fu_contended_k, joined = fu_contended_k;
        std::atomic<bool> refused{false};
        std::thread dispatcher([&] {
            std::size_t token = 0;
            own = fu_pool_unsafe_for_threads(pool, count_thread, &own_ran, &token);
            if (own != fu_success_k) return refused.store(true, std::memory_order_release);
            stops_at_claim = true; // stops inside the join, its dispatch complete, the slot not yet given back
            joined = fu_pool_unsafe_join(pool, token);
        });
        bool const stopped = eventually(
            [&] { return reached.load(std::memory_order_acquire) || refused.load(std::memory_order_acquire); });
        ASSERT_TRUE(stopped);
        std::size_t next_token = 0;
        fu_status_t const next = fu_pool_unsafe_for_threads(pool, count_thread, &next_ran, &next_token);
        go.store(true, std::memory_order_release);
        dispatcher.join();
        fu::detail::test_hook_k.store(nullptr, std::memory_order_release);

        ASSERT_EQ(own, fu_success_k);
        EXPECT_EQ(joined, fu_success_k) << "the join that completed its own dispatch answered "
                                        << fu_status_to_string(joined);
        EXPECT_EQ(own_ran.load(), 2u);
        // The completed dispatch's slot was free to take, and the new dispatch is joined as usual.
        EXPECT_EQ(next, fu_success_k) << fu_status_to_string(next);
        if (next == fu_success_k) {
            EXPECT_EQ(fu_pool_unsafe_join(pool, next_token), fu_success_k);
            EXPECT_EQ(next_ran.load(), 2u);
        }
        fu_pool_delete(pool);
    }
    fu_topology_delete(topology);
}

namespace {

/**  What a split dispatch's callbacks write, plain (no atomics): a thread that reads the dispatch complete may reuse it
 *   only if its answer ordered every callback before it, which ThreadSanitizer checks. */
struct plain_record_t {
    std::size_t seen[8] = {};
};
void record_thread(void *context, size_t thread, size_t) {
    static_cast<plain_record_t *>(context)->seen[thread % 8] += 1;
}

std::atomic<bool> taken_quietly{false}; // relaxed on both sides: it carries no order

void stop_quietly(fu::hook_point_t point, void const *) {
    if (point != fu::hook_point_t::before_claim_k || !stops_at_claim) return;
    stops_at_claim = false;
    taken_quietly.store(true, std::memory_order_relaxed);
    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
}

} // namespace

/**
 *  An exclusive pool's split dispatch completes by itself; another thread's split dispatch may then take its slot,
 *  and the dispatcher reads its own token as complete from the slot having moved on (`fu_pool_is_complete` 1,
 *  `fu_pool_unsafe_join` `stale_generation`). That answer must order every slice before it, as any "complete" does,
 *  even when the slot reads "being set up": the taker's exchange must release what its own completion check
 *  acquired. Checked by ThreadSanitizer (the tsan preset): the dispatcher rewrites what the slices wrote.
 */
TEST(c_api_race, a_token_read_complete_from_a_taken_slot_orders_its_slices_first) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    fu_topology_t topology = fu_topology_new();
    ASSERT_NE(topology, nullptr);
    fu_pool_t pool = fu_pool_new("race", fu_capabilities_all_k);
    ASSERT_NE(pool, nullptr);
    ASSERT_EQ(fu_pool_spawn_on(topology, pool, 0, 2, fu_caller_exclusive_k), fu_success_k);
    plain_record_t record, other;
    std::size_t token = 0;
    ASSERT_EQ(fu_pool_unsafe_for_threads(pool, record_thread, &record, &token), fu_success_k);
    taken_quietly = false, go = false;
    fu::detail::test_hook_k.store(&stop_quietly, std::memory_order_release);
    fu_status_t taker = fu_contended_k;
    std::size_t taker_token = 0;
    std::thread thief([&] {
        // Retries until the first dispatch is complete; then it holds the slot, stopped before its own claim.
        stops_at_claim = true;
        while ((taker = fu_pool_unsafe_for_threads(pool, record_thread, &other, &taker_token)) == fu_contended_k &&
               stops_at_claim)
            std::this_thread::yield();
    });
    while (!taken_quietly.load(std::memory_order_relaxed)) std::this_thread::yield();
    // The slot reads "being set up" now. The dispatcher learns that its dispatch is complete from that alone.
    EXPECT_EQ(fu_pool_is_complete(pool, token), 1);
    EXPECT_EQ(fu_pool_unsafe_join(pool, token), fu_stale_generation_k);
    EXPECT_EQ(record.seen[0] + record.seen[1], 2u);
    record = plain_record_t{}; // reuses what the slices wrote: a data race unless they happened before
    go.store(true, std::memory_order_release);
    thief.join();
    fu::detail::test_hook_k.store(nullptr, std::memory_order_release);
    if (taker == fu_success_k) {
        EXPECT_EQ(fu_pool_unsafe_join(pool, taker_token), fu_success_k);
    }
    fu_pool_delete(pool);
    fu_topology_delete(topology);
}

/**  Whether the foreign token's dispatch read complete from inside every slice of a dispatch that probed it. */
struct token_probe_t {
    fu_pool_t pool = nullptr;
    std::size_t token = 0;
    std::atomic<std::size_t> read_incomplete{0};
};

void probe_token(void *context, size_t, size_t) {
    auto &probe = *static_cast<token_probe_t *>(context);
    if (fu_pool_is_complete(probe.pool, probe.token) != 1)
        probe.read_incomplete.fetch_add(1, std::memory_order_relaxed);
}

/**
 *  A foreign split dispatch published on the colocated pool stops before it stores its token; the controlling thread
 *  terminates (which joins that dispatch) and respawns on a recorded two-socket machine, so the distributed pool
 *  runs. The foreign thread then stores its token with the colocated pool's generation: a token of a pool that no
 *  longer runs, which must read complete and join as stale, never as a generation of the distributed pool (whose
 *  count is its own): when the distributed pool's dispatch in flight has that number, the token read incomplete, a
 *  join of it waited for that dispatch, and a split dispatch was refused as contended.
 */
TEST(c_api_race, a_split_token_stored_after_a_terminate_never_names_the_respawned_pools_dispatch) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    if (!fu::os_linux_k) GTEST_SKIP() << "recorded sysfs trees are read by the Linux back end only";
    fu_topology_t live = fu_topology_new();
    fu_topology_t two_sockets = fu_topology_new_from_sysfs(FORKUNION_TEST_SYSFS);
    ASSERT_NE(live, nullptr);
    ASSERT_NE(two_sockets, nullptr) << FORKUNION_TEST_SYSFS;
    ASSERT_EQ(fu_compute_domains_count(two_sockets), 2u);
    fu_pool_t pool = fu_pool_new("race", fu_capabilities_all_k);
    ASSERT_NE(pool, nullptr);
    ASSERT_EQ(fu_pool_spawn_on(live, pool, 0, 2, fu_caller_exclusive_k), fu_success_k);
    // The colocated pool's count runs ahead of the distributed pool's, which starts afresh at its spawn.
    std::atomic<std::size_t> warm_up{0};
    for (int round = 0; round != 64; ++round)
        ASSERT_EQ(fu_pool_for_threads(pool, count_thread, &warm_up), fu_success_k);
    reached = false, go = false;
    stop_point = fu::hook_point_t::after_publish_k;
    fu::detail::test_hook_k.store(&hook, std::memory_order_release);

    std::atomic<std::size_t> foreign_ran{0};
    std::size_t foreign_token = 0;
    fu_status_t foreign = fu_contended_k;
    std::thread dispatcher([&] {
        stops_at_claim = true; // stops inside the call, published, its token not stored yet
        foreign = fu_pool_unsafe_for_threads(pool, count_thread, &foreign_ran, &foreign_token);
    });
    ASSERT_TRUE(eventually([] { return reached.load(std::memory_order_acquire); }));
    EXPECT_EQ(fu_pool_terminate(pool), fu_success_k);
    ASSERT_EQ(fu_pool_spawn(two_sockets, pool, 2, fu_caller_exclusive_k), fu_success_k);
    ASSERT_EQ(fu_pool_compute_domains_count(pool), 2u) << "the respawn must start the distributed pool";
    go.store(true, std::memory_order_release);
    dispatcher.join();
    fu::detail::test_hook_k.store(nullptr, std::memory_order_release);
    ASSERT_EQ(foreign, fu_success_k) << fu_status_to_string(foreign);
    EXPECT_EQ(foreign_ran.load(), 2u) << "the terminate joined the published dispatch: every slice ran";

    // The distributed pool's dispatches pass the colocated pool's count; inside each, the token is probed.
    token_probe_t probe;
    probe.pool = pool, probe.token = foreign_token;
    for (int round = 0; round != 512; ++round) ASSERT_EQ(fu_pool_for_threads(pool, probe_token, &probe), fu_success_k);
    EXPECT_EQ(probe.read_incomplete.load(), 0u) << "the terminated pool's token read as a dispatch in flight";
    EXPECT_EQ(fu_pool_is_complete(pool, foreign_token), 1);
    EXPECT_EQ(fu_pool_unsafe_join(pool, foreign_token), fu_stale_generation_k);
    expect_split_slot_free(pool);
    fu_pool_delete(pool);
    fu_topology_delete(two_sockets);
    fu_topology_delete(live);
}
