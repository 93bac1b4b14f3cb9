/**
 *  @file   c/gomp/fortran.cpp
 *  @brief  The Fortran spellings of the `omp_*` API that gfortran's `omp_lib` calls: `omp_name_` takes every
 *          argument by reference (default integers and logicals are 4 bytes), `omp_name_8_` takes 8-byte integers,
 *          and character arguments come with their lengths appended (not NUL-terminated, blank-padded).
 *
 *  Each forwards to the C entry point of the same name. Locks: `omp_lock_kind` is 4 bytes, so a Fortran lock is the
 *  C lock in place; `omp_nest_lock_kind` is 8 bytes, too small for the C nest lock, so a Fortran nest lock holds a
 *  pointer to one, allocated by `omp_init_nest_lock_` and freed by `omp_destroy_nest_lock_`.
 */
#include "omp_api.hpp"
#include "runtime.hpp"

#include <cstdint> // `INT32_MAX`
#include <cstdlib> // `std::malloc`
#include <cstring> // `std::memcpy`
#include <new>     // `std::nothrow`

using namespace forkunion::gomp;

#include "omp_api.hpp"

namespace {

/**  A Fortran character argument as a NUL-terminated string, trailing blanks kept as libgomp keeps them, of any
 *   length: a short one in place, a longer one on the heap (no memory for it stops the program, naming `caller`). */
class c_string_t {
    char local_[256];
    char *text_ = local_;

public:
    c_string_t(char const *data, std::size_t length, char const *caller) noexcept {
        if (length >= sizeof(local_)) {
            text_ = static_cast<char *>(std::malloc(length + 1));
            if (!text_) refuse(caller, "out of memory for a copy of its character argument");
        }
        std::memcpy(text_, data, length);
        text_[length] = '\0';
    }
    ~c_string_t() noexcept {
        if (text_ != local_) std::free(text_);
    }
    c_string_t(c_string_t const &) = delete;
    c_string_t &operator=(c_string_t const &) = delete;
    char const *text() const noexcept { return text_; }
};

/**  Copies a C string into a Fortran buffer, padding it with blanks. */
void to_fortran(char const *text, std::size_t text_length, char *buffer, std::size_t length) noexcept {
    std::size_t const copied = text_length < length ? text_length : length;
    std::memcpy(buffer, text, copied);
    for (std::size_t i = copied; i < length; ++i) buffer[i] = ' ';
}

/**  The C nest lock a Fortran nest lock points to. */
void *&nest_of(std::int64_t *lock) noexcept {
    return *reinterpret_cast<void **>(lock);
}
static_assert(sizeof(void *) == sizeof(std::int64_t), "a Fortran nest lock holds one pointer");

struct alignas(8) c_nest_lock_t {
    unsigned char bytes[16];
};

/**  An 8-byte Fortran integer as a C `int`: clamped, as libgomp does, never wrapped (2^32 must not become 0). */
constexpr int clamped(std::int64_t value) noexcept {
    return value > INT32_MAX ? INT32_MAX : value < INT32_MIN ? INT32_MIN : static_cast<int>(value);
}

} // namespace

#define FORKUNION_GOMP_FORTRAN_GETTER(name, type)                                                                      \
    FORKUNION_GOMP_EXPORT type name##_(void) {                                                                         \
        return name();                                                                                                 \
    }
#define FORKUNION_GOMP_FORTRAN_SETTER(name)                                                                            \
    FORKUNION_GOMP_EXPORT void name##_(std::int32_t const *value) {                                                    \
        name(static_cast<int>(*value));                                                                                \
    }                                                                                                                  \
    FORKUNION_GOMP_EXPORT void name##_8_(std::int64_t const *value) {                                                  \
        name(clamped(*value));                                                                                         \
    }
#define FORKUNION_GOMP_FORTRAN_QUERY(name)                                                                             \
    FORKUNION_GOMP_EXPORT std::int32_t name##_(std::int32_t const *value) {                                            \
        return name(static_cast<int>(*value));                                                                         \
    }                                                                                                                  \
    FORKUNION_GOMP_EXPORT std::int32_t name##_8_(std::int64_t const *value) {                                          \
        return name(clamped(*value));                                                                                  \
    }

FORKUNION_GOMP_FORTRAN_GETTER(omp_get_num_threads, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_max_threads, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_thread_num, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_num_procs, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_in_parallel, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_dynamic, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_nested, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_thread_limit, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_max_active_levels, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_supported_active_levels, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_level, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_active_level, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_in_final, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_cancellation, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_proc_bind, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_num_places, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_place_num, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_partition_num_places, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_default_device, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_num_devices, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_device_num, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_num_teams, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_team_num, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_is_initial_device, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_initial_device, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_max_task_priority, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_max_teams, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_teams_thread_limit, std::int32_t)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_wtime, double)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_wtick, double)
FORKUNION_GOMP_FORTRAN_GETTER(omp_get_default_allocator, std::uintptr_t)

