/**
 *  @file   guest_test.cpp
 *  @brief  The suite that runs inside a NUMA guest (`run.sh` boots it): the live topology, memory placement, the
 *          distributed pool, pinning, the fabric and the C API, each checked against the shape the emulator was
 *          given, with the kernel as the witness.
 *
 *  Statically linked, so the guest's initramfs needs nothing but this binary, busybox and the shape file.
 *  Expected facts come from the shape (what qemu built) and the kernel (`move_pages`, `get_mempolicy`,
 *  `sched_getcpu`, `sched_getaffinity`, sysfs huge-page counters), never from the code under test.
 *
 *      forkunion_numa_vm_guest --shape=FILE [--setup] [gtest flags]
 *
 *  `--setup` first takes the shape's offline CPUs offline and reserves its huge pages: it refuses to run unless
 *  the machine has exactly the shape's CPUs and nodes, so it cannot reconfigure a host by mistake.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <linux/mempolicy.h> // `MPOL_BIND`, `MPOL_F_NODE`, `MPOL_F_ADDR`
#include <sched.h>           // `sched_getcpu`, `sched_setaffinity`
#include <signal.h>          // `SIGKILL`
#include <sys/syscall.h>     // `SYS_move_pages`, `SYS_get_mempolicy`
#include <sys/wait.h>        // `waitpid`
#include <unistd.h>          // `fork`, `sysconf`

#include <forkunion.h>
#include <forkunion/memory/allocators.hpp>
#include <forkunion/pools/distributed.hpp>
#include <forkunion/fabric/fabric.hpp>
#include <forkunion/pools/flat.hpp>
#include <forkunion/topology/topology.hpp>

#include "shape.hpp"

namespace fu = forkunion;
namespace nv = forkunion::numa_vm;

namespace {

nv::shape_t the_shape;
std::string shape_path;

nv::shape_t const &shape() {
    return the_shape;
}

std::size_t base_page() {
    return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

std::string read_text(std::string const &path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

bool write_text(std::string const &path, std::string const &text) {
    std::ofstream file(path);
    file << text;
    file.flush();
    return static_cast<bool>(file);
}

std::string node_path(std::size_t node) {
    return "/sys/devices/system/node/node" + std::to_string(node);
}

/**  Free 2 MiB pages of `node`, from the kernel's per-node counter. */
std::size_t free_huge_pages(std::size_t node) {
    std::string const text = read_text(node_path(node) + "/hugepages/hugepages-2048kB/free_hugepages");
    return text.empty() ? 0 : std::stoul(text);
}

std::vector<std::size_t> free_huge_pages_everywhere() {
    std::vector<std::size_t> pages;
    for (std::size_t node = 0; node != shape().nodes.size(); ++node) pages.push_back(free_huge_pages(node));
    return pages;
}

/**  The node of every `stride`-th byte of `[address, address + bytes)` by `move_pages(nodes = NULL)`: a node id, or
 *   -errno for a page that is not there. */
std::vector<int> nodes_of(void const *address, std::size_t bytes, std::size_t stride) {
    std::vector<void *> pages;
    for (std::size_t offset = 0; offset < bytes; offset += stride)
        pages.push_back(const_cast<char *>(static_cast<char const *>(address)) + offset);
    std::vector<int> status(pages.size(), -1);
    if (::syscall(SYS_move_pages, 0, pages.size(), pages.data(), nullptr, status.data(), 0) != 0)
        status.assign(pages.size(), -errno);
    return status;
}

/**  The node of the page holding `address` by `get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR)`; -errno on failure. */
int node_of(void const *address) {
    int node = -1;
    if (::syscall(SYS_get_mempolicy, &node, nullptr, 0ul, address, MPOL_F_NODE | MPOL_F_ADDR) != 0) return -errno;
    return node;
}

/**  The policy of the range holding `address`: its mode and its node set. */
struct policy_t {
    int mode = -1;
    std::set<std::size_t> nodes;
};
policy_t policy_of(void const *address) {
    policy_t policy;
    unsigned long mask[fu::max_numa_nodes_k / (8 * sizeof(unsigned long))] = {};
    if (::syscall(SYS_get_mempolicy, &policy.mode, mask, fu::max_numa_nodes_k + 1ul, address, MPOL_F_ADDR) != 0)
        return {};
    for (std::size_t node = 0; node != fu::max_numa_nodes_k; ++node)
        if (mask[node / (8 * sizeof(unsigned long))] >> (node % (8 * sizeof(unsigned long))) & 1ul)
            policy.nodes.insert(node);
    return policy;
}

/**  Writes one byte per page, so every page is faulted in by the calling thread. */
void touch(void *address, std::size_t bytes) {
    for (std::size_t offset = 0; offset < bytes; offset += base_page())
        static_cast<volatile char *>(address)[offset] = 1;
}

/**  The calling thread's mask, from the kernel. */
std::set<std::size_t> kernel_affinity() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::set<std::size_t> cpus;
    if (::sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
    for (std::size_t cpu = 0; cpu != CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set)) cpus.insert(cpu);
    return cpus;
}

/**  Pins the calling thread with the kernel's own call (not the code under test). */
bool pin_to(std::vector<std::size_t> const &cpus) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (std::size_t cpu : cpus) CPU_SET(cpu, &set);
    return ::sched_setaffinity(0, sizeof(set), &set) == 0;
}

template <typename body_t>
void on_own_thread(body_t &&body) {
    std::thread(std::forward<body_t>(body)).join();
}

/**  Runs `body` on a thread pinned to `cpus` (by the kernel's call), and joins it. */
template <typename body_t>
void on_cpus(std::vector<std::size_t> const &cpus, body_t &&body) {
    on_own_thread([&] {
        ASSERT_TRUE(pin_to(cpus));
        body();
    });
}

