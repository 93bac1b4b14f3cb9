/**
 *  @file   forkunion/topology/detail/topology_linux.hpp
 *  @brief  The Linux back end of `forkunion/topology/topology.hpp`: `linux_topology_source_t` reads sysfs under any root.
 *
 *  `try_harvest_sysfs(root, allowed, facts)` reads `<root>/sys/devices/system/{cpu,node}/…`,
 *  `<root>/sys/kernel/mm/hugepages/…` and, without NUMA, `<root>/proc/meminfo`; the live harvest is the same call
 *  with root `""` and the calling thread's affinity mask as `allowed`. A recorded tree (`test/fixtures/sysfs/`)
 *  is read exactly like the live one. Declared only on Linux; elsewhere this header declares nothing.
 *
 *  @section rules What is read, and what wins
 *  - Online CPUs: `cpu/online`; when it is missing or malformed, every `cpuN` directory except those whose
 *    `cpuN/online` reads `0` (old kernels and hwloc dumps have no `cpu/online`). Usable = online ∩ `allowed`.
 *  - NUMA nodes: `node/online`, else the `nodeN` directories; ids at or above `max_numa_nodes_k` are dropped. No
 *    `node/` directory (or no node in it) means one memory domain, node 0, over every usable CPU.
 *  - A node's CPUs: `nodeN/cpulist`, else the hex `nodeN/cpumap`. Each usable CPU belongs to the lowest node that
 *    lists it (firmware can list one CPU in several nodes; a node whose CPUs were all claimed earlier is then
 *    CPU-less). Usable CPUs that no node lists form the last compute domains, with memory domain 0 as local.
 *  - Capacity classes: `cpuN/cpu_capacity` (1..1024) of every usable CPU, or of none: if one is missing or
 *    malformed, no capacity is trusted and each node is one class. Sorted distinct values start a new class
 *    where a value exceeds the class's smallest by more than 10% (cores of one microarchitecture differ by a few
 *    percent, big and little ones by 2x or more); the same classes split every node.
 *    Compute domains are (node, class) pairs with cores, by node id then by class; levels are class ranks.
 *  - A domain's cache: the largest data or unified `cpuN/cache/indexK` (`size`, `type`, `shared_cpu_list` or
 *    `shared_cpu_map`) of its cores whose online sharers all lie inside the domain; source `fact_source_t::os_k`.
 *    Where none of its cores has a `cache/` directory (hypervisors that hide them), the figure is 0 and its source
 *    `unknown_k`; the live harvest then asks the processor (`calling_cpu_caches()`, `CPUID` on x86) for a domain
 *    that holds every online core (`add_processor_caches`), source `cpuid_k`. A recorded tree never gets CPUID.
 *  - Memory: `nodeN/meminfo` `MemTotal`; free huge pages per size from `nodeN/hugepages/hugepages-<kB>kB/`
 *    and `sys/kernel/mm/hugepages/`; `nodeN/distance` rows, whose columns are the node list in id order.
 *  Any file that is missing, not a regular file, larger than `sysfs_file_bytes_limit_k`, unreadable or malformed
 *  is skipped and its fact stays unknown (0), or the rule's fallback applies; nothing read from it is used. Each
 *  such file that is there (all but the missing ones, which are normal: `cpu_capacity` outside big.LITTLE, say)
 *  is reported once per harvest through `warn` (`base/warnings.hpp`: stderr unless a sink is installed), with
 *  its path: `skipped a malformed sysfs file: <path>` or `skipped an unusable sysfs file: <path>`.
 *
 *  @section cost Cost
 *  A harvest allocates about 100 KiB of scratch (a 64 KiB file buffer, a node and a capacity per possible CPU)
 *  plus the results, and may throw `std::bad_alloc` (caught by `topology.hpp`). It opens about 6 files per CPU
 *  (its cache sizes, and the rest of a cache only when it could be the largest so far): ~1,600 opens for the
 *  recorded 256-CPU POWER7. Measured on a shared 2-vCPU KVM guest of a Xeon (mean of 20 harvests through
 *  `forkunion_topology`, load 40+): ~90 us live
 *  (2 CPUs), 0.9 ms for the recorded 32-CPU Xeon, 4.4 ms for the 128-CPU Kunpeng, 7.7 ms for the 256-CPU POWER7
 *  (up to 4x more while other builds ran). A harvest is a start-up cost, never on a dispatch path.
 *  It is reentrant: concurrent harvests into different objects are safe.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/hardware/caches.hpp>
#include <forkunion/topology/detail/affinity_linux.hpp>
#include <forkunion/base/cpu_mask.hpp>
#include <forkunion/topology/parse.hpp>
#include <forkunion/topology/topology_facts.hpp>
#include <forkunion/base/types.hpp>
#include <forkunion/base/warnings.hpp>

#if FORKUNION_OS_LINUX
#include <dirent.h>   // `opendir`, `readdir64`
#include <errno.h>    // `EINTR`, `ENOENT`, `ENOTDIR`
#include <fcntl.h>    // `open`
#include <sys/stat.h> // `fstat`, `S_ISREG`
#include <unistd.h>   // `read`, `close`

namespace forkunion::detail {

/**
 *  @brief  The largest sysfs file a harvest reads; longer files are malformed, never read in part.
 *
 *  The longest legitimate one is a list of every other CPU of an 8192-CPU machine, `"0,2,4,…,8190"`, about
 *  20 KiB; a bitmap of 8192 CPUs is 2.3 KiB; a distance row of 1024 nodes is 4 KiB. 64 KiB leaves room and
 *  bounds the work a hostile file can cause.
 */
