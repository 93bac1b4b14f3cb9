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
#include <cstdlib> // `std::getenv`, `std::realloc`
#include <cstring> // `std::strlen`

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
//
// `OMP_PLACES` is an abstract name, `threads`, `cores`, `sockets`, `ll_caches` or `numa_domains`, with an optional
// `(count)`, or an explicit list, read as libgomp 12 reads it:
//
//     list       := p-interval (',' p-interval)*
//     p-interval := place [':' len [':' stride]] | '!' place
//     place      := '{' r-interval (',' r-interval)* '}' | res
//     r-interval := res [':' num [':' stride]] | '!' res
//
// A number is what `strtoul` (`strtol` for a stride) reads: leading blanks and a sign (`-` negates modulo 2^64), so
// `{-1}` names CPU 2^64 - 1. Blanks may also follow `{`, `!`, a number, `:`, `}`, and a `,` between places, but not a
// `,` inside a place before `!`. `len` is below 65536, `num` and `len` are positive, strides default to 1. Inside a
// place the exclusions apply after every inclusion, each to a CPU the place then holds; `!place` removes the first
// equal place listed before it. A list whose places name a CPU id at or above the 64-bit word of the highest CPU this
// process may use, exclude what is not there or remove every place is ignored as a whole; the places' CPUs this
// process may not use are then left out of them, and so are the places left empty (ignored if that is all of them).

/**  Collects places: each is a run of ascending CPU ids in one table; both arrays grow as needed. */
struct place_builder_t {
    unsigned *cpus = nullptr;
    place_t *list = nullptr;
    std::size_t cpus_count = 0, cpus_capacity = 0, places_count = 0, places_capacity = 0;

    place_builder_t() noexcept = default;
    place_builder_t(place_builder_t const &) = delete;
    place_builder_t &operator=(place_builder_t const &) = delete;
    ~place_builder_t() noexcept { std::free(cpus), std::free(list); }

    template <typename item_type_>
    static bool reserve(item_type_ *&items, std::size_t &capacity, std::size_t needed) noexcept {
        if (needed <= capacity) return true;
        std::size_t const grown = capacity > needed / 2 ? 2 * capacity : needed + 16;
        void *moved = grown <= UINT_MAX ? std::realloc(items, grown * sizeof(item_type_)) : nullptr;
        if (!moved) return false;
        items = static_cast<item_type_ *>(moved), capacity = grown;
        return true;
    }

    void clear() noexcept { cpus_count = places_count = 0; }

    /**  Appends a place holding the CPUs of `mask`; false when memory runs out. */
    bool add(cpu_mask_t const &mask) noexcept {
        std::size_t const size = mask.count();
        if (!reserve(list, places_capacity, places_count + 1) || !reserve(cpus, cpus_capacity, cpus_count + size))
            return false;
        list[places_count++] = place_t{static_cast<unsigned>(cpus_count), static_cast<unsigned>(size)};
        for (std::size_t cpu = mask.first(); cpu != cpu_mask_t::npos_k; cpu = mask.next_from(cpu + 1))
            cpus[cpus_count++] = static_cast<unsigned>(cpu);
        return true;
    }

    /**  Removes the first place holding exactly the CPUs of `mask` (its ids stay in the table, unused); false when
     *   no place does. */
    bool remove(cpu_mask_t const &mask) noexcept {
        for (std::size_t place = 0; place != places_count; ++place) {
            cpu_mask_t held;
            for (unsigned i = 0; i != list[place].count; ++i) (void)held.set(cpus[list[place].first + i]);
            if (!(held == mask)) continue;
            for (std::size_t later = place + 1; later != places_count; ++later) list[later - 1] = list[later];
            --places_count;
            return true;
        }
        return false;
    }