/**  Joins a dispatch and says whether it ran, whether `join()` returns nothing or a status. */
template <typename guard_t>
bool dispatched(guard_t &&guard) {
    if constexpr (std::is_void_v<decltype(guard.join())>) {
        guard.join();
        return static_cast<bool>(guard.status());
    } else {
        return static_cast<bool>(guard.join());
    }
}

/**  Nodes that keep an online CPU, ascending: the compute domains a harvest must find, in order. */
std::vector<std::size_t> compute_nodes() {
    std::vector<std::size_t> nodes;
    for (std::size_t node = 0; node != shape().nodes.size(); ++node)
        if (!shape().online_cpus_of(node).empty()) nodes.push_back(node);
    return nodes;
}

/**  Some node other than `node` that has online CPUs, or `node` itself when there is none. */
std::size_t other_compute_node(std::size_t node) {
    for (std::size_t other : compute_nodes())
        if (other != node) return other;
    return node;
}

fu::machine_topology_t const &topology() {
    static fu::machine_topology_t const harvested = [] {
        fu::machine_topology_t live;
        EXPECT_TRUE(live.try_harvest());
        return live;
    }();
    return harvested;
}

/**  Bytes of the kernel's own image (code, read-only data, data, bss), from `/proc/iomem`, and the node it lies on:
 *   memory the firmware gave that node but the kernel keeps out of its `MemTotal`. */
struct kernel_image_t {
    std::uint64_t bytes = 0;
    std::size_t node = 0;
};
kernel_image_t kernel_image() {
    kernel_image_t image;
    std::istringstream lines(read_text("/proc/iomem"));
    std::uint64_t first_address = ~std::uint64_t(0);
    for (std::string line; std::getline(lines, line);) {
        if (line.find(": Kernel ") == std::string::npos) continue;
        unsigned long long first = 0, last = 0;
        if (std::sscanf(line.c_str(), " %llx-%llx", &first, &last) != 2 || last < first) continue;
        image.bytes += last - first + 1;
        first_address = std::min<std::uint64_t>(first_address, first);
    }
    // A memory block's node: `/sys/devices/system/node/nodeN/memoryB` exists for block B = address / block size.
    std::uint64_t const block_bytes =
        std::stoull("0x0" + read_text("/sys/devices/system/memory/block_size_bytes"), nullptr, 16);
    if (block_bytes && first_address != ~std::uint64_t(0))
        for (std::size_t node = 0; node != shape().nodes.size(); ++node)
            if (std::ifstream(node_path(node) + "/memory" + std::to_string(first_address / block_bytes) + "/online"))
                image.node = node;
    return image;
}

// ---- Topology ----

TEST(topology, harvest_equals_the_shape) {
    fu::machine_topology_t const &live = topology();
    ASSERT_TRUE(live.harvested());
    std::size_t const nodes = shape().nodes.size();
    std::vector<std::size_t> const compute = compute_nodes();

    ASSERT_EQ(live.memory_domains_count(), nodes);
    EXPECT_EQ(live.compute_domains_count(), compute.size()) << "one compute domain per node with an online CPU";
    EXPECT_EQ(live.compute_levels_count(), 1u) << "every emulated CPU has the same capacity";
    EXPECT_EQ(live.online_cores_count(), shape().online_cpus_count());
    EXPECT_EQ(live.logical_cores_count(), shape().online_cpus_count());
    for (std::size_t d = 0; d != compute.size() && d != live.compute_domains_count(); ++d) {
        std::vector<std::size_t> const cores(live.cores_in(d).begin(), live.cores_in(d).end());
        EXPECT_EQ(cores, shape().online_cpus_of(compute[d])) << "compute domain " << d;
        EXPECT_EQ(live.local_memory_of(d), compute[d]) << "compute domain " << d;
        EXPECT_EQ(live.logical_cores_count_in(d), cores.size());
    }

    kernel_image_t const image = kernel_image();
    for (std::size_t m = 0; m != nodes; ++m) {
        EXPECT_EQ(live.memory_node_id(m), m);
        for (std::size_t other = 0; other != nodes; ++other) {
            EXPECT_EQ(live.declared_distance(m, other), shape().distance(m, other)) << "from " << m << " to " << other;
        }
        // MemTotal never exceeds what the firmware gave the node, and misses it by at most 5% (page tables, per-node
        // structures), plus the kernel's image on the node that holds it.
        double const given = static_cast<double>(shape().nodes[m].memory_bytes);
        double const allowance = m == image.node ? static_cast<double>(image.bytes) : 0.0;
        double const total = static_cast<double>(live.volume_ram_in(m));
        EXPECT_LE(total, given) << "node " << m;
        EXPECT_GE(total, 0.95 * given - allowance)
            << "node " << m << ": " << total / nv::mib_k << " MiB of " << given / nv::mib_k << " MiB (kernel image "
            << allowance / nv::mib_k << " MiB)";
        EXPECT_EQ(live.huge_pages_count_in(m, nv::huge_page_2mib_bytes_k), shape().huge_pages_on(m)) << "node " << m;
        std::printf(
            "[ shape    ] node %zu: %zu CPUs online, %.1f of %.0f MiB (%.1f MiB kernel image), %zu huge pages of "
            "2 MiB\n",
            m, shape().online_cpus_of(m).size(), total / nv::mib_k, given / nv::mib_k, allowance / nv::mib_k,
            live.huge_pages_count_in(m, nv::huge_page_2mib_bytes_k));
    }
}

