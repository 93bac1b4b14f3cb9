/**
 *  @file   allocators_test.cpp
 *  @brief  Tests of `include/forkunion/memory/allocators.hpp` and its backends (`allocators_linux.hpp`,
 *          `allocators_portable.hpp`).
 *
 *  What the kernel says is the oracle, never the code under test:
 *  - placement: `get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR)` and `move_pages(nodes = NULL)` name the node of each
 *    touched page; `get_mempolicy(MPOL_F_ADDR)` names the policy of the range, so a binding that was skipped is
 *    caught even on a one-node machine, where every page lands on node 0 anyway;
 *  - page sizes: `KernelPageSize` of the mapping in `/proc/self/smaps`;
 *  - leaks: `VmSize` of `/proc/self/status` across many refused allocations;
 *  - refusals on nodes that exist: system calls made to fail in a forked child by a seccomp filter.
 *  Huge pages are reserved through sysfs where the process may (root), under a file lock, and the previous
 *  reservation is restored. Where they cannot be reserved the huge-page check says why and skips; the fallback
 *  to base pages is checked either way.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <list>
#include <numeric>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <forkunion/memory/allocators.hpp>
#include <forkunion/pools/flat.hpp>

#if FORKUNION_OS_LINUX
#include <fcntl.h>           // `open`
#include <linux/filter.h>    // `sock_filter`, `BPF_STMT`
#include <linux/mempolicy.h> // `MPOL_F_NODE`, `MPOL_F_ADDR`, `MPOL_BIND`, `MPOL_DEFAULT`
#include <linux/seccomp.h>   // `SECCOMP_RET_ERRNO`, `seccomp_data`
#include <sys/file.h>        // `flock`
#include <sys/mman.h>        // `MAP_HUGETLB`
#include <sys/prctl.h>       // `PR_SET_NO_NEW_PRIVS`
#include <sys/stat.h>        // `stat`
#include <sys/syscall.h>     // `SYS_get_mempolicy`, `SYS_move_pages`, `SYS_mbind`
#include <sys/wait.h>        // `waitpid`
#include <unistd.h>          // `fork`, `sysconf`

#elif FORKUNION_OS_WINDOWS
#include <forkunion/hardware/detail/system_windows.hpp>
#include <psapi.h> // `QueryWorkingSetEx`
#elif FORKUNION_OS_WASM
#include <emscripten/heap.h> // `emscripten_get_heap_size`
#endif

#include "test_support.hpp"

namespace fu = forkunion;

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FORKUNION_TEST_ASAN 1
#endif
#endif
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FORKUNION_TEST_TSAN 1
#endif
#endif
/*  The sanitizers abort on an impossible `operator new(size, std::nothrow)` unless told to return null, as the
 *  standard says it does; the portable backend's refusal of such a size is what `impossible_requests_fail_cleanly`
 *  checks. The environment's ASAN_OPTIONS / TSAN_OPTIONS still apply on top of this default. */
#if defined(__SANITIZE_ADDRESS__) || defined(FORKUNION_TEST_ASAN)
extern "C" char const *__asan_default_options() {
    return "allocator_may_return_null=1";
}
#endif
#if defined(__SANITIZE_THREAD__) || defined(FORKUNION_TEST_TSAN)
extern "C" char const *__tsan_default_options() {
    return "allocator_may_return_null=1";
}
#endif