/**  A LOGICAL argument: any nonzero value of either width is true. */
#define FORKUNION_GOMP_FORTRAN_LOGICAL_SETTER(name)                                                                    \
    FORKUNION_GOMP_EXPORT void name##_(std::int32_t const *value) {                                                    \
        name(*value != 0);                                                                                             \
    }                                                                                                                  \
    FORKUNION_GOMP_EXPORT void name##_8_(std::int64_t const *value) {                                                  \
        name(*value != 0);                                                                                             \
    }

FORKUNION_GOMP_FORTRAN_SETTER(omp_set_num_threads)
FORKUNION_GOMP_FORTRAN_LOGICAL_SETTER(omp_set_dynamic)
FORKUNION_GOMP_FORTRAN_LOGICAL_SETTER(omp_set_nested)
FORKUNION_GOMP_FORTRAN_SETTER(omp_set_max_active_levels)
FORKUNION_GOMP_FORTRAN_SETTER(omp_set_default_device)
FORKUNION_GOMP_FORTRAN_SETTER(omp_set_num_teams)
FORKUNION_GOMP_FORTRAN_SETTER(omp_set_teams_thread_limit)

FORKUNION_GOMP_FORTRAN_QUERY(omp_get_ancestor_thread_num)
FORKUNION_GOMP_FORTRAN_QUERY(omp_get_team_size)
FORKUNION_GOMP_FORTRAN_QUERY(omp_get_place_num_procs)

FORKUNION_GOMP_EXPORT void omp_set_schedule_(std::int32_t const *kind, std::int32_t const *chunk) {
    omp_set_schedule(*kind, *chunk);
}
FORKUNION_GOMP_EXPORT void omp_set_schedule_8_(std::int32_t const *kind, std::int64_t const *chunk) {
    omp_set_schedule(*kind, clamped(*chunk));
}
FORKUNION_GOMP_EXPORT void omp_get_schedule_(std::int32_t *kind, std::int32_t *chunk) {
    int k = 0, c = 0;
    omp_get_schedule(&k, &c);
    *kind = k, *chunk = c;
}
FORKUNION_GOMP_EXPORT void omp_get_schedule_8_(std::int32_t *kind, std::int64_t *chunk) {
    int k = 0, c = 0;
    omp_get_schedule(&k, &c);
    *kind = k, *chunk = c;
}

FORKUNION_GOMP_EXPORT void omp_get_place_proc_ids_(std::int32_t const *place, std::int32_t *ids) {
    omp_get_place_proc_ids(*place, ids);
}
FORKUNION_GOMP_EXPORT void omp_get_place_proc_ids_8_(std::int64_t const *place, std::int64_t *ids) {
    // Widened one by one: the Fortran array holds 8-byte integers.
    places_t const &list = places();
    if (*place < 0 || static_cast<std::uint64_t>(*place) >= list.places_count) return;
    place_t const &chosen = list.places[*place];
    for (unsigned cpu = 0; cpu != chosen.count; ++cpu) ids[cpu] = list.cpus[chosen.first + cpu];
}
FORKUNION_GOMP_EXPORT void omp_get_partition_place_nums_(std::int32_t *numbers) {
    omp_get_partition_place_nums(numbers);
}
FORKUNION_GOMP_EXPORT void omp_get_partition_place_nums_8_(std::int64_t *numbers) {
    // A partition is a run of consecutive places of the list.
    forkunion::gomp::partition_t const partition = forkunion::gomp::partition_of(forkunion::gomp::current_task());
    for (unsigned place = 0; place != partition.count; ++place) numbers[place] = std::int64_t(partition.first) + place;
}

// ---- Locks ----

FORKUNION_GOMP_EXPORT void omp_init_lock_(std::int32_t *lock) {
    omp_init_lock(lock);
}
FORKUNION_GOMP_EXPORT void omp_destroy_lock_(std::int32_t *lock) {
    omp_destroy_lock(lock);
}
FORKUNION_GOMP_EXPORT void omp_set_lock_(std::int32_t *lock) {
    omp_set_lock(lock);
}
FORKUNION_GOMP_EXPORT void omp_unset_lock_(std::int32_t *lock) {
    omp_unset_lock(lock);
}
FORKUNION_GOMP_EXPORT std::int32_t omp_test_lock_(std::int32_t *lock) {
    return omp_test_lock(lock);
}