TEST(topology, offline_cpus_are_neither_harvested_nor_pinnable) {
    if (shape().offline.empty()) GTEST_SKIP() << "the shape takes no CPU offline";
    fu::machine_topology_t const &live = topology();
    for (std::size_t cpu : shape().offline) {
        EXPECT_EQ(read_text("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/online"), "0\n");
        for (std::size_t d = 0; d != live.compute_domains_count(); ++d) {
            for (std::uint32_t core : live.cores_in(d)) EXPECT_NE(core, cpu) << "domain " << d;
        }
        on_own_thread([&] {
            std::set<std::size_t> const before = kernel_affinity();
            std::size_t const refusals = fu::affinity_refusals_count();
            fu::cpu_mask_t mask;
            ASSERT_TRUE(mask.set(cpu));
            EXPECT_EQ(fu::try_pin_current_thread(mask).code(), fu::status_code_t::placement_refused_k);
            EXPECT_EQ(fu::affinity_refusals_count(), refusals + 1) << "a refused pin is counted";
            EXPECT_EQ(kernel_affinity(), before) << "a refused pin leaves the mask as it was";
        });
    }
    // A node whose every CPU went offline is a memory domain without a compute domain.
    for (std::size_t node = 0; node != shape().nodes.size(); ++node)
        if (shape().nodes[node].cpus && shape().online_cpus_of(node).empty()) {
            for (std::size_t d = 0; d != live.compute_domains_count(); ++d)
                EXPECT_NE(live.local_memory_of(d), node) << "node " << node << " has no online CPU left";
        }
}

// ---- Memory placement ----

TEST(allocators, domain_allocator_pages_land_on_the_requested_node_whoever_touches_them) {
    fu::machine_topology_t const &live = topology();
    std::size_t const bytes = std::size_t(2) << 20;
    for (std::size_t m = 0; m != live.memory_domains_count(); ++m) {
        // Touched from another node's CPUs: first touch would put the pages there, the binding must not.
        std::size_t const toucher = other_compute_node(m);
        for (bool through_topology : {true, false}) {
            SCOPED_TRACE("node " + std::to_string(m) + (through_topology ? ", by memory domain" : ", by node id"));
            fu::domain_allocator_t<char> const allocator =
                through_topology ? fu::domain_allocator_t<char>(live, m)
                                 : fu::domain_allocator_t<char>(static_cast<fu::numa_node_id_t>(m));
            auto const allocation = allocator.try_allocate_at_least(bytes);
            ASSERT_TRUE(allocation.status) << allocation.status.name();
            EXPECT_EQ(allocation.page_bytes, base_page());
            on_cpus(shape().online_cpus_of(toucher), [&] { touch(allocation.ptr, bytes); });
            std::vector<int> const placed = nodes_of(allocation.ptr, bytes, base_page());
            EXPECT_EQ(std::count(placed.begin(), placed.end(), static_cast<int>(m)),
                      static_cast<std::ptrdiff_t>(placed.size()))
                << "first page on " << placed.front() << ", touched from node " << toucher;
            EXPECT_EQ(node_of(allocation.ptr + bytes - 1), static_cast<int>(m));
            policy_t const policy = policy_of(allocation.ptr);
            EXPECT_EQ(policy.mode, MPOL_BIND);
            EXPECT_EQ(policy.nodes, std::set<std::size_t>{m});
            allocator.deallocate(allocation.ptr, allocation.count);
        }
    }
    // The contrast: unbound memory follows the kernel's first touch, so it lands where it was touched. This shows
    // the guest really places memory by node, which makes the bound results above mean something.
    for (std::size_t node : compute_nodes()) {
        fu::domain_allocator_t<char> const unbound;
        auto const allocation = unbound.try_allocate_at_least(bytes);
        ASSERT_TRUE(allocation.status);
        on_cpus(shape().online_cpus_of(node), [&] { touch(allocation.ptr, bytes); });
        std::vector<int> const placed = nodes_of(allocation.ptr, bytes, base_page());
        EXPECT_EQ(std::count(placed.begin(), placed.end(), static_cast<int>(node)),
                  static_cast<std::ptrdiff_t>(placed.size()))
            << "unbound pages touched on node " << node;
        unbound.deallocate(allocation.ptr, allocation.count);
    }
}

TEST(allocators, symmetric_allocations_stripe_one_slice_per_node) {
    fu::machine_topology_t const &live = topology();
    std::size_t const slice_bytes = std::size_t(1) << 20;
    fu::symmetric_memory_allocator_t const allocator;
    fu::symmetric_region_t const region = allocator.try_allocate(live, slice_bytes);
    ASSERT_TRUE(region.status) << region.status.name();
    ASSERT_EQ(region.slices_count, shape().nodes.size());
    EXPECT_EQ(region.slice_bytes, slice_bytes);
    on_cpus(shape().online_cpus_of(compute_nodes().front()), [&] { touch(region.address, region.total_bytes()); });
    for (std::size_t slice = 0; slice != region.slices_count; ++slice) {
        std::vector<int> const placed = nodes_of(region.slice(slice), region.slice_bytes, base_page());
        EXPECT_EQ(std::count(placed.begin(), placed.end(), static_cast<int>(slice)),
                  static_cast<std::ptrdiff_t>(placed.size()))
            << "slice " << slice << ": first page on " << placed.front();
        EXPECT_EQ(policy_of(region.slice(slice)).nodes, std::set<std::size_t>{slice});
    }
    allocator.deallocate(region);
}