namespace {

constexpr std::size_t kib_k = 1024, mib_k = 1024 * kib_k;

#if FORKUNION_OS_LINUX
std::size_t base_page() {
    return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

std::string read_text(std::string const &path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

bool exists(std::string const &path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0;
}

/**  Parses the kernel's node-list format, e.g. "0-2,4\n". */
std::vector<int> parse_node_list(std::string const &text) {
    std::vector<int> nodes;
    std::stringstream stream(text);
    std::string range;
    while (std::getline(stream, range, ',')) {
        if (range.empty() || range == "\n") continue;
        int first = 0, last = 0;
        if (std::sscanf(range.c_str(), "%d-%d", &first, &last) == 2)
            for (int node = first; node <= last; ++node) nodes.push_back(node);
        else if (std::sscanf(range.c_str(), "%d", &first) == 1)
            nodes.push_back(first);
    }
    return nodes;
}

constexpr char const *node_root_k = "/sys/devices/system/node";

/**  Nodes with memory: every one of them is a placement target. A kernel without NUMA has node 0 only. */
std::vector<int> memory_nodes() {
    std::vector<int> nodes = parse_node_list(read_text(std::string(node_root_k) + "/has_memory"));
    if (nodes.empty()) nodes = {0};
    return nodes;
}

/**  The smallest node id with no `nodeN` directory: it does not exist on this machine. */
int absent_node() {
    for (int node = 0; node < fu::numa_node_id_limit_k; ++node)
        if (!exists(std::string(node_root_k) + "/node" + std::to_string(node))) return node;
    return fu::numa_node_id_limit_k - 1;
}

/**  Online nodes without memory (a CPU-only node): `mbind` must refuse them too. Often none. */
std::vector<int> memoryless_nodes() {
    std::vector<int> const with_memory = memory_nodes();
    std::vector<int> nodes;
    for (int node : parse_node_list(read_text(std::string(node_root_k) + "/online")))
        if (std::find(with_memory.begin(), with_memory.end(), node) == with_memory.end()) nodes.push_back(node);
    return nodes;
}

/**  The node of the page holding `address`, by `get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR)`; -errno on failure.
 *  Touch the page first: for a page never written the kernel would report where the shared zero page is. */
int page_node(void const *address) {
    int node = -1;
    if (::syscall(SYS_get_mempolicy, &node, nullptr, 0ul, address, MPOL_F_NODE | MPOL_F_ADDR) != 0) return -errno;
    return node;
}

/**  The node of every page of `[address, address + bytes)` by `move_pages(nodes = NULL)`: -ENOENT for a page
 *  that is not faulted in yet. */
std::vector<int> page_nodes(void const *address, std::size_t bytes, std::size_t page) {
    std::vector<void *> pages;
    for (std::size_t offset = 0; offset < bytes; offset += page)
        pages.push_back(const_cast<char *>(static_cast<char const *>(address)) + offset);
    std::vector<int> status(pages.size(), 1 << 30);
    if (::syscall(SYS_move_pages, 0, pages.size(), pages.data(), nullptr, status.data(), 0) != 0)
        std::fill(status.begin(), status.end(), -errno);
    return status;
}

/**  The memory policy of the mapping holding `address`: its mode and its node set. */
struct range_policy {
    int mode = -1;
    std::vector<int> nodes;
};

range_policy policy_of(void const *address) {
    range_policy policy;
    constexpr std::size_t word_bits = sizeof(unsigned long) * 8;
    unsigned long mask[fu::max_numa_nodes_k / word_bits] = {};
    if (::syscall(SYS_get_mempolicy, &policy.mode, mask, fu::max_numa_nodes_k + 1ul, address, MPOL_F_ADDR) != 0)
        return {-errno, {}};
    for (int node = 0; node < fu::numa_node_id_limit_k; ++node)
        if (mask[node / word_bits] >> (node % word_bits) & 1) policy.nodes.push_back(node);
    return policy;
}

/**
 *  Whether this process can make and read NUMA memory policies at all. qemu-user 7.2, which runs the cross-CPU
 *  suites, implements neither `mbind` nor `get_mempolicy` (both answer ENOSYS), so there the Linux backend's
 *  placement can be neither made nor verified; its tests skip and say so, natively they always run.
 */
bool numa_syscalls_work() {
    static bool const works = [] {
        int mode = 0;
        return ::syscall(SYS_get_mempolicy, &mode, nullptr, 0ul, nullptr, 0ul) == 0 || errno != ENOSYS;
    }();
    return works;
}
#define FORKUNION_SKIP_WITHOUT_NUMA_SYSCALLS()                                                                         \
    if (!numa_syscalls_work()) GTEST_SKIP() << "get_mempolicy answers ENOSYS (qemu-user): placement is unverifiable"

/**  `KernelPageSize` of the mapping holding `address`, from `/proc/self/smaps`; 0 if not found. */
std::size_t kernel_page_bytes(void const *address) {
    std::ifstream smaps("/proc/self/smaps");
    auto const target = reinterpret_cast<std::uintptr_t>(address);
    bool inside = false;
    for (std::string line; std::getline(smaps, line);) {
        unsigned long long first = 0, last = 0;
        char dash = 0;
        std::stringstream header(line);
        if (header >> std::hex >> first >> dash >> last && dash == '-' && line.find(':') > line.find(' ')) {
            inside = first <= target && target < last;
            continue;
        }
        std::size_t kilobytes = 0;
        if (inside && std::sscanf(line.c_str(), "KernelPageSize: %zu kB", &kilobytes) == 1) return kilobytes * kib_k;
    }
    return 0;
}

/**  Virtual memory of this process (`VmSize`), in bytes. */
std::size_t virtual_bytes() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
        std::size_t kilobytes = 0;
        if (std::sscanf(line.c_str(), "VmSize: %zu kB", &kilobytes) == 1) return kilobytes * kib_k;
    }
    return 0;
}

/**  Writes one byte per page, from the threads of a pool: placement must not depend on who touches. */
void touch_pages(void *address, std::size_t bytes, std::size_t page) {
    fu::flat_pool_t pool;
    if (!pool.spawn(2)) {
        for (std::size_t offset = 0; offset < bytes; offset += page) static_cast<char *>(address)[offset] = 1;
        return;
    }
    forkunion::testing::require_ran(
        pool.for_n(bytes / page, [&](std::size_t index) noexcept { static_cast<char *>(address)[index * page] = 1; })
            .join());
}

/**  Expects the range to be bound to `node` (policy `MPOL_BIND {node}`), or unbound for `any_numa_node_k`. */
void expect_bound(void const *address, fu::numa_node_id_t node) {
    range_policy const policy = policy_of(address);
    if (node == fu::any_numa_node_k) {
        EXPECT_EQ(policy.mode, MPOL_DEFAULT);
    } else {
        EXPECT_EQ(policy.mode, MPOL_BIND) << "node " << node;
        EXPECT_EQ(policy.nodes, std::vector<int>({node}));
    }
}

/**  Expects no mapping at `address` any more: `get_mempolicy(MPOL_F_ADDR)` answers `EFAULT` (nothing between the
 *  deallocation and this call maps memory, so the address cannot have been reused). */
void expect_unmapped(void const *address) {
    EXPECT_EQ(policy_of(address).mode, -EFAULT) << "still mapped";
}

/**  Expects every page of a touched range on `node`, by both `move_pages` and `get_mempolicy`. */
void expect_placed(void const *address, std::size_t bytes, std::size_t page, int node) {
    std::vector<int> const nodes = page_nodes(address, bytes, page);
    std::size_t misplaced = 0;
    for (int found : nodes) misplaced += found != node;
    EXPECT_EQ(misplaced, 0u) << "of " << nodes.size() << " pages, first on node " << nodes.front() << ", wanted "
                             << node;
    EXPECT_EQ(page_node(address), node);
    EXPECT_EQ(page_node(static_cast<char const *>(address) + bytes - 1), node);
}

#elif FORKUNION_OS_WINDOWS
// Windows oracles. Committing with a preferred node is observable only as a committed, writable range
// (`VirtualQuery`); the node of a resident page is `QueryWorkingSetEx`'s, where Windows reports one (wine does
// not: there placement itself cannot be observed, and the checks below stop at the commit).

std::size_t base_page() {
    SYSTEM_INFO info{};
    ::GetSystemInfo(&info);
    return info.dwPageSize;
}

/**  Nodes 0 .. `GetNumaHighestNodeNumber()`: each one a placement target. */
std::vector<int> memory_nodes() {
    ULONG highest = 0;
    if (!::GetNumaHighestNodeNumber(&highest)) highest = 0;
    std::vector<int> nodes;
    for (ULONG node = 0; node <= highest; ++node) nodes.push_back(static_cast<int>(node));
    return nodes;
}

/**  The node after the highest one: it does not exist on this machine. */
int absent_node() {
    return memory_nodes().back() + 1;
}

/**  Address space of this process in use (reserved or committed), summed over `VirtualQuery`'s regions. */
std::size_t virtual_bytes() {
    std::size_t total = 0;
    MEMORY_BASIC_INFORMATION region{};
    for (char const *address = nullptr; ::VirtualQuery(address, &region, sizeof(region)) == sizeof(region);
         address = static_cast<char const *>(region.BaseAddress) + region.RegionSize)
        if (region.State != MEM_FREE) total += region.RegionSize;
    return total;
}

/**  Writes one byte per page, from the threads of a pool. */
void touch_pages(void *address, std::size_t bytes, std::size_t page) {
    fu::flat_pool_t pool;
    if (!pool.spawn(2)) {
        for (std::size_t offset = 0; offset < bytes; offset += page) static_cast<char *>(address)[offset] = 1;
        return;
    }
    pool.for_n(bytes / page, [&](std::size_t index) noexcept { static_cast<char *>(address)[index * page] = 1; })
        .join_or_run_on_caller();
}

/**  Expects the page at `address` committed, private and writable: what a commit for any node leaves. */
void expect_bound(void const *address, fu::numa_node_id_t) {
    MEMORY_BASIC_INFORMATION region{};
    ASSERT_EQ(::VirtualQuery(address, &region, sizeof(region)), sizeof(region));
    EXPECT_EQ(region.State, static_cast<DWORD>(MEM_COMMIT));
    EXPECT_EQ(region.Type, static_cast<DWORD>(MEM_PRIVATE));
    EXPECT_EQ(region.Protect, static_cast<DWORD>(PAGE_READWRITE));
}

/**  Expects nothing reserved at `address` any more. */
void expect_unmapped(void const *address) {
    MEMORY_BASIC_INFORMATION region{};
    ASSERT_EQ(::VirtualQuery(address, &region, sizeof(region)), sizeof(region));
    EXPECT_EQ(region.State, static_cast<DWORD>(MEM_FREE)) << "still reserved";
}

/**  Expects every touched page committed and, where Windows names the node of a resident page, on `node`. */
void expect_placed(void const *address, std::size_t bytes, std::size_t page, int node) {
    std::size_t misplaced = 0, observed = 0;
    for (std::size_t offset = 0; offset < bytes; offset += page) {
        void const *const at = static_cast<char const *>(address) + offset;
        expect_bound(at, node);
        PSAPI_WORKING_SET_EX_INFORMATION information{};
        information.VirtualAddress = const_cast<void *>(at);
        if (!::QueryWorkingSetEx(::GetCurrentProcess(), &information, sizeof(information)) ||
            !information.VirtualAttributes.Valid)
            continue;
        ++observed;
        misplaced += static_cast<int>(information.VirtualAttributes.Node) != node;
    }
    EXPECT_EQ(misplaced, 0u) << "of " << observed << " pages whose node Windows reports, wanted " << node;
}

#define FORKUNION_SKIP_WITHOUT_NUMA_SYSCALLS() static_cast<void>(0)

#else
// WebAssembly: only the portable backend exists; a module's memory is one linear space on no node.

std::size_t base_page() {
    return 65536; // a WebAssembly page; the portable backend's granule is 4 KiB whatever the platform
}
std::vector<int> memory_nodes() {
    return {0};
}
int absent_node() {
    return 1;
}
/**  The size of the module's linear memory: what refused allocations must not grow. */
std::size_t virtual_bytes() {
    return ::emscripten_get_heap_size();
}
void touch_pages(void *address, std::size_t bytes, std::size_t page) {
    for (std::size_t offset = 0; offset < bytes; offset += page) static_cast<char *>(address)[offset] = 1;
}
// Referenced only from branches this platform discards: no backend places memory here.
[[maybe_unused]] void expect_bound(void const *, fu::numa_node_id_t) {
    ADD_FAILURE() << "no backend places memory here";
}
[[maybe_unused]] void expect_unmapped(void const *) {
    ADD_FAILURE() << "no backend places memory here";
}
[[maybe_unused]] void expect_placed(void const *, std::size_t, std::size_t, int) {
    ADD_FAILURE() << "no backend places memory here";
}

#define FORKUNION_SKIP_WITHOUT_NUMA_SYSCALLS() static_cast<void>(0)

#endif

/**  A topology as `machine_topology_t` answers it: node ids as `long` (so -1 means any node), and the memory
 *  domain local to each compute domain. */
struct fake_topology {
    std::vector<long> nodes;
    std::vector<std::size_t> local_memory{};
    std::size_t memory_domains_count() const noexcept { return nodes.size(); }
    long memory_node_id(std::size_t domain) const noexcept { return nodes[domain]; }
    std::size_t local_memory_of(std::size_t compute_domain) const noexcept { return local_memory[compute_domain]; }
};

/**  A topology with unsigned node ids, whose second domain answers `SIZE_MAX` ("unknown"). */
struct unknown_node_topology {
    std::size_t memory_domains_count() const noexcept { return 2; }
    std::size_t memory_node_id(std::size_t domain) const noexcept { return domain ? SIZE_MAX : 0; }
};

static_assert(fu::memory_topology<fu::numa_nodes_t>);
static_assert(fu::memory_topology<fake_topology>);
static_assert(fu::memory_topology<unknown_node_topology>);
static_assert(!fu::memory_topology<int>);
// Node lists convert implicitly from contiguous containers and C arrays, never from a bare integer.
static_assert(std::is_convertible_v<std::vector<fu::numa_node_id_t>, fu::numa_nodes_t>);
static_assert(std::is_convertible_v<fu::numa_node_id_t const (&)[3], fu::numa_nodes_t>);
static_assert(!std::is_convertible_v<int, fu::numa_nodes_t>);

#if FORKUNION_OS_LINUX
/**
 *  Runs `body` in a forked child in which the listed system calls fail with the given `errno` (a seccomp filter),
 *  and returns its exit code: 0 when every check passed, else the number of the first one that failed.
 */
struct syscall_fault {
    long number = 0;
    int argument = -1;                 ///< -1: any call; else the argument whose low 32 bits are matched
    std::uint32_t mask = 0, value = 0; ///< match `(argument & mask) == value`
    int error = 0;
};

template <typename body_t>
int run_with_faults(std::vector<syscall_fault> const &faults, body_t &&body) {
    std::vector<sock_filter> program;
    constexpr std::uint32_t low_word = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 0 : 4;
    for (syscall_fault const &fault : faults) {
        bool const by_argument = fault.argument >= 0;
        program.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
        program.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(fault.number), 0,
                                   static_cast<std::uint8_t>(by_argument ? 4 : 1)));
        if (by_argument) {
            std::uint32_t const offset = offsetof(seccomp_data, args) + 8u * fault.argument + low_word;
            program.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset));
            program.push_back(BPF_STMT(BPF_ALU | BPF_AND | BPF_K, fault.mask));
            program.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, fault.value, 0, 1));
        }
        program.push_back(
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (static_cast<std::uint32_t>(fault.error) & 0xFFFF)));
    }
    program.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    sock_fprog const filter{static_cast<unsigned short>(program.size()), program.data()};

    pid_t const child = ::fork();
    if (child == 0) {
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter) != 0)
            ::_exit(250);
        ::_exit(body()); // `_exit`: no leak check, no gtest teardown in the child
    }
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) != child) return 251;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 252;
}

