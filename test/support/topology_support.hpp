/**
 *  @file   topology_support.hpp
 *  @brief  Helpers for the topology, parser and affinity tests: a list-syntax reader independent of the library,
 *          the kernel's view of this thread's mask, mask-to-set conversion, and synthetic sysfs trees.
 *
 *  `cpus_of("0-3,8")` is deliberately not `forkunion::parse_cpulist`: expected facts must not come from the code
 *  under test. `synthetic_tree_t` writes a small machine into a fresh temporary folder (removed on destruction)
 *  that a harvest reads like a recorded one.
 */
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <forkunion/base/cpu_mask.hpp>
#include <forkunion/base/types.hpp>

#if FORKUNION_OS_LINUX
#include <sched.h> // `sched_getaffinity`
#elif FORKUNION_OS_WINDOWS
#include <forkunion/hardware/detail/system_windows.hpp> // `GetThreadGroupAffinity`
#include <tlhelp32.h>                                   // `CreateToolhelp32Snapshot`
#endif

namespace forkunion::testing {

/**  Runs `body` on a thread of its own and joins it: pins and names then change that thread only. */
template <typename body_t>
void on_own_thread(body_t &&body) {
    std::thread(std::forward<body_t>(body)).join();
}

/**  The ids of a kernel list such as `"0-3,8,10-11"`; `""` is empty. Throws on anything else. */
inline std::set<std::size_t> cpus_of(std::string const &list) {
    std::set<std::size_t> ids;
    std::stringstream items(list);
    std::string item;
    while (std::getline(items, item, ',')) {
        if (item.empty()) throw std::runtime_error("empty item in list " + list);
        std::size_t const dash = item.find('-');
        std::size_t const first = std::stoul(item.substr(0, dash));
        std::size_t const last = dash == std::string::npos ? first : std::stoul(item.substr(dash + 1));
        for (std::size_t id = first; id <= last; ++id) ids.insert(id);
    }
    return ids;
}

/**  The ids of a mask, as a set. */
inline std::set<std::size_t> ids_of(cpu_mask_t const &mask) {
    std::set<std::size_t> ids;
    for (std::size_t id = mask.first(); id != cpu_mask_t::npos_k; id = mask.next_from(id + 1)) ids.insert(id);
    return ids;
}

#if FORKUNION_OS_LINUX
inline constexpr bool kernel_affinity_observable_k = true;
inline constexpr bool thread_names_observable_k = true; ///< `comms_of_this_process` reads the OS's names
/**  The calling thread's mask, straight from the kernel (not through the code under test); empty on failure. */
inline std::set<std::size_t> kernel_affinity() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::set<std::size_t> ids;
    if (::sched_getaffinity(0, sizeof(set), &set) != 0) return ids;
    for (std::size_t id = 0; id != CPU_SETSIZE; ++id)
        if (CPU_ISSET(id, &set)) ids.insert(id);
    return ids;
}

/**  Every thread name of this process, from `/proc/self/task/<tid>/comm` (not through the code under test). */
inline std::multiset<std::string> comms_of_this_process() {
    std::multiset<std::string> names;
    for (auto const &task : std::filesystem::directory_iterator("/proc/self/task")) {
        std::ifstream file(task.path() / "comm");
        std::string name;
        if (std::getline(file, name)) names.insert(name);
    }
    return names;
}
#elif FORKUNION_OS_WINDOWS
inline constexpr bool kernel_affinity_observable_k = true;
inline constexpr bool thread_names_observable_k = true; ///< `comms_of_this_process` reads the OS's names
/**  The calling thread's group affinity straight from Windows, as dense ids (the processor index: the maximum
 *   processor counts of the groups before, plus the bit); empty on failure. */
inline std::set<std::size_t> kernel_affinity() {
    std::set<std::size_t> ids;
    GROUP_AFFINITY affinity{};
    if (!::GetThreadGroupAffinity(::GetCurrentThread(), &affinity)) return ids;
    std::size_t first = 0;
    for (WORD group = 0; group != affinity.Group; ++group) first += ::GetMaximumProcessorCount(group);
    for (std::size_t bit = 0; bit != 64; ++bit)
        if ((static_cast<std::uint64_t>(affinity.Mask) >> bit) & 1u) ids.insert(first + bit);
    return ids;
}

/**  Every thread description of this process, straight from Windows (a Toolhelp snapshot, then
 *   `GetThreadDescription` on each thread), as UTF-8; unnamed threads are left out. */
