/**
 *  @file   sysfs_warning_test.cpp
 *  @brief  A sysfs file the harvest finds but cannot use is skipped with one warning naming it, never silently.
 *
 *  Trees are corrupted one file at a time: each file the harvest reads, made malformed (`garbage`), unusable (a
 *  directory, a FIFO, a file over the size limit), gives exactly one warning that names its path, and the harvest
 *  still succeeds with the rule's fallback; no file ever gives a warning that names another. A clean tree gives
 *  none. Warnings are caught by a sink (`base/warnings.hpp`); one test reads the default, stderr.
 */
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <forkunion/base/warnings.hpp>
#include <forkunion/topology/topology.hpp>

#if FORKUNION_OS_LINUX
#include <sys/stat.h> // `mkfifo`
#endif

#include "topology_support.hpp"

namespace fu = forkunion;
namespace fut = forkunion::testing;

namespace {

std::string const fixtures_root = FORKUNION_SYSFS_FIXTURES_ROOT; // extracted trees

/**  Installs itself as the warning sink for its lifetime and keeps every line. */
class caught_warnings_t {
    std::vector<std::string> lines_;
    fu::warning_sink_t sink_{&caught_warnings_t::keep_, this};
    fu::warning_sink_t const *previous_ = nullptr;
    static void keep_(void *self, char const *line) noexcept {
        static_cast<caught_warnings_t *>(self)->lines_.push_back(line);
    }

public:
    caught_warnings_t() : previous_(fu::set_warning_sink(&sink_)) {}
    ~caught_warnings_t() { (void)fu::set_warning_sink(previous_); }
    caught_warnings_t(caught_warnings_t const &) = delete;
    caught_warnings_t &operator=(caught_warnings_t const &) = delete;
    std::vector<std::string> const &lines() const noexcept { return lines_; }
    std::string joined() const {
        std::string all;
        for (std::string const &line : lines_) all += line + "\n";
        return all;
    }
};

/**  Harvests `root` and returns whether it succeeded, with the warnings it gave. */
bool harvest(std::string const &root, std::vector<std::string> &warnings) {
    caught_warnings_t caught;
    fu::machine_topology_t topology;
    bool const harvested = topology.try_harvest_from_sysfs(root.c_str());
    warnings = caught.lines();
    return harvested;
}

/**  Whether `line` ends with exactly `path` (the warning names the whole path, and nothing follows it). */
bool names(std::string const &line, std::string const &path) {
    return line.size() > path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0 &&
           line[line.size() - path.size() - 1] == ' ';
}

/**  Replaces `relative` under `tree` with what `corrupt` writes there, harvests, puts the original back, and checks
 *   the harvest succeeded with exactly `expected` warnings (0 or 1), the one naming the file. */
template <typename corrupt_t>
void expect_warnings_for(fut::synthetic_tree_t const &tree, std::string const &relative, std::size_t expected,
                         corrupt_t &&corrupt) {
    std::filesystem::path const file = tree.path(relative);
    std::filesystem::path const saved = file.string() + ".saved-by-test";
    std::filesystem::rename(file, saved);
    corrupt(file);
    std::vector<std::string> warnings;
    bool const harvested = harvest(tree.root(), warnings);
    std::filesystem::remove_all(file);
    std::filesystem::rename(saved, file);
    EXPECT_TRUE(harvested) << relative;
    std::string all;
    for (std::string const &line : warnings) all += line + "\n";
    EXPECT_LE(warnings.size(), 1u) << relative << ":\n" << all;
    if (expected) {
        EXPECT_EQ(warnings.size(), expected) << relative << ": no warning";
    }
    for (std::string const &line : warnings) EXPECT_TRUE(names(line, file.string())) << relative << ": " << line;
}

void write_garbage(std::filesystem::path const &file) {
    std::ofstream(file) << "garbage\n";
}

/**  The files of a synthetic machine that its harvest reads (every one of them, with `cpu_capacity`). */
std::vector<std::string> files_read_by_the_harvest() {
    std::string const cpu = "sys/devices/system/cpu/", node = "sys/devices/system/node/";
    return {
        cpu + "online",
        cpu + "cpu5/cpu_capacity",
        cpu + "cpu0/cache/index0/size", // every size is read
        cpu + "cpu3/cache/index1/size",
        cpu + "cpu0/cache/index3/type", // the type and sharers of a cache larger than any seen before it
        cpu + "cpu0/cache/index3/shared_cpu_list",
        node + "online",
        node + "node0/cpulist",
        node + "node1/cpulist",
        node + "node0/meminfo",
        node + "node1/distance",
        node + "node0/hugepages/hugepages-2048kB/free_hugepages",
        "sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages",
    };
}

fut::synthetic_machine_t machine_with_capacities() {
    fut::synthetic_machine_t machine;
    machine.capacities.assign(machine.cpus(), 1024);
    return machine;
}

} // namespace