TEST(allocators, sharded_and_replicated_arrays_keep_each_part_on_its_node) {
    fu::machine_topology_t const &live = topology();
    std::size_t const nodes = shape().nodes.size(), count = nodes * 100'000 + 3; // uneven shards
    fu::sharded_array_t<std::uint64_t> sharded;
    fu::replicated_array_t<std::uint64_t> replicated;
    ASSERT_TRUE(sharded.try_allocate(live, count));
    ASSERT_TRUE(replicated.try_allocate(live, 50'000));
    ASSERT_EQ(sharded.shards_count(), nodes);
    ASSERT_EQ(replicated.replicas_count(), nodes);
    on_cpus(shape().online_cpus_of(compute_nodes().front()), [&] {
        for (std::size_t i = 0; i != count; ++i) sharded[i] = i;
        for (std::size_t i = 0; i != replicated.size(); ++i) replicated.replica(0)[i] = i;
        replicated.broadcast(0);
    });
    for (std::size_t d = 0; d != nodes; ++d) {
        auto const shard = sharded.shard(d);
        std::vector<int> const placed = nodes_of(shard.data(), shard.size_bytes(), base_page());
        EXPECT_EQ(std::count(placed.begin(), placed.end(), static_cast<int>(d)),
                  static_cast<std::ptrdiff_t>(placed.size()))
            << "shard " << d;
        EXPECT_EQ(shard[0], sharded.shard_first(d)) << "shard " << d << " starts at its global index";
        auto const replica = replicated.replica(d);
        std::vector<int> const copied = nodes_of(replica.data(), replica.size_bytes(), base_page());
        EXPECT_EQ(std::count(copied.begin(), copied.end(), static_cast<int>(d)),
                  static_cast<std::ptrdiff_t>(copied.size()))
            << "replica " << d;
        EXPECT_EQ(replica[replica.size() - 1], replica.size() - 1) << "replica " << d << " holds the broadcast";
    }
}

TEST(allocators, huge_pages_come_from_the_bound_node_only) {
    std::size_t const huge = nv::huge_page_2mib_bytes_k;
    for (std::size_t node = 0; node != shape().nodes.size(); ++node) {
        SCOPED_TRACE("node " + std::to_string(node));
        std::size_t const reserved = shape().huge_pages_on(node);
        fu::domain_allocator_t<char> const allocator(static_cast<fu::numa_node_id_t>(node), huge);
        std::vector<std::size_t> const before = free_huge_pages_everywhere();
        EXPECT_EQ(before[node], reserved) << "the reservation of " << shape_path;
        if (reserved >= 2) {
            auto const allocation = allocator.try_allocate_at_least(2 * huge);
            ASSERT_TRUE(allocation.status);
            EXPECT_EQ(allocation.page_bytes, huge);
            std::vector<int> const placed = nodes_of(allocation.ptr, 2 * huge, huge);
            EXPECT_EQ(placed, std::vector<int>(2, static_cast<int>(node)));
            std::vector<std::size_t> expected = before;
            expected[node] -= 2;
            EXPECT_EQ(free_huge_pages_everywhere(), expected) << "two pages of this node's reservation, no other";
            allocator.deallocate(allocation.ptr, allocation.count);
        }
        // One page more than the node reserves (the machine-wide pool may still have it, on other nodes): the
        // request falls back to base pages, and says so, on this node; no other node's huge page is taken.
        std::size_t const too_many = (reserved + 1) * huge;
        auto const fallback = allocator.try_allocate_at_least(too_many);
        ASSERT_TRUE(fallback.status) << fallback.status.name();
        EXPECT_EQ(fallback.page_bytes, base_page()) << "reported as base pages";
        EXPECT_EQ(free_huge_pages_everywhere(), before) << "no huge page taken from any node";
        touch(fallback.ptr, too_many);
        std::vector<int> const placed = nodes_of(fallback.ptr, too_many, base_page());
        EXPECT_EQ(std::count(placed.begin(), placed.end(), static_cast<int>(node)),
                  static_cast<std::ptrdiff_t>(placed.size()));
        allocator.deallocate(fallback.ptr, fallback.count);
    }
}

TEST(allocators, a_binding_its_node_cannot_satisfy_is_never_moved) {
    if (shape().nodes.size() < 2) GTEST_SKIP() << "one node: there is no other node the pages could move to";
    // The smallest node that does not hold the kernel: more than its memory, bound there with `MPOL_BIND`.
    kernel_image_t const image = kernel_image();
    std::size_t node = shape().nodes.size();
    for (std::size_t n = 0; n != shape().nodes.size(); ++n)
        if (n != image.node &&
            (node == shape().nodes.size() || shape().nodes[n].memory_bytes < shape().nodes[node].memory_bytes))
            node = n;
    std::size_t const bytes = static_cast<std::size_t>(shape().nodes[node].memory_bytes + 64 * nv::mib_k);
    std::fflush(stdout);
    pid_t const child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // The first the out-of-memory killer picks. Every 64th page is checked as it is faulted in: a page that
        // landed elsewhere exits 3; a range faulted in whole (it cannot fit) exits 4.
        (void)write_text("/proc/self/oom_score_adj", "1000");
        fu::domain_allocator_t<char> const allocator(static_cast<fu::numa_node_id_t>(node));
        auto const allocation = allocator.try_allocate_at_least(bytes);
        if (!allocation.status) ::_exit(2);
        for (std::size_t offset = 0; offset < bytes; offset += base_page()) {
            allocation.ptr[offset] = 1;
            if ((offset / base_page()) % 64 == 0 && node_of(allocation.ptr + offset) != static_cast<int>(node))
                ::_exit(3);
        }
        ::_exit(4);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "binding " << bytes / nv::mib_k << " MiB to node " << node << " ("
        << shape().nodes[node].memory_bytes / nv::mib_k
        << " MiB): " << (WIFEXITED(status) ? "exited " + std::to_string(WEXITSTATUS(status)) : "signal")
        << " (3: a page moved)";
    std::printf(
        "[ strict   ] %zu MiB bound to node %zu of %zu MiB: the out-of-memory killer stopped it, no page moved\n",
        bytes / nv::mib_k, node, static_cast<std::size_t>(shape().nodes[node].memory_bytes / nv::mib_k));
}

// ---- The distributed pool ----

using pool_t = fu::distributed_pool_t;
using prong_t = pool_t::prong_t;

/**  What the threads of one dispatch saw: tasks run, and any task that ran on a CPU outside its thread's domain or
 *   reported another domain than the thread's. */
struct ledger_t {
    explicit ledger_t(std::size_t tasks) : runs(tasks) {}
    std::vector<std::atomic<std::uint32_t>> runs;
    std::atomic<std::size_t> misplaced{0}, mislabelled{0};

    void record(pool_t const &pool, fu::machine_topology_t const &live, prong_t prong) noexcept {
        if (prong.task < runs.size()) runs[prong.task].fetch_add(1, std::memory_order_relaxed);
        std::size_t const domain = pool.locate_thread(prong.thread).compute_domain;
        if (domain != prong.compute_domain) mislabelled.fetch_add(1, std::memory_order_relaxed);
        int const cpu = ::sched_getcpu();
        bool inside = false;
        for (std::uint32_t core : live.cores_in(domain)) inside = inside || static_cast<int>(core) == cpu;
        if (!inside) misplaced.fetch_add(1, std::memory_order_relaxed);
    }
    std::size_t not_once() const noexcept {
        std::size_t wrong = 0;
        for (auto const &count : runs) wrong += count.load(std::memory_order_relaxed) != 1;
        return wrong;
    }
};

TEST(distributed, threads_split_in_proportion_to_each_nodes_cores) {
    fu::machine_topology_t const &live = topology();
    std::vector<std::size_t> const compute = compute_nodes();
    std::size_t const cores = shape().online_cpus_count();
    // Whole multiples of the cores split exactly; as many threads as domains give one to each.
    for (std::size_t multiple : {1u, 2u}) {
        on_own_thread([&] {
            pool_t pool;
            ASSERT_TRUE(pool.spawn(live, multiple * cores));
            ASSERT_EQ(pool.compute_domains_count(), compute.size());
            for (std::size_t d = 0; d != compute.size(); ++d)
                EXPECT_EQ(pool.threads_count_in(d), multiple * shape().online_cpus_of(compute[d]).size())
                    << multiple << " x " << cores << " threads, domain " << d;
        });
    }
    on_own_thread([&] {
        pool_t pool;
        ASSERT_TRUE(pool.spawn(live, compute.size()));
        for (std::size_t d = 0; d != compute.size(); ++d) EXPECT_EQ(pool.threads_count_in(d), 1u);
    });
}

TEST(distributed, every_task_runs_once_on_its_domains_cpus) {
    fu::machine_topology_t const &live = topology();
    // One thread per domain, one per CPU, and two per CPU (oversubscribed: idle threads must yield).
    std::set<std::size_t> const thread_counts = {live.compute_domains_count(), shape().online_cpus_count(),
                                                 2 * shape().online_cpus_count()};
    for (std::size_t threads : thread_counts)
        for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k})
            on_own_thread([&] {
                SCOPED_TRACE(std::to_string(threads) + " threads, caller " +
                             (exclusivity == fu::caller_inclusive_k ? "inclusive" : "exclusive"));
                pool_t pool;
                ASSERT_TRUE(pool.spawn(live, threads, exclusivity));
                EXPECT_EQ(pool.unpinned_threads_count(), 0u);
                for (std::size_t d = 0; d != pool.compute_domains_count(); ++d) EXPECT_TRUE(pool.memory_placed_in(d));
                std::size_t const n = 1000;
                {
                    ledger_t ledger(n);
                    ASSERT_TRUE(
                        dispatched(pool.for_n(n, [&](prong_t prong) noexcept { ledger.record(pool, live, prong); })));
                    EXPECT_EQ(ledger.not_once(), 0u) << "for_n";
                    EXPECT_EQ(ledger.misplaced.load(), 0u) << "for_n";
                    EXPECT_EQ(ledger.mislabelled.load(), 0u) << "for_n";
                }
                {
                    ledger_t ledger(n);
                    ASSERT_TRUE(dispatched(
                        pool.for_n_dynamic(n, [&](prong_t prong) noexcept { ledger.record(pool, live, prong); })));
                    EXPECT_EQ(ledger.not_once(), 0u) << "for_n_dynamic";
                    EXPECT_EQ(ledger.misplaced.load(), 0u) << "for_n_dynamic";
                    EXPECT_EQ(ledger.mislabelled.load(), 0u) << "for_n_dynamic";
                }
                {
                    ledger_t ledger(n);
                    ASSERT_TRUE(dispatched(pool.for_slices(n, [&](prong_t first, std::size_t count) noexcept {
                        for (std::size_t i = 0; i != count; ++i)
                            ledger.record(pool, live, prong_t{first.task + i, first.thread, first.compute_domain});
                    })));
                    EXPECT_EQ(ledger.not_once(), 0u) << "for_slices";
                    EXPECT_EQ(ledger.misplaced.load(), 0u) << "for_slices";
                }
                {
                    ledger_t ledger(pool.threads_count());
                    ASSERT_TRUE(dispatched(
                        pool.for_threads([&](prong_t prong) noexcept { ledger.record(pool, live, prong); })));
                    EXPECT_EQ(ledger.not_once(), 0u) << "for_threads";
                    EXPECT_EQ(ledger.misplaced.load(), 0u) << "for_threads";
                }
            });
}

