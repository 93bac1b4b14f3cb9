/**
 *  @file   c/gomp/environment.cpp
 *  @brief  The `OMP_*` and `GOMP_*` environment variables, the place list, and `OMP_DISPLAY_ENV`.
 *
 *  Read once, when the library loads. Names, forms and defaults are the OpenMP specification's (and libgomp's for
 *  `GOMP_SPINCOUNT`, `GOMP_STACKSIZE`, `GOMP_CPU_AFFINITY`). A malformed value prints one line to `stderr` naming
 *  the variable, the value and the form expected, and the variable then counts as unset, as with libgomp:
 *
 *      forkunion gomp: OMP_NUM_THREADS='4x': expected a positive integer or a comma-separated list of them; ignored
 *
 *  Variables the drop-in accepts but cannot honour fully say so in the same style (nesting beyond one level).
 */
#include "runtime.hpp"

#include <cctype>  // `std::tolower`
#include <climits> // `UINT_MAX`
#include <cstdio>  // `std::fprintf`
#include <cstdlib> // `std::getenv`
#include <cstring> // `std::strlen`
#include <new>     // `std::nothrow`

#include <dlfcn.h> // `dlopen`

#include "omp_api.hpp"

#include <forkunion/topology/affinity.hpp>
#include <forkunion/hardware/cores.hpp>
#include <forkunion/topology/parse.hpp>