    /**  Keeps only the CPUs of `allowed` in each place and drops the places left empty; returns how many it dropped.
     *   A place's ids never move up the table, so it is compacted in place. */
    std::size_t restrict_to(cpu_mask_t const &allowed) noexcept {
        std::size_t kept_places = 0, kept_cpus = 0;
        for (std::size_t place = 0; place != places_count; ++place) {
            place_t const from = list[place];
            unsigned const first = static_cast<unsigned>(kept_cpus);
            for (unsigned i = 0; i != from.count; ++i)
                if (allowed.test(cpus[from.first + i])) cpus[kept_cpus++] = cpus[from.first + i];
            if (kept_cpus != first) list[kept_places++] = place_t{first, static_cast<unsigned>(kept_cpus - first)};
        }
        std::size_t const dropped = places_count - kept_places;
        places_count = kept_places, cpus_count = kept_cpus;
        return dropped;
    }
};

/**  Hands the builder's places over to `places_`, leaving it empty. */
void keep_places(place_builder_t &builder) noexcept {
    places_.cpus = builder.cpus;
    places_.places = builder.list;
    places_.cpus_count = static_cast<unsigned>(builder.cpus_count);
    places_.places_count = static_cast<unsigned>(builder.places_count);
    builder.cpus = nullptr, builder.list = nullptr;
    builder.cpus_count = builder.cpus_capacity = builder.places_count = builder.places_capacity = 0;
}

/**  `isspace` in the C locale: what `strtoul` skips, and libgomp between the parts of a place list. */
constexpr bool is_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}
void skip_spaces(char const *&at) noexcept {
    while (is_space(*at)) ++at;
}

/**  Reads the number at `at` as `strtoul(at, &end, base)` does, base 10 or 0 (a `0x` prefix reads hexadecimal, a
 *   leading `0` octal): blanks, an optional sign (`-` negates modulo 2^64), then digits. False when there is no
 *   digit or the number exceeds 2^64 - 1 (`ERANGE`); else moves `at` past it. */
bool read_unsigned_long(char const *&at, std::uint64_t &value, int base = 10) noexcept {
    char const *next = at;
    skip_spaces(next);
    bool negative = false;
    if (*next == '+' || *next == '-') negative = *next++ == '-';
    unsigned radix = 10;
    if (base == 0 && next[0] == '0')
        radix = (next[1] == 'x' || next[1] == 'X') && hex_digit_value(next[2]) >= 0 ? 16 : 8;
    if (radix == 16) next += 2;
    char const *const digits = next;
    std::uint64_t number = 0;
    for (int digit = hex_digit_value(*next); digit >= 0 && static_cast<unsigned>(digit) < radix;
         digit = hex_digit_value(*++next))
        if (__builtin_mul_overflow(number, radix, &number) || __builtin_add_overflow(number, digit, &number))
            return false;
    if (next == digits) return false;
    value = negative ? 0 - number : number;
    at = next;
    return true;
}

/**  Reads the decimal number at `at` as `strtol` does; false when there is none or it leaves `long`'s range. */
bool read_long(char const *&at, std::int64_t &value) noexcept {
    char const *next = at;
    skip_spaces(next);
    if (*next == '-' && is_decimal_digit(next[1])) {
        std::uint64_t magnitude = 0;
        ++next;
        if (!read_unsigned_long(next, magnitude) || magnitude > std::uint64_t(INT64_MAX) + 1) return false;
        value = static_cast<std::int64_t>(0 - magnitude);
    } else {
        std::uint64_t number = 0;
        if (*next == '-' || !read_unsigned_long(next, number) || number > std::uint64_t(INT64_MAX)) return false;
        value = static_cast<std::int64_t>(number);
    }
    at = next;
    return true;
}

/**  The most places an explicit `OMP_PLACES` list may name (libgomp 12's bound). */
constexpr std::uint64_t max_listed_places_k = 65536;

/**  Reading an explicit place list: where it stands, where its places go (null: the syntax is checked, nothing is
 *   made, as with `OMP_PROC_BIND=false`), and why a well-formed list is still ignored. */
struct place_list_t {
    char const *at;
    place_builder_t *builder;
    std::size_t range;       ///< CPU ids below it may be named.
    std::uint64_t named = 0; ///< Places the list has named so far (exclusions not subtracted).
    char fault[96] = "";