/**
 *  Makes `pages` huge pages of `page_bytes` free on each of `nodes`, through the per-node sysfs counters (root
 *  only), under an exclusive lock on `/tmp/forkunion-huge-pages.lock` that every huge-page test holds; restores
 *  the previous counts on destruction. `ok()` says whether it worked, `reason()` why not.
 */
class huge_page_reservation {
public:
    huge_page_reservation(std::size_t page_bytes, long pages, std::vector<int> const &nodes) {
        lock_ = ::open("/tmp/forkunion-huge-pages.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (lock_ >= 0) (void)::flock(lock_, LOCK_EX);
        reason_ = reserve(page_bytes, pages, nodes);
    }
    ~huge_page_reservation() {
        for (auto const &[path, count] : restore_) std::ofstream(path) << count << std::flush;
        if (lock_ >= 0) ::close(lock_); // releases the lock
    }
    bool ok() const noexcept { return ok_; }
    std::string const &reason() const noexcept { return reason_; }

private:
    static long read_count(std::string const &path) {
        long count = -1;
        std::ifstream(path) >> count;
        return count;
    }

    /**  Returns why the pages could not be made free, or nothing. */
    std::string reserve(std::size_t page_bytes, long pages, std::vector<int> const &nodes) {
        std::string const size = "hugepages-" + std::to_string(page_bytes / kib_k) + "kB";
        for (int node : nodes) {
            std::string directory = std::string(node_root_k) + "/node" + std::to_string(node) + "/hugepages/" + size;
            if (!exists(std::string(node_root_k) + "/node" + std::to_string(node)))
                directory = "/sys/kernel/mm/hugepages/" + size; // a kernel without NUMA: one pool
            if (!exists(directory)) return "the kernel offers no " + size + " (no " + directory + ")";
            long const free = read_count(directory + "/free_hugepages");
            if (free >= pages) continue;
            long const previous = read_count(directory + "/nr_hugepages");
            std::ofstream counter(directory + "/nr_hugepages");
            counter << previous + (pages - free) << std::flush;
            if (!counter) return "cannot write " + directory + "/nr_hugepages (" + std::strerror(errno) + ")";
            restore_.push_back({directory + "/nr_hugepages", previous});
            if (long const now_free = read_count(directory + "/free_hugepages"); now_free < pages)
                return "asked node " + std::to_string(node) + " for " + std::to_string(pages) + " free " + size +
                       ", the kernel found memory for " + std::to_string(now_free);
        }
        ok_ = true;
        return {};
    }

    int lock_ = -1;
    bool ok_ = false;
    std::string reason_;
    std::vector<std::pair<std::string, long>> restore_;
};

/**  Free huge pages of `page_bytes` machine-wide: where none are free, a request must fall back. */
long free_huge_pages(std::size_t page_bytes) {
    long count = -1;
    std::ifstream("/sys/kernel/mm/hugepages/hugepages-" + std::to_string(page_bytes / kib_k) + "kB/free_hugepages") >>
        count;
    return count < 0 ? 0 : count;
}

#endif

/**  The granule each backend must round to, from the platform and the documentation, not from the code. */
template <typename backend_t>
std::size_t expected_granule() {
    return backend_t::binds_nodes_k ? base_page() : std::size_t(4096);
}

/**  Nodes each backend must serve: every memory node (Linux), or node 0 (portable). */
template <typename backend_t>
std::vector<int> served_nodes() {
    return backend_t::binds_nodes_k ? memory_nodes() : std::vector<int>{0};
}

#if FORKUNION_OS_LINUX
/**  The system call glibc's `mmap` makes: `mmap2` where it exists (32-bit ABIs), else `mmap`. */
#if defined(SYS_mmap2)
constexpr long mmap_syscall_k = SYS_mmap2;
#else
constexpr long mmap_syscall_k = SYS_mmap;
#endif
#endif

struct record_24 {
    std::uint64_t words[3];
};

} // namespace

/* ---- The same contract on every backend ---------------------------------------------------------------------- */

template <typename backend_t>
class allocator_contract : public ::testing::Test {
protected:
    void SetUp() override {
        if constexpr (!std::is_same_v<backend_t, fu::detail::portable_memory_backend_t>)
            FORKUNION_SKIP_WITHOUT_NUMA_SYSCALLS();
    }
};
#if FORKUNION_OS_LINUX || FORKUNION_OS_WINDOWS
using backends_t = ::testing::Types<fu::memory_backend_t, fu::detail::portable_memory_backend_t>;
#else
using backends_t = ::testing::Types<fu::detail::portable_memory_backend_t>;
#endif
TYPED_TEST_SUITE(allocator_contract, backends_t);

TYPED_TEST(allocator_contract, works_in_standard_containers) {
    using allocator_t = fu::basic_domain_allocator_t<int, TypeParam>;
    using traits_t = std::allocator_traits<allocator_t>;
    static_assert(std::is_same_v<typename traits_t::template rebind_alloc<double>,
                                 fu::basic_domain_allocator_t<double, TypeParam>>);
    static_assert(traits_t::propagate_on_container_move_assignment::value);
    static_assert(!traits_t::is_always_equal::value);

    for (int node : served_nodes<TypeParam>()) {
        allocator_t const allocator(node);
        std::vector<int, allocator_t> values(allocator);
        for (int i = 0; i != 100000; ++i) values.push_back(i); // many reallocations, each a fresh mapping
        EXPECT_EQ(std::accumulate(values.begin(), values.end(), 0ll), 100000ll * 99999 / 2);
        EXPECT_TRUE(values.get_allocator() == allocator);

        std::vector<int, allocator_t> copy = values; // the allocator propagates
        EXPECT_EQ(copy, values);
        EXPECT_EQ(copy.get_allocator().node(), node);
        std::vector<int, allocator_t> moved = std::move(copy);
        EXPECT_EQ(moved.size(), values.size());

        // Rebinding: a list allocates its nodes through `rebind`; strings are not trivially copyable.
        std::list<std::string, fu::basic_domain_allocator_t<std::string, TypeParam>> strings(allocator);
        for (int i = 0; i != 100; ++i) strings.push_back(std::string(40, char('a' + i % 26)));
        EXPECT_EQ(strings.size(), 100u);
        EXPECT_EQ(strings.back(), std::string(40, char('a' + 99 % 26)));
    }
}

