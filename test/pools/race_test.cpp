/**
 *  @file   race_test.cpp
 *  @brief  The protocol's race windows, each held open on purpose: built with `FORKUNION_TEST_HOOKS=1`, so the pool
 *          calls `detail::test_hook_k` at its named points, and a test stops one thread there while others run
 *          the interleaving that used to break the pool:
 *
 *  - a dispatcher stopped right after it published, while its dispatch completes and the controller terminates
 *    (the old protocol re-read and exchanged the idle word there, overwriting `die`: the callback ran twice on a
 *    dead fork and `terminate` hung);
 *  - a foreign dispatcher stopped between reading the claim and its CAS, while the controller terminates and
 *    respawns with another size (the old claim read the thread count before the CAS, and a respawn in between
 *    let it claim the new pool with the old count: a wedged pool, or a join that returned early);
 *  - a worker stopped after counting itself parked and before re-reading the generation, while a dispatch publishes or
 *    the idle policy changes (a missed wake-up would leave it asleep and the dispatch hung).
 *  - a dispatcher stopped right after its claim, before it stored its outermost generation, and a terminate stopped
 *    after its stop publication, while another thread asks whether an older, joined split dispatch is complete
 *    (`is_complete` compared the older generation with the previous hold's `outer` and answered "in flight").
 *  - a terminate stopped while it frees the thread table (through its allocator), after joining thread 0, while a
 *    new thread that the OS gave thread 0's old id dispatches (it was taken for thread 0 nesting a dispatch).
 *  Each stop is a spin on an atomic the test releases: synchronization, never a sleep.
 */
#include <atomic>
#include <cstddef>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <forkunion/pools/colocated.hpp>
#include <forkunion/pools/flat.hpp>
#include <forkunion/topology/topology.hpp>

#include "test_support.hpp"

namespace fu = forkunion;
using namespace forkunion::testing;

static_assert(FORKUNION_TEST_HOOKS, "this suite needs the protocol's test hooks compiled in");

namespace {

/**
 *  One stop: the first thread that reaches `point` on `pool` (and carries `mark`, unless it is 0) waits there for
 *  `go`. A mark names the thread or the round a stop is meant for: a worker still on its way from the previous
 *  round's dispatch reaches the same point with an older mark and passes, where stopping it would leave the next
 *  dispatch's caller waiting for a worker that only the caller itself could release.
 */
struct stop_t {
    std::atomic<fu::hook_point_t> point{fu::hook_point_t::before_claim_k};
    std::atomic<void const *> pool{nullptr};
    /**  0: disarmed; `any_mark_k`: armed for any thread; else armed for threads carrying that mark. One word, so
     *   that a thread which read one arming's mark can never take the next arming's stop (its CAS fails). */
    std::atomic<unsigned> armed_mark{0};
    std::atomic<bool> reached{false};
    std::atomic<bool> go{false};
};
constexpr unsigned any_mark_k = ~0u;
stop_t stop;
thread_local unsigned mark = 0;

void hook(fu::hook_point_t point, void const *pool) {
    // Acquire pairs with the arming's release: the point and pool read below are that arming's.
    unsigned armed = stop.armed_mark.load(std::memory_order_acquire);
    if (armed == 0) return;
    if (point != stop.point.load(std::memory_order_relaxed) || pool != stop.pool.load(std::memory_order_relaxed))
        return;
    if (armed != any_mark_k && mark != armed) return;
    if (!stop.armed_mark.compare_exchange_strong(armed, 0)) return; // only the first one stops, and only this arming
    if (point != stop.point.load(std::memory_order_acquire) || pool != stop.pool.load(std::memory_order_acquire)) {
        // Another arming with the same mark came between the checks above and the CAS: not this thread's stop.
        unsigned disarmed = 0;
        stop.armed_mark.compare_exchange_strong(disarmed, armed);
        return;
    }
    stop.reached.store(true, std::memory_order_release);
    while (!stop.go.load(std::memory_order_acquire)) std::this_thread::yield();
}

/**
 *  Arms the stop for `pool` at `point`, for threads carrying `wanted_mark` (0: any), and installs the hook; the
 *  destructor releases it.
 */
struct armed_stop_t {
    armed_stop_t(void const *pool, fu::hook_point_t point, unsigned wanted_mark) {
        stop.armed_mark.store(0, std::memory_order_relaxed); // already 0 after a release; disarmed while rewritten
        stop.point.store(point, std::memory_order_relaxed);
        stop.pool.store(pool, std::memory_order_relaxed);
        stop.reached.store(false, std::memory_order_relaxed);
        stop.go.store(false, std::memory_order_relaxed);
        stop.armed_mark.store(wanted_mark == 0 ? any_mark_k : wanted_mark, std::memory_order_release);
        fu::detail::test_hook_k.store(&hook, std::memory_order_release);
    }
    ~armed_stop_t() { release(); }
    bool reached() const {
        return eventually([] { return stop.reached.load(std::memory_order_acquire); });
    }
    void release() {
        stop.armed_mark.store(0, std::memory_order_relaxed);
        stop.go.store(true, std::memory_order_release);
    }
    armed_stop_t(armed_stop_t const &) = delete;
    armed_stop_t &operator=(armed_stop_t const &) = delete;
};

} // namespace

