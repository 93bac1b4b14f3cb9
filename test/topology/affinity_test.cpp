/**
 *  @file   affinity_test.cpp
 *  @brief  Tests of `include/forkunion/topology/affinity.hpp`: pinning read back with `sched_getaffinity`, save/restore
 *          round trips, names seen in `/proc/self/task/<tid>/comm`, counted refusals that change nothing, safe
 *          truncation of long names, and the portable back end's `unsupported`.
 *
 *  Every test that changes a mask does it on a thread of its own, so the test runner's mask is never touched.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <forkunion/topology/affinity.hpp>

#if FORKUNION_OS_LINUX
#include <sched.h>       // `sched_getaffinity`, `sched_getcpu`
#include <sys/syscall.h> // `SYS_gettid`
#include <unistd.h>      // `syscall`
#elif FORKUNION_OS_WINDOWS
#include <forkunion/hardware/detail/system_windows.hpp> // `GetThreadDescription`, `GetCurrentProcessorNumberEx`
#endif

#include "topology_support.hpp"

namespace fu = forkunion;
using forkunion::testing::comms_of_this_process;
using forkunion::testing::ids_of;
using forkunion::testing::kernel_affinity;
using forkunion::testing::on_own_thread;

namespace {

#if FORKUNION_OS_LINUX
/**  The comm of this thread, from procfs. */
std::string comm_of_this_thread() {
    std::ifstream file("/proc/self/task/" + std::to_string(::syscall(SYS_gettid)) + "/comm");
    std::string name;
    std::getline(file, name);
    return name;
}

/**  The CPU the calling thread runs on, from the kernel. */
std::size_t current_cpu() {
    return static_cast<std::size_t>(::sched_getcpu());
}

/**  How the library names `worker` (whose own `current_thread()` is `published`): its `pthread_t`. */
fu::thread_handle_t handle_of(std::thread &worker, fu::thread_handle_t) {
    return worker.native_handle();
}
#elif FORKUNION_OS_WINDOWS
/**  The description of this thread, straight from Windows (`GetThreadDescription`), as UTF-8. */
std::string comm_of_this_thread() {
    using get_t = HRESULT(WINAPI *)(HANDLE, PWSTR *);
    auto const get = reinterpret_cast<get_t>(
        reinterpret_cast<void (*)()>(::GetProcAddress(::GetModuleHandleW(L"kernel32.dll"), "GetThreadDescription")));
    PWSTR wide = nullptr;
    if (!get || !SUCCEEDED(get(::GetCurrentThread(), &wide)) || !wide) return {};
    char name[256] = {};
    ::WideCharToMultiByte(CP_UTF8, 0, wide, -1, name, sizeof(name), nullptr, nullptr);
    ::LocalFree(wide);
    return name;
}

/**  The processor the calling thread runs on, as a dense id: the groups before it, then its number. */
std::size_t current_cpu() {
    PROCESSOR_NUMBER number{};
    ::GetCurrentProcessorNumberEx(&number);
    std::size_t first = 0;
    for (WORD group = 0; group != number.Group; ++group) first += ::GetMaximumProcessorCount(group);
    return first + number.Number;
}

/**  How the library names `worker`: its thread id, which the worker published (its `native_handle()` is a
 *   winpthreads handle, not a Windows one). */
fu::thread_handle_t handle_of(std::thread &, fu::thread_handle_t published) {
    return published;
}
#else
std::string comm_of_this_thread() {
    return {};
}
std::size_t current_cpu() {
    return 0;
}
fu::thread_handle_t handle_of(std::thread &, fu::thread_handle_t published) {
    return published;
}
#endif

/**  Skips a test that pins or names threads where no back end can (WebAssembly), saying so. */
#define FORKUNION_SKIP_WITHOUT_AFFINITY()                                                                              \
    if (!fu::affinity_supported_k)                                                                                     \
    GTEST_SKIP() << "no thread affinity or names on this platform: its back end is the portable one, tested below"