    bool fail(char const *format, std::uint64_t number = 0, std::uint64_t other = 0) noexcept {
        std::snprintf(fault, sizeof(fault), format, static_cast<unsigned long long>(number),
                      static_cast<unsigned long long>(other));
        return false;
    }
    bool out_of_range(std::uint64_t cpu) noexcept {
        return fail("names CPU %llu, beyond the CPU ids this system uses (0-%llu)", cpu, range - 1);
    }

    /**  Adds `count` CPUs from `first`, `stride` apart (modulo 2^64), to `mask`. */
    bool include(cpu_mask_t &mask, std::uint64_t first, std::uint64_t count, std::int64_t stride) noexcept {
        for (std::uint64_t i = 0; i != count; ++i) {
            // Every step moves by at least 1 and less than the range, or leaves it: at most `range` steps.
            std::uint64_t const cpu = first + i * static_cast<std::uint64_t>(stride);
            if (cpu >= range) return out_of_range(cpu);
            (void)mask.set(static_cast<std::size_t>(cpu));
            if (stride == 0) break; // the same CPU again
        }
        return true;
    }

    /**  One place, braced or a bare CPU id, into `mask`. */
    bool place(cpu_mask_t &mask) noexcept {
        mask.clear();
        std::uint64_t first = 0, count = 1;
        std::int64_t stride = 1;
        if (*at != '{') return read_unsigned_long(at, first) && (!builder || include(mask, first, 1, 1));
        ++at;
        skip_spaces(at);
        cpu_mask_t excluded;
        for (;;) {
            bool const exclude = *at == '!';
            if (exclude) ++at;
            if (!read_unsigned_long(at, first)) return false;
            skip_spaces(at);
            count = 1, stride = 1;
            bool const interval = *at == ':';
            if (interval && (!read_unsigned_long(++at, count) || count == 0)) return false;
            skip_spaces(at);
            if (interval && *at == ':' && !read_long(++at, stride)) return false;
            skip_spaces(at);
            if (exclude && interval) return false;
            if (builder && exclude && (first >= range || excluded.test(static_cast<std::size_t>(first))))
                return first >= range ? out_of_range(first) : fail("excludes CPU %llu twice", first);
            if (builder && exclude) (void)excluded.set(static_cast<std::size_t>(first));
            if (builder && !exclude && !include(mask, first, count, stride)) return false;
            if (*at == '}') break;
            if (*at++ != ',') return false;
        }
        ++at;
        if (!builder) return true;
        for (std::size_t cpu = excluded.first(); cpu != cpu_mask_t::npos_k; cpu = excluded.next_from(cpu + 1))
            if (!mask.test(cpu)) return fail("excludes CPU %llu, which its place does not hold", cpu);
        mask.subtract(excluded);
        return true;
    }

    /**  The whole list; false on a syntax error (`fault` empty) or a fault. */
    bool read() noexcept {
        for (;;) {
            skip_spaces(at);
            bool const exclude = *at == '!';
            if (exclude) ++at, skip_spaces(at);
            cpu_mask_t listed;
            if (!place(listed)) return false;
            skip_spaces(at);
            std::uint64_t count = 1;
            std::int64_t stride = 1;
            bool const interval = *at == ':';
            if (interval && (exclude || !read_unsigned_long(++at, count) || count == 0 || count >= 65536)) return false;
            skip_spaces(at);
            if (interval && *at == ':' && !read_long(++at, stride)) return false;
            skip_spaces(at);
            // libgomp 12's bound on a list, which it then ignores as invalid.
            if (!exclude && (named += count) > max_listed_places_k) return fail("lists more than 65536 places");
            if (builder && exclude && !builder->remove(listed)) return fail("excludes a place it does not list before");
            for (std::uint64_t copy = 0; builder && !exclude && copy != count; ++copy) {
                cpu_mask_t shifted;
                std::uint64_t const shift = copy * static_cast<std::uint64_t>(stride);
                for (std::size_t cpu = listed.first(); cpu != cpu_mask_t::npos_k; cpu = listed.next_from(cpu + 1))
                    if (!include(shifted, cpu + shift, 1, 1)) return false;
                if (!builder->add(shifted)) return fail("needs more memory than there is");
            }
            if (!*at) break;
            if (*at++ != ',') return false;
        }
        return !builder || builder->places_count || fail("excludes every place it lists");
    }
};