TEST(race, publisher_stopped_after_publishing_cannot_touch_a_terminating_pool) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    for (fu::idle_policy_t policy : {fu::idle_policy_t::spin(), fu::idle_policy_t::sleep(0), fu::idle_policy_t{}}) {
        SCOPED_TRACE(fu::idle_mode_name(policy.mode));
        fu::flat_pool_t pool;
        ASSERT_TRUE(pool.set_idle_policy(policy));
        ASSERT_TRUE(pool.spawn(2, fu::caller_exclusive_k));
        std::atomic<std::size_t> ran{0};
        auto count = [&](std::size_t) noexcept { ran.fetch_add(1, std::memory_order_relaxed); };
        fu::status_t dispatched = fu::status_code_t::contended_k;
        {
            armed_stop_t held(&pool, fu::hook_point_t::after_publish_k, 1);
            std::thread dispatcher([&] {
                mark = 1;
                dispatched = pool.for_threads(count).join(); // stops right after its generation store
            });
            ASSERT_TRUE(held.reached());
            // The exclusive dispatch completes without its dispatcher; the controller then takes the pool down.
            ASSERT_TRUE(eventually([&] { return ran.load() == 2; }));
            pool.terminate(); // must return: the stopped publisher holds nothing
            EXPECT_EQ(pool.threads_count(), 0u);
            held.release();
            dispatcher.join();
        }
        EXPECT_TRUE(dispatched) << dispatched.name();
        EXPECT_EQ(ran.load(), 2u) << "every slice ran exactly once, none again on a dead fork";
        ASSERT_TRUE(pool.spawn(3));
        ran = 0;
        require_ran(pool.for_threads(count).join());
        EXPECT_EQ(ran.load(), 3u) << "the pool respawns and serves";
    }
}

TEST(race, claim_stopped_across_a_respawn_is_refused_not_served_with_a_stale_count) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    for (bool grow : {true, false}) {
        SCOPED_TRACE(grow ? "respawned larger" : "respawned smaller");
        fu::flat_pool_t pool;
        ASSERT_TRUE(pool.spawn(grow ? 2 : 5));
        std::atomic<std::size_t> stale_ran{0};
        fu::status_t foreign = fu::status_code_t::success_k;
        {
            armed_stop_t held(&pool, fu::hook_point_t::before_claim_k, 1);
            std::thread racer([&] {
                mark = 1;
                auto guard = pool.for_n(100, [&](std::size_t) noexcept { stale_ran.fetch_add(1); });
                foreign = guard.status();
            });
            ASSERT_TRUE(held.reached());
            pool.terminate();
            ASSERT_TRUE(pool.spawn(grow ? 5 : 2, grow ? fu::caller_exclusive_k : fu::caller_inclusive_k));
            held.release();
            racer.join();
        }
        EXPECT_EQ(foreign.code(), fu::status_code_t::contended_k) << foreign.name();
        EXPECT_EQ(stale_ran.load(), 0u) << "the refused dispatch ran nothing";
        // The new pool is neither wedged nor short of a contributor: every task of every shape runs once.
        for (std::size_t round = 0; round != 100; ++round) {
            task_ledger ledger(37);
            require_ran(
                pool.for_n_dynamic(ledger.size(), [&](std::size_t task) noexcept { ledger.record(task); }).join());
            ASSERT_EQ(ledger.mistakes(), 0u);
        }
        pool.terminate(); // returns: nothing holds the pool
    }
}

