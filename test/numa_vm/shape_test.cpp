/**
 *  @file   shape_test.cpp
 *  @brief  Tests of the guest-shape parser (`shape.hpp`), on the host: every shape of the repository parses into
 *          the machine its comments describe, the emulator's arguments say the same, and each malformed line is
 *          refused with its line number and what is wrong.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "shape.hpp"

namespace nv = forkunion::numa_vm;

namespace {

nv::shape_t parsed(std::string const &text) {
    nv::shape_t shape;
    std::string const error = nv::parse_shape(text, shape);
    EXPECT_EQ(error, "") << text;
    return shape;
}

std::string refusal(std::string const &text) {
    nv::shape_t shape;
    return nv::parse_shape(text, shape);
}

bool has(std::vector<std::string> const &arguments, std::string const &flag, std::string const &value) {
    for (std::size_t i = 0; i + 1 < arguments.size(); ++i)
        if (arguments[i] == flag && arguments[i + 1] == value) return true;
    return false;
}

} // namespace

TEST(numa_vm_shape, every_shape_of_the_repository_parses) {
    std::size_t shapes = 0;
    for (auto const &entry : std::filesystem::directory_iterator(FORKUNION_NUMA_VM_SHAPES)) {
        if (entry.path().extension() != ".shape") continue;
        std::ifstream file(entry.path());
        nv::shape_t shape;
        EXPECT_EQ(nv::parse_shape(file, shape), "") << entry.path();
        EXPECT_FALSE(nv::qemu_arguments(shape).empty());
        ++shapes;
    }
    EXPECT_GE(shapes, 4u) << "two nodes, four uneven nodes, one node, offline CPUs";
}

TEST(numa_vm_shape, uneven_nodes_and_a_cpuless_node_become_the_right_machine) {
    nv::shape_t const shape = parsed("# four nodes\n"
                                     "node 0 cpus 3 memory 384M\n"
                                     "node 1 cpus 1 memory 256M   # one CPU\n"
                                     "node 2 cpus 2 memory 256M\n"
                                     "node 3 cpus 0 memory 256M\n"
                                     "distances\n"
                                     "10 16 22 28\n"
                                     "18 10 20 26\n"
                                     "\n"
                                     "24 21 10 17\n"
                                     "30 27 19 10\n"
                                     "hugepages 3 4 2M\n");
    ASSERT_EQ(shape.nodes.size(), 4u);
    EXPECT_EQ(shape.cpus_count(), 6u);
    EXPECT_EQ(shape.memory_bytes(), 1152 * nv::mib_k);
    EXPECT_EQ(shape.online_cpus_of(0), (std::vector<std::size_t>{0, 1, 2}));
    EXPECT_EQ(shape.online_cpus_of(1), (std::vector<std::size_t>{3}));
    EXPECT_EQ(shape.online_cpus_of(2), (std::vector<std::size_t>{4, 5}));
    EXPECT_TRUE(shape.online_cpus_of(3).empty());
    EXPECT_EQ(shape.distance(0, 1), 16u);
    EXPECT_EQ(shape.distance(1, 0), 18u) << "rows are the distances from their node";
    EXPECT_EQ(shape.distance(3, 3), 10u);
    EXPECT_EQ(shape.huge_pages_on(3), 4u);
    EXPECT_EQ(shape.huge_pages_on(0), 0u);

    std::vector<std::string> const arguments = nv::qemu_arguments(shape);
    EXPECT_TRUE(has(arguments, "-m", "1152M"));
    EXPECT_TRUE(has(arguments, "-smp", "6,sockets=6,cores=1,threads=1"));
    EXPECT_TRUE(has(arguments, "-object", "memory-backend-ram,id=ram0,size=384M"));
    EXPECT_TRUE(has(arguments, "-numa", "node,nodeid=3,memdev=ram3"));
    EXPECT_TRUE(has(arguments, "-numa", "cpu,node-id=0,socket-id=2"));
    EXPECT_TRUE(has(arguments, "-numa", "cpu,node-id=1,socket-id=3"));
    EXPECT_TRUE(has(arguments, "-numa", "cpu,node-id=2,socket-id=5"));
    EXPECT_TRUE(has(arguments, "-numa", "dist,src=1,dst=0,val=18"));
    EXPECT_TRUE(has(arguments, "-numa", "dist,src=3,dst=0,val=30"));
    EXPECT_EQ(std::count(arguments.begin(), arguments.end(), "-numa"), 4 + 6 + 12);
    EXPECT_EQ(nv::describe(shape), "4 nodes (3+1+2+0 CPUs, 384+256+256+256 MiB), hugepages 3:4");
}

TEST(numa_vm_shape, offline_cpus_leave_their_nodes) {
    nv::shape_t const shape = parsed("node 0 cpus 2 memory 256M\nnode 1 cpus 2 memory 256M\n"
                                     "node 2 cpus 1 memory 1G\noffline 3 4\n");
    EXPECT_EQ(shape.online_cpus_count(), 3u);
    EXPECT_EQ(shape.online_cpus_of(1), (std::vector<std::size_t>{2}));
    EXPECT_TRUE(shape.online_cpus_of(2).empty());
    EXPECT_EQ(shape.node_of_cpu(4), 2u);
    EXPECT_EQ(shape.node_of_cpu(5), 3u) << "no such CPU";
    EXPECT_EQ(shape.nodes[2].memory_bytes, 1024 * nv::mib_k);
    EXPECT_EQ(shape.distance(0, 2), 20u) << "no distances: Linux's default";
    std::vector<std::string> const arguments = nv::qemu_arguments(shape);
    EXPECT_EQ(std::count(arguments.begin(), arguments.end(), "-numa"), 3 + 5) << "no dist entries";
}

TEST(numa_vm_shape, malformed_shapes_are_refused_with_their_line) {
    std::string const two = "node 0 cpus 1 memory 256M\nnode 1 cpus 1 memory 256M\n";
    EXPECT_EQ(refusal(""), "a shape needs at least one node");
    EXPECT_EQ(refusal("node 0 cpus 0 memory 256M\n"), "a shape needs at least one CPU");
    EXPECT_EQ(refusal("node 1 cpus 1 memory 256M\n"),
              "line 1: nodes are numbered 0, 1, 2, ... in order: expected node 0");
    EXPECT_EQ(refusal("node 0 cpus 1\n"), "line 1: expected 'node <id> cpus <count> memory <size>'");
    EXPECT_EQ(refusal("node 0 cpus x memory 256M\n"), "line 1: 'x' is not a CPU count");
    EXPECT_EQ(refusal("node 0 cpus 1 memory 12T\n"),
              "line 1: '12T' is not a size (a whole number of MiB, or with M or G)");
    EXPECT_EQ(refusal("node 0 cpus 1 memory 64M\n"), "line 1: a node needs at least 128M of memory");
    EXPECT_EQ(refusal("node 0 cpus 17 memory 256M\n"), "line 1: at most 16 CPUs");
    EXPECT_EQ(refusal("node 0 cpus 1 memory 9G\n"), "line 1: at most 8G of memory in all");
    EXPECT_EQ(refusal("# comment\nnodes 0\n"), "line 2: unknown keyword 'nodes' (node, distances, offline, hugepages)");
    EXPECT_EQ(refusal("distances\n"), "line 1: 'distances' comes after the nodes");
    EXPECT_EQ(refusal(two + "distances\n10 21\n"), "the distances block ends after 1 of its rows");
    EXPECT_EQ(refusal(two + "distances\n10 21 30\n"), "line 4: a distance row needs 2 numbers, one per node");
    EXPECT_EQ(refusal(two + "distances\n11 21\n21 10\n"), "line 4: a node's distance from itself must be 10");
    EXPECT_EQ(refusal(two + "distances\n10 10\n21 10\n"),
              "line 4: a distance between two nodes must lie in 11..254, not 10");
    EXPECT_EQ(refusal(two + "distances\n10 255\n21 10\n"),
              "line 4: a distance between two nodes must lie in 11..254, not 255");
    EXPECT_EQ(refusal(two + "distances\n10 21\n21 10\ndistances\n"), "line 6: a second 'distances' block");
    EXPECT_EQ(refusal(two + "distances\n10 21\n21 10\nnode 2 cpus 1 memory 256M\n"),
              "line 6: every node comes before 'distances'");
    EXPECT_EQ(refusal(two + "offline 0\n"), "line 3: CPU 0 boots the guest and cannot go offline");
    EXPECT_EQ(refusal(two + "offline 1 1\n"), "line 3: CPU 1 is listed twice");
    EXPECT_EQ(refusal(two + "offline 2\n"), "offline CPU 2 does not exist (CPUs 0..1)");
    EXPECT_EQ(refusal(two + "hugepages 2 4 2M\n"), "hugepages on node 2, which the shape lacks");
    EXPECT_EQ(refusal(two + "hugepages 0 4 1G\n"), "line 3: the guest CPU offers 2M huge pages only, not '1G'");
    EXPECT_EQ(refusal(two + "hugepages 0 0 2M\n"), "line 3: '0' is not a positive page count");
    EXPECT_EQ(refusal(two + "hugepages 0 100 2M\n"), "hugepages take more than half of node 0's memory");
}