inline std::multiset<std::string> comms_of_this_process() {
    std::multiset<std::string> names;
    using get_t = HRESULT(WINAPI *)(HANDLE, PWSTR *);
    auto const get = reinterpret_cast<get_t>(
        reinterpret_cast<void (*)()>(::GetProcAddress(::GetModuleHandleW(L"kernel32.dll"), "GetThreadDescription")));
    HANDLE const snapshot = ::CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
    if (!get || snapshot == INVALID_HANDLE_VALUE) return names;
    THREADENTRY32 entry{};
    entry.dwSize = sizeof(entry);
    for (BOOL more = ::Thread32First(snapshot, &entry); more; more = ::Thread32Next(snapshot, &entry)) {
        if (entry.th32OwnerProcessID != ::GetCurrentProcessId()) continue;
        HANDLE const thread = ::OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, entry.th32ThreadID);
        if (!thread) continue;
        PWSTR wide = nullptr;
        if (SUCCEEDED(get(thread, &wide)) && wide) {
            char name[256] = {};
            if (wide[0] && ::WideCharToMultiByte(CP_UTF8, 0, wide, -1, name, sizeof(name), nullptr, nullptr) > 0)
                names.insert(name);
            ::LocalFree(wide);
        }
        ::CloseHandle(thread);
    }
    ::CloseHandle(snapshot);
    return names;
}
#else
inline constexpr bool kernel_affinity_observable_k = false;
/**  No affinity exists here (WebAssembly): every thread may run anywhere, and no id can be observed. */
inline std::set<std::size_t> kernel_affinity() {
    return {};
}
/**  Nor can thread names be read back: none, and the tests that read them skip (`thread_names_observable_k`). */
inline constexpr bool thread_names_observable_k = false;
inline std::multiset<std::string> comms_of_this_process() {
    return {};
}
#endif

/**  Skips a test that reads threads' affinity back from the kernel where none exists (GoogleTest tests only). */
#define FORKUNION_SKIP_WITHOUT_KERNEL_AFFINITY()                                                                       \
    if (!::forkunion::testing::kernel_affinity_observable_k) GTEST_SKIP() << "no thread affinity exists here"

/**  Skips a test that reads thread names back where nothing can (GoogleTest tests only). */
#define FORKUNION_SKIP_WITHOUT_THREAD_NAMES()                                                                          \
    if (!::forkunion::testing::thread_names_observable_k) GTEST_SKIP() << "thread names cannot be read back here"

/**  Skips a test of recorded or synthetic sysfs trees where their reader, the Linux back end, is absent (GoogleTest
 *   tests only). */
#define FORKUNION_SKIP_WITHOUT_SYSFS()                                                                                 \
    if (!::forkunion::os_linux_k) GTEST_SKIP() << "recorded sysfs trees are read by the Linux back end only"

/**  A temporary folder standing for `/`, with files written under it. */
class synthetic_tree_t {
    std::filesystem::path root_;

public:
    synthetic_tree_t() {
        // `create_directory` is false for a name that exists: a fresh name per try, as `mkdtemp` does.
        static std::atomic<unsigned> serial{0};
        std::random_device entropy;
        for (int attempt = 0; attempt != 100 && root_.empty(); ++attempt) {
            std::filesystem::path const candidate =
                std::filesystem::temp_directory_path() /
                ("forkunion-sysfs-" + std::to_string(entropy()) + "-" + std::to_string(serial.fetch_add(1)));
            if (std::filesystem::create_directory(candidate)) root_ = candidate;
        }
        if (root_.empty()) throw std::runtime_error("cannot create a temporary folder");
    }
    ~synthetic_tree_t() {
        std::error_code ignored;
        std::filesystem::remove_all(root_, ignored);
    }
    synthetic_tree_t(synthetic_tree_t const &) = delete;
    synthetic_tree_t &operator=(synthetic_tree_t const &) = delete;

    std::string root() const { return root_.string(); }
    std::filesystem::path path(std::string const &relative) const { return root_ / relative; }

    /**  Writes `content` (bytes, NULs included) to `relative`, creating folders and replacing what was there. */
    void write(std::string const &relative, std::string const &content) const {
        std::filesystem::path const file = path(relative);
        std::filesystem::create_directories(file.parent_path());
        std::error_code ignored;
        std::filesystem::remove_all(file, ignored);
        std::ofstream out(file, std::ios::binary);
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
        if (!out) throw std::runtime_error("cannot write " + file.string());
    }
    void remove(std::string const &relative) const { std::filesystem::remove_all(path(relative)); }

    /**  Every regular file under the root, as paths relative to it, sorted. */
    std::vector<std::string> files() const {
        std::vector<std::string> found;
        for (auto const &entry : std::filesystem::recursive_directory_iterator(root_))
            if (entry.is_regular_file()) found.push_back(std::filesystem::relative(entry.path(), root_).string());
        std::sort(found.begin(), found.end());
        return found;
    }
};

/**
 *  Shape of a synthetic machine: `nodes` NUMA nodes of `cpus_per_node` CPUs each (node k holds CPUs
 *  k*cpus_per_node ...), per-CPU caches (32K L1d, 64K L1i, 1M L2 private; a 16M L3 per node), 1 GiB per node,
 *  free huge pages (2 MiB: 5 per node, 1 GiB: 1 per node), distances 10 local / 20 remote.
 */