namespace forkunion::gomp {
namespace {

places_t places_;

/**  `[text, text + length)` after blanks are stripped from both ends. */
struct text_t {
    char const *data = nullptr;
    std::size_t length = 0;
};

text_t trimmed(char const *text, std::size_t length) noexcept {
    trim_blanks(text, length);
    return {text, length};
}

bool equals_ignoring_case(text_t text, char const *word) noexcept {
    std::size_t const length = std::strlen(word);
    if (text.length != length) return false;
    for (std::size_t i = 0; i != length; ++i)
        if (std::tolower(static_cast<unsigned char>(text.data[i])) != word[i]) return false;
    return true;
}

/**  A whole decimal number `<= limit` in a variable, after an optional `+` (libgomp reads its numbers with `strtoul`,
 *   which takes one). A `-` is refused, as libgomp refuses it in every variable but `OMP_SCHEDULE`'s chunk. */
bool parse_count(char const *text, std::size_t length, std::uint64_t &value,
                 std::uint64_t limit = ~std::uint64_t(0)) noexcept {
    text_t const number = trimmed(text, length);
    if (number.length > 1 && number.data[0] == '+' && number.data[1] >= '0' && number.data[1] <= '9')
        return parse_unsigned(number.data + 1, number.length - 1, value, limit);
    return parse_unsigned(number.data, number.length, value, limit);
}

/**  The warnings of `read_environment`, kept until `report_environment`: under `LD_PRELOAD` every process of a
 *   command line loads this library (`env`, `timeout`, the shell), and only the one that makes OpenMP calls should
 *   speak. Written only while the environment is read (once, by one thread), read after it was. */
char pending_warnings_[4096];
std::size_t pending_length_ = 0;
bool pending_truncated_ = false;
std::atomic<bool> reported_{false};

/**  Queues the warning `forkunion gomp: NAME='VALUE': what` for stderr. */
void warn(char const *name, char const *value, char const *what) noexcept {
    std::size_t const room = sizeof(pending_warnings_) - pending_length_;
    int const written =
        std::snprintf(pending_warnings_ + pending_length_, room, "forkunion gomp: %s='%s': %s\n", name, value, what);
    if (written < 0 || static_cast<std::size_t>(written) >= room) {
        pending_warnings_[pending_length_] = '\0'; // no half line
        pending_truncated_ = true;
        return;
    }
    pending_length_ += static_cast<std::size_t>(written);
}

void complain(char const *name, char const *value, char const *expected) noexcept {
    char what[160];
    std::snprintf(what, sizeof(what), "expected %s; ignored", expected);
    warn(name, value, what);
}

/**  A per-level list longer than the levels it can set: said, since deeper levels then take the last one kept. */
void note_list_cut(char const *name, char const *value, unsigned pieces) noexcept {
    if (pieces > 8) warn(name, value, "only the first 8 entries are used; deeper nesting levels take the 8th");
}

/**  A boolean variable: `true` or `false`, any case. Returns false (and leaves `out`) when unset or malformed. */
bool read_boolean(char const *name, bool &out) noexcept {
    char const *value = std::getenv(name);
    if (!value) return false;
    text_t const text = trimmed(value, std::strlen(value));
    if (equals_ignoring_case(text, "true")) return out = true, true;
    if (equals_ignoring_case(text, "false")) return out = false, true;
    complain(name, value, "true or false");
    return false;
}

/**  An integer variable within `[low, high]`. */
bool read_integer(char const *name, std::uint64_t low, std::uint64_t high, std::uint64_t &out,
                  char const *expected) noexcept {
    char const *value = std::getenv(name);
    if (!value) return false;
    std::uint64_t parsed = 0;
    if (parse_count(value, std::strlen(value), parsed, high) && parsed >= low) return out = parsed, true;
    complain(name, value, expected);
    return false;
}

/**  Splits `text` at `separator`, calling `fn(piece)` for each; false as soon as `fn` refuses one. */
template <typename fn_type_>
bool for_each_piece(text_t text, char separator, fn_type_ &&fn) noexcept {
    std::size_t begin = 0;
    for (std::size_t i = 0; i <= text.length; ++i) {
        if (i != text.length && text.data[i] != separator) continue;
        if (!fn(trimmed(text.data + begin, i - begin))) return false;
        begin = i + 1;
    }
    return true;
}

void read_num_threads(settings_t &s) noexcept {
    char const *value = std::getenv("OMP_NUM_THREADS");
    if (!value) return;
    unsigned list[8] = {0};
    unsigned size = 0, pieces = 0;
    bool const ok = for_each_piece(trimmed(value, std::strlen(value)), ',', [&](text_t piece) noexcept {
        std::uint64_t count = 0;
        if (!parse_count(piece.data, piece.length, count, 0x7fffffffu) || count == 0) return false;
        if (size < 8) list[size++] = static_cast<unsigned>(count);
        ++pieces;
        return true;
    });
    if (!ok || size == 0)
        return complain("OMP_NUM_THREADS", value, "a positive integer or a comma-separated list of them");
    note_list_cut("OMP_NUM_THREADS", value, pieces);
    for (unsigned i = 0; i != size; ++i) s.nthreads_list[i] = list[i];
    s.nthreads_list_size = size;
    s.initial.nthreads = list[0];
}

void read_schedule(settings_t &s) noexcept {
    char const *value = std::getenv("OMP_SCHEDULE");
    if (!value) return;
    char const *expected = "[monotonic:|nonmonotonic:]static|dynamic|guided|auto[,chunk], chunk a positive integer";
    text_t text = trimmed(value, std::strlen(value));
    int modifier = 0; // 1 monotonic, -1 nonmonotonic
    for (std::size_t i = 0; i != text.length; ++i) {
        if (text.data[i] != ':') continue;
        text_t const word = trimmed(text.data, i);
        if (equals_ignoring_case(word, "monotonic"))
            modifier = 1;
        else if (equals_ignoring_case(word, "nonmonotonic"))
            modifier = -1;
        else
            return complain("OMP_SCHEDULE", value, expected);
        text = trimmed(text.data + i + 1, text.length - i - 1);
        break;
    }
    text_t kind_text = text, chunk_text;
    for (std::size_t i = 0; i != text.length; ++i)
        if (text.data[i] == ',') {
            kind_text = trimmed(text.data, i);
            chunk_text = trimmed(text.data + i + 1, text.length - i - 1);
            break;
        }
    int kind = 0;
    if (equals_ignoring_case(kind_text, "static"))
        kind = sched_static_k;
    else if (equals_ignoring_case(kind_text, "dynamic"))
        kind = sched_dynamic_k;
    else if (equals_ignoring_case(kind_text, "guided"))
        kind = sched_guided_k;
    else if (equals_ignoring_case(kind_text, "auto"))
        kind = sched_auto_k;
    else
        return complain("OMP_SCHEDULE", value, expected);
    std::uint64_t chunk = kind == sched_static_k ? 0 : 1;
    if (chunk_text.data && !parse_count(chunk_text.data, chunk_text.length, chunk, 0x7fffffffu))
        return complain("OMP_SCHEDULE", value, expected);
    if (chunk == 0 && kind != sched_static_k) chunk = 1;
    // `static` is monotonic unless said otherwise; `dynamic` and `guided` only when said.
    bool const monotonic = modifier > 0 || (kind == sched_static_k && modifier == 0);
    s.initial.run_sched = kind | (monotonic ? static_cast<int>(sched_monotonic_k) : 0);
    s.initial.run_chunk = static_cast<int>(chunk); // `auto` keeps its chunk too, as libgomp's does (`auto,5`: 5)
}

int bind_of(text_t word) noexcept {
    if (equals_ignoring_case(word, "false")) return bind_false_k;
    if (equals_ignoring_case(word, "true")) return bind_true_k;
    if (equals_ignoring_case(word, "primary") || equals_ignoring_case(word, "master")) return bind_primary_k;
    if (equals_ignoring_case(word, "close")) return bind_close_k;
    if (equals_ignoring_case(word, "spread")) return bind_spread_k;
    return -1;
}

bool read_proc_bind(settings_t &s) noexcept {
    char const *value = std::getenv("OMP_PROC_BIND");
    if (!value) return false;
    int list[8] = {0};
    unsigned size = 0, pieces = 0;
    bool const ok = for_each_piece(trimmed(value, std::strlen(value)), ',', [&](text_t piece) noexcept {
        int const bind = bind_of(piece);
        // `false` and `true` stand alone: neither is a per-level policy.
        bool const alone = bind == bind_false_k || bind == bind_true_k;
        if (bind < 0 || (alone && pieces) || (pieces && (list[0] == bind_false_k || list[0] == bind_true_k)))
            return false;
        if (size < 8) list[size++] = bind;
        ++pieces;
        return true;
    });
    if (!ok || size == 0) {
        complain("OMP_PROC_BIND", value, "false, true, or a comma-separated list of primary, master, close, spread");
        return false;
    }
    note_list_cut("OMP_PROC_BIND", value, pieces);
    for (unsigned i = 0; i != size; ++i) s.bind_list[i] = list[i];
    s.bind_list_size = size;
    s.initial.bind = list[0];
    return true;
}

// ---- Places ----

/**  Collects places: each is a run of CPU ids in one shared table. */
struct place_builder_t {
    unsigned cpus[max_cpus_k];
    place_t list[max_cpus_k];
    unsigned cpus_count = 0, places_count = 0;