TEST(affinity, pins_the_calling_thread_to_each_allowed_core) {
    FORKUNION_SKIP_WITHOUT_AFFINITY();
    std::set<std::size_t> const allowed = kernel_affinity();
    ASSERT_FALSE(allowed.empty());
    on_own_thread([&] {
        for (std::size_t core : allowed) {
            std::uint32_t const id = static_cast<std::uint32_t>(core);
            fu::status_t const status = fu::try_pin_current_thread(fu::core_ids_t(&id, 1));
            EXPECT_TRUE(status) << core << ": " << status.name();
            EXPECT_EQ(kernel_affinity(), std::set<std::size_t>{core});
            // The kernel migrates a thread that pins itself before the call returns.
            EXPECT_EQ(current_cpu(), core);
            fu::cpu_mask_t read;
            EXPECT_TRUE(fu::try_read_current_affinity(read));
            EXPECT_EQ(ids_of(read), std::set<std::size_t>{core});
        }
    });
}

TEST(affinity, pins_another_thread_by_handle) {
    FORKUNION_SKIP_WITHOUT_AFFINITY();
    std::set<std::size_t> const allowed = kernel_affinity();
    std::size_t const core = *allowed.rbegin();
    std::atomic<bool> pinned{false}, checked{false}, started{false};
    std::set<std::size_t> seen;
    fu::thread_handle_t published{};
    std::thread worker([&] {
        published = fu::affinity_backend_t::current_thread();
        started.store(true, std::memory_order_release);                            // pairs with the acquire below
        while (!pinned.load(std::memory_order_acquire)) std::this_thread::yield(); // pairs with the release below
        seen = kernel_affinity();
        checked.store(true, std::memory_order_release);
    });
    while (!started.load(std::memory_order_acquire)) std::this_thread::yield();
    fu::cpu_mask_t mask;
    mask.set(core);
    EXPECT_TRUE(fu::try_pin_thread(handle_of(worker, published), mask));
    pinned.store(true, std::memory_order_release); // pairs with the worker's acquire
    worker.join();
    EXPECT_TRUE(checked.load(std::memory_order_relaxed));
    EXPECT_EQ(seen, std::set<std::size_t>{core});
}

TEST(affinity, save_and_restore_round_trip) {
    FORKUNION_SKIP_WITHOUT_AFFINITY();
    std::set<std::size_t> const allowed = kernel_affinity();
    on_own_thread([&] {
        fu::saved_affinity_t saved;
        EXPECT_FALSE(saved.saved());
        EXPECT_EQ(saved.try_restore(), fu::status_code_t::invalid_argument_k) << "nothing saved yet";
        ASSERT_TRUE(saved.try_save());
        EXPECT_EQ(ids_of(saved.mask()), allowed);
        fu::cpu_mask_t one;
        one.set(*allowed.begin());
        ASSERT_TRUE(fu::try_pin_current_thread(one));
        EXPECT_EQ(kernel_affinity().size(), 1u);
        EXPECT_TRUE(saved.try_restore());
        EXPECT_EQ(kernel_affinity(), allowed);
        EXPECT_TRUE(saved.try_restore()) << "restoring twice is harmless";
        EXPECT_EQ(kernel_affinity(), allowed);
    });
    // A restore may run on another thread: it targets the thread that saved.
    fu::saved_affinity_t saved;
    std::atomic<int> stage{0};
    std::set<std::size_t> after;
    std::thread worker([&] {
        EXPECT_TRUE(saved.try_save());
        fu::cpu_mask_t one;
        one.set(*allowed.rbegin());
        EXPECT_TRUE(fu::try_pin_current_thread(one));
        stage.store(1, std::memory_order_release); // pairs with the main thread's acquire
        while (stage.load(std::memory_order_acquire) != 2) std::this_thread::yield(); // pairs with its release
        after = kernel_affinity();
    });
    while (stage.load(std::memory_order_acquire) != 1) std::this_thread::yield();
    EXPECT_TRUE(saved.try_restore());
    stage.store(2, std::memory_order_release);
    worker.join();
    EXPECT_EQ(after, allowed);
}