inline constexpr std::size_t sysfs_file_bytes_limit_k = 64 * 1024;

/**
 *  @brief  A path under a sysfs root, grown and cut back like a stack, and a bounded file reader.
 *
 *  `from_root()` restarts at the root; `mark()` remembers the current length and `at(mark)` cuts back to it, which
 *  is only meaningful while the path still extends the marked one (inside a `list` visit, for example).
 *  Appending past `path_capacity_k` poisons the path until the next cut: reads and listings then fail.
 */
class sysfs_reader_t {
public:
    static constexpr std::size_t path_capacity_k = 4096; // Linux's `PATH_MAX`
    /**  Room kept for what a harvest appends to the root: the longest is
     *  `/sys/devices/system/node/node1023/hugepages/hugepages-<20 digits>kB/free_hugepages` plus one directory
     *  entry of up to 255 bytes (`NAME_MAX`). */
    static constexpr std::size_t suffix_room_k = 512;

private:
    char *buffer_ = nullptr; // `sysfs_file_bytes_limit_k + 1` bytes: one more than a file may hold
    char path_[path_capacity_k] = {};
    std::size_t length_ = 0;
    std::size_t root_length_ = 0;
    bool poisoned_ = false;
    bool present_ = false; // the last `read` found something at its path (a file that may still be unusable)

    /**  `EINTR` retries a read may take before the file counts as unreadable: a bound, so a signal storm cannot
     *  spin a harvest forever. Sysfs reads are not interrupted in practice. */
    static constexpr int interrupted_reads_limit_k = 64;
    static constexpr std::size_t buffer_bytes_k = sysfs_file_bytes_limit_k + 1;

public:
    /**  @throws std::bad_alloc for the file buffer. */
    sysfs_reader_t() : buffer_(new char[buffer_bytes_k]) {}
    ~sysfs_reader_t() noexcept { delete[] buffer_; }
    sysfs_reader_t(sysfs_reader_t const &) = delete;
    sysfs_reader_t &operator=(sysfs_reader_t const &) = delete;

    /**  Starts every path with `root` (trailing slashes dropped); false if it leaves no `suffix_room_k`. */
    bool try_set_root(char const *root) noexcept {
        std::size_t length = 0;
        while (root[length]) {
            if (length + suffix_room_k >= path_capacity_k) return false;
            path_[length] = root[length];
            ++length;
        }
        while (length && path_[length - 1] == '/') --length;
        path_[length] = '\0';
        length_ = root_length_ = length;
        poisoned_ = false;
        return true;
    }

    /**  Cuts the path back to the root. */
    sysfs_reader_t &from_root() noexcept { return at(root_length_); }

    std::size_t mark() const noexcept { return length_; }

    /**  Cuts the path back to `mark`, taken by `mark()` while the path was a prefix of what it is now. */
    sysfs_reader_t &at(std::size_t mark) noexcept {
        length_ = mark;
        path_[length_] = '\0';
        poisoned_ = false;
        return *this;
    }