    void add(cpu_mask_t const &mask, cpu_mask_t const &allowed) noexcept {
        cpu_mask_t kept = mask;
        kept.intersect_with(allowed);
        if (kept.empty() || places_count == max_cpus_k) return;
        place_t &place = list[places_count++];
        place.first = cpus_count;
        for (std::size_t cpu = kept.first(); cpu != cpu_mask_t::npos_k; cpu = kept.next_from(cpu + 1))
            if (cpus_count != max_cpus_k) cpus[cpus_count++] = static_cast<unsigned>(cpu), ++place.count;
    }
};

/**  Copies the builder's places into `places_`, sized to fit (left empty if memory runs out). */
void keep_places(place_builder_t const &builder) noexcept {
    places_.cpus = new (std::nothrow) unsigned[builder.cpus_count];
    places_.places = new (std::nothrow) place_t[builder.places_count];
    if (!places_.cpus || !places_.places) return;
    for (unsigned i = 0; i != builder.cpus_count; ++i) places_.cpus[i] = builder.cpus[i];
    for (unsigned i = 0; i != builder.places_count; ++i) places_.places[i] = builder.list[i];
    places_.cpus_count = builder.cpus_count;
    places_.places_count = builder.places_count;
}

bool read_sysfs_list(char const *path, cpu_mask_t &mask) noexcept {
    std::FILE *file = std::fopen(path, "r");
    if (!file) return false;
    char text[4096];
    std::size_t const length = std::fread(text, 1, sizeof(text), file);
    std::fclose(file);
    return parse_cpulist(text, length, mask);
}

/**  Abstract places: one per allowed CPU, or per group of CPUs sharing a core, socket, last-level cache or node. */
bool build_abstract(place_builder_t &builder, text_t name, std::uint64_t limit, cpu_mask_t const &allowed) noexcept {
    char const *group = nullptr;
    if (equals_ignoring_case(name, "threads"))
        group = "";
    else if (equals_ignoring_case(name, "cores"))
        group = "topology/thread_siblings_list";
    else if (equals_ignoring_case(name, "sockets"))
        group = "topology/core_siblings_list";
    else if (equals_ignoring_case(name, "ll_caches"))
        group = "cache";
    else if (equals_ignoring_case(name, "numa_domains"))
        group = "node";
    else
        return false;
    cpu_mask_t placed;
    for (std::size_t cpu = allowed.first(); cpu != cpu_mask_t::npos_k && builder.places_count < limit;
         cpu = allowed.next_from(cpu + 1)) {
        if (placed.test(cpu)) continue;
        cpu_mask_t members;
        char path[160];
        bool found = false;
        if (!*group) {
            found = members.set(cpu);
        } else if (group[0] == 'c' && group[1] == 'a') {
            // The highest cache index this CPU has is its last-level cache.
            for (int index = 7; index >= 0 && !found; --index) {
                std::snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%zu/cache/index%d/shared_cpu_list", cpu,
                              index);
                found = read_sysfs_list(path, members) && !members.empty();
            }
        } else if (group[0] == 'n') {
            for (int node = 0; node != 1024 && !found; ++node) {
                std::snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
                cpu_mask_t node_cpus;
                if (read_sysfs_list(path, node_cpus) && node_cpus.test(cpu)) members = node_cpus, found = true;
            }
        } else {
            std::snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%zu/%s", cpu, group);
            found = read_sysfs_list(path, members) && members.test(cpu);
        }
        if (!found) members.clear(), (void)members.set(cpu); // unknown grouping: the CPU alone
        members.intersect_with(allowed);
        placed.unite_with(members);
        builder.add(members, allowed);
    }
    return builder.places_count != 0;
}

/**  One explicit place, `{0,1,2}` or `{0:4}` or `{0:4:2}`, into `mask`. */
bool parse_place(text_t text, cpu_mask_t &mask) noexcept {
    mask.clear();
    if (text.length < 2 || text.data[0] != '{' || text.data[text.length - 1] != '}') return false;
    return for_each_piece(trimmed(text.data + 1, text.length - 2), ',', [&](text_t piece) noexcept {
        std::uint64_t numbers[3] = {0, 1, 1};
        unsigned count = 0;
        bool const ok = for_each_piece(piece, ':', [&](text_t number) noexcept {
            return count < 3 && parse_unsigned(number.data, number.length, numbers[count++], max_cpus_k - 1);
        });
        if (!ok || numbers[1] == 0 || numbers[2] == 0) return false;
        for (std::uint64_t i = 0; i != numbers[1]; ++i)
            if (!mask.set(static_cast<std::size_t>(numbers[0] + i * numbers[2]))) return false;
        return true;
    });
}

/**  Explicit places: `{..},{..}` or `{..}:count[:stride]` intervals of places. */
bool build_explicit(place_builder_t &builder, text_t text, cpu_mask_t const &allowed) noexcept {
    std::size_t at = 0;
    while (at < text.length) {
        if (text.data[at] != '{') return false;
        std::size_t close = at;
        while (close < text.length && text.data[close] != '}') ++close;
        if (close == text.length) return false;
        cpu_mask_t place;
        if (!parse_place(trimmed(text.data + at, close - at + 1), place)) return false;
        at = close + 1;
        std::uint64_t repeat = 1, stride = place.count();
        std::size_t end = at;
        while (end < text.length && text.data[end] != ',') ++end;
        if (end > at) {
            text_t const interval = trimmed(text.data + at, end - at);
            if (interval.length && interval.data[0] == ':') {
                std::uint64_t numbers[2] = {1, stride};
                unsigned count = 0;
                bool const ok =
                    for_each_piece(trimmed(interval.data + 1, interval.length - 1), ':', [&](text_t number) noexcept {
                        return count < 2 && parse_unsigned(number.data, number.length, numbers[count++], max_cpus_k);
                    });
                if (!ok || numbers[0] == 0) return false;
                repeat = numbers[0], stride = numbers[1];
            } else if (interval.length) {
                return false;
            }
        }
        for (std::uint64_t copy = 0; copy != repeat; ++copy) {
            cpu_mask_t shifted;
            for (std::size_t cpu = place.first(); cpu != cpu_mask_t::npos_k; cpu = place.next_from(cpu + 1))
                if (!shifted.set(static_cast<std::size_t>(cpu + copy * stride))) return false;
            builder.add(shifted, allowed);
        }
        at = end < text.length ? end + 1 : end;
        while (at < text.length && is_blank(text.data[at])) ++at;
    }
    return true;
}

bool read_places(cpu_mask_t const &allowed) noexcept {
    char const *value = std::getenv("OMP_PLACES");
    char const *affinity = std::getenv("GOMP_CPU_AFFINITY");
    if (!value && !affinity) return false;
    auto *builder = new (std::nothrow) place_builder_t();
    if (!builder) return false;
    bool ok = false;
    if (value) {
        text_t const text = trimmed(value, std::strlen(value));
        text_t name = text;
        std::uint64_t limit = ~std::uint64_t(0);
        for (std::size_t i = 0; i != text.length; ++i)
            if (text.data[i] == '(') {
                name = trimmed(text.data, i);
                ok = text.data[text.length - 1] == ')' &&
                     parse_unsigned(text.data + i + 1, text.length - i - 2, limit, max_cpus_k) && limit > 0;
                if (!ok) limit = 0;
                break;
            }
        ok = limit && (text.length && text.data[0] == '{' ? build_explicit(*builder, text, allowed)
                                                          : build_abstract(*builder, name, limit, allowed));
        if (!ok || builder->places_count == 0)
            complain("OMP_PLACES", value,
                     "threads, cores, sockets, ll_caches or numa_domains, optionally with (count), or places like "
                     "{0,1},{2:2} with CPUs this process may use");
        std::snprintf(places_.description, sizeof(places_.description), "%s", value);
    } else {
        // libgomp's own spelling: CPU ids and ranges `a-b[:stride]`, separated by blanks or commas; a place each.
        text_t const text = trimmed(affinity, std::strlen(affinity));
        ok = true;
        std::size_t at = 0;
        while (ok && at < text.length) {
            std::size_t end = at;
            while (end < text.length && text.data[end] != ' ' && text.data[end] != ',') ++end;
            text_t const piece = trimmed(text.data + at, end - at);
            std::uint64_t first = 0, last = 0, stride = 1;
            std::size_t dash = 0, colon = 0;
            for (std::size_t i = 0; i != piece.length; ++i) {
                if (piece.data[i] == '-' && !dash) dash = i;
                if (piece.data[i] == ':' && !colon) colon = i;
            }
            std::size_t const number_end = dash ? dash : (colon ? colon : piece.length);
            ok = parse_unsigned(piece.data, number_end, first, max_cpus_k - 1);
            last = first;
            if (ok && dash)
                ok = parse_unsigned(piece.data + dash + 1, (colon ? colon : piece.length) - dash - 1, last,
                                    max_cpus_k - 1) &&
                     last >= first;
            if (ok && colon) ok = parse_unsigned(piece.data + colon + 1, piece.length - colon - 1, stride) && stride;
            for (std::uint64_t cpu = first; ok && cpu <= last; cpu += stride) {
                cpu_mask_t one;
                (void)one.set(static_cast<std::size_t>(cpu));
                builder->add(one, allowed);
            }
            at = end + 1;
        }
        if (!ok || builder->places_count == 0)
            complain("GOMP_CPU_AFFINITY", affinity, "CPU ids or ranges like 0 3 1-2 4-15:2 this process may use");
        std::snprintf(places_.description, sizeof(places_.description), "%s", affinity);
    }
    if (ok && builder->places_count)
        keep_places(*builder);
    else
        places_.description[0] = '\0';
    delete builder;
    return places_.places_count != 0;
}

/**  The default places when binding is asked for without `OMP_PLACES`: one per allowed CPU (`threads`). */
void default_places(cpu_mask_t const &allowed) noexcept {
    auto *builder = new (std::nothrow) place_builder_t();
    if (!builder) return;
    if (build_abstract(*builder, {"threads", 7}, ~std::uint64_t(0), allowed)) keep_places(*builder);
    delete builder;
}

/**  A unit letter and what it multiplies by. */
struct unit_t {
    char letter;
    std::uint64_t factor;
};

/**  Strips a trailing unit letter of `units` from `text` and returns its factor, or `otherwise` when there is none. */
template <std::size_t count_>
std::uint64_t strip_unit(text_t &text, unit_t const (&units)[count_], std::uint64_t otherwise) noexcept {
    if (!text.length) return otherwise;
    for (unit_t const &unit : units)
        if (text.data[text.length - 1] == unit.letter) return --text.length, unit.factor;
    return otherwise;
}

/**  `OMP_STACKSIZE`: a size with an optional unit B, K, M or G (K when none); `GOMP_STACKSIZE`: kilobytes. */
void read_stack_size(settings_t &s) noexcept {
    char const *value = std::getenv("OMP_STACKSIZE");
    char const *name = "OMP_STACKSIZE";
    bool kilobytes_only = false;
    if (!value) value = std::getenv("GOMP_STACKSIZE"), name = "GOMP_STACKSIZE", kilobytes_only = true;
    if (!value) return;
    text_t text = trimmed(value, std::strlen(value));
    static constexpr unit_t units[] = {{'b', 1},        {'B', 1},        {'k', 1u << 10}, {'K', 1u << 10},
                                       {'m', 1u << 20}, {'M', 1u << 20}, {'g', 1u << 30}, {'G', 1u << 30}};
    std::uint64_t const factor = kilobytes_only ? 1024 : strip_unit(text, units, 1024);
    std::uint64_t size = 0;
    if (!parse_count(text.data, text.length, size, (~std::uint64_t(0)) >> 31) || size == 0)
        return complain(name, value,
                        kilobytes_only ? "a positive number of kilobytes"
                                       : "a positive size with an optional unit B, K, M or G");
    s.stack_bytes = static_cast<std::size_t>(size * factor);
    s.stack_set = true;
    if (s.stack_bytes / 4 < s.task_stack_budget) s.task_stack_budget = s.stack_bytes / 4;
    if (s.task_stack_budget / 2 < s.task_stack_block) s.task_stack_block = s.task_stack_budget / 2;
}

void read_spin_count(settings_t &s) noexcept {
    // libgomp's defaults for an active or passive policy (30 billion, 0), ours without one; `GOMP_SPINCOUNT` wins.
    s.spin_count = s.wait_policy < 0 ? 0 : s.wait_policy > 0 ? 30000000000ull : default_spin_count_k;
    char const *value = std::getenv("GOMP_SPINCOUNT");
    if (!value) return;
    text_t text = trimmed(value, std::strlen(value));
    if (equals_ignoring_case(text, "infinite") || equals_ignoring_case(text, "infinity")) {
        s.spin_infinite = true;
        return;
    }
    static constexpr unit_t units[] = {
        {'k', 1000}, {'K', 1000}, {'M', 1000000}, {'G', 1000000000}, {'T', 1000000000000ull}};
    std::uint64_t const factor = strip_unit(text, units, 1);
    std::uint64_t count = 0;
    if (!parse_count(text.data, text.length, count, ~std::uint64_t(0) / factor))
        return complain("GOMP_SPINCOUNT", value, "INFINITE, INFINITY, or a count with an optional suffix k, M, G or T");
    s.spin_count = count * factor;
}

void read_wait_policy(settings_t &s) noexcept {
    char const *value = std::getenv("OMP_WAIT_POLICY");
    if (!value) return;
    text_t const text = trimmed(value, std::strlen(value));
    if (equals_ignoring_case(text, "active"))
        s.wait_policy = 1;
    else if (equals_ignoring_case(text, "passive"))
        s.wait_policy = -1;
    else
        complain("OMP_WAIT_POLICY", value, "active or passive");
}

/**  The predefined allocators, handle `i + 1` at index `i`. */
constexpr char const *allocator_names_k[] = {"omp_default_mem_alloc", "omp_large_cap_mem_alloc", "omp_const_mem_alloc",
                                             "omp_high_bw_mem_alloc", "omp_low_lat_mem_alloc",   "omp_cgroup_mem_alloc",
                                             "omp_pteam_mem_alloc",   "omp_thread_mem_alloc"};

void read_allocator(settings_t &s) noexcept {
    char const *value = std::getenv("OMP_ALLOCATOR");
    if (!value) return;
    text_t const text = trimmed(value, std::strlen(value));
    for (std::uintptr_t handle = 0; handle != 8; ++handle)
        if (equals_ignoring_case(text, allocator_names_k[handle]))
            return void(s.initial.default_allocator = handle + 1);
    complain("OMP_ALLOCATOR", value, "the name of a predefined allocator, like omp_default_mem_alloc");
}

char const *kind_name(int kind) noexcept {
    switch (kind & ~static_cast<int>(sched_monotonic_k)) {
    case sched_static_k:
        return "STATIC";
    case sched_dynamic_k:
        return "DYNAMIC";
    case sched_guided_k:
        return "GUIDED";
    default:
        return "AUTO";
    }
}

char const *bind_name(int bind) noexcept {
    static constexpr char const *names[] = {"FALSE", "TRUE", "PRIMARY", "CLOSE", "SPREAD"};
    return bind >= 0 && bind <= 4 ? names[bind] : "FALSE";
}

bool display_requested_ = false, display_verbose_ = false;

/**
 *  Under `LD_PRELOAD` the real libgomp is loaded too, and its constructor may have run first: with `OMP_PROC_BIND`
 *  or `OMP_PLACES` set it pins the initial thread to its first place, so this thread's mask no longer shows the
 *  CPUs the process was given. libgomp keeps only allowed CPUs in its places, so their union (asked of libgomp
 *  itself) restores the set; the initial thread gets its mask back, and the drop-in pins by its own places.
 */
unsigned undo_libgomp_pin(cpu_mask_t &allowed) noexcept {
    unsigned cores = static_cast<unsigned>(allowed.count());
    void *gomp = ::dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!gomp) return cores;
    using count_fn_t = int (*)();
    using procs_fn_t = int (*)(int);
    using ids_fn_t = void (*)(int, int *);
    auto count = reinterpret_cast<count_fn_t>(::dlsym(gomp, "omp_get_num_places"));
    auto procs = reinterpret_cast<procs_fn_t>(::dlsym(gomp, "omp_get_place_num_procs"));
    auto ids = reinterpret_cast<ids_fn_t>(::dlsym(gomp, "omp_get_place_proc_ids"));
    auto num_procs = reinterpret_cast<count_fn_t>(::dlsym(gomp, "omp_get_num_procs"));
    // Installed as `libgomp.so.1` itself (the `LD_LIBRARY_PATH` route), the handle is this library: nothing to undo.
    if (count && procs && ids && num_procs && count != &omp_get_num_places) {
        // libgomp counted the cores before it pinned: the process's count, even when the places cover fewer.
        int const counted = num_procs();
        if (counted > 0) cores = static_cast<unsigned>(counted);
        cpu_mask_t before = allowed;
        for (int place = 0, places = count(); place < places; ++place) {
            int cpus[max_cpus_k / 8];
            int const size = procs(place);
            if (size <= 0 || size > static_cast<int>(sizeof(cpus) / sizeof(cpus[0]))) continue;
            ids(place, cpus);
            for (int cpu = 0; cpu < size; ++cpu) (void)allowed.set(static_cast<std::size_t>(cpus[cpu]));
        }
        if (!(before == allowed)) (void)try_pin_current_thread(allowed);
    }
    ::dlclose(gomp);
    return cores;
}

} // namespace