TYPED_TEST(allocator_contract, equality_compares_node_and_page_size) {
    using allocator_t = fu::basic_domain_allocator_t<int, TypeParam>;
    allocator_t const on_zero(0), on_zero_again(0), on_one(1), huge(0, fu::huge_page_2mib_k);
    fu::basic_domain_allocator_t<double, TypeParam> const rebound(on_zero);
    EXPECT_TRUE(on_zero == on_zero_again);
    EXPECT_TRUE(on_zero == rebound);
    EXPECT_EQ(rebound.node(), 0);
    EXPECT_FALSE(on_zero == on_one);
    EXPECT_FALSE(on_zero == huge);
    EXPECT_TRUE(on_zero != huge);
    EXPECT_EQ(allocator_t().node(), fu::any_numa_node_k);
    EXPECT_EQ(allocator_t().huge_page_bytes(), fu::base_pages_k);
}

TYPED_TEST(allocator_contract, allocate_at_least_reports_the_rounded_size_and_page) {
    std::size_t const granule = expected_granule<TypeParam>();
    for (int node : served_nodes<TypeParam>()) {
        fu::basic_domain_allocator_t<record_24, TypeParam> const allocator(node);
        EXPECT_EQ(allocator.granule_bytes(), granule);
        for (std::size_t requested : {std::size_t(1), granule / 24, granule / 24 + 1, 10 * granule / 24 + 7}) {
            auto const result = allocator.try_allocate_at_least(requested);
            ASSERT_TRUE(result.status) << result.status.name();
            std::size_t const pages = (requested * 24 + granule - 1) / granule;
            EXPECT_EQ(result.count, pages * granule / 24) << requested;
            EXPECT_GE(result.count, requested);
            EXPECT_EQ(result.page_bytes, granule);
            EXPECT_EQ(reinterpret_cast<std::uintptr_t>(result.ptr) % granule, 0u);
            // Every granted element is zeroed and writable: the count is real, not the request.
            std::size_t nonzero = 0;
            for (std::size_t i = 0; i != result.count; ++i)
                nonzero += (result.ptr[i].words[0] | result.ptr[i].words[2]) != 0;
            EXPECT_EQ(nonzero, 0u);
            for (std::size_t i = 0; i != result.count; ++i) result.ptr[i].words[2] = i;
            EXPECT_EQ(result.ptr[result.count - 1].words[2], result.count - 1);
            allocator.deallocate(result.ptr, result.count); // the granted count frees it all...
            if constexpr (TypeParam::binds_nodes_k) expect_unmapped(result.ptr + result.count - 1);
        }
        auto const result = allocator.allocate_at_least(3);
        EXPECT_EQ(result.count, granule / 24);
        allocator.deallocate(result.ptr, 3); // ...and so does the requested one
        if constexpr (TypeParam::binds_nodes_k) expect_unmapped(result.ptr);
    }
}

TYPED_TEST(allocator_contract, zero_requests_succeed_with_null) {
    fu::basic_domain_allocator_t<int, TypeParam> const allocator(0);
    auto const result = allocator.try_allocate_at_least(0);
    EXPECT_TRUE(result.status);
    EXPECT_EQ(result.ptr, nullptr);
    EXPECT_EQ(result.count, 0u);
    EXPECT_EQ(allocator.allocate(0), nullptr);
    allocator.deallocate(nullptr, 0);
    fu::basic_symmetric_memory_allocator_t<TypeParam> const symmetric;
    fu::symmetric_region_t const region = symmetric.try_allocate(fu::numa_nodes_t(0), 0);
    EXPECT_TRUE(region.status);
    EXPECT_EQ(region.address, nullptr);
    EXPECT_EQ(region.slices_count, 1u);
    symmetric.deallocate(region);
}

TYPED_TEST(allocator_contract, impossible_requests_fail_cleanly) {
    std::size_t const before = virtual_bytes();
    fu::basic_domain_allocator_t<std::uint64_t, TypeParam> const allocator(0);
    // Past `max_size()`: refused before any system call.
    auto const too_many = allocator.try_allocate_at_least(allocator.max_size() + 1);
    EXPECT_EQ(too_many.status, fu::status_code_t::bad_alloc_k);
    EXPECT_EQ(too_many.ptr, nullptr);
    EXPECT_THROW((void)allocator.allocate(allocator.max_size() + 1), std::bad_array_new_length);
    EXPECT_THROW((void)allocator.allocate(SIZE_MAX), std::bad_array_new_length);
    // Representable, but more than any address space: the OS refuses, and the refusal is reported.
    // (2^60 bytes where `size_t` has 64 bits; a 32-bit address space has only `max_size()` itself to refuse.)
    std::size_t const huge =
        sizeof(std::size_t) == 8 ? (std::size_t(1) << (sizeof(std::size_t) * 8 - 4)) / 8 : allocator.max_size();
    for (std::size_t count : {allocator.max_size(), huge}) {
        auto const result = allocator.try_allocate_at_least(count);
        EXPECT_EQ(result.status, fu::status_code_t::bad_alloc_k) << count;
        EXPECT_EQ(result.ptr, nullptr);
        EXPECT_THROW((void)allocator.allocate(count), std::bad_alloc);
    }
    // A symmetric range whose total overflows.
    std::vector<fu::numa_node_id_t> const many(4, 0);
    fu::symmetric_region_t const region =
        fu::basic_symmetric_memory_allocator_t<TypeParam>().try_allocate(many, SIZE_MAX / 2);
    EXPECT_EQ(region.status, fu::status_code_t::bad_alloc_k);
    EXPECT_EQ(region.address, nullptr);
    EXPECT_LT(virtual_bytes(), before + 64 * mib_k);
}

TYPED_TEST(allocator_contract, malformed_requests_are_invalid_arguments) {
    using allocator_t = fu::basic_domain_allocator_t<int, TypeParam>;
    for (fu::numa_node_id_t node : {-2, -100, fu::numa_node_id_limit_k, 1 << 20}) {
        auto const result = allocator_t(node).try_allocate_at_least(10);
        EXPECT_EQ(result.status, fu::status_code_t::invalid_argument_k) << node;
        EXPECT_EQ(result.ptr, nullptr);
        EXPECT_THROW((void)allocator_t(node).allocate(1), std::bad_alloc);
    }
    // Not a power of two.
    auto const odd_page = allocator_t(0, 3 * mib_k).try_allocate_at_least(10);
    EXPECT_EQ(odd_page.status, fu::status_code_t::invalid_argument_k);
    // A topology: a domain out of range, an unsigned "unknown" node (never taken for "any"), no domains at all.
    fake_topology const topology{{0}};
    auto const outside = allocator_t(topology, 1).try_allocate_at_least(10);
    EXPECT_EQ(outside.status, fu::status_code_t::invalid_argument_k);
    fu::basic_symmetric_memory_allocator_t<TypeParam> const symmetric;
    EXPECT_EQ(symmetric.try_allocate(unknown_node_topology{}, 100).status, fu::status_code_t::invalid_argument_k);
    EXPECT_EQ(symmetric.try_allocate(fake_topology{{}}, 100).status, fu::status_code_t::invalid_argument_k);
    EXPECT_EQ(allocator_t(topology, 0).node(), 0);
}

TYPED_TEST(allocator_contract, foreign_nodes_are_refused_and_nothing_leaks) {
    // Linux: a node the machine lacks. Portable: any node but 0, as it cannot place memory.
    int const foreign = TypeParam::binds_nodes_k ? absent_node() : 1;
    fu::basic_domain_allocator_t<char, TypeParam> const allocator(foreign);
    std::size_t const before = virtual_bytes();
    for (int round = 0; round != 64; ++round) { // 64 GiB of address space if a refusal leaked its mapping
        auto const result = allocator.try_allocate_at_least(std::size_t(1) << 30);
        ASSERT_EQ(result.status, fu::status_code_t::placement_refused_k) << "node " << foreign;
        ASSERT_EQ(result.ptr, nullptr);
        ASSERT_EQ(result.count, 0u);
    }
    EXPECT_THROW((void)allocator.allocate(1), std::bad_alloc);
    std::vector<char, fu::basic_domain_allocator_t<char, TypeParam>> values(allocator);
    EXPECT_THROW(values.resize(10), std::bad_alloc);
    EXPECT_TRUE(values.empty());
    // A symmetric range with one good slice and one refused one is refused whole.
    fake_topology const half{{0, foreign}};
    // 1 GiB per slice, 16 MiB where a 32-bit address space could not hold the good slice and refuse it anyway.
    std::size_t const slice_bytes = sizeof(void *) == 8 ? std::size_t(1) << 30 : std::size_t(1) << 24;
    fu::symmetric_region_t const region =
        fu::basic_symmetric_memory_allocator_t<TypeParam>().try_allocate(half, slice_bytes);
    EXPECT_EQ(region.status, fu::status_code_t::placement_refused_k);
    EXPECT_EQ(region.address, nullptr);
    EXPECT_LT(virtual_bytes(), before + 512 * mib_k) << "refused allocations kept address space";
}