TEST(distributed, stealing_stays_in_the_domain_until_the_domain_runs_dry) {
    fu::machine_topology_t const &live = topology();
    if (live.compute_domains_count() < 2) GTEST_SKIP() << "one compute domain: nothing to steal across";
    on_own_thread([&] {
        pool_t pool;
        ASSERT_TRUE(pool.spawn(live, shape().online_cpus_count()));
        std::size_t const threads = pool.threads_count(), stalled = pool.compute_domains_count() - 1, n = 600;
        std::atomic<std::size_t> outside{0}, early{0};
        std::vector<std::atomic<bool>> started(threads);
        ledger_t ledger(n);
        // A task's home is the domain of the thread whose static block holds it. The last domain's threads hold
        // their first task until some task left its home, so the others run dry and must cross over; whenever a
        // task runs away from home, every claim cursor of the thief's domain must be at or past its block.
        auto const owner_of = [&](std::size_t task) {
            for (std::size_t t = 0; t != threads; ++t) {
                auto const block = fu::static_slice<std::size_t>(n, threads, t);
                if (task >= block.first && task < block.first + block.count) return t;
            }
            return threads;
        };
        ASSERT_TRUE(dispatched(pool.for_n_dynamic(n, [&](prong_t prong) noexcept {
            ledger.record(pool, live, prong);
            if (pool.locate_thread(owner_of(prong.task)).compute_domain != prong.compute_domain) {
                outside.fetch_add(1, std::memory_order_relaxed);
                std::size_t const first = pool.first_thread_in(prong.compute_domain);
                for (std::size_t t = first; t != first + pool.threads_count_in(prong.compute_domain); ++t)
                    if (pool.unsafe_claim_cursor(t).load(std::memory_order_relaxed) <
                        fu::static_slice<std::size_t>(n, threads, t).count)
                        early.fetch_add(1, std::memory_order_relaxed);
            }
            if (prong.compute_domain == stalled && !started[prong.thread].exchange(true))
                while (outside.load(std::memory_order_relaxed) == 0) std::this_thread::yield();
        })));
        EXPECT_EQ(ledger.not_once(), 0u);
        EXPECT_EQ(ledger.misplaced.load(), 0u);
        EXPECT_GT(outside.load(), 0u) << "the other domains stole from the stalled one once they ran dry";
        EXPECT_EQ(early.load(), 0u) << "a thread left its domain while its domain still had work";
        std::printf("[ stealing ] domain %zu stalled: %zu of %zu tasks ran outside their home domain\n", stalled,
                    outside.load(), n);
    });
}