struct synthetic_machine_t {
    std::size_t nodes = 2;
    std::size_t cpus_per_node = 4;
    std::vector<std::size_t> node_ids;   ///< Defaults to 0 .. nodes-1.
    std::vector<std::size_t> capacities; ///< Per CPU; empty = no `cpu_capacity` files.
    bool legacy = false;                 ///< No `cpu/online`, no `cpulist` (only hex `cpumap`).
    std::string l3_shared;               ///< Overrides every L3's `shared_cpu_list` when not empty.

    std::size_t cpus() const { return nodes * cpus_per_node; }
    std::size_t node_id(std::size_t index) const { return node_ids.empty() ? index : node_ids[index]; }

    static std::string range(std::size_t first, std::size_t count) {
        return count == 1 ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(first + count - 1);
    }
    /**  A kernel bitmap (32-bit hex words, most significant first) of `[first, first + count)`. */
    static std::string mask(std::size_t first, std::size_t count, std::size_t total) {
        std::size_t const words = (total + 31) / 32;
        std::string result;
        for (std::size_t word = words; word-- > 0;) {
            std::uint32_t bits = 0;
            for (std::size_t bit = 0; bit != 32; ++bit) {
                std::size_t const id = word * 32 + bit;
                if (id >= first && id < first + count) bits |= std::uint32_t(1) << bit;
            }
            char text[16];
            std::snprintf(text, sizeof text, "%08x", bits);
            result += text;
            if (word) result += ",";
        }
        return result;
    }

    void write_to(synthetic_tree_t const &tree) const {
        std::string const cpu = "sys/devices/system/cpu/", node = "sys/devices/system/node/";
        if (!legacy) tree.write(cpu + "online", range(0, cpus()) + "\n");
        tree.write(cpu + "possible", range(0, cpus()) + "\n");
        tree.write(cpu + "cpufreq/boost", "1\n"); // a sibling of the cpuN folders that is not a CPU
        for (std::size_t id = 0; id != cpus(); ++id) {
            std::string const here = cpu + "cpu" + std::to_string(id) + "/";
            std::size_t const first = id / cpus_per_node * cpus_per_node;
            if (id) tree.write(here + "online", "1\n");
            if (!capacities.empty()) tree.write(here + "cpu_capacity", std::to_string(capacities[id]) + "\n");
            struct cache_t {
                char const *level, *type, *size;
                std::string shared;
            };
            cache_t const caches[] = {
                {"1", "Data", "32K", std::to_string(id)},
                {"1", "Instruction", "64K", std::to_string(id)},
                {"2", "Unified", "1024K", std::to_string(id)},
                {"3", "Unified", "16384K", l3_shared.empty() ? range(first, cpus_per_node) : l3_shared},
            };
            for (std::size_t index = 0; index != 4; ++index) {
                std::string const dir = here + "cache/index" + std::to_string(index) + "/";
                tree.write(dir + "level", std::string(caches[index].level) + "\n");
                tree.write(dir + "type", std::string(caches[index].type) + "\n");
                tree.write(dir + "size", std::string(caches[index].size) + "\n");
                if (legacy)
                    tree.write(dir + "shared_cpu_map", mask(id, 1, cpus()) + "\n");
                else
                    tree.write(dir + "shared_cpu_list", caches[index].shared + "\n");
            }
            if (legacy) tree.remove(here + "cache/index3"); // legacy dumps often lack the shared L3
        }
        std::string ids;
        for (std::size_t index = 0; index != nodes; ++index) {
            if (index) ids += ',';
            ids += std::to_string(node_id(index));
        }
        tree.write(node + "online", ids + "\n");
        tree.write(node + "has_cpu", "\n"); // empty, as on several real machines: must not be relied on
        for (std::size_t index = 0; index != nodes; ++index) {
            std::string const here = node + "node" + std::to_string(node_id(index)) + "/";
            if (!legacy) tree.write(here + "cpulist", range(index * cpus_per_node, cpus_per_node) + "\n");
            tree.write(here + "cpumap", mask(index * cpus_per_node, cpus_per_node, cpus()) + "\n");
            tree.write(here + "meminfo", "Node " + std::to_string(node_id(index)) + " MemTotal:       1048576 kB\n" +
                                             "Node " + std::to_string(node_id(index)) +
                                             " MemFree:         524288 kB\n");
            std::string row;
            for (std::size_t other = 0; other != nodes; ++other) {
                if (other) row += ' ';
                row += other == index ? "10" : "20";
            }
            tree.write(here + "distance", row + "\n");
            tree.write(here + "hugepages/hugepages-2048kB/free_hugepages", "5\n");
            tree.write(here + "hugepages/hugepages-2048kB/nr_hugepages", "8\n");
            tree.write(here + "hugepages/hugepages-1048576kB/free_hugepages", "1\n");
        }
        std::string const global = "sys/kernel/mm/hugepages/";
        tree.write(global + "hugepages-2048kB/free_hugepages", std::to_string(5 * nodes) + "\n");
        tree.write(global + "hugepages-1048576kB/free_hugepages", std::to_string(nodes) + "\n");
    }
};

} // namespace forkunion::testing