bool read_sysfs_list(char const *path, cpu_mask_t &mask) noexcept {
    std::FILE *file = std::fopen(path, "r");
    if (!file) return false;
    char text[4096];
    std::size_t const length = std::fread(text, 1, sizeof(text), file);
    std::fclose(file);
    return parse_cpulist(text, length, mask);
}

/**  Abstract places: one per allowed CPU, or per group of CPUs sharing a core, socket, last-level cache or node, at
 *   most `limit` of them. `name` is one of the five names (`abstract_name`). */
void build_abstract(place_builder_t &builder, text_t name, std::uint64_t limit, cpu_mask_t const &allowed) noexcept {
    char const *group = "";
    if (equals_ignoring_case(name, "cores"))
        group = "topology/thread_siblings_list";
    else if (equals_ignoring_case(name, "sockets"))
        group = "topology/core_siblings_list";
    else if (equals_ignoring_case(name, "ll_caches"))
        group = "cache";
    else if (equals_ignoring_case(name, "numa_domains"))
        group = "node";
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
        if (!builder.add(members)) return;
    }
}

/**  Whether `text` is `name` or `name(count)` (blanks around each part; `count` as `strtoul` reads it), with `name`
 *   one of the five abstract names; sets `name` and `count` (every place when none is given). */
bool abstract_name(char const *text, text_t &name, std::uint64_t &count) noexcept {
    char const *at = text;
    skip_spaces(at);
    name.data = at;
    while ((*at >= 'a' && *at <= 'z') || (*at >= 'A' && *at <= 'Z') || *at == '_') ++at;
    name.length = static_cast<std::size_t>(at - name.data);
    skip_spaces(at);
    count = ~std::uint64_t(0);
    if (*at == '(' && (!read_unsigned_long(++at, count) || (skip_spaces(at), *at++ != ')'))) return false;
    skip_spaces(at);
    if (*at) return false;
    for (char const *known : {"threads", "cores", "sockets", "ll_caches", "numa_domains"})
        if (equals_ignoring_case(name, known)) return true;
    return false;
}

/**  `OMP_PLACES` into `builder` (null: checks its syntax only); false, having said why, when it is ignored. */
bool read_omp_places(char const *value, place_builder_t *builder, cpu_mask_t const &allowed,
                     std::size_t range) noexcept {
    char const *name = "OMP_PLACES";
    text_t word;
    std::uint64_t count = 0;
    if (abstract_name(value, word, count)) {
        if (!builder) return true;
        if (count == 0) return warn(name, value, "asks for no place; ignored"), false;
        build_abstract(*builder, word, count, allowed);
    } else {
        place_list_t list{value, builder, range};
        if (!list.read()) {
            if (!list.fault[0])
                return complain(name, value,
                                "threads, cores, sockets, ll_caches or numa_domains with an optional (count), or "
                                "places like {0,1},{2:4:2,!4},3:2:-1,!{0,1}"),
                       false;
            char what[128];
            std::snprintf(what, sizeof(what), "%s; ignored", list.fault);
            return warn(name, value, what), false;
        }
        if (!builder) return true;
        std::size_t const listed = builder->places_count, dropped = builder->restrict_to(allowed);
        if (dropped && dropped != listed) {
            char what[128];
            std::snprintf(what, sizeof(what), "%zu of its %zu places hold no CPU this process may use; left out",
                          dropped, listed);
            warn(name, value, what);
        }
    }
    if (builder->places_count) return true;
    warn(name, value, "no place holds a CPU this process may use; ignored");
    return false;
}