    sysfs_reader_t &add(char const *text, std::size_t length) noexcept {
        if (poisoned_ || length_ + length >= path_capacity_k) {
            poisoned_ = true;
            return *this;
        }
        for (std::size_t i = 0; i != length; ++i) path_[length_ + i] = text[i];
        length_ += length;
        path_[length_] = '\0';
        return *this;
    }
    sysfs_reader_t &add(char const *text) noexcept {
        std::size_t length = 0;
        while (text[length]) ++length;
        return add(text, length);
    }
    sysfs_reader_t &add_number(std::size_t number) noexcept {
        char digits[24] = {};
        std::size_t length = 0;
        do digits[length++] = static_cast<char>('0' + number % 10), number /= 10;
        while (number);
        char reversed[24] = {};
        for (std::size_t i = 0; i != length; ++i) reversed[i] = digits[length - 1 - i];
        return add(reversed, length);
    }

    char const *path() const noexcept { return path_; }

    /**
     *  @brief  Reads the regular file at the current path whole. `text` points into a buffer that the next
     *          `read` overwrites. False if it is missing, not a regular file (a FIFO, a device, a directory),
     *          unreadable, or longer than `sysfs_file_bytes_limit_k`.
     */
    bool read(char const *&text, std::size_t &length) noexcept {
        text = nullptr, length = 0;
        present_ = false;
        if (poisoned_) return false;
        // `O_NONBLOCK`: opening a FIFO planted in a recorded tree must not wait for a writer.
        int const file = ::open(path_, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (file < 0) {
            present_ = errno != ENOENT && errno != ENOTDIR; // `EACCES` and the like: there, but unreadable
            return false;
        }
        present_ = true;
        struct stat status {};
        bool good = ::fstat(file, &status) == 0 && S_ISREG(status.st_mode);
        std::size_t total = 0;
        for (int interrupted = 0; good && total < buffer_bytes_k;) {
            ::ssize_t const got = ::read(file, buffer_ + total, buffer_bytes_k - total);
            if (got > 0)
                total += static_cast<std::size_t>(got);
            else if (got == 0)
                break;
            else if (errno != EINTR || ++interrupted == interrupted_reads_limit_k)
                good = false;
        }
        ::close(file);
        if (!good || total > sysfs_file_bytes_limit_k) return false;
        text = buffer_, length = total;
        return true;
    }

    /**
     *  @brief  Reads the file at the current path and hands it to `parse(text, length)`, returning what `parse`
     *          returns. A missing file returns false quietly; a file that is there but `read` refuses, or whose
     *          text `parse` refuses, returns false and warns once, naming the path (`warn_about_file`).
     */
    template <typename parse_t>
    bool read_parsed(parse_t &&parse) noexcept {
        char const *text = nullptr;
        std::size_t length = 0;
        if (!read(text, length)) {
            if (present_) warn_about_file("skipped an unusable sysfs file:", path_);
            return false;
        }
        if (parse(text, length)) return true;
        warn_about_file("skipped a malformed sysfs file:", path_);
        return false;
    }

    /**
     *  @brief  Calls `visit(name, length)` for each entry of the directory at the current path except `.` and
     *          `..`. `visit` may append to and cut back the path (to at most where it was). False if the
     *          directory cannot be opened.
     */
    template <typename visitor_t>
    bool list(visitor_t &&visit) noexcept {
        if (poisoned_) return false;
        DIR *directory = ::opendir(path_);
        if (!directory) return false;
        std::size_t const here = length_;
        // 32-bit glibc's `readdir` fails with EOVERFLOW at an entry whose inode number needs 64 bits (overlay and
        // network filesystems, where recorded trees often live) unless the whole program is built with
        // `_FILE_OFFSET_BITS=64`, which a header cannot choose; `readdir64` reads every entry everywhere.
#if defined(__GLIBC__) && defined(__USE_LARGEFILE64)
        while (dirent64 const *entry = ::readdir64(directory)) {
#else
        while (dirent const *entry = ::readdir(directory)) {
#endif
            char const *name = entry->d_name;
            std::size_t length = 0;
            while (name[length]) ++length;
            if ((length == 1 && name[0] == '.') || (length == 2 && name[0] == '.' && name[1] == '.')) continue;
            visit(name, length);
            at(here);
        }
        ::closedir(directory);
        return true;
    }
};

/**
 *  @brief  Parses a directory name such as `cpu12`, `node3` or `index2`: `prefix` then a decimal id below `limit`
 *          with no leading zero (so `cpu01` and `cpufreq` are not CPUs).
 */
constexpr bool parse_prefixed_id(char const *name, std::size_t length, char const *prefix, std::size_t limit,
                                 std::size_t &id) noexcept {
    id = 0;
    std::size_t position = 0;
    for (; prefix[position]; ++position)
        if (position == length || name[position] != prefix[position]) return false;
    if (position == length || (name[position] == '0' && length - position > 1)) return false;
    std::uint64_t value = 0;
    if (!scan_decimal(name, length, position, value, limit - 1) || position != length) return false;
    id = static_cast<std::size_t>(value);
    return true;
}

/**
 *  @brief  The Linux topology back end: sysfs under a root. Static members only: the interface that
 *          `topology_facts.hpp` documents.
 *
 *  The harvest and its helpers are templates (over the facts and vector types they fill) only so that a
 *  translation unit that includes the umbrella but never harvests instantiates none of their array code: that
 *  kept 0.1 s of g++ -O2 time out of every hello world (`.ci/compile_cost.sh` holds the umbrella to 1.25x a
 *  `<thread>` hello world).
 */
struct linux_topology_source_t {
    /**  Whether this back end harvests real structure (false for the portable one). */
    static constexpr bool harvests_structure_k = true;
    using facts_t = topology_facts_t;

    /**  The cores the calling thread may run on: its affinity mask, or `{0}` if that cannot be read. */
    static void allowed_cores(cpu_mask_t &mask) noexcept {
        if (!linux_affinity_t::try_get_thread(linux_affinity_t::current_thread(), mask) || mask.empty()) {
            mask.clear();
            mask.set(0);
        }
    }

    /**
     *  @brief  The live harvest: `/` as root, narrowed by the calling thread's affinity mask, then the processor's
     *          own cache description where sysfs lists none (`add_processor_caches`). @throws std::bad_alloc
     */
    template <typename harvest_t = facts_t>
    static bool try_harvest_live(harvest_t &facts) {
        cpu_mask_t allowed;
        bool const narrowed =
            linux_affinity_t::try_get_thread(linux_affinity_t::current_thread(), allowed) && !allowed.empty();
        if (!try_harvest_sysfs("", narrowed ? &allowed : nullptr, facts)) return false;
        add_processor_caches(facts, calling_cpu_caches());
        return true;
    }

    /**
     *  @brief  Fills the cache of each domain whose cache sysfs left unknown (no `cpuN/cache/` directory for any
     *          of its cores) from `caches`, the processor's description, marked `fact_source_t::cpuid_k`; but only
     *          for a domain holding every online core, where no core outside it can share any cache. Other domains
     *          stay unknown: `CPUID` counts a cache's sharers without naming them. Only the live harvest calls it
     *          (a recorded tree is not the machine `CPUID` describes).
     */
    template <typename harvest_t = facts_t>
    static void add_processor_caches(harvest_t &facts, cpu_caches_t const &caches) noexcept {
        std::uint64_t const bytes = caches.largest_data_bytes();
        if (!bytes) return;
        for (compute_domain_facts_t &domain : facts.compute)
            if (domain.cache_source == fact_source_t::unknown_k && domain.cores_count == facts.online_cores)
                domain.cache_bytes = bytes, domain.cache_source = fact_source_t::cpuid_k;
    }

    /**
     *  @brief  Harvests the tree under `root` into `facts`, narrowed to `allowed` when it is not null. On false,
     *          `facts` is untouched: there was no usable CPU (no online CPU could be found, or none is allowed).
     *  @throws std::bad_alloc
     */
    template <typename harvest_t = facts_t>
    static bool try_harvest_sysfs(char const *root, cpu_mask_t const *allowed, harvest_t &facts) {
        if (!root) return false;
        sysfs_reader_t fs;
        if (!fs.try_set_root(root)) return false;
        // A list of CPUs or nodes that parses and names at least one.
        auto const nonempty_list = [](cpu_mask_t &mask) noexcept {
            return [&mask](char const *text, std::size_t length) noexcept {
                return parse_cpulist(text, length, mask) && !mask.empty();
            };
        };

        // Online CPUs, then the usable ones.
        cpu_mask_t online;
        bool const listed_online = fs.from_root().add(cpu_dir_k).add("/online").read_parsed(nonempty_list(online));
        if (!listed_online) {
            online.clear();
            fs.from_root().add(cpu_dir_k).list([&](char const *name, std::size_t name_length) noexcept {
                std::size_t cpu = 0;
                if (!parse_prefixed_id(name, name_length, "cpu", max_cpus_k, cpu)) return;
                std::uint64_t state = 1; // a directory without a usable `online` is an online CPU
                if (!fs.add("/")
                         .add(name, name_length)
                         .add("/online")
                         .read_parsed([&](char const *text, std::size_t length) noexcept {
                             return parse_unsigned(text, length, state, 1);
                         }))
                    state = 1;
                if (state) online.set(cpu);
            });
        }
        cpu_mask_t usable = online;
        if (allowed) usable.intersect_with(*allowed);
        if (usable.empty()) return false;

        harvest_t harvest;
        harvest.online_cores = online.count();
        // Scratch arrays share the type of `cores` (`detail::array_t<std::uint32_t>`), which depends on `harvest_t`.
        using ids_t = decltype(harvest.cores);
        constexpr std::uint32_t unclaimed_k = ~std::uint32_t(0);

        // NUMA nodes, ascending.
        ids_t nodes; // node ids, ascending
        cpu_mask_t node_set;
        bool const listed_nodes = fs.from_root().add(node_dir_k).add("/online").read_parsed(nonempty_list(node_set));
        if (!listed_nodes) {
            node_set.clear();
            fs.from_root().add(node_dir_k).list([&](char const *name, std::size_t name_length) noexcept {
                std::size_t node = 0;
                if (parse_prefixed_id(name, name_length, "node", max_numa_nodes_k, node)) node_set.set(node);
            });
        }
        for (std::size_t node = node_set.first(); node < max_numa_nodes_k; node = node_set.next_from(node + 1))
            nodes.push_back(static_cast<std::uint32_t>(node));
        bool const numa = !nodes.empty();
        if (!numa) nodes.push_back(0);

        // Each usable CPU to the index of the lowest node that lists it, or `unclaimed_k`.
        ids_t node_of(max_cpus_k, unclaimed_k);
        for (std::size_t index = 0; numa && index != nodes.size(); ++index) {
            cpu_mask_t cpus;
            bool const known =
                node_file_(fs, nodes[index], "/cpulist")
                    .read_parsed([&](char const *text, std::size_t length) noexcept {
                        return parse_cpulist(text, length, cpus);
                    }) ||
                node_file_(fs, nodes[index], "/cpumap").read_parsed([&](char const *text, std::size_t length) noexcept {
                    cpus.clear(); // nothing of a malformed `cpulist` stays
                    return parse_cpumask(text, length, cpus);
                });
            if (!known) continue;
            cpus.intersect_with(usable);
            for (std::size_t cpu = cpus.first(); cpu != cpu_mask_t::npos_k; cpu = cpus.next_from(cpu + 1))
                if (node_of[cpu] == unclaimed_k) node_of[cpu] = static_cast<std::uint32_t>(index);
        }

        // Capacities of every usable CPU, or of none.
        constexpr std::size_t capacity_limit_k = 1024; // SCHED_CAPACITY_SCALE: the fastest core
        ids_t capacity_of(max_cpus_k, 0);
        bool capacities_known = true;
        for (std::size_t cpu = usable.first(); cpu != cpu_mask_t::npos_k && capacities_known;
             cpu = usable.next_from(cpu + 1)) {
            std::uint64_t capacity = 0;
            capacities_known =
                cpu_file_(fs, cpu, "/cpu_capacity").read_parsed([&](char const *text, std::size_t length) noexcept {
                    return parse_unsigned(text, length, capacity, capacity_limit_k) && capacity != 0;
                });
            capacity_of[cpu] = static_cast<std::uint32_t>(capacity);
        }
        if (!capacities_known)
            for (std::uint32_t &capacity : capacity_of) capacity = 0;

        // Capacity classes: a new class where a value exceeds the class's smallest by more than 10%.
        bool seen[capacity_limit_k + 1] = {};
        for (std::size_t cpu = usable.first(); cpu != cpu_mask_t::npos_k; cpu = usable.next_from(cpu + 1))
            seen[capacity_of[cpu]] = true;
        std::uint16_t class_of[capacity_limit_k + 1] = {};
        std::uint16_t class_top[capacity_limit_k + 1] = {}; // the largest capacity in each class
        std::size_t classes = 0, class_smallest = 0;
        for (std::size_t capacity = 0; capacity <= capacity_limit_k; ++capacity) {
            if (!seen[capacity]) continue;
            if (!classes || capacity * 10 > class_smallest * 11) ++classes, class_smallest = capacity;
            class_of[capacity] = static_cast<std::uint16_t>(classes - 1);
            class_top[classes - 1] = static_cast<std::uint16_t>(capacity);
        }

        // Compute domains: by node (the unlisted CPUs last), then by class.
        for (std::size_t group = 0; group <= nodes.size(); ++group) {
            std::uint32_t const wanted = group == nodes.size() ? unclaimed_k : static_cast<std::uint32_t>(group);
            for (std::size_t level = 0; level != classes; ++level) {
                compute_domain_facts_t domain;
                domain.first_core = harvest.cores.size();
                domain.memory_domain = wanted == unclaimed_k ? 0 : group;
                domain.level = level;
                domain.capacity = class_top[level];
                cpu_mask_t members;
                for (std::size_t cpu = usable.first(); cpu != cpu_mask_t::npos_k; cpu = usable.next_from(cpu + 1))
                    if (node_of[cpu] == wanted && class_of[capacity_of[cpu]] == level) {
                        harvest.cores.push_back(static_cast<std::uint32_t>(cpu));
                        members.set(cpu);
                    }
                domain.cores_count = harvest.cores.size() - domain.first_core;
                if (!domain.cores_count) continue;
                bool caches_listed = false;
                domain.cache_bytes = private_cache_bytes_(fs, members, online, caches_listed);
                domain.cache_source = caches_listed ? fact_source_t::os_k : fact_source_t::unknown_k;
                harvest.compute.push_back(domain);
            }
        }
        harvest.compute_levels = classes;

        // Memory domains.
        read_huge_pages_(fs.from_root().add("/sys/kernel/mm/hugepages"), harvest.global_huge_pages);
        for (std::size_t index = 0; index != nodes.size(); ++index) {
            memory_domain_facts_t memory;
            memory.node_id = nodes[index];
            memory.first_huge_pages = harvest.huge_pages.size();
            auto const total = [&](char const *text, std::size_t length) noexcept {
                return parse_meminfo_field(text, length, "MemTotal", memory.ram_bytes);
            };
            if (numa) {
                (void)node_file_(fs, nodes[index], "/meminfo").read_parsed(total);
                read_huge_pages_(node_file_(fs, nodes[index], "/hugepages"), harvest.huge_pages);
            } else {
                (void)fs.from_root().add("/proc/meminfo").read_parsed(total);
                harvest.huge_pages = harvest.global_huge_pages;
            }
            memory.huge_page_sizes = harvest.huge_pages.size() - memory.first_huge_pages;
            harvest.memory.push_back(memory);
        }

        // Declared distances: row `a` is `node<a>/distance`, its columns the node list in id order.
        std::size_t const count = nodes.size();
        harvest.distances.assign(count * count, 0);
        std::uint8_t row[max_numa_nodes_k] = {};
        for (std::size_t a = 0; a != count; ++a) {
            harvest.distances[a * count + a] = harvest_t::local_distance_k;
            std::size_t found = 0;
            if (numa &&
                node_file_(fs, nodes[a], "/distance").read_parsed([&](char const *text, std::size_t length) noexcept {
                    return parse_distance_row(text, length, row, count, found) && found == count;
                }))
                for (std::size_t b = 0; b != count; ++b) harvest.distances[a * count + b] = row[b];
        }

        harvest.harvested = true;
        facts = static_cast<harvest_t &&>(harvest);
        return true;
    }

private:
    static constexpr char const *cpu_dir_k = "/sys/devices/system/cpu";
    static constexpr char const *node_dir_k = "/sys/devices/system/node";

    /**  Points `fs` at `<root>/sys/devices/system/cpu/cpu<cpu><file>`. */
    static sysfs_reader_t &cpu_file_(sysfs_reader_t &fs, std::size_t cpu, char const *file) noexcept {
        return fs.from_root().add(cpu_dir_k).add("/cpu").add_number(cpu).add(file);
    }
    /**  Points `fs` at `<root>/sys/devices/system/node/node<node><file>`. */
    static sysfs_reader_t &node_file_(sysfs_reader_t &fs, std::size_t node, char const *file) noexcept {
        return fs.from_root().add(node_dir_k).add("/node").add_number(node).add(file);
    }

    /**  The largest data or unified cache of `members` whose online sharers all lie in `members`; 0 if none.
     *  `listed` tells whether any member has an `indexK` cache directory at all. */
    template <typename reader_t>
    static std::uint64_t private_cache_bytes_(reader_t &fs, cpu_mask_t const &members, cpu_mask_t const &online,
                                              bool &listed) noexcept {
        std::uint64_t largest = 0;
        for (std::size_t cpu = members.first(); cpu != cpu_mask_t::npos_k; cpu = members.next_from(cpu + 1)) {
            cpu_file_(fs, cpu, "/cache").list([&](char const *name, std::size_t name_length) noexcept {
                std::size_t index = 0;
                if (!parse_prefixed_id(name, name_length, "index", max_cpus_k, index)) return;
                listed = true;
                std::size_t const entry = fs.add("/").add(name, name_length).mark();
                cache_type_t type = cache_type_t::unified_k;
                std::uint64_t bytes = 0;
                cpu_mask_t sharers;
                // Size first: most caches of later CPUs cannot beat the largest found, and are not read further.
                bool const usable =
                    fs.at(entry).add("/size").read_parsed([&](char const *text, std::size_t length) noexcept {
                        return parse_size_bytes(text, length, bytes);
                    }) &&
                    bytes > largest &&
                    fs.at(entry).add("/type").read_parsed([&](char const *text, std::size_t length) noexcept {
                        return parse_cache_type(text, length, type);
                    }) &&
                    type != cache_type_t::instruction_k &&
                    (fs.at(entry)
                         .add("/shared_cpu_list")
                         .read_parsed([&](char const *text, std::size_t length) noexcept {
                             return parse_cpulist(text, length, sharers);
                         }) ||
                     fs.at(entry)
                         .add("/shared_cpu_map")
                         .read_parsed([&](char const *text, std::size_t length) noexcept {
                             sharers.clear(); // nothing of a malformed `shared_cpu_list` stays
                             return parse_cpumask(text, length, sharers);
                         })) &&
                    sharers.test(cpu);
                if (!usable) return;
                sharers.intersect_with(online);
                if (sharers.is_subset_of(members)) largest = bytes;
            });
        }
        return largest;
    }

    /**  Appends the free huge pages of each `hugepages-<kB>kB` directory at `fs`'s path, ascending by size. */
    template <typename pages_t>
    static void read_huge_pages_(sysfs_reader_t &fs, pages_t &out) {
        huge_pages_facts_t found[64] = {}; // page sizes a machine offers: 2-4 in practice (x86 2 MiB, 1 GiB)
        std::size_t sizes = 0;
        fs.list([&](char const *name, std::size_t name_length) noexcept {
            huge_pages_facts_t pages;
            if (sizes == 64 || !parse_hugepages_dir_name(name, name_length, pages.page_bytes)) return;
            if (!fs.add("/")
                     .add(name, name_length)
                     .add("/free_hugepages")
                     .read_parsed([&](char const *text, std::size_t length) noexcept {
                         return parse_unsigned(text, length, pages.free_pages);
                     }))
                return;
            std::size_t at = sizes; // insertion into ascending order; a repeated size is dropped
            while (at && found[at - 1].page_bytes > pages.page_bytes) found[at] = found[at - 1], --at;
            if (at && found[at - 1].page_bytes == pages.page_bytes) {
                for (std::size_t i = at; i != sizes; ++i) found[i] = found[i + 1];
                return;
            }
            found[at] = pages;
            ++sizes;
        });
        for (std::size_t i = 0; i != sizes; ++i) out.push_back(found[i]);
    }
};

} // namespace forkunion::detail
#endif