TEST(affinity, a_cpu_this_machine_lacks_is_refused_and_changes_nothing) {
    FORKUNION_SKIP_WITHOUT_AFFINITY();
    std::set<std::size_t> const allowed = kernel_affinity();
    std::size_t missing = 1000;
    while (allowed.count(missing)) ++missing; // 1000, unless this machine really has it
    on_own_thread([&] {
        std::size_t const refusals = fu::affinity_refusals_count();
        fu::cpu_mask_t mask;
        mask.set(missing);
        EXPECT_EQ(fu::try_pin_current_thread(mask), fu::status_code_t::placement_refused_k);
        EXPECT_EQ(kernel_affinity(), allowed) << "the mask is unchanged";
        EXPECT_EQ(fu::affinity_refusals_count(), refusals + 1) << "the refusal is counted";

        std::uint32_t const beyond = static_cast<std::uint32_t>(fu::max_cpus_k);
        EXPECT_EQ(fu::try_pin_current_thread(fu::core_ids_t(&beyond, 1)), fu::status_code_t::invalid_argument_k);
        EXPECT_EQ(fu::try_pin_current_thread(fu::core_ids_t{}), fu::status_code_t::invalid_argument_k);
        EXPECT_EQ(fu::try_pin_current_thread(fu::cpu_mask_t{}), fu::status_code_t::invalid_argument_k);
        EXPECT_EQ(kernel_affinity(), allowed);
        EXPECT_EQ(fu::affinity_refusals_count(), refusals + 4);
    });
}

TEST(affinity, names_appear_in_proc) {
    FORKUNION_SKIP_WITHOUT_AFFINITY();
    on_own_thread([] {
        ASSERT_TRUE(fu::try_name_current_thread("fu-affinity"));
        EXPECT_EQ(comm_of_this_thread(), "fu-affinity");
        char name[fu::thread_name_capacity_k] = {};
        EXPECT_TRUE(fu::try_read_current_thread_name(name));
        EXPECT_STREQ(name, "fu-affinity");
    });
    // Several named threads at once: every name shows in /proc/self/task/*/comm.
    constexpr std::size_t threads = 3;
    std::atomic<std::size_t> named{0};
    std::atomic<bool> release{false};
    std::vector<std::thread> workers;
    for (std::size_t i = 0; i != threads; ++i)
        workers.emplace_back([&, i] {
            char name[fu::thread_name_capacity_k];
            fu::compose_thread_name(name, "fu-test", i);
            EXPECT_TRUE(fu::try_name_current_thread(name));
            named.fetch_add(1, std::memory_order_release); // pairs with the acquire below
            while (!release.load(std::memory_order_acquire)) std::this_thread::yield();
        });
    while (named.load(std::memory_order_acquire) != threads) std::this_thread::yield();
    std::multiset<std::string> const comms = comms_of_this_process();
    release.store(true, std::memory_order_release);
    for (std::thread &worker : workers) worker.join();
    for (char const *name : {"fu-test:000", "fu-test:001", "fu-test:002"}) EXPECT_EQ(comms.count(name), 1u) << name;
}

TEST(affinity, names_by_handle) {
    FORKUNION_SKIP_WITHOUT_AFFINITY();
    std::atomic<bool> named{false}, started{false};
    std::string seen;
    fu::thread_handle_t published{};
    std::thread worker([&] {
        published = fu::affinity_backend_t::current_thread();
        started.store(true, std::memory_order_release);                           // pairs with the acquire below
        while (!named.load(std::memory_order_acquire)) std::this_thread::yield(); // pairs with the release below
        seen = comm_of_this_thread();
    });
    while (!started.load(std::memory_order_acquire)) std::this_thread::yield();
    EXPECT_TRUE(fu::try_name_thread(handle_of(worker, published), "by-handle"));
    named.store(true, std::memory_order_release);
    worker.join();
    EXPECT_EQ(seen, "by-handle");
    EXPECT_EQ(fu::try_name_current_thread(nullptr), fu::status_code_t::invalid_argument_k);
}