TEST(race, worker_stopped_before_parking_still_sees_the_publication) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    fu::flat_pool_t pool;
    ASSERT_TRUE(pool.set_idle_policy(fu::idle_policy_t::sleep(0)));
    ASSERT_TRUE(pool.spawn(2));
    require_ran(pool.for_threads([](std::size_t) noexcept {}).join());
    for (unsigned round = 1; round <= 20; ++round) {
        // Only a worker that ran this round's first dispatch stops: the previous round's worker may still be on
        // its way to park, and stopping it there would hold up the dispatch below, which waits for it.
        armed_stop_t held(&pool, fu::hook_point_t::before_park_k, round);
        // A dispatch wakes the parked worker; idle again after it, the worker goes to park and stops on the way.
        require_ran(pool.for_threads([round](std::size_t) noexcept { mark = round; }).join());
        ASSERT_TRUE(held.reached()) << "the worker never tried to park";
        // The worker counted itself parked and has not looked at the generation again: publish now.
        std::atomic<bool> done{false};
        std::thread dispatcher([&] {
            task_ledger ledger(10);
            require_ran(pool.for_n(ledger.size(), [&](std::size_t task) noexcept { ledger.record(task); }).join());
            EXPECT_EQ(ledger.mistakes(), 0u);
            done = true;
        });
        // The caller runs its own block, then waits for the stopped worker: released, it must see the generation (or
        // the wake-up the publisher sent on seeing it parked), never sleep through it.
        held.release();
        dispatcher.join();
        EXPECT_TRUE(done.load());
    }
}

TEST(race, worker_stopped_before_parking_follows_a_policy_change) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    fu::flat_pool_t pool;
    ASSERT_TRUE(pool.set_idle_policy(fu::idle_policy_t::sleep(0)));
    ASSERT_TRUE(pool.spawn(3));
    require_ran(pool.for_threads([](std::size_t) noexcept {}).join());
    {
        // Marked like the rounds above: a worker still on its way to park from the first dispatch passes.
        armed_stop_t held(&pool, fu::hook_point_t::before_park_k, 1);
        // Wakes them; they go to park again, and the first to get there stops.
        require_ran(pool.for_threads([](std::size_t) noexcept { mark = 1; }).join());
        ASSERT_TRUE(held.reached());
        ASSERT_TRUE(pool.set_idle_policy(fu::idle_policy_t::spin())); // while a worker is between count and check
        held.release();
    }
    // Every worker, the stopped one included, spins now: none stays parked under a policy that says spin.
    EXPECT_TRUE(eventually([&] { return pool.parked_threads_count() == 0; })) << pool.parked_threads_count();
    task_ledger ledger(1000);
    require_ran(pool.for_n(ledger.size(), [&](std::size_t task) noexcept { ledger.record(task); }).join());
    EXPECT_EQ(ledger.mistakes(), 0u);
}

TEST(race, root_stopped_before_releasing_keeps_the_pool_held) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    // The release of the pool by the tree's root is the completion signal: until it happens, a dispatch is in
    // flight for everyone (refused, incomplete), and the moment it happens the pool is free again.
    fu::flat_pool_t pool;
    ASSERT_TRUE(pool.spawn(3, fu::caller_exclusive_k));
    std::atomic<std::size_t> ran{0};
    auto count = [&](std::size_t) noexcept { ran.fetch_add(1); };
    armed_stop_t held(&pool, fu::hook_point_t::before_release_k, 0);
    auto const publication = pool.unsafe_for_threads(count);
    ASSERT_TRUE(publication);
    ASSERT_TRUE(held.reached());
    EXPECT_EQ(ran.load(), 3u) << "every slice ran before the root's release";
    EXPECT_FALSE(pool.is_complete(publication)) << "not complete before the root releases";
    {
        auto racer = pool.for_threads(count);
        EXPECT_EQ(racer.status().code(), fu::status_code_t::contended_k);
    }
    held.release();
    pool.unsafe_join(publication);
    EXPECT_TRUE(pool.is_complete(publication));
    require_ran(pool.for_threads(count).join());
    EXPECT_EQ(ran.load(), 6u);
}

/**
 *  A generation stays complete once joined: the next hold's claim (before its holder stores the new outermost
 *  generation) and a terminate's hold (which publishes none) must not make an older generation read as in flight.
 *  `unsafe_join(g)` then `is_complete(g)` is the pattern of every split dispatcher, and a poller that saw `true` once
 *  must not see `false` again.
 */