FORKUNION_GOMP_EXPORT void omp_init_nest_lock_(std::int64_t *lock) {
    auto *nest = new (std::nothrow) c_nest_lock_t();
    if (!nest) refuse("omp_init_nest_lock_", "out of memory for the Fortran nest lock");
    omp_init_nest_lock(nest);
    nest_of(lock) = nest;
}
FORKUNION_GOMP_EXPORT void omp_destroy_nest_lock_(std::int64_t *lock) {
    auto *nest = static_cast<c_nest_lock_t *>(nest_of(lock));
    if (nest) omp_destroy_nest_lock(nest);
    delete nest;
    nest_of(lock) = nullptr;
}
FORKUNION_GOMP_EXPORT void omp_set_nest_lock_(std::int64_t *lock) {
    omp_set_nest_lock(nest_of(lock));
}
FORKUNION_GOMP_EXPORT void omp_unset_nest_lock_(std::int64_t *lock) {
    omp_unset_nest_lock(nest_of(lock));
}
FORKUNION_GOMP_EXPORT std::int32_t omp_test_nest_lock_(std::int64_t *lock) {
    return omp_test_nest_lock(nest_of(lock));
}

// libgomp keeps these names under OMP_1.0 too (the old lock ABI, refused.cpp): these are the OMP_3.0 defaults.
FORKUNION_GOMP_DEFAULT_VERSION(omp_init_lock_, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_destroy_lock_, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_set_lock_, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_unset_lock_, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_test_lock_, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_init_nest_lock_, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_destroy_nest_lock_, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_set_nest_lock_, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_unset_nest_lock_, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_test_nest_lock_, "OMP_3.0");

// ---- Strings, environment, resources, allocators ----

FORKUNION_GOMP_EXPORT void omp_set_affinity_format_(char const *format, std::size_t length) {
    c_string_t const text(format, length, "omp_set_affinity_format_");
    omp_set_affinity_format(text.text());
}
FORKUNION_GOMP_EXPORT std::int32_t omp_get_affinity_format_(char *buffer, std::size_t length) {
    char text[1024];
    std::size_t const needed = omp_get_affinity_format(text, sizeof(text));
    to_fortran(text, needed < sizeof(text) ? needed : sizeof(text) - 1, buffer, length);
    return static_cast<std::int32_t>(needed);
}
FORKUNION_GOMP_EXPORT void omp_display_affinity_(char const *format, std::size_t length) {
    c_string_t const text(format, length, "omp_display_affinity_");
    omp_display_affinity(text.text());
}
FORKUNION_GOMP_EXPORT std::int32_t omp_capture_affinity_(char *buffer, char const *format, std::size_t buffer_length,
                                                         std::size_t format_length) {
    c_string_t const text(format, format_length, "omp_capture_affinity_");
    // Captured whole (its length first), then blank-padded or cut to the Fortran buffer.
    std::size_t const needed = omp_capture_affinity(nullptr, 0, text.text());
    char *const line = static_cast<char *>(std::malloc(needed + 1));
    if (!line) refuse("omp_capture_affinity_", "out of memory for the formatted line");
    std::size_t const written = omp_capture_affinity(line, needed + 1, text.text());
    to_fortran(line, written < needed ? written : needed, buffer, buffer_length);
    std::free(line);
    return static_cast<std::int32_t>(needed);
}
FORKUNION_GOMP_EXPORT void omp_display_env_(std::int32_t const *verbose) {
    omp_display_env(*verbose != 0);
}
FORKUNION_GOMP_EXPORT void omp_display_env_8_(std::int64_t const *verbose) {
    omp_display_env(*verbose != 0);
}
FORKUNION_GOMP_EXPORT void omp_fulfill_event_(std::uintptr_t event) {
    omp_fulfill_event(event); // `omp_lib` declares the handle `value`: passed as in C
}
FORKUNION_GOMP_EXPORT std::int32_t omp_pause_resource_(std::int32_t const *kind, std::int32_t const *device) {
    return omp_pause_resource(*kind, *device);
}
FORKUNION_GOMP_EXPORT std::int32_t omp_pause_resource_all_(std::int32_t const *kind) {
    return omp_pause_resource_all(*kind);
}

FORKUNION_GOMP_EXPORT std::uintptr_t omp_init_allocator_(std::uintptr_t const *memspace, std::int32_t const *ntraits,
                                                         void const *traits) {
    return omp_init_allocator(*memspace, *ntraits, traits);
}
FORKUNION_GOMP_EXPORT std::uintptr_t omp_init_allocator_8_(std::uintptr_t const *memspace, std::int64_t const *ntraits,
                                                           void const *traits) {
    return omp_init_allocator(*memspace, clamped(*ntraits), traits);
}
FORKUNION_GOMP_EXPORT void omp_destroy_allocator_(std::uintptr_t const *allocator) {
    omp_destroy_allocator(*allocator);
}
FORKUNION_GOMP_EXPORT void omp_set_default_allocator_(std::uintptr_t const *allocator) {
    omp_set_default_allocator(*allocator);
}