/* ---- Arrays, on every backend -------------------------------------------------------------------------------- */

template <typename backend_t>
fake_topology striped_topology(std::size_t domains) {
    std::vector<int> const nodes = served_nodes<backend_t>();
    fake_topology topology;
    for (std::size_t domain = 0; domain != domains; ++domain) topology.nodes.push_back(nodes[domain % nodes.size()]);
    for (std::size_t compute = 0; compute != 2 * domains; ++compute) topology.local_memory.push_back(compute / 2);
    return topology;
}

TYPED_TEST(allocator_contract, symmetric_ranges_stripe_one_slice_per_domain) {
    // Even on one node there are several slices, one of them unbound, so per-slice binding is observable.
    fake_topology topology = striped_topology<TypeParam>(3);
    topology.nodes[1] = fu::any_numa_node_k;
    std::size_t const granule = expected_granule<TypeParam>();
    fu::basic_symmetric_memory_allocator_t<TypeParam> const allocator;
    fu::symmetric_region_t const region = allocator.try_allocate(topology, 5 * granule + 1);
    ASSERT_TRUE(region.status) << region.status.name();
    EXPECT_EQ(region.slices_count, 3u);
    EXPECT_EQ(region.slice_bytes, 6 * granule);
    EXPECT_EQ(region.page_bytes, granule);
    EXPECT_EQ(region.slice(2), region.address + 12 * granule);
    touch_pages(region.address, region.total_bytes(), granule);
    if constexpr (TypeParam::binds_nodes_k) {
        for (std::size_t slice = 0; slice != 3; ++slice) {
            int const node = static_cast<int>(topology.nodes[slice]);
            expect_bound(region.slice(slice), node);
            expect_bound(region.slice(slice) + region.slice_bytes - 1, node);
            if (node != fu::any_numa_node_k) expect_placed(region.slice(slice), region.slice_bytes, granule, node);
        }
    }
    allocator.deallocate(region);
    if constexpr (TypeParam::binds_nodes_k) expect_unmapped(region.address + region.total_bytes() - 1);
}

TYPED_TEST(allocator_contract, sharded_array_maps_every_index_to_its_shard) {
    for (std::size_t domains : {1u, 2u, 3u, 4u, 7u}) {
        fake_topology const topology = striped_topology<TypeParam>(domains);
        for (std::size_t count : {std::size_t(0), std::size_t(1), domains - 1, domains, domains + 1, std::size_t(1000),
                                  std::size_t(4097)}) {
            fu::sharded_array_t<std::uint32_t, TypeParam> array;
            ASSERT_TRUE(array.try_allocate(topology, count));
            ASSERT_EQ(array.size(), count);
            ASSERT_EQ(array.shards_count(), domains);
            std::size_t next = 0, nonzero = 0;
            for (std::size_t shard = 0; shard != domains; ++shard) {
                // Shard d holds `for_n`'s block d: sizes differ by at most one, the wider ones first.
                std::size_t const size = count / domains + (shard < count % domains);
                fu::array_view_t<std::uint32_t> const elements = array.shard(shard);
                ASSERT_EQ(elements.size(), size) << domains << " domains, " << count << " elements";
                ASSERT_EQ(array.shard_first(shard), next);
                void const *slice = array.region().slice(shard);
                if (size) {
                    EXPECT_EQ(static_cast<void const *>(elements.data()), slice);
                    EXPECT_LE(size * sizeof(std::uint32_t), array.region().slice_bytes);
                }
                for (std::size_t offset = 0; offset != size; ++offset) {
                    fu::shard_location_t const location = array.locate(next + offset);
                    ASSERT_EQ(location, (fu::shard_location_t{shard, offset})) << next + offset;
                    ASSERT_EQ(&array[next + offset], &elements[offset]);
                    nonzero += elements[offset] != 0;
                    array[next + offset] = static_cast<std::uint32_t>(next + offset);
                }
                next += size;
            }
            EXPECT_EQ(next, count);
            EXPECT_EQ(nonzero, 0u);
            for (std::size_t shard = 0; shard != domains; ++shard)
                for (std::size_t offset = 0; offset != array.shard(shard).size(); ++offset)
                    ASSERT_EQ(array.shard(shard)[offset], array.shard_first(shard) + offset);
        }
    }
}

TYPED_TEST(allocator_contract, sharded_array_places_each_shard_on_its_node) {
    fake_topology const topology = striped_topology<TypeParam>(4);
    std::size_t const granule = expected_granule<TypeParam>();
    fu::sharded_array_t<double, TypeParam> array;
    ASSERT_TRUE(array.try_allocate(topology, 4 * 64 * granule / sizeof(double)));
    EXPECT_EQ(array.page_bytes(), granule);
    EXPECT_EQ(array.region().slice_bytes, 64 * granule);
    fu::flat_pool_t pool; // two threads write the shards where threads exist; the caller alone where not
    ASSERT_TRUE(pool.spawn(forkunion::testing::spawnable_up_to(2)));
    forkunion::testing::require_ran(
        pool.for_n(array.size(), [&](std::size_t i) noexcept { array[i] = double(i); }).join());
    double sum = 0;
    for (std::size_t shard = 0; shard != array.shards_count(); ++shard)
        for (double value : array.shard(shard)) sum += value;
    EXPECT_EQ(sum, double(array.size()) * double(array.size() - 1) / 2);
    if constexpr (TypeParam::binds_nodes_k)
        for (std::size_t shard = 0; shard != array.shards_count(); ++shard) {
            expect_bound(array.shard(shard).data(), static_cast<int>(topology.nodes[shard]));
            expect_placed(array.shard(shard).data(), array.shard(shard).size_bytes(), granule,
                          static_cast<int>(topology.nodes[shard]));
        }
}

TYPED_TEST(allocator_contract, one_memory_domain_means_one_shard_and_one_replica) {
    std::vector<fu::numa_node_id_t> const node{served_nodes<TypeParam>().front()};
    fu::sharded_array_t<int, TypeParam> shards;
    ASSERT_TRUE(shards.try_allocate(node, 12345));
    EXPECT_EQ(shards.shards_count(), 1u);
    EXPECT_EQ(shards.shard(0).size(), 12345u);
    EXPECT_EQ(shards.locate(12344), (fu::shard_location_t{0, 12344}));
    fu::replicated_array_t<int, TypeParam> table;
    ASSERT_TRUE(table.try_allocate(node, 777));
    EXPECT_EQ(table.replicas_count(), 1u);
    EXPECT_EQ(table.replica(0).size(), 777u);
    table.replica(0)[776] = 5;
    table.broadcast(); // nothing to copy to: a no-op
    EXPECT_EQ(table.replica(0)[776], 5);
}

TYPED_TEST(allocator_contract, replicated_array_gives_every_domain_a_full_copy) {
    fake_topology const topology = striped_topology<TypeParam>(3);
    fu::replicated_array_t<std::uint64_t, TypeParam> table;
    ASSERT_TRUE(table.try_allocate(topology, 5000));
    ASSERT_EQ(table.replicas_count(), 3u);
    ASSERT_EQ(table.size(), 5000u);
    fu::array_view_t<std::uint64_t> const first = table.replica(0);
    for (std::size_t i = 0; i != first.size(); ++i) first[i] = i * i;
    table.broadcast(0);
    for (std::size_t domain = 0; domain != 3; ++domain) {
        fu::array_view_t<std::uint64_t const> const replica = std::as_const(table).replica(domain);
        EXPECT_EQ(static_cast<void const *>(replica.data()), static_cast<void const *>(table.region().slice(domain)));
        EXPECT_TRUE(std::equal(replica.begin(), replica.end(), first.begin())) << domain;
        if constexpr (TypeParam::binds_nodes_k)
            expect_placed(replica.data(), replica.size_bytes(), expected_granule<TypeParam>(),
                          static_cast<int>(topology.nodes[domain]));
    }
    table.replica(2)[0] = 42; // replicas are copies, not aliases
    EXPECT_EQ(table.replica(0)[0], 0u);
    EXPECT_EQ(table.replica(1)[0], 0u);
    // Compute domains 0..5 read the replicas of memory domains 0, 0, 1, 1, 2, 2.
    for (std::size_t compute = 0; compute != 6; ++compute)
        EXPECT_EQ(table.local_replica(topology, compute).data(), table.replica(compute / 2).data());
}