TEST(distributed, pinning_lands_threads_on_their_cpus) {
    fu::machine_topology_t const &live = topology();
    std::size_t const threads = shape().online_cpus_count() + live.compute_domains_count();
    for (fu::pinning_t pinning : {fu::pinning_t::core_k, fu::pinning_t::domain_k})
        on_own_thread([&] {
            SCOPED_TRACE(pinning == fu::pinning_t::core_k ? "core pinning" : "domain pinning");
            std::set<std::size_t> const original = kernel_affinity();
            pool_t pool;
            fu::thread_placement_t placement;
            placement.pinning = pinning;
            ASSERT_TRUE(pool.spawn(live, threads, fu::caller_inclusive_k, placement));
            EXPECT_EQ(pool.unpinned_threads_count(), 0u);
            std::vector<std::set<std::size_t>> masks(threads);
            std::vector<int> cpus(threads, -1);
            ASSERT_TRUE(dispatched(pool.for_threads([&](std::size_t thread) noexcept {
                masks[thread] = kernel_affinity();
                cpus[thread] = ::sched_getcpu();
            })));
            for (std::size_t thread = 0; thread != threads; ++thread) {
                auto const location = pool.locate_thread(thread);
                std::vector<std::size_t> const cores = shape().online_cpus_of(compute_nodes()[location.compute_domain]);
                std::set<std::size_t> const expected =
                    pinning == fu::pinning_t::core_k
                        ? std::set<std::size_t>{cores[location.local_thread % cores.size()]}
                        : std::set<std::size_t>(cores.begin(), cores.end());
                EXPECT_EQ(masks[thread], expected) << "thread " << thread;
                EXPECT_EQ(expected.count(static_cast<std::size_t>(cpus[thread])), 1u)
                    << "thread " << thread << " ran on CPU " << cpus[thread];
            }
            pool.terminate();
            EXPECT_EQ(kernel_affinity(), original) << "the caller gets its mask back";
        });
}

// ---- The fabric ----

TEST(fabric, every_compute_to_memory_edge_is_measured) {
    fu::machine_topology_t const &live = topology();
    on_own_thread([&] {
        std::size_t widest = 1;
        for (std::size_t d = 0; d != live.compute_domains_count(); ++d)
            widest = std::max<std::size_t>(widest, live.logical_cores_count_in(d));
        fu::flat_pool_t pool;
        ASSERT_TRUE(pool.spawn(widest));
        // Small buffers: an emulated load costs tens of nanoseconds whatever the node, so bigger ones only cost time.
        fu::fabric_options_t options = fu::fabric_options_t::quick();
        options.buffer_bytes = std::size_t(8) << 20;
        fu::fabric_t fabric;
        fu::status_t const status = fabric.try_harvest(live, pool, options);
        ASSERT_TRUE(status) << status.name();
        EXPECT_EQ(fabric.reached_edges_count(), live.compute_domains_count() * live.memory_domains_count());
        EXPECT_EQ(fabric.pinning_refusals_count(), 0u);
        EXPECT_EQ(fabric.binding_refusals_count(), 0u);
        // Emulation does not model remote latency, so no order between edges is asserted: only that each is a
        // finite measurement, reported beside what the firmware declares.
        std::printf("[ fabric   ] edge      latency ns   bandwidth GB/s   measured distance   declared distance\n");
        for (std::size_t c = 0; c != live.compute_domains_count(); ++c)
            for (std::size_t m = 0; m != live.memory_domains_count(); ++m) {
                double const latency = fabric.memory_latency_ns(c, m);
                double const bandwidth = fabric.memory_bandwidth_bytes_per_second(c, m);
                std::size_t const distance = fabric.memory_distance(c, m);
                EXPECT_TRUE(std::isfinite(latency) && latency > 0) << c << " -> " << m;
                EXPECT_TRUE(std::isfinite(bandwidth) && bandwidth > 0) << c << " -> " << m;
                EXPECT_GE(distance, fu::local_memory_distance_k);
                EXPECT_LE(distance, fu::max_memory_distance_k);
                std::printf("[ fabric   ] %zu -> %zu %13.1f %16.2f %19zu %19zu\n", c, m, latency, bandwidth / 1e9,
                            distance, live.declared_distance(live.local_memory_of(c), m));
            }
    });
}