TEST(sysfs_warning, a_clean_tree_gives_none) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_tree_t tree;
    machine_with_capacities().write_to(tree);
    std::vector<std::string> warnings;
    EXPECT_TRUE(harvest(tree.root(), warnings));
    EXPECT_TRUE(warnings.empty()) << warnings.front();
}

TEST(sysfs_warning, each_malformed_file_read_gives_one_warning_naming_it) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_tree_t tree;
    machine_with_capacities().write_to(tree);
    for (std::string const &relative : files_read_by_the_harvest())
        expect_warnings_for(tree, relative, 1, write_garbage);
}

TEST(sysfs_warning, files_read_only_as_fallbacks_warn_when_the_fallback_reads_them) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    // No `cpu/online`: each `cpuN/online` is read. No `cpulist`: each `cpumap` and `shared_cpu_map` is read.
    fut::synthetic_machine_t legacy;
    legacy.legacy = true;
    fut::synthetic_tree_t tree;
    legacy.write_to(tree);
    for (char const *relative : {"sys/devices/system/cpu/cpu3/online", "sys/devices/system/node/node1/cpumap",
                                 "sys/devices/system/cpu/cpu0/cache/index2/shared_cpu_map"})
        expect_warnings_for(tree, relative, 1, write_garbage);
}

TEST(sysfs_warning, unusable_files_give_one_warning_naming_them) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_tree_t tree;
    machine_with_capacities().write_to(tree);
    std::string const cpulist = "sys/devices/system/node/node0/cpulist";
    expect_warnings_for(tree, cpulist, 1, [](std::filesystem::path const &file) {
        std::filesystem::create_directory(file); // a directory where a file belongs
    });
#if FORKUNION_OS_LINUX // the size limit and FIFOs belong to the Linux sysfs reader
    expect_warnings_for(tree, cpulist, 1, [](std::filesystem::path const &file) {
        std::ofstream(file) << std::string(fu::detail::sysfs_file_bytes_limit_k + 1, '0'); // one byte too long
    });
    expect_warnings_for(tree, cpulist, 1, [](std::filesystem::path const &file) {
        ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0); // opened without blocking, and refused
    });
#endif
    // A missing file is normal (`cpu_capacity` outside big.LITTLE, `cpulist` on old kernels): no warning.
    expect_warnings_for(tree, "sys/devices/system/cpu/cpu5/cpu_capacity", 0, [](std::filesystem::path const &) {});
}

TEST(sysfs_warning, no_file_ever_warns_about_another) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_tree_t tree;
    machine_with_capacities().write_to(tree);
    for (std::string const &relative : tree.files()) expect_warnings_for(tree, relative, 0, write_garbage);
}

TEST(sysfs_warning, a_recorded_machine_corrupted_file_by_file) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    // A copy of the recorded two-socket Xeon, whose harvest must keep working whatever one file says.
    fut::synthetic_tree_t tree;
    std::filesystem::copy(fixtures_root + "/32intel64-2p8co2t+8ve", tree.root(),
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
    std::vector<std::string> warnings;
    ASSERT_TRUE(harvest(tree.root(), warnings));
    ASSERT_TRUE(warnings.empty()) << warnings.front();
    std::string const cpu = "sys/devices/system/cpu/", node = "sys/devices/system/node/";
    for (std::string const &relative :
         {cpu + "online", node + "online", node + "node0/cpulist", node + "node1/meminfo", node + "node0/distance",
          cpu + "cpu17/cache/index2/size", cpu + "cpu0/cache/index3/shared_cpu_list"})
        expect_warnings_for(tree, relative, 1, write_garbage);
}

TEST(sysfs_warning, a_tree_left_without_cpus_is_refused_and_says_why) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    // `cpu/online` is garbage and no `cpuN` directory remains to fall back on: the documented refusal.
    fut::synthetic_tree_t tree;
    fut::synthetic_machine_t{}.write_to(tree);
    for (std::size_t cpu = 0; cpu != 8; ++cpu) tree.remove("sys/devices/system/cpu/cpu" + std::to_string(cpu));
    tree.write("sys/devices/system/cpu/online", "0-x\n");
    std::vector<std::string> warnings;
    EXPECT_FALSE(harvest(tree.root(), warnings));
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_TRUE(names(warnings[0], tree.path("sys/devices/system/cpu/online").string())) << warnings[0];
}

TEST(sysfs_warning, goes_to_stderr_without_a_sink) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_tree_t tree;
    fut::synthetic_machine_t{}.write_to(tree);
    tree.write("sys/devices/system/node/node1/meminfo", "Node 1 MemTotal: lots\n");
    ::testing::internal::CaptureStderr();
    fu::machine_topology_t topology;
    bool const harvested = topology.try_harvest_from_sysfs(tree.root().c_str());
    std::string const printed = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(harvested);
    EXPECT_EQ(printed, "forkunion: warning: skipped a malformed sysfs file: " +
                           tree.path("sys/devices/system/node/node1/meminfo").string() + "\n");
    EXPECT_EQ(topology.memory_domains_count(), 2u);
    EXPECT_EQ(topology.volume_ram_in(1), 0u) << "a malformed MemTotal is unknown, never a guess";
}