TYPED_TEST(allocator_contract, arrays_keep_their_contents_when_reallocation_fails_and_move) {
    fake_topology const topology = striped_topology<TypeParam>(2);
    fu::sharded_array_t<int, TypeParam> array;
    ASSERT_TRUE(array.try_allocate(topology, 100));
    for (std::size_t i = 0; i != 100; ++i) array[i] = int(i);
    int const foreign = TypeParam::binds_nodes_k ? absent_node() : 1;
    fake_topology const refused{{0, foreign}};
    EXPECT_EQ(array.try_allocate(refused, 50), fu::status_code_t::placement_refused_k);
    ASSERT_EQ(array.size(), 100u);
    for (std::size_t i = 0; i != 100; ++i) ASSERT_EQ(array[i], int(i));

    fu::sharded_array_t<int, TypeParam> moved = std::move(array);
    EXPECT_EQ(moved.size(), 100u);
    EXPECT_EQ(moved[99], 99);
    EXPECT_TRUE(array.empty()); // NOLINT(bugprone-use-after-move): moved-from is empty by contract
    EXPECT_EQ(array.shards_count(), 0u);
    array = std::move(moved);
    EXPECT_EQ(array[42], 42);
    array.reset();
    EXPECT_TRUE(array.empty());
    EXPECT_EQ(array.region().address, nullptr);

    fu::replicated_array_t<int, TypeParam> table;
    ASSERT_TRUE(table.try_allocate(topology, 10));
    table.replica(1)[3] = 7;
    EXPECT_EQ(table.try_allocate(refused, 10), fu::status_code_t::placement_refused_k);
    EXPECT_EQ(table.replica(1)[3], 7);
}

TYPED_TEST(allocator_contract, reallocating_arrays_release_the_old_storage) {
    // Linux: 64 x 256 MiB of address space would stay mapped if a replaced region leaked. Portable: heap blocks,
    // which LeakSanitizer reports at exit in the asan workflow (their zeroing makes them too slow to make big).
    std::size_t const bytes = TypeParam::binds_nodes_k ? 256 * mib_k : 64 * kib_k;
    fake_topology const topology = striped_topology<TypeParam>(2);
    fu::sharded_array_t<char, TypeParam> shards;
    fu::replicated_array_t<char, TypeParam> replicas;
    std::size_t const before = virtual_bytes();
    for (int round = 0; round != 64; ++round) {
        ASSERT_TRUE(shards.try_allocate(topology, bytes + std::size_t(round)));
        ASSERT_TRUE(replicas.try_allocate(topology, bytes / 2 + std::size_t(round)));
        shards[bytes - 1] = 1;
        replicas.replica(1)[0] = 1;
    }
    EXPECT_LT(virtual_bytes(), before + 4 * bytes + 64 * mib_k) << "replaced regions stayed mapped";
}

#if FORKUNION_OS_LINUX
/* ---- Linux: placement, refusals on nodes that exist, huge pages ---------------------------------------------- */

/**  The Linux backend's own tests: they bind, read policies back and move pages, so they need the NUMA syscalls. */
class linux_numa_allocator : public ::testing::Test {
protected:
    void SetUp() override { FORKUNION_SKIP_WITHOUT_NUMA_SYSCALLS(); }
};

TEST_F(linux_numa_allocator, binds_every_memory_node_and_places_pages_at_first_touch) {
    std::size_t const page = base_page();
    for (int node : memory_nodes()) {
        fu::linux_numa_allocator_t<char> const allocator(node);
        auto const result = allocator.try_allocate_at_least(64 * page);
        ASSERT_TRUE(result.status) << "node " << node << ": " << result.status.name();
        expect_bound(result.ptr, node);
        // Nothing is faulted in yet: the pages are placed when first touched, not at allocation.
        std::vector<int> const untouched = page_nodes(result.ptr, 64 * page, page);
        EXPECT_EQ(std::count(untouched.begin(), untouched.end(), -ENOENT), 64);
        touch_pages(result.ptr, 64 * page, page);
        expect_placed(result.ptr, 64 * page, page, node);
        allocator.deallocate(result.ptr, result.count);
        std::printf("node %d: 64 pages bound (MPOL_BIND) and placed after first touch\n", node);
    }
}

TEST_F(linux_numa_allocator, unbound_memory_follows_the_default_policy) {
    std::size_t const page = base_page();
    fu::linux_numa_allocator_t<char> const allocator; // any node
    auto const result = allocator.try_allocate_at_least(16 * page);
    ASSERT_TRUE(result.status);
    expect_bound(result.ptr, fu::any_numa_node_k);
    touch_pages(result.ptr, 16 * page, page);
    std::vector<int> const nodes = memory_nodes();
    for (int found : page_nodes(result.ptr, 16 * page, page))
        EXPECT_NE(std::find(nodes.begin(), nodes.end(), found), nodes.end()) << found;
    allocator.deallocate(result.ptr, result.count);
}

TEST_F(linux_numa_allocator, refuses_absent_and_memoryless_nodes) {
    std::vector<int> refused = memoryless_nodes();
    refused.push_back(absent_node());
    for (int node : refused) {
        auto const result = fu::linux_numa_allocator_t<char>(node).try_allocate_at_least(1000);
        int const error = errno;
        EXPECT_EQ(result.status, fu::status_code_t::placement_refused_k) << "node " << node;
        EXPECT_EQ(error, EINVAL) << "mbind's errno is kept for the caller";
        std::printf("node %d (%s) refused: %s\n", node, node == refused.back() ? "absent" : "memory-less",
                    result.status.name());
    }
}

TEST_F(linux_numa_allocator, reports_a_refused_bind_on_an_existing_node) {
    // `mbind` fails as it would in a container whose seccomp profile denies it, or with no kernel memory.
    for (int error : {EPERM, ENOMEM, EIO}) {
        int const code = run_with_faults({{SYS_mbind, -1, 0, 0, error}}, [] {
            int const node = memory_nodes().front();
            std::size_t const before = virtual_bytes();
            for (int round = 0; round != 32; ++round) {
                auto const result = fu::linux_numa_allocator_t<char>(node).try_allocate_at_least(std::size_t(1) << 30);
                if (result.status != fu::status_code_t::placement_refused_k || result.ptr) return 1;
            }
            if (virtual_bytes() > before + 256 * mib_k) return 2; // 32 GiB if the mappings leaked
            fu::sharded_array_t<int> array;
            std::vector<fu::numa_node_id_t> const nodes{node};
            if (array.try_allocate(nodes, 1000) != fu::status_code_t::placement_refused_k) return 3;
            // Unbound memory needs no `mbind`, so it is still served.
            auto const unbound = fu::linux_numa_allocator_t<char>().try_allocate_at_least(10);
            return unbound.status && unbound.ptr ? 0 : 4;
        });
        EXPECT_EQ(code, 0) << "with mbind failing with " << std::strerror(error)
                           << ": 1 = served, 2 = leaked, 3 = array served, 4 = unbound refused, 250+ = harness";
    }
}

TEST_F(linux_numa_allocator, kernels_without_numa_serve_node_zero_only) {
    // `ENOSYS` is what a kernel built without CONFIG_NUMA answers: all its memory is node 0.
    int const code = run_with_faults({{SYS_mbind, -1, 0, 0, ENOSYS}}, [] {
        auto const zero = fu::linux_numa_allocator_t<int>(0).try_allocate_at_least(100);
        if (!zero.status || !zero.ptr) return 1;
        zero.ptr[99] = 1;
        auto const one = fu::linux_numa_allocator_t<int>(1).try_allocate_at_least(100);
        return one.status == fu::status_code_t::placement_refused_k && !one.ptr ? 0 : 2;
    });
    EXPECT_EQ(code, 0) << "1 = node 0 refused, 2 = node 1 served";
}