places_t const &places() noexcept {
    return places_;
}

void read_environment(settings_t &s) noexcept {
    pending_length_ = 0; // a child forked while its parent read the environment reads it again
    pending_warnings_[0] = '\0';
    pending_truncated_ = false;
    cpu_mask_t allowed;
    if (!try_read_current_affinity(allowed) || allowed.empty())
        allowed.clear(), (void)allowed.set_range(0, allowed_cores_count() - 1);
    s.allowed_cores = undo_libgomp_pin(allowed);
    s.initial.nthreads = s.allowed_cores;
    s.initial.run_sched = sched_dynamic_k; // libgomp's default run-sched-var: dynamic, 1
    s.initial.run_chunk = 1;
    read_num_threads(s);
    read_schedule(s);
    bool dynamic = false;
    if (read_boolean("OMP_DYNAMIC", dynamic)) s.initial.dynamic = dynamic;
    bool const bind_given = read_proc_bind(s);
    bool const places_given = read_places(allowed);
    if (places_given && !bind_given) s.initial.bind = bind_true_k; // places without a binding: bind
    if (bind_given && s.initial.bind != bind_false_k && !places_given) default_places(allowed);
    if (std::getenv("GOMP_CPU_AFFINITY") && places_given && !bind_given) s.initial.bind = bind_true_k;
    read_wait_policy(s);
    read_spin_count(s);
    read_stack_size(s);
    std::uint64_t number = 0;
    if (read_integer("OMP_THREAD_LIMIT", 1, 0x7fffffffu, number, "a positive integer"))
        s.thread_limit = static_cast<unsigned>(number);
    // max-active-levels-var as libgomp sets it: `OMP_MAX_ACTIVE_LEVELS` (clamped to the supported levels), else
    // `OMP_NESTED`, else every supported level when `OMP_NUM_THREADS` or `OMP_PROC_BIND` lists several levels.
    bool nested = false;
    if (read_integer("OMP_MAX_ACTIVE_LEVELS", 0, 0x7fffffffu, number, "a non-negative integer"))
        s.initial.max_active_levels = static_cast<std::uint8_t>(
            number < supported_active_levels_k ? static_cast<int>(number) : supported_active_levels_k);
    else if (read_boolean("OMP_NESTED", nested))
        s.initial.max_active_levels = nested ? supported_active_levels_k : 1;
    else if (s.nthreads_list_size > 1 || s.bind_list_size > 1)
        s.initial.max_active_levels = supported_active_levels_k;
    bool flag = false;
    if (read_boolean("OMP_CANCELLATION", flag)) s.cancellation = flag;
    if (read_boolean("OMP_DISPLAY_AFFINITY", flag)) s.display_affinity = flag;
    if (read_integer("OMP_DEFAULT_DEVICE", 0, 0x7fffffffu, number, "a non-negative integer"))
        s.initial.default_device = static_cast<int>(number);
    if (read_integer("OMP_MAX_TASK_PRIORITY", 0, 0x7fffffffu, number, "a non-negative integer"))
        s.max_task_priority = static_cast<int>(number);
    if (read_integer("OMP_NUM_TEAMS", 1, 0x7fffffffu, number, "a positive integer"))
        s.num_teams.store(static_cast<int>(number), std::memory_order_relaxed);
    if (read_integer("OMP_TEAMS_THREAD_LIMIT", 1, 0x7fffffffu, number, "a positive integer"))
        s.teams_thread_limit.store(static_cast<int>(number), std::memory_order_relaxed);
    if (char const *format = std::getenv("OMP_AFFINITY_FORMAT"))
        copy_affinity_format(s.affinity_format, sizeof(s.affinity_format), format);
    read_allocator(s);
    if (char const *display = std::getenv("OMP_DISPLAY_ENV")) {
        text_t const text = trimmed(display, std::strlen(display));
        if (equals_ignoring_case(text, "true"))
            display_requested_ = true;
        else if (equals_ignoring_case(text, "verbose"))
            display_requested_ = display_verbose_ = true;
        else if (!equals_ignoring_case(text, "false"))
            complain("OMP_DISPLAY_ENV", display, "true, false or verbose");
    }
}

