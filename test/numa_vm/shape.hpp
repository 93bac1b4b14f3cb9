/**
 *  @file   shape.hpp
 *  @brief  The NUMA guest shapes (the `.shape` files of `test/numa_vm/shapes/`): parsing one, turning it into
 * `qemu-system-x86_64` arguments, and the facts a guest harvest must then report.
 *
 *  One parser serves both sides: the host tool (`shape_tool.cpp`) turns a shape into the emulator's arguments, and
 *  the guest suite (`guest_test.cpp`) reads the same file as its expectations. The format is described in
 *  `test/numa_vm/README.md`; in short, line by line (`#` starts a comment):
 *
 *      node 0 cpus 2 memory 512M       nodes in id order from 0; `cpus 0` is a CPU-less memory node
 *      distances                       then one row per node: row i lists the distances from node i
 *      10 21
 *      21 10
 *      offline 3                       CPUs taken offline in the guest before the suites run (never CPU 0)
 *      hugepages 1 8 2M                node 1 reserves eight 2 MiB pages
 *
 *  CPUs are numbered in node order: node 0 owns CPUs 0 .. c0 - 1, node 1 the next c1, and so on. Without a
 *  `distances` block the emulator declares none and Linux assumes 10 locally and 20 between nodes.
 *
 *  Every error names its line and what was wrong; a shape that parses is valid for the emulator.
 */
#pragma once
#include <cstddef>
#include <cstdint>
#include <istream>
#include <sstream>
#include <string>
#include <vector>

namespace forkunion::numa_vm {

inline constexpr std::uint64_t mib_k = std::uint64_t(1) << 20;
inline constexpr std::uint64_t huge_page_2mib_bytes_k = 2 * mib_k;
/**  ACPI SLIT: 10 is a node's distance from itself; 11-254 are remote; 255 means unreachable. */
inline constexpr unsigned local_distance_k = 10, max_distance_k = 254, default_remote_distance_k = 20;
/**  Linux drops NUMA nodes smaller than 4 MiB and a node needs room for its page tables and per-node structures;
 *  128 MiB keeps every node usable. */
inline constexpr std::uint64_t min_node_bytes_k = 128 * mib_k;
/**  Guests run on the CI machine's two cores and 24 GiB, next to other work: small on purpose. */
inline constexpr std::size_t max_nodes_k = 8, max_cpus_k = 16;
inline constexpr std::uint64_t max_memory_bytes_k = 8192 * mib_k;

struct node_t {
    std::size_t cpus = 0;
    std::uint64_t memory_bytes = 0;
};

struct huge_reservation_t {
    std::size_t node = 0;
    std::size_t pages = 0;
    std::uint64_t page_bytes = huge_page_2mib_bytes_k;
};

struct shape_t {
    std::vector<node_t> nodes;
    /**  Row-major `nodes × nodes`; empty when the shape declares none. */
    std::vector<unsigned> distances;
    std::vector<std::size_t> offline;
    std::vector<huge_reservation_t> huge_pages;