TEST_F(linux_numa_allocator, huge_page_requests_fall_back_to_base_pages) {
    std::size_t const page = base_page();
    int const node = memory_nodes().front();
    // 1. A size no CPU offers (x86: 2M, 1G; Arm: 64K, 2M, 32M, 512M, 1G, 16G; POWER: 16M, 16G; Z: 1M, 2G).
    {
        std::size_t const odd = 256 * mib_k;
        fu::linux_numa_allocator_t<char> const allocator(node, odd);
        auto const result = allocator.try_allocate_at_least(1);
        ASSERT_TRUE(result.status) << result.status.name();
        EXPECT_EQ(result.page_bytes, page) << "served by base pages";
        EXPECT_EQ(result.count, odd) << "still rounded to the requested granule";
        EXPECT_EQ(kernel_page_bytes(result.ptr), page);
        expect_bound(result.ptr, node);
        result.ptr[0] = 1, result.ptr[odd - 1] = 1;
        EXPECT_EQ(page_node(result.ptr), node);
        EXPECT_EQ(page_node(result.ptr + odd - 1), node);
        allocator.deallocate(result.ptr, 1);
        expect_unmapped(result.ptr + odd - 1);
    }
    // 2. The kernel refuses the huge mapping (no pages reserved), or 3. the bound node is short of huge pages
    // (the populate step fails). A reservation makes 3 reachable; without one, 3 is refused at step 2.
    huge_page_reservation const reservation(fu::huge_page_2mib_k, 2, memory_nodes());
    std::vector<syscall_fault> const refusals[] = {
        {{mmap_syscall_k, 3, MAP_HUGETLB, MAP_HUGETLB, ENOMEM}},
        {{SYS_madvise, 2, 0xFFFFFFFFu, static_cast<std::uint32_t>(fu::detail::linux_madv_populate_write_k), EFAULT}},
    };
    for (std::vector<syscall_fault> const &faults : refusals) {
        int const code = run_with_faults(faults, [&] {
            std::size_t const before = virtual_bytes();
            fu::linux_numa_allocator_t<char> const allocator(node, fu::huge_page_2mib_k);
            auto const result = allocator.try_allocate_at_least(3 * mib_k);
            if (!result.status || !result.ptr) return 1;
            if (result.page_bytes != page || kernel_page_bytes(result.ptr) != page) return 2;
            if (result.count != 4 * mib_k) return 3;
            if (policy_of(result.ptr).mode != MPOL_BIND) return 4;
            result.ptr[0] = 1, result.ptr[result.count - 1] = 1;
            if (page_node(result.ptr) != node || page_node(result.ptr + result.count - 1) != node) return 5;
            allocator.deallocate(result.ptr, result.count);
            return virtual_bytes() <= before + mib_k ? 0 : 6;
        });
        EXPECT_EQ(code, 0) << "with "
                           << (faults.front().number == mmap_syscall_k ? "mmap(MAP_HUGETLB)" : "MADV_POPULATE_WRITE")
                           << " failing: 1 = refused, 2 = not base pages, 3 = wrong count, 4 = unbound, 5 = misplaced, "
                              "6 = leaked";
    }
    if (!reservation.ok())
        std::printf("no 2 MiB pages could be reserved (%s): the populate fallback was reached through the mmap one\n",
                    reservation.reason().c_str());
}

namespace {

/**  Allocates and checks huge pages of `page_bytes` on every memory node, single and symmetric; returns false
 *  (after checking the fallback) when they cannot be reserved, with the reason in `why`. */
bool check_huge_pages(std::size_t page_bytes, long pages, std::string &why) {
    std::vector<int> const nodes = memory_nodes();
    huge_page_reservation const reservation(page_bytes, pages, nodes);
    if (!reservation.ok()) {
        why = reservation.reason();
        // What a user without reserved pages gets: base pages, bound, and said so.
        if (free_huge_pages(page_bytes) == 0) {
            fu::linux_numa_allocator_t<char> const allocator(nodes.front(), page_bytes);
            auto const result = allocator.try_allocate_at_least(1);
            EXPECT_TRUE(result.status) << result.status.name();
            EXPECT_EQ(result.page_bytes, base_page());
            EXPECT_EQ(kernel_page_bytes(result.ptr), base_page());
            EXPECT_EQ(result.count, page_bytes);
            expect_bound(result.ptr, nodes.front());
            allocator.deallocate(result.ptr, result.count);
            why += "; checked the fallback to base pages instead";
        }
        return false;
    }
    for (int node : nodes) {
        fu::linux_numa_allocator_t<std::uint64_t> const allocator(node, page_bytes);
        // `pages - 1` pages and a bit: `pages` huge pages, populated (so already placed) at allocation.
        std::size_t const bytes = static_cast<std::size_t>(pages) * page_bytes;
        std::size_t const requested = (bytes - page_bytes + base_page()) / sizeof(std::uint64_t);
        auto const result = allocator.try_allocate_at_least(requested);
        EXPECT_TRUE(result.status) << result.status.name();
        if (!result.ptr) continue;
        EXPECT_EQ(result.page_bytes, page_bytes) << "node " << node;
        EXPECT_EQ(result.count, bytes / sizeof(std::uint64_t));
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(result.ptr) % page_bytes, 0u);
        std::size_t const kernel_page = kernel_page_bytes(result.ptr);
        EXPECT_EQ(kernel_page, page_bytes) << "smaps KernelPageSize of the mapping";
        expect_bound(result.ptr, node);
        EXPECT_EQ(page_nodes(result.ptr, bytes, page_bytes), std::vector<int>(static_cast<std::size_t>(pages), node))
            << "populated on the bound node at allocation";
        result.ptr[0] = 1, result.ptr[result.count - 1] = 2;
        EXPECT_EQ(page_node(result.ptr), node);
        EXPECT_EQ(page_node(result.ptr + result.count - 1), node);
        allocator.deallocate(result.ptr, requested);
        expect_unmapped(result.ptr + result.count - 1);
        std::printf("node %d: %ld x %zu KiB huge pages, KernelPageSize %zu KiB, bound and placed\n", node, pages,
                    page_bytes / kib_k, kernel_page / kib_k);
    }
    // Symmetric: one huge page per node, each slice bound to its node (the reservation holds `pages` per node).
    std::vector<fu::numa_node_id_t> const slices(nodes.begin(), nodes.end());
    fu::symmetric_memory_allocator_t const symmetric(page_bytes);
    fu::symmetric_region_t const region = symmetric.try_allocate(slices, 1);
    EXPECT_TRUE(region.status) << region.status.name();
    if (region.address) {
        EXPECT_EQ(region.slice_bytes, page_bytes);
        EXPECT_EQ(region.page_bytes, page_bytes);
        for (std::size_t slice = 0; slice != slices.size(); ++slice) {
            EXPECT_EQ(kernel_page_bytes(region.slice(slice)), page_bytes);
            expect_bound(region.slice(slice), slices[slice]);
            *region.slice(slice) = std::byte{1};
            EXPECT_EQ(page_node(region.slice(slice)), slices[slice]);
        }
        symmetric.deallocate(region);
        expect_unmapped(region.address + region.total_bytes() - 1);
    }
    return true;
}

} // namespace

TEST_F(linux_numa_allocator, huge_pages_2mib_back_the_range_when_reserved) {
    std::string why;
    if (!check_huge_pages(fu::huge_page_2mib_k, 2, why)) GTEST_SKIP() << "2 MiB pages: " << why;
}

TEST_F(linux_numa_allocator, huge_pages_1gib_back_the_range_when_reserved) {
    std::string why;
    if (!check_huge_pages(fu::huge_page_1gib_k, 1, why)) GTEST_SKIP() << "1 GiB pages: " << why;
}

TEST_F(linux_numa_allocator, threads_allocate_and_free_concurrently) {
    std::vector<int> const nodes = memory_nodes();
    std::size_t const page = base_page();
    fu::flat_pool_t pool;
    ASSERT_TRUE(pool.spawn(4));
    std::atomic<std::size_t> failures{0};
    forkunion::testing::require_ran(pool.for_threads([&](std::size_t thread) noexcept {
                                            int const node = nodes[thread % nodes.size()];
                                            fu::linux_numa_allocator_t<char> const allocator(node);
                                            for (int round = 0; round != 50; ++round) {
                                                auto const result = allocator.try_allocate_at_least(8 * page);
                                                if (!result.status) {
                                                    failures.fetch_add(1, std::memory_order_relaxed);
                                                    continue;
                                                }
                                                for (std::size_t offset = 0; offset < result.count; offset += page)
                                                    result.ptr[offset] = char(round);
                                                if (page_node(result.ptr + 7 * page) != node)
                                                    failures.fetch_add(1, std::memory_order_relaxed);
                                                allocator.deallocate(result.ptr, result.count);
                                            }
                                        })
                                        .join());
    EXPECT_EQ(failures.load(std::memory_order_relaxed), 0u);
}

#endif // FORKUNION_OS_LINUX

#if FORKUNION_OS_WINDOWS
/* ---- Windows: commits on every node, refusals, large pages and the privilege they need ------------------------ */