// ---- The C API on the same machine ----

TEST(c_api, topology_matches_the_shape) {
    fu_topology_t topology = fu_topology_new();
    ASSERT_NE(topology, nullptr);
    EXPECT_EQ(fu_topology_harvested(topology), 1);
    std::vector<std::size_t> const compute = compute_nodes();
    ASSERT_EQ(fu_memory_domains_count(topology), shape().nodes.size());
    ASSERT_EQ(fu_compute_domains_count(topology), compute.size());
    EXPECT_EQ(fu_online_cores_count(topology), shape().online_cpus_count());
    for (std::size_t d = 0; d != compute.size(); ++d) {
        std::vector<unsigned> cores(fu_cores_in(topology, d, nullptr, 0));
        EXPECT_EQ(fu_cores_in(topology, d, cores.data(), cores.size()), cores.size());
        EXPECT_EQ(std::vector<std::size_t>(cores.begin(), cores.end()), shape().online_cpus_of(compute[d]));
        EXPECT_EQ(fu_local_memory_of(topology, d), compute[d]);
    }
    for (std::size_t a = 0; a != shape().nodes.size(); ++a) {
        EXPECT_EQ(fu_memory_node_id(topology, a), a);
        EXPECT_EQ(fu_huge_pages_count_in(topology, a), shape().huge_pages_on(a));
        EXPECT_LE(fu_volume_ram_in(topology, a), shape().nodes[a].memory_bytes);
        for (std::size_t b = 0; b != shape().nodes.size(); ++b) {
            EXPECT_EQ(fu_declared_distance(topology, a, b), shape().distance(a, b));
        }
    }
    fu_topology_delete(topology);
}

/**  What a C callback records: runs per task, and tasks that ran outside their domain's CPUs. */
struct c_ledger_t {
    fu_topology_t topology = nullptr;
    std::vector<std::atomic<std::uint32_t>> runs;
    std::atomic<std::size_t> misplaced{0};
    explicit c_ledger_t(fu_topology_t t, std::size_t n) : topology(t), runs(n) {}
};

void c_record_task(void *context, size_t task, size_t, size_t compute_domain) {
    c_ledger_t &ledger = *static_cast<c_ledger_t *>(context);
    ledger.runs[task].fetch_add(1, std::memory_order_relaxed);
    unsigned cores[64] = {};
    std::size_t const count = std::min<std::size_t>(fu_cores_in(ledger.topology, compute_domain, cores, 64), 64);
    int const cpu = ::sched_getcpu();
    if (std::find(cores, cores + count, static_cast<unsigned>(cpu)) == cores + count)
        ledger.misplaced.fetch_add(1, std::memory_order_relaxed);
}

TEST(c_api, pools_split_by_cores_and_run_every_task_on_its_domain) {
    on_own_thread([&] {
        fu_topology_t topology = fu_topology_new();
        fu_pool_t pool = fu_pool_new("numa-vm", fu_capabilities_all_k);
        ASSERT_TRUE(topology && pool);
        std::vector<std::size_t> const compute = compute_nodes();
        ASSERT_EQ(fu_pool_spawn(topology, pool, shape().online_cpus_count(), fu_caller_inclusive_k), fu_success_k);
        EXPECT_EQ(fu_pool_compute_domains_count(pool), compute.size());
        for (std::size_t d = 0; d != compute.size(); ++d)
            EXPECT_EQ(fu_pool_threads_count_in(pool, d), shape().online_cpus_of(compute[d]).size()) << "domain " << d;
        EXPECT_EQ(fu_pool_unpinned_threads_count(pool), 0u);
        EXPECT_EQ(fu_pool_memory_placed(pool), 1);
        std::size_t const n = 1000;
        for (bool dynamic : {false, true}) {
            c_ledger_t ledger(topology, n);
            fu_status_t const status = dynamic ? fu_pool_for_n_dynamic(pool, n, c_record_task, &ledger)
                                               : fu_pool_for_n(pool, n, c_record_task, &ledger);
            ASSERT_EQ(status, fu_success_k);
            std::size_t not_once = 0;
            for (auto const &runs : ledger.runs) not_once += runs.load() != 1;
            EXPECT_EQ(not_once, 0u) << (dynamic ? "fu_pool_for_n_dynamic" : "fu_pool_for_n");
            EXPECT_EQ(ledger.misplaced.load(), 0u) << (dynamic ? "fu_pool_for_n_dynamic" : "fu_pool_for_n");
        }
        fu_pool_delete(pool);
        fu_topology_delete(topology);
    });
}