    std::size_t cpus_count() const noexcept {
        std::size_t total = 0;
        for (node_t const &node : nodes) total += node.cpus;
        return total;
    }
    std::uint64_t memory_bytes() const noexcept {
        std::uint64_t total = 0;
        for (node_t const &node : nodes) total += node.memory_bytes;
        return total;
    }
    std::size_t first_cpu_of(std::size_t node) const noexcept {
        std::size_t first = 0;
        for (std::size_t n = 0; n != node; ++n) first += nodes[n].cpus;
        return first;
    }
    bool is_offline(std::size_t cpu) const noexcept {
        for (std::size_t id : offline)
            if (id == cpu) return true;
        return false;
    }
    /**  The node of CPU `cpu`; `nodes.size()` if there is no such CPU. */
    std::size_t node_of_cpu(std::size_t cpu) const noexcept {
        for (std::size_t n = 0, first = 0; n != nodes.size(); first += nodes[n].cpus, ++n)
            if (cpu < first + nodes[n].cpus) return n;
        return nodes.size();
    }
    /**  The CPUs of node `node` that stay online, ascending. */
    std::vector<std::size_t> online_cpus_of(std::size_t node) const {
        std::vector<std::size_t> cpus;
        for (std::size_t cpu = first_cpu_of(node); cpu != first_cpu_of(node) + nodes[node].cpus; ++cpu)
            if (!is_offline(cpu)) cpus.push_back(cpu);
        return cpus;
    }
    std::size_t online_cpus_count() const noexcept { return cpus_count() - offline.size(); }
    /**  The distance the firmware will declare from node `a` to node `b`. */
    unsigned distance(std::size_t a, std::size_t b) const noexcept {
        if (!distances.empty()) return distances[a * nodes.size() + b];
        return a == b ? local_distance_k : default_remote_distance_k;
    }
    /**  Huge pages of `page_bytes` that node `node` reserves (0 if none). */
    std::size_t huge_pages_on(std::size_t node, std::uint64_t page_bytes = huge_page_2mib_bytes_k) const noexcept {
        std::size_t pages = 0;
        for (huge_reservation_t const &reservation : huge_pages)
            if (reservation.node == node && reservation.page_bytes == page_bytes) pages += reservation.pages;
        return pages;
    }
};

namespace detail {

/**  A whole non-negative decimal number, or false. */
inline bool parse_count(std::string const &word, std::uint64_t &value) {
    if (word.empty() || word.size() > 12) return false;
    value = 0;
    for (char c : word) {
        if (c < '0' || c > '9') return false;
        value = value * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return true;
}

/**  `512M`, `1G` (binary units; a bare number is MiB); false for anything else. */
inline bool parse_size(std::string const &word, std::uint64_t &bytes) {
    if (word.empty()) return false;
    char const unit = word.back();
    std::uint64_t scale = mib_k;
    std::string digits = word;
    if (unit == 'M' || unit == 'G') {
        digits.pop_back();
        if (unit == 'G') scale = 1024 * mib_k;
    }
    std::uint64_t count = 0;
    if (!parse_count(digits, count) || count > (std::uint64_t(1) << 20)) return false;
    bytes = count * scale;
    return true;
}

inline std::vector<std::string> words_of(std::string line) {
    std::size_t const comment = line.find('#');
    if (comment != std::string::npos) line.erase(comment);
    std::vector<std::string> words;
    std::istringstream stream(line);
    for (std::string word; stream >> word;) words.push_back(word);
    return words;
}

} // namespace detail

/**
 *  Parses a shape from `input` into `shape`.
 *  @return An empty string on success; otherwise `"line N: what is wrong"` (or a line-less message for what only
 *          the whole file can tell), and `shape` is left in an unspecified state.
 */
inline std::string parse_shape(std::istream &input, shape_t &shape) {
    shape = shape_t{};
    std::size_t line_number = 0, distance_rows = 0;
    bool in_distances = false, saw_distances = false;
    auto const at = [&](std::string const &what) { return "line " + std::to_string(line_number) + ": " + what; };
    for (std::string line; std::getline(input, line);) {
        ++line_number;
        std::vector<std::string> const words = detail::words_of(line);
        if (words.empty()) continue;
        std::size_t const nodes = shape.nodes.size();
        if (in_distances) {
            if (words.size() != nodes)
                return at("a distance row needs " + std::to_string(nodes) + " numbers, one per node");
            for (std::size_t b = 0; b != nodes; ++b) {
                std::uint64_t value = 0;
                if (!detail::parse_count(words[b], value)) return at("'" + words[b] + "' is not a distance");
                bool const local = b == distance_rows;
                if (local && value != local_distance_k) return at("a node's distance from itself must be 10");
                if (!local && (value <= local_distance_k || value > max_distance_k))
                    return at("a distance between two nodes must lie in 11..254, not " + words[b]);
                shape.distances.push_back(static_cast<unsigned>(value));
            }
            in_distances = ++distance_rows != nodes;
            continue;
        }
        std::string const &keyword = words[0];
        if (keyword == "node") {
            std::uint64_t id = 0, cpus = 0, bytes = 0;
            if (words.size() != 6 || words[2] != "cpus" || words[4] != "memory")
                return at("expected 'node <id> cpus <count> memory <size>'");
            if (saw_distances) return at("every node comes before 'distances'");
            if (!detail::parse_count(words[1], id) || id != nodes)
                return at("nodes are numbered 0, 1, 2, ... in order: expected node " + std::to_string(nodes));
            if (nodes == max_nodes_k) return at("at most " + std::to_string(max_nodes_k) + " nodes");
            if (!detail::parse_count(words[3], cpus)) return at("'" + words[3] + "' is not a CPU count");
            if (!detail::parse_size(words[5], bytes))
                return at("'" + words[5] + "' is not a size (a whole number of MiB, or with M or G)");
            if (bytes < min_node_bytes_k) return at("a node needs at least 128M of memory");
            shape.nodes.push_back({static_cast<std::size_t>(cpus), bytes});
            if (shape.cpus_count() > max_cpus_k) return at("at most " + std::to_string(max_cpus_k) + " CPUs");
            if (shape.memory_bytes() > max_memory_bytes_k) return at("at most 8G of memory in all");
        } else if (keyword == "distances") {
            if (words.size() != 1) return at("'distances' stands alone; its rows follow on the next lines");
            if (saw_distances) return at("a second 'distances' block");
            if (nodes == 0) return at("'distances' comes after the nodes");
            saw_distances = in_distances = true;
        } else if (keyword == "offline") {
            if (words.size() < 2) return at("expected 'offline <cpu> [<cpu> ...]'");
            for (std::size_t w = 1; w != words.size(); ++w) {
                std::uint64_t cpu = 0;
                if (!detail::parse_count(words[w], cpu)) return at("'" + words[w] + "' is not a CPU id");
                if (cpu == 0) return at("CPU 0 boots the guest and cannot go offline");
                if (shape.is_offline(cpu)) return at("CPU " + words[w] + " is listed twice");
                shape.offline.push_back(static_cast<std::size_t>(cpu));
            }
        } else if (keyword == "hugepages") {
            std::uint64_t node = 0, pages = 0, bytes = 0;
            if (words.size() != 4) return at("expected 'hugepages <node> <count> 2M'");
            if (!detail::parse_count(words[1], node)) return at("'" + words[1] + "' is not a node id");
            if (!detail::parse_count(words[2], pages) || pages == 0)
                return at("'" + words[2] + "' is not a positive page count");
            if (!detail::parse_size(words[3], bytes) || bytes != huge_page_2mib_bytes_k)
                return at("the guest CPU offers 2M huge pages only, not '" + words[3] + "'");
            shape.huge_pages.push_back({static_cast<std::size_t>(node), static_cast<std::size_t>(pages), bytes});
        } else {
            return at("unknown keyword '" + keyword + "' (node, distances, offline, hugepages)");
        }
    }
    if (in_distances) return "the distances block ends after " + std::to_string(distance_rows) + " of its rows";
    if (shape.nodes.empty()) return "a shape needs at least one node";
    if (shape.cpus_count() == 0) return "a shape needs at least one CPU";
    for (std::size_t cpu : shape.offline)
        if (cpu >= shape.cpus_count())
            return "offline CPU " + std::to_string(cpu) + " does not exist (CPUs 0.." +
                   std::to_string(shape.cpus_count() - 1) + ")";
    for (huge_reservation_t const &reservation : shape.huge_pages) {
        if (reservation.node >= shape.nodes.size())
            return "hugepages on node " + std::to_string(reservation.node) + ", which the shape lacks";
        if (shape.huge_pages_on(reservation.node) * reservation.page_bytes * 2 >
            shape.nodes[reservation.node].memory_bytes)
            return "hugepages take more than half of node " + std::to_string(reservation.node) + "'s memory";
    }
    return {};
}

/**  Parses a shape from text (for tests). */
inline std::string parse_shape(std::string const &text, shape_t &shape) {
    std::istringstream stream(text);
    return parse_shape(stream, shape);
}

/**
 *  The `qemu-system-x86_64` arguments that build the machine of `shape`: one socket per CPU (so no last-level cache
 *  spans two nodes), one RAM backend per node, each CPU in its node, and every off-diagonal distance. The caller
 *  adds the accelerator, kernel, initramfs and console.
 */
inline std::vector<std::string> qemu_arguments(shape_t const &shape) {
    std::vector<std::string> arguments;
    auto const add = [&](std::string first, std::string second) {
        arguments.push_back(std::move(first));
        arguments.push_back(std::move(second));
    };
    std::string const cpus = std::to_string(shape.cpus_count());
    add("-m", std::to_string(shape.memory_bytes() / mib_k) + "M");
    add("-smp", cpus + ",sockets=" + cpus + ",cores=1,threads=1");
    for (std::size_t n = 0; n != shape.nodes.size(); ++n) {
        std::string const id = std::to_string(n);
        add("-object",
            "memory-backend-ram,id=ram" + id + ",size=" + std::to_string(shape.nodes[n].memory_bytes / mib_k) + "M");
        add("-numa", "node,nodeid=" + id + ",memdev=ram" + id);
    }
    for (std::size_t cpu = 0; cpu != shape.cpus_count(); ++cpu)
        add("-numa", "cpu,node-id=" + std::to_string(shape.node_of_cpu(cpu)) + ",socket-id=" + std::to_string(cpu));
    if (!shape.distances.empty())
        for (std::size_t a = 0; a != shape.nodes.size(); ++a)
            for (std::size_t b = 0; b != shape.nodes.size(); ++b)
                if (a != b)
                    add("-numa", "dist,src=" + std::to_string(a) + ",dst=" + std::to_string(b) +
                                     ",val=" + std::to_string(shape.distance(a, b)));
    return arguments;
}

/**  A one-line summary: `4 nodes (3+1+2+0 CPUs, 384+256+256+256 MiB), offline 5, hugepages 0:4`. */
inline std::string describe(shape_t const &shape) {
    std::string cpus, memory, text = std::to_string(shape.nodes.size());
    for (std::size_t n = 0; n != shape.nodes.size(); ++n) {
        if (n) cpus += '+', memory += '+';
        cpus += std::to_string(shape.nodes[n].cpus);
        memory += std::to_string(shape.nodes[n].memory_bytes / mib_k);
    }
    text += shape.nodes.size() == 1 ? " node (" : " nodes (";
    text += cpus, text += " CPUs, ", text += memory, text += " MiB)";
    for (std::size_t i = 0; i != shape.offline.size(); ++i)
        text += i ? "," : ", offline ", text += std::to_string(shape.offline[i]);
    for (std::size_t i = 0; i != shape.huge_pages.size(); ++i) {
        text += i ? " " : ", hugepages ";
        text += std::to_string(shape.huge_pages[i].node), text += ':',
            text += std::to_string(shape.huge_pages[i].pages);
    }
    return text;
}

} // namespace forkunion::numa_vm