TEST(race, a_joined_split_dispatch_stays_complete_while_the_next_claim_publishes) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        SCOPED_TRACE(exclusivity == fu::caller_exclusive_k ? "exclusive" : "inclusive");
        fu::flat_pool_t pool;
        ASSERT_TRUE(pool.spawn(2, exclusivity));
        std::atomic<std::size_t> ran{0};
        auto count = [&](std::size_t) noexcept { ran.fetch_add(1, std::memory_order_relaxed); };
        auto const publication = pool.unsafe_for_threads(count);
        ASSERT_TRUE(publication);
        pool.unsafe_join(publication.generation);
        ASSERT_TRUE(pool.is_complete(publication.generation));
        bool complete_during_claim = false;
        fu::status_t next = fu::status_code_t::contended_k;
        {
            armed_stop_t held(&pool, fu::hook_point_t::after_claim_k, 1);
            std::thread dispatcher([&] {
                mark = 1;
                next = pool.for_threads(count).join(); // stops holding the pool, before it publishes
            });
            ASSERT_TRUE(held.reached());
            complete_during_claim = pool.is_complete(publication.generation);
            held.release();
            dispatcher.join();
        }
        EXPECT_TRUE(complete_during_claim) << "a joined generation read as in flight while the next claim published";
        EXPECT_TRUE(next) << next.name();
        EXPECT_TRUE(pool.is_complete(publication.generation));
        EXPECT_EQ(ran.load(), 4u);
    }
}

TEST(race, a_joined_split_dispatch_stays_complete_while_the_pool_terminates) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        SCOPED_TRACE(exclusivity == fu::caller_exclusive_k ? "exclusive" : "inclusive");
        fu::flat_pool_t pool;
        ASSERT_TRUE(pool.spawn(3, exclusivity));
        std::atomic<std::size_t> ran{0};
        auto count = [&](std::size_t) noexcept { ran.fetch_add(1, std::memory_order_relaxed); };
        auto const publication = pool.unsafe_for_threads(count);
        ASSERT_TRUE(publication);
        pool.unsafe_join(publication.generation);
        ASSERT_TRUE(pool.is_complete(publication.generation));
        bool complete_during_terminate = false;
        {
            // The terminate holds the pool and publishes its stop generation, then stops here.
            armed_stop_t held(&pool, fu::hook_point_t::after_publish_k, 2);
            std::thread controller([&] {
                mark = 2;
                pool.terminate();
            });
            ASSERT_TRUE(held.reached());
            complete_during_terminate = pool.is_complete(publication.generation);
            held.release();
            controller.join();
        }
        EXPECT_TRUE(complete_during_terminate) << "a joined generation read as in flight while the pool terminated";
        EXPECT_EQ(pool.threads_count(), 0u);
        EXPECT_TRUE(pool.is_complete(publication.generation));
        EXPECT_EQ(ran.load(), 3u);
    }
}

namespace {

/**  Runs `while_freeing_slots` (once) when a pool frees its thread table: inside `terminate`, after every worker
 *   was joined and before the pool reads as unspawned. */
void (*while_freeing_slots)() = nullptr;

template <typename value_type_>
struct hooked_allocator_t {
    using value_type = value_type_;
    hooked_allocator_t() noexcept = default;
    template <typename other_type_>
    hooked_allocator_t(hooked_allocator_t<other_type_> const &) noexcept {}
    value_type_ *allocate(std::size_t n) { return std::allocator<value_type_>{}.allocate(n); }
    void deallocate(value_type_ *pointer, std::size_t n) noexcept {
        if (auto const hook = std::exchange(while_freeing_slots, nullptr)) hook();
        std::allocator<value_type_>{}.deallocate(pointer, n);
    }
    template <typename other_type_>
    bool operator==(hooked_allocator_t<other_type_> const &) const noexcept {
        return true;
    }
};

using hooked_pool_t = fu::basic_pool_t<hooked_allocator_t<std::thread>>;
hooked_pool_t *reuse_pool = nullptr;
std::thread::id dead_thread_zero;
bool reused_id = false;
fu::status_t reuse_status;
std::atomic<std::size_t> reuse_ran{0};

} // namespace

/**
 *  Thread 0 of an exclusive pool may dispatch from inside its slice (T2n), and the pool used to know it by its OS id.
 *  Inside `terminate`, once thread 0 has been joined, the OS hands its id to the next thread it starts (glibc reuses
 *  the cached stack, and the id is its address): that thread's dispatch on the terminating pool was taken for a
 *  nested one, published a generation on the pool being torn down, and read the thread table being freed (a
 *  heap-use-after-free the API fuzzer found under ASan).
 */