/**  `GOMP_CPU_AFFINITY`, libgomp's own spelling, into `builder` (null: checks its syntax only): CPU ids `a`, ranges
 *   `a-b` and `a-b:stride`, each number as `strtoul` reads it in base 0 (`0x1f`, `017`) and below 65536, separated
 *   by blanks, a comma, or nothing where a number cannot go on (`08` is 0 and 8). A place for each CPU, also for a
 *   CPU this process may not use (binding to it fails); ids at or above `range` are left out. */
bool read_cpu_affinity(char const *value, place_builder_t *builder, std::size_t range) noexcept {
    char const *at = value;
    for (;;) {
        std::uint64_t first = 0, last = 0, stride = 1;
        if (!read_unsigned_long(at, first, 0) || first >= 65536) return false;
        last = first;
        bool const range_given = *at == '-';
        if (range_given && (!read_unsigned_long(++at, last, 0) || last >= 65536 || last < first)) return false;
        if (range_given && *at == ':' && (!read_unsigned_long(++at, stride, 0) || stride == 0 || stride >= 65536))
            return false;
        for (std::uint64_t cpu = first; builder && cpu <= last && cpu < range; cpu += stride) {
            cpu_mask_t one;
            (void)one.set(static_cast<std::size_t>(cpu));
            if (!builder->add(one)) return false;
        }
        skip_spaces(at);
        if (*at == ',')
            ++at;
        else if (!*at)
            return true;
    }
}

/**
 *  The place list from `OMP_PLACES`, else (also when that is ignored) from `GOMP_CPU_AFFINITY`; with `build` false
 *  (`OMP_PROC_BIND=false`, which ignores places) only the syntax of both is checked, as libgomp checks it. Returns
 *  whether places were made.
 */
bool read_places(cpu_mask_t const &allowed, bool build) noexcept {
    char const *value = std::getenv("OMP_PLACES");
    char const *affinity = std::getenv("GOMP_CPU_AFFINITY");
    if (!value && !affinity) return false;
    // CPU ids a list may name: libgomp's CPU set spans the 64-bit words up to the highest CPU this process may use.
    std::size_t highest = 0;
    for (std::size_t cpu = allowed.first(); cpu != cpu_mask_t::npos_k; cpu = allowed.next_from(cpu + 1)) highest = cpu;
    std::size_t const range = (highest / 64 + 1) * 64;
    place_builder_t builder;
    bool made = value && read_omp_places(value, build ? &builder : nullptr, allowed, range) && build;
    if (made) keep_places(builder);
    if (affinity) {
        bool const use = build && !made;
        builder.clear(); // what an ignored `OMP_PLACES` left
        if (!read_cpu_affinity(affinity, use ? &builder : nullptr, range))
            complain("GOMP_CPU_AFFINITY", affinity, "CPU ids and ranges like 0 3,1-2 4-15:2");
        else if (use && !builder.places_count)
            warn("GOMP_CPU_AFFINITY", affinity, "names no CPU this system uses; ignored");
        else if (use)
            made = true, keep_places(builder);
    }
    return made;
}