void report_environment(settings_t const &s) noexcept {
    if (reported_.load(std::memory_order_relaxed) || reported_.exchange(true, std::memory_order_relaxed)) return;
    if (pending_length_) std::fputs(pending_warnings_, stderr);
    if (pending_truncated_)
        std::fputs("forkunion gomp: more malformed OMP_* variables; their warnings were dropped\n", stderr);
    if (display_requested_) display_environment(s, display_verbose_);
}

void display_environment(settings_t const &s, bool verbose) noexcept {
    std::FILE *out = stderr;
    std::fprintf(out, "\nOPENMP DISPLAY ENVIRONMENT BEGIN\n");
    std::fprintf(out, "  _OPENMP = '201511'\n");
    std::fprintf(out, "  OMP_DYNAMIC = '%s'\n", s.initial.dynamic ? "TRUE" : "FALSE");
    std::fprintf(out, "  OMP_NESTED = '%s'\n", s.initial.max_active_levels > 1 ? "TRUE" : "FALSE");
    std::fprintf(out, "  OMP_NUM_THREADS = '");
    if (s.nthreads_list_size == 0) std::fprintf(out, "%u", s.initial.nthreads);
    for (unsigned i = 0; i != s.nthreads_list_size; ++i) std::fprintf(out, "%s%u", i ? "," : "", s.nthreads_list[i]);
    std::fprintf(out, "'\n");
    bool const monotonic = (static_cast<unsigned>(s.initial.run_sched) & sched_monotonic_k) != 0;
    std::fprintf(out, "  OMP_SCHEDULE = '%s%s", monotonic ? "MONOTONIC:" : "", kind_name(s.initial.run_sched));
    if (s.initial.run_chunk > 1 || ((s.initial.run_sched & 0xff) == sched_static_k && s.initial.run_chunk))
        std::fprintf(out, ",%d", s.initial.run_chunk);
    std::fprintf(out, "'\n");
    std::fprintf(out, "  OMP_PROC_BIND = '");
    if (s.bind_list_size == 0) std::fprintf(out, "%s", bind_name(s.initial.bind));
    for (unsigned i = 0; i != s.bind_list_size; ++i) std::fprintf(out, "%s%s", i ? "," : "", bind_name(s.bind_list[i]));
    std::fprintf(out, "'\n  OMP_PLACES = '");
    places_t const &list = places();
    for (unsigned place = 0; place != list.places_count; ++place) {
        std::fprintf(out, "%s{", place ? "," : "");
        for (unsigned cpu = 0; cpu != list.places[place].count; ++cpu)
            std::fprintf(out, "%s%u", cpu ? "," : "", list.cpus[list.places[place].first + cpu]);
        std::fprintf(out, "}");
    }
    std::fprintf(out, "'\n");
    std::fprintf(out, "  OMP_STACKSIZE = '%zu'\n", s.stack_bytes);
    std::fprintf(out, "  OMP_WAIT_POLICY = '%s'\n", s.wait_policy > 0 ? "ACTIVE" : "PASSIVE");
    // As libgomp prints them: no limit as the largest `unsigned`, a predefined allocator by its name.
    std::fprintf(out, "  OMP_THREAD_LIMIT = '%u'\n", s.thread_limit == unlimited_threads_k ? UINT_MAX : s.thread_limit);
    std::fprintf(out, "  OMP_MAX_ACTIVE_LEVELS = '%d'\n", s.initial.max_active_levels);
    std::fprintf(out, "  OMP_NUM_TEAMS = '%d'\n", s.num_teams.load(std::memory_order_relaxed));
    std::fprintf(out, "  OMP_TEAMS_THREAD_LIMIT = '%d'\n", s.teams_thread_limit.load(std::memory_order_relaxed));
    std::fprintf(out, "  OMP_CANCELLATION = '%s'\n", s.cancellation ? "TRUE" : "FALSE");
    std::fprintf(out, "  OMP_DEFAULT_DEVICE = '%d'\n", s.initial.default_device);
    std::fprintf(out, "  OMP_MAX_TASK_PRIORITY = '%d'\n", s.max_task_priority);
    std::fprintf(out, "  OMP_DISPLAY_AFFINITY = '%s'\n", s.display_affinity ? "TRUE" : "FALSE");
    std::fprintf(out, "  OMP_AFFINITY_FORMAT = '%s'\n", s.affinity_format);
    std::uintptr_t const allocator = s.initial.default_allocator;
    if (allocator >= 1 && allocator <= 8)
        std::fprintf(out, "  OMP_ALLOCATOR = '%s'\n", allocator_names_k[allocator - 1]);
    else
        std::fprintf(out, "  OMP_ALLOCATOR = '%lu'\n", static_cast<unsigned long>(allocator));
    std::fprintf(out, "  OMP_TARGET_OFFLOAD = 'DEFAULT'\n");
    if (verbose) {
        std::fprintf(out, "  GOMP_CPU_AFFINITY = ''\n");
        std::fprintf(out, "  GOMP_STACKSIZE = '%zu'\n", s.stack_bytes);
        if (s.spin_infinite)
            std::fprintf(out, "  GOMP_SPINCOUNT = 'INFINITE'\n");
        else
            std::fprintf(out, "  GOMP_SPINCOUNT = '%llu'\n", static_cast<unsigned long long>(s.spin_count));
        std::fprintf(out,
                     "  FORKUNION_GOMP = 'forkunion %d.%d.%d: teams on forkunion pools, tasks undeferred, "
                     "%d active level'\n",
                     version_major_k, version_minor_k, version_patch_k, supported_active_levels_k);
    }
    std::fprintf(out, "OPENMP DISPLAY ENVIRONMENT END\n");
}

} // namespace forkunion::gomp