namespace {

/**  Whether this process's token holds `SeLockMemoryPrivilege` at all (enabled or not), read from the token itself:
 *   large pages are possible exactly then. */
bool token_holds_lock_memory_privilege() {
    HANDLE token = nullptr;
    if (!::OpenProcessToken(::GetCurrentProcess(), TOKEN_QUERY, &token)) return false;
    DWORD bytes = 0;
    ::GetTokenInformation(token, TokenPrivileges, nullptr, 0, &bytes);
    std::vector<unsigned char> buffer(bytes ? bytes : 1);
    bool held = false;
    LUID wanted{};
    if (::GetTokenInformation(token, TokenPrivileges, buffer.data(), bytes, &bytes) &&
        ::LookupPrivilegeValueW(nullptr, L"SeLockMemoryPrivilege", &wanted)) {
        auto const *privileges = reinterpret_cast<TOKEN_PRIVILEGES const *>(buffer.data());
        for (DWORD i = 0; i != privileges->PrivilegeCount; ++i)
            held = held || (privileges->Privileges[i].Luid.LowPart == wanted.LowPart &&
                            privileges->Privileges[i].Luid.HighPart == wanted.HighPart);
    }
    ::CloseHandle(token);
    return held;
}

} // namespace

TEST(windows_numa_allocator, commits_every_node_and_places_pages_at_first_touch) {
    std::size_t const page = base_page();
    for (int node : memory_nodes()) {
        fu::windows_numa_allocator_t<char> const allocator(node);
        auto const result = allocator.try_allocate_at_least(64 * page);
        ASSERT_TRUE(result.status) << "node " << node << ": " << result.status.name();
        EXPECT_EQ(result.page_bytes, page);
        expect_bound(result.ptr, node);
        expect_bound(result.ptr + 64 * page - 1, node);
        touch_pages(result.ptr, 64 * page, page);
        expect_placed(result.ptr, 64 * page, page, node);
        allocator.deallocate(result.ptr, result.count);
        expect_unmapped(result.ptr);
    }
}

TEST(windows_numa_allocator, symmetric_slices_are_committed_whole_and_released_whole) {
    std::size_t const page = base_page();
    std::vector<int> const nodes = memory_nodes();
    fake_topology topology;
    for (std::size_t slice = 0; slice != 3; ++slice) topology.nodes.push_back(nodes[slice % nodes.size()]);
    topology.nodes.push_back(-1); // and one slice for any node
    fu::basic_symmetric_memory_allocator_t<fu::detail::windows_memory_backend_t> const symmetric;
    fu::symmetric_region_t const region = symmetric.try_allocate(topology, 5 * page + 1);
    ASSERT_TRUE(region.status) << region.status.name();
    EXPECT_EQ(region.slice_bytes, 6 * page);
    for (std::size_t slice = 0; slice != region.slices_count; ++slice) {
        expect_bound(region.slice(slice), 0);
        expect_bound(region.slice(slice) + region.slice_bytes - 1, 0);
    }
    symmetric.deallocate(region);
    expect_unmapped(region.address);
}

TEST(windows_numa_allocator, large_pages_follow_the_lock_memory_privilege) {
    std::size_t const page = base_page(), large = ::GetLargePageMinimum();
    bool const held = token_holds_lock_memory_privilege();
    fu::status_t const enabled = fu::detail::windows_memory_backend_t::try_enable_large_pages();
    if (large == 0)
        EXPECT_EQ(enabled, fu::status_code_t::unsupported_k);
    else
        EXPECT_EQ(enabled, held ? fu::status_code_t::success_k : fu::status_code_t::placement_refused_k);
    std::printf("large pages of %zu bytes; SeLockMemoryPrivilege %s: try_enable_large_pages() = %s\n", large,
                held ? "held" : "not held", enabled.name());

    // One node, the large-page size: large pages where the privilege allows, else base pages, rounded the same.
    fu::windows_numa_allocator_t<char> const allocator(0, fu::huge_page_2mib_k);
    auto const result = allocator.try_allocate_at_least(3 * mib_k);
    ASSERT_TRUE(result.status) << result.status.name();
    EXPECT_EQ(result.count, 4 * mib_k) << "rounded to the requested granule either way";
    EXPECT_EQ(result.page_bytes, enabled && large == fu::huge_page_2mib_k ? large : page);
    result.ptr[0] = 1, result.ptr[result.count - 1] = 1;
    expect_bound(result.ptr + result.count - 1, 0);
    allocator.deallocate(result.ptr, result.count);
    expect_unmapped(result.ptr);

    // Two different nodes in one range: Windows commits large pages for one node per call, so base pages.
    fake_topology const two{{0, -1}};
    fu::symmetric_region_t const region =
        fu::basic_symmetric_memory_allocator_t<fu::detail::windows_memory_backend_t>(fu::huge_page_2mib_k)
            .try_allocate(two, 1);
    ASSERT_TRUE(region.status) << region.status.name();
    EXPECT_EQ(region.page_bytes, page);
    EXPECT_EQ(region.slice_bytes, fu::huge_page_2mib_k);
    fu::basic_symmetric_memory_allocator_t<fu::detail::windows_memory_backend_t>(fu::huge_page_2mib_k)
        .deallocate(region);

    // A size Windows has no large page for: base pages, still rounded to it.
    fu::windows_numa_allocator_t<char> const gigantic(0, fu::huge_page_1gib_k);
    auto const odd = gigantic.try_allocate_at_least(1);
    ASSERT_TRUE(odd.status) << odd.status.name();
    EXPECT_EQ(odd.page_bytes, page);
    EXPECT_EQ(odd.count, fu::huge_page_1gib_k);
    gigantic.deallocate(odd.ptr, odd.count);
}

TEST(windows_numa_allocator, threads_allocate_and_free_concurrently) {
    std::vector<int> const nodes = memory_nodes();
    std::size_t const page = base_page();
    fu::flat_pool_t pool;
    ASSERT_TRUE(pool.spawn(4));
    std::atomic<std::size_t> failures{0};
    forkunion::testing::require_ran(pool.for_threads([&](std::size_t thread) noexcept {
                                            fu::windows_numa_allocator_t<char> const allocator(
                                                nodes[thread % nodes.size()]);
                                            for (int round = 0; round != 50; ++round) {
                                                auto const result = allocator.try_allocate_at_least(8 * page);
                                                if (!result.status) {
                                                    failures.fetch_add(1, std::memory_order_relaxed);
                                                    continue;
                                                }
                                                for (std::size_t offset = 0; offset < result.count; offset += page)
                                                    result.ptr[offset] = char(round);
                                                allocator.deallocate(result.ptr, result.count);
                                            }
                                        })
                                        .join());
    EXPECT_EQ(failures.load(std::memory_order_relaxed), 0u);
}
#endif // FORKUNION_OS_WINDOWS

TEST(allocators, node_lists_and_views_are_what_they_say) {
    fu::numa_node_id_t const array[3] = {4, 5, 6};
    std::vector<fu::numa_node_id_t> const vector{7, 8};
    fu::numa_nodes_t const from_array = array, from_vector = vector, from_pointer(array + 1, 2);
    EXPECT_EQ(from_array.memory_domains_count(), 3u);
    EXPECT_EQ(from_array.memory_node_id(2), 6);
    EXPECT_EQ(from_vector.memory_domains_count(), 2u);
    EXPECT_EQ(from_vector.memory_node_id(1), 8);
    EXPECT_EQ(from_pointer.memory_node_id(0), 5);
    EXPECT_EQ(fu::numa_nodes_t(array[0]).memory_domains_count(), 1u);

    double values[4] = {1, 2, 3, 4};
    fu::array_view_t<double> const view(values + 1, 3);
    EXPECT_EQ(view.size_bytes(), 3 * sizeof(double));
    EXPECT_EQ(std::accumulate(view.begin(), view.end(), 0.0), 9.0);
    view[2] = 10;
    EXPECT_EQ(values[3], 10);
    EXPECT_TRUE(fu::array_view_t<int>().empty());
}

TEST(allocators, node_ids_convert_without_aliasing_any_node) {
    EXPECT_EQ(fu::to_numa_node_id(std::uint8_t(200)), 200);
    EXPECT_EQ(fu::to_numa_node_id(std::size_t(1023)), 1023);
    EXPECT_EQ(fu::to_numa_node_id(std::size_t(1024)), fu::invalid_numa_node_k);
    EXPECT_EQ(fu::to_numa_node_id(SIZE_MAX), fu::invalid_numa_node_k);
    EXPECT_EQ(fu::to_numa_node_id(std::uint32_t(0xFFFFFFFFu)), fu::invalid_numa_node_k);
    EXPECT_EQ(fu::to_numa_node_id(-1l), fu::any_numa_node_k);
    EXPECT_EQ(fu::to_numa_node_id(-5), fu::invalid_numa_node_k);
    EXPECT_FALSE(fu::is_valid_numa_node(fu::invalid_numa_node_k));
    EXPECT_TRUE(fu::is_valid_huge_page_request(0));
    EXPECT_TRUE(fu::is_valid_huge_page_request(fu::huge_page_1gib_k));
    EXPECT_FALSE(fu::is_valid_huge_page_request(3 * mib_k));
}