TEST(race, a_new_thread_with_a_dead_thread_zeros_id_is_refused_while_the_pool_terminates) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    hooked_pool_t pool;
    ASSERT_TRUE(pool.spawn(1, fu::caller_exclusive_k));
    require_ran(pool.for_threads([&](std::size_t) noexcept { dead_thread_zero = std::this_thread::get_id(); }).join());
    reuse_pool = &pool;
    reused_id = false;
    reuse_ran = 0;
    reuse_status = fu::status_code_t::success_k;
    while_freeing_slots = [] {
        std::thread newcomer([] {
            reused_id = std::this_thread::get_id() == dead_thread_zero;
            auto guard = reuse_pool->for_n(3, [](std::size_t) noexcept { reuse_ran.fetch_add(1); });
            reuse_status = guard.join();
        });
        newcomer.join();
    };
    pool.terminate();
    EXPECT_EQ(while_freeing_slots, nullptr) << "the terminate freed no table";
    EXPECT_EQ(pool.threads_count(), 0u);
    if (!reused_id) GTEST_SKIP() << "the OS gave the new thread a fresh id: the window needs the dead one's";
    EXPECT_FALSE(reuse_status) << "a dispatch on a terminating pool was accepted: " << reuse_status.name();
    EXPECT_EQ(reuse_ran.load(), 0u) << "a refused dispatch ran tasks";
    // The pool is whole afterwards.
    ASSERT_TRUE(pool.spawn(2, fu::caller_exclusive_k));
    task_ledger ledger(100);
    require_ran(pool.for_n(ledger.size(), [&](std::size_t task) noexcept { ledger.record(task); }).join());
    EXPECT_EQ(ledger.mistakes(), 0u);
}

namespace {

/**  While armed, the spawning thread's first hook point (its set-up dispatch's claim or publication) runs one
 *   foreign dispatch to the end on another thread: the window between a spawn and its set-up, held open. */
struct foreign_dispatch_t {
    std::atomic<bool> armed{false};
    std::thread::id spawner;
    fu::status_t status;
    std::size_t ran = 0;
    void (*dispatch)(foreign_dispatch_t &) = nullptr;
    void *pool = nullptr;
};
foreign_dispatch_t foreign;

void foreign_hook(fu::hook_point_t point, void const *) {
    if (point != fu::hook_point_t::before_claim_k && point != fu::hook_point_t::after_publish_k) return;
    if (std::this_thread::get_id() != foreign.spawner) return;
    bool expected = true;
    if (!foreign.armed.compare_exchange_strong(expected, false)) return;
    std::thread([] { foreign.dispatch(foreign); }).join();
}

} // namespace

TEST(race, spawn_never_loses_its_set_up_to_a_foreign_dispatch) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    using pool_t = fu::colocated_pool_t;
    fu::machine_topology_t topology;
    if (!topology.try_harvest()) GTEST_SKIP() << "no topology";
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        pool_t pool;
        foreign.status = fu::status_t{};
        foreign.ran = 0;
        foreign.pool = &pool;
        foreign.spawner = std::this_thread::get_id();
        foreign.dispatch = [](foreign_dispatch_t &self) {
            std::atomic<std::size_t> ran{0};
            auto guard = static_cast<pool_t *>(self.pool)->for_n(5, [&](std::size_t) noexcept { ran.fetch_add(1); });
            self.status = guard.join();
            self.ran = ran.load();
        };
        foreign.armed = true;
        fu::detail::test_hook_k.store(&foreign_hook, std::memory_order_release);
        fu::status_t const spawned = pool.spawn_on(topology, 0, 2, exclusivity);
        fu::detail::test_hook_k.store(nullptr, std::memory_order_release);
        EXPECT_FALSE(foreign.armed.load()) << "the window was not reached";
        EXPECT_TRUE(spawned) << "spawn_on lost to a foreign dispatch: " << spawned.name();
        EXPECT_EQ(pool.threads_count(), 2u);
        // The foreign dispatch is refused (the pool is busy being set up) or, never both, runs whole.
        EXPECT_TRUE(foreign.status == fu::status_code_t::contended_k ? foreign.ran == 0 : foreign.ran == 5)
            << foreign.status.name() << ", " << foreign.ran << " tasks";
        pool.terminate();
    }
}