TEST(affinity, a_sixteen_character_name_is_truncated_safely) {
    if (fu::affinity_supported_k)
        on_own_thread([] {
            EXPECT_TRUE(fu::try_name_current_thread("abcdefghijklmnop")); // 16: Linux alone would refuse it
            EXPECT_EQ(comm_of_this_thread(), "abcdefghijklmno");
            // A cut never splits a UTF-8 character: 14 ASCII bytes then "é" (2 bytes) keeps 14 bytes.
            EXPECT_TRUE(fu::try_name_current_thread("abcdefghijklmn\xC3\xA9"));
            EXPECT_EQ(comm_of_this_thread(), "abcdefghijklmn");
            EXPECT_TRUE(fu::try_name_current_thread("")) << "an empty name is a name";
        });
    char out[fu::thread_name_capacity_k];
    EXPECT_EQ(fu::truncate_thread_name(out, "short"), 5u);
    EXPECT_STREQ(out, "short");
    EXPECT_EQ(fu::truncate_thread_name(out, std::string(100, 'x').c_str()), 15u);
    EXPECT_EQ(fu::truncate_thread_name(out, nullptr), 0u);
    EXPECT_STREQ(out, "");
}

TEST(affinity, composed_names_keep_their_index_whole) {
    char out[fu::thread_name_capacity_k];
    EXPECT_EQ(fu::compose_thread_name(out, "fu", 7), 6u);
    EXPECT_STREQ(out, "fu:007");
    fu::compose_thread_name(out, "fu", 1234);
    EXPECT_STREQ(out, "fu:1234");
    fu::compose_thread_name(out, "a-very-long-pool-name", 42);
    EXPECT_STREQ(out, "a-very-long:042") << "the prefix is cut, the index kept";
    fu::compose_thread_name(out, "pool\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 3); // 4 + 8 bytes of "éééé"
    EXPECT_STREQ(out, "pool\xC3\xA9\xC3\xA9\xC3\xA9:003") << "cut between characters";
    fu::compose_thread_name(out, "", 5);
    EXPECT_STREQ(out, "005");
    fu::compose_thread_name(out, nullptr, 5);
    EXPECT_STREQ(out, "005");
    if constexpr (sizeof(std::size_t) == 8) {               // indices wider than 32 bits
        fu::compose_thread_name(out, "x", ~std::size_t(0)); // 20 digits: the last 15 stay, no prefix fits
        EXPECT_EQ(std::string(out).size(), 15u);
        EXPECT_EQ(std::string(out), std::string("18446744073709551615").substr(5));
        fu::compose_thread_name(out, "x", static_cast<std::size_t>(1'000'000'000'000ull)); // 13 digits: "x:" fits
        EXPECT_STREQ(out, "x:1000000000000");
    }
}

TEST(affinity, the_portable_backend_reports_unsupported_and_changes_nothing) {
    static_assert(!fu::detail::portable_affinity_t::supported_k);
    static_assert(fu::affinity_supported_k == (fu::os_linux_k || fu::os_windows_k));
    std::set<std::size_t> const allowed = kernel_affinity();
    std::string const name = comm_of_this_thread();
    std::size_t const refusals = fu::affinity_refusals_count();
    fu::cpu_mask_t mask;
    mask.set(allowed.empty() ? 0 : *allowed.begin());
    EXPECT_EQ(fu::try_pin_current_thread<fu::detail::portable_affinity_t>(mask), fu::status_code_t::unsupported_k);
    fu::cpu_mask_t read;
    read.set(1);
    EXPECT_EQ(fu::try_read_current_affinity<fu::detail::portable_affinity_t>(read), fu::status_code_t::unsupported_k);
    EXPECT_TRUE(read.empty());
    EXPECT_EQ(fu::try_name_current_thread<fu::detail::portable_affinity_t>("portable"),
              fu::status_code_t::unsupported_k);
    char out[fu::thread_name_capacity_k] = {'x'};
    EXPECT_EQ(fu::try_read_current_thread_name<fu::detail::portable_affinity_t>(out), fu::status_code_t::unsupported_k);
    EXPECT_STREQ(out, "");
    fu::basic_saved_affinity_t<fu::detail::portable_affinity_t> saved;
    EXPECT_EQ(saved.try_save(), fu::status_code_t::unsupported_k);
    EXPECT_FALSE(saved.saved());
    EXPECT_EQ(fu::affinity_refusals_count(), refusals + 5);
    EXPECT_EQ(kernel_affinity(), allowed);
    EXPECT_EQ(comm_of_this_thread(), name);
}

} // namespace