/**  The default places when binding is asked for without `OMP_PLACES`: one per allowed CPU (`threads`). */
void default_places(cpu_mask_t const &allowed) noexcept {
    place_builder_t builder;
    build_abstract(builder, {"threads", 7}, ~std::uint64_t(0), allowed);
    if (builder.places_count) keep_places(builder);
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

/**  target-offload-var's values, as `OMP_TARGET_OFFLOAD` names them (any case) and `OMP_DISPLAY_ENV` prints them. */
constexpr char const *target_offload_names_k[] = {"DEFAULT", "DISABLED", "MANDATORY"};

void read_target_offload(settings_t &s) noexcept {
    char const *value = std::getenv("OMP_TARGET_OFFLOAD");
    if (!value) return;
    text_t const text = trimmed(value, std::strlen(value));
    if (equals_ignoring_case(text, "default"))
        s.target_offload = target_offload_default_k;
    else if (equals_ignoring_case(text, "disabled"))
        s.target_offload = target_offload_disabled_k;
    else if (equals_ignoring_case(text, "mandatory"))
        s.target_offload = target_offload_mandatory_k;
    else
        complain("OMP_TARGET_OFFLOAD", value, "default, disabled or mandatory");
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

/**  A bind-var value as `OMP_DISPLAY_ENV` prints it: `primary` under its OpenMP 5.0 name, `MASTER`, as libgomp 12. */
char const *bind_name(int bind) noexcept {
    static constexpr char const *names[] = {"FALSE", "TRUE", "MASTER", "CLOSE", "SPREAD"};
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
    // `OMP_PROC_BIND=false` ignores the places: none are made (omp_get_num_places() is 0).
    bool const places_given = read_places(allowed, !bind_given || s.initial.bind != bind_false_k);
    if (places_given && !bind_given) s.initial.bind = bind_true_k; // places without a binding: bind
    if (bind_given && s.initial.bind != bind_false_k && !places_given) default_places(allowed);
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
    read_target_offload(s);
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
    // As libgomp prints run-sched-var: the modifier only where it is not the kind's default (`static` is monotonic,
    // the others nonmonotonic), and the chunk only where it is not the default either (0 for `static`, 1 for
    // `dynamic` and `guided`; never for `auto`).
    bool const monotonic = (static_cast<unsigned>(s.initial.run_sched) & sched_monotonic_k) != 0;
    int const kind = s.initial.run_sched & ~static_cast<int>(sched_monotonic_k);
    char const *modifier = kind == sched_static_k ? (monotonic ? "" : "NONMONOTONIC:") : monotonic ? "MONOTONIC:" : "";
    std::fprintf(out, "  OMP_SCHEDULE = '%s%s", modifier, kind_name(kind));
    if (kind == sched_static_k ? s.initial.run_chunk != 0 : kind != sched_auto_k && s.initial.run_chunk != 1)
        std::fprintf(out, ",%d", s.initial.run_chunk);
    std::fprintf(out, "'\n");
    std::fprintf(out, "  OMP_PROC_BIND = '");
    if (s.bind_list_size == 0) std::fprintf(out, "%s", bind_name(s.initial.bind));
    for (unsigned i = 0; i != s.bind_list_size; ++i) std::fprintf(out, "%s%s", i ? "," : "", bind_name(s.bind_list[i]));
    std::fprintf(out, "'\n  OMP_PLACES = '");
    // Each place as libgomp prints it: its runs of consecutive CPUs, a run of more than one as `first:length`.
    places_t const &list = places();
    for (unsigned place = 0; place != list.places_count; ++place) {
        unsigned const *cpus = list.cpus + list.places[place].first, count = list.places[place].count;
        std::fprintf(out, "%s{", place ? "," : "");
        for (unsigned run = 0, length = 0; run < count; run += length) {
            for (length = 1; run + length < count && cpus[run + length] == cpus[run] + length;) ++length;
            std::fprintf(out, length > 1 ? "%s%u:%u" : "%s%u", run ? "," : "", cpus[run], length);
        }
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
    std::fprintf(out, "  OMP_TARGET_OFFLOAD = '%s'\n", target_offload_names_k[s.target_offload]);
    if (verbose) {
        std::fprintf(out, "  GOMP_CPU_AFFINITY = ''\n");
        std::fprintf(out, "  GOMP_STACKSIZE = '%zu'\n", s.stack_bytes);
        // An infinite count as libgomp prints it, the largest count. The default is this runtime's own (libgomp's
        // is 300000), and the last line, this runtime's, says which runtime printed the block.
        std::fprintf(out, "  GOMP_SPINCOUNT = '%llu'\n",
                     s.spin_infinite ? ~0ull : static_cast<unsigned long long>(s.spin_count));
        std::fprintf(out, "  FORKUNION_GOMP = 'forkunion %d.%d.%d: teams on forkunion pools, %d active levels'\n",
                     version_major_k, version_minor_k, version_patch_k, supported_active_levels_k);
    }
    std::fprintf(out, "OPENMP DISPLAY ENVIRONMENT END\n");
}

} // namespace forkunion::gomp