TEST(c_api, allocations_land_on_their_nodes) {
    fu_topology_t topology = fu_topology_new();
    ASSERT_NE(topology, nullptr);
    std::size_t const nodes = shape().nodes.size(), bytes = std::size_t(1) << 20;
    for (std::size_t m = 0; m != nodes; ++m) {
        fu_allocation_t allocation{};
        ASSERT_EQ(fu_allocate_on(topology, m, bytes, 0, fu_capabilities_all_k, &allocation), fu_success_k);
        EXPECT_EQ(allocation.placed, 1);
        on_cpus(shape().online_cpus_of(other_compute_node(m)), [&] { touch(allocation.address, allocation.bytes); });
        std::vector<int> const placed = nodes_of(allocation.address, allocation.bytes, base_page());
        EXPECT_EQ(std::count(placed.begin(), placed.end(), static_cast<int>(m)),
                  static_cast<std::ptrdiff_t>(placed.size()))
            << "fu_allocate_on node " << m;
        EXPECT_EQ(fu_deallocate(&allocation), fu_success_k);
        if (shape().huge_pages_on(m) == 0) continue;
        ASSERT_EQ(fu_allocate_on(topology, m, nv::huge_page_2mib_bytes_k, nv::huge_page_2mib_bytes_k,
                                 fu_capabilities_all_k, &allocation),
                  fu_success_k);
        EXPECT_EQ(allocation.page_bytes, nv::huge_page_2mib_bytes_k) << "node " << m << " reserves huge pages";
        EXPECT_EQ(node_of(allocation.address), static_cast<int>(m));
        EXPECT_EQ(fu_deallocate(&allocation), fu_success_k);
    }
    fu_allocation_t striped{};
    ASSERT_EQ(fu_allocate_symmetric(topology, bytes, 0, fu_capabilities_all_k, &striped), fu_success_k);
    ASSERT_EQ(striped.slices_count, nodes);
    touch(striped.address, striped.bytes);
    for (std::size_t slice = 0; slice != nodes; ++slice) {
        std::vector<int> const placed = nodes_of(static_cast<char *>(striped.address) + slice * striped.slice_bytes,
                                                 striped.slice_bytes, base_page());
        EXPECT_EQ(std::count(placed.begin(), placed.end(), static_cast<int>(slice)),
                  static_cast<std::ptrdiff_t>(placed.size()))
            << "fu_allocate_symmetric slice " << slice;
    }
    EXPECT_EQ(fu_deallocate(&striped), fu_success_k);
    fu_allocation_t absent{};
    EXPECT_EQ(fu_allocate_on(topology, nodes, bytes, 0, fu_capabilities_all_k, &absent), fu_invalid_argument_k);
    EXPECT_EQ(absent.address, nullptr);
    fu_topology_delete(topology);
}

TEST(c_api, fabric_measures_every_edge) {
    on_own_thread([&] {
        fu_topology_t topology = fu_topology_new();
        fu_pool_t pool = fu_pool_new("numa-vm", fu_capabilities_all_k);
        fu_fabric_t fabric = fu_fabric_new();
        ASSERT_TRUE(topology && pool && fabric);
        std::size_t widest = 1;
        for (std::size_t d = 0; d != fu_compute_domains_count(topology); ++d)
            widest = std::max<std::size_t>(widest, fu_logical_cores_count_in(topology, d));
        ASSERT_EQ(fu_pool_spawn_on(topology, pool, 0, widest, fu_caller_inclusive_k), fu_success_k);
        ASSERT_EQ(fu_fabric_harvest(fabric, topology, pool, std::size_t(8) << 20), fu_success_k);
        for (std::size_t c = 0; c != fu_compute_domains_count(topology); ++c)
            for (std::size_t m = 0; m != fu_memory_domains_count(topology); ++m) {
                double const latency = fu_fabric_memory_latency_ns(fabric, c, m);
                EXPECT_TRUE(std::isfinite(latency) && latency > 0) << c << " -> " << m;
                EXPECT_GT(fu_fabric_memory_bandwidth(fabric, c, m), 0.0) << c << " -> " << m;
                EXPECT_GE(fu_fabric_memory_distance(fabric, c, m), 10u) << c << " -> " << m;
            }
        fu_fabric_delete(fabric);
        fu_pool_delete(pool);
        fu_topology_delete(topology);
    });
}

// ---- Set-up inside the guest ----

/**  Whether this machine has exactly the shape's CPUs and nodes: the guest it was built for. */
bool machine_is_the_shape() {
    std::size_t nodes = 0;
    while (std::ifstream(node_path(nodes) + "/meminfo")) ++nodes;
    return nodes == shape().nodes.size() &&
           static_cast<std::size_t>(::sysconf(_SC_NPROCESSORS_CONF)) == shape().cpus_count();
}

/**  Takes the shape's CPUs offline and reserves its huge pages; false (with a message) if the kernel refused. */
bool set_up_guest() {
    if (!machine_is_the_shape()) {
        std::fprintf(stderr, "--setup: this machine is not the shape %s; nothing changed\n", shape_path.c_str());
        return false;
    }
    bool done = true;
    for (std::size_t cpu : shape().offline) {
        std::string const path = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/online";
        if (!write_text(path, "0") || read_text(path) != "0\n")
            std::fprintf(stderr, "--setup: CPU %zu did not go offline\n", cpu), done = false;
    }
    for (std::size_t node = 0; node != shape().nodes.size(); ++node) {
        std::size_t const pages = shape().huge_pages_on(node);
        if (pages == 0) continue;
        std::string const path = node_path(node) + "/hugepages/hugepages-2048kB/nr_hugepages";
        if (!write_text(path, std::to_string(pages)) || read_text(path) != std::to_string(pages) + "\n")
            std::fprintf(stderr, "--setup: node %zu did not reserve %zu huge pages\n", node, pages), done = false;
    }
    return done;
}

} // namespace

int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    bool setup = false;
    for (int i = 1; i < argc; ++i) {
        std::string const argument = argv[i];
        if (argument.rfind("--shape=", 0) == 0)
            shape_path = argument.substr(8);
        else if (argument == "--setup")
            setup = true;
        else {
            std::fprintf(stderr, "unknown argument '%s'\nusage: %s --shape=FILE [--setup] [gtest flags]\n", argv[i],
                         argv[0]);
            return 2;
        }
    }
    std::ifstream file(shape_path);
    if (shape_path.empty() || !file) {
        std::fprintf(stderr, "cannot read the shape '%s' (pass --shape=FILE)\n", shape_path.c_str());
        return 2;
    }
    if (std::string const error = nv::parse_shape(file, the_shape); !error.empty()) {
        std::fprintf(stderr, "%s: %s\n", shape_path.c_str(), error.c_str());
        return 2;
    }
    std::printf("[ shape    ] %s: %s\n", shape_path.c_str(), nv::describe(the_shape).c_str());
    if (setup && !set_up_guest()) return 2;
    if (!machine_is_the_shape()) {
        std::fprintf(stderr, "this machine is not the shape %s: run it in the guest that run.sh boots\n",
                     shape_path.c_str());
        return 2;
    }
    return RUN_ALL_TESTS();
}
