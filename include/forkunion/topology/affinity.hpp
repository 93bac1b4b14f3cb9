/**
 *  @file   forkunion/topology/affinity.hpp
 *  @brief  Pinning threads to cores, saving and restoring a thread's affinity, and naming threads.
 *
 *  The primitives the placement-aware pools are built from. One small interface with one back end per OS, each in
 *  its own header, picked by `affinity_backend_t`:
 *  - `detail::linux_affinity_t` (`forkunion/topology/detail/affinity_linux.hpp`): `pthread_setaffinity_np` and
 *    `pthread_setname_np`;
 *  - `detail::windows_affinity_t` (`forkunion/topology/detail/affinity_windows.hpp`): `SetThreadGroupAffinity` and
 *    `SetThreadDescription`; a thread is named by its id, and a mask must lie in one processor group;
 *  - `detail::portable_affinity_t` (`forkunion/topology/detail/affinity_portable.hpp`): everything answers `unsupported`.
 *  Every function is a template whose back end defaults to `affinity_backend_t`, so tests can run the portable
 *  one on Linux: `fu::try_pin_current_thread<fu::portable_affinity_t>(mask)`.
 *
 *  @section failures Failures are counted, never fatal
 *  Each call returns a `status_t`: `invalid_argument` for an empty core set, an id at or above `max_cpus_k`, a
 *  null name or a thread that no longer exists; `placement_refused` when the OS refuses (no CPU of the set is
 *  online or allowed to this process, e.g. CPU 1000 on a 2-core machine); `unsupported` from the portable back
 *  end. A refused call changes nothing: the thread keeps its mask or name. Every non-success result also bumps
 *  the process-wide `affinity_refusals_count()`, so a pool that degrades to unpinned threads can say how often.
 *
 *  @section threads Threads and cost
 *  Any thread may call any function at any time; each one is a blocking system call (a few microseconds) and
 *  allocates nothing, so none belongs on a dispatch path. `affinity_refusals_count()` is a relaxed counter: a
 *  statistic, not a synchronization point.
 *
 *  @section names Thread names
 *  Linux keeps at most 15 bytes of a name (`TASK_COMM_LEN` is 16 with the NUL) and refuses longer ones with
 *  `ERANGE`. `try_name_current_thread` and `try_name_thread` cut longer names at 15 bytes instead (backing off
 *  to a UTF-8 character boundary), and `compose_thread_name(out, "prefix", 7)` writes `"prefix:007"`: the index
 *  has at least 3 digits and is kept whole, so the prefix is what gets cut.
 */
#pragma once
#include <atomic>  // `std::atomic`
#include <cstddef> // `std::size_t`

#include <forkunion/topology/detail/affinity_linux.hpp>
#include <forkunion/topology/detail/affinity_portable.hpp>
#include <forkunion/topology/detail/affinity_windows.hpp>
#include <forkunion/base/cpu_mask.hpp>
#include <forkunion/base/types.hpp>
#include <forkunion/topology/deprecated.hpp>

namespace forkunion {

#if FORKUNION_OS_LINUX
using affinity_backend_t = detail::linux_affinity_t;
#elif FORKUNION_OS_WINDOWS
using affinity_backend_t = detail::windows_affinity_t;
#else
using affinity_backend_t = detail::portable_affinity_t;
#endif

/**  @brief  Whether this build can pin and name threads (a real back end exists for the OS). */
inline constexpr bool affinity_supported_k = affinity_backend_t::supported_k;

/**  @brief  What the back end pins and names a thread by: `pthread_t` on Linux, the thread id on Windows. */
using thread_handle_t = affinity_backend_t::thread_handle_t;

/**  @brief  Bytes of a thread name buffer: 15 characters and a NUL, Linux's `TASK_COMM_LEN`. */
inline constexpr std::size_t thread_name_capacity_k = 16;

/**  @brief  The process-wide count of refused affinity and naming calls (relaxed; a statistic). Thread-safe. */
inline std::atomic<std::size_t> &affinity_refusals() noexcept {
    static std::atomic<std::size_t> refusals{0}; // constant-initialized: no guard, no allocation
    return refusals;
}

/**  @brief  How many affinity or naming calls did not succeed since the process started. Thread-safe. */
inline std::size_t affinity_refusals_count() noexcept {
    return affinity_refusals().load(std::memory_order_relaxed); // a statistic: orders nothing
}

/**  @brief  Counts `status` if it is a failure, and passes it through. */
inline status_t count_affinity_refusal(status_t status) noexcept {
    if (!status) affinity_refusals().fetch_add(1, std::memory_order_relaxed); // a statistic: orders nothing
    return status;
}

/**
 *  @brief  Copies `name` into `out`, cut to at most 15 bytes at a UTF-8 character boundary, NUL-terminated.
 *  @return The length written. A null `name` writes an empty string.
 */
constexpr std::size_t truncate_thread_name(char (&out)[thread_name_capacity_k], char const *name) noexcept {
    std::size_t length = 0;
    if (name)
        while (length + 1 < thread_name_capacity_k && name[length]) ++length;
    // If the first byte we drop continues a multi-byte character (10xxxxxx), drop that whole character.
    if (name && name[length] != '\0')
        while (length && (static_cast<unsigned char>(name[length]) & 0xC0u) == 0x80u) --length;
    for (std::size_t i = 0; i != length; ++i) out[i] = name[i];
    out[length] = '\0';
    return length;
}

/**
 *  @brief  Writes `"<prefix>:<index>"` into `out`, the index zero-padded to at least 3 digits (`"fu:007"`), the
 *          prefix cut (at a UTF-8 boundary) so the whole fits 15 bytes. An empty or null prefix gives the digits
 *          alone. Indices of more than 15 digits keep their last 15.
 *  @return The length written.
 */
constexpr std::size_t compose_thread_name(char (&out)[thread_name_capacity_k], char const *prefix,
                                          std::size_t index) noexcept {
    char digits[24] = {};
    std::size_t digits_length = 0;
    do digits[digits_length++] = static_cast<char>('0' + index % 10), index /= 10;
    while (index);
    while (digits_length < 3) digits[digits_length++] = '0';
    std::size_t const room = thread_name_capacity_k - 1;
    if (digits_length > room) digits_length = room;
    std::size_t length = 0;
    if (prefix && prefix[0] && digits_length + 1 < room) {
        char cut[thread_name_capacity_k] = {};
        std::size_t const prefix_room = room - 1 - digits_length;
        std::size_t prefix_length = truncate_thread_name(cut, prefix);
        if (prefix_length > prefix_room) {
            prefix_length = prefix_room;
            while (prefix_length && (static_cast<unsigned char>(cut[prefix_length]) & 0xC0u) == 0x80u) --prefix_length;
        }
        for (std::size_t i = 0; i != prefix_length; ++i) out[length++] = cut[i];
        out[length++] = ':';
    }
    while (digits_length) out[length++] = digits[--digits_length];
    out[length] = '\0';
    return length;
}

/**
 *  @brief  Pins `thread` to the cores of `mask`. Refused with `invalid_argument` for an empty mask.
 *  @return `success`, or a refusal (counted) that left the thread's mask as it was.
 */
template <typename backend_t = affinity_backend_t>
status_t try_pin_thread(typename backend_t::thread_handle_t thread, cpu_mask_t const &mask) noexcept {
    if (mask.empty()) return count_affinity_refusal(detail::refuse("try_pin_thread: mask is empty"));
    return count_affinity_refusal(backend_t::try_set_thread(thread, mask));
}

/**  @brief  Pins the calling thread to the cores of `mask`. See `try_pin_thread`. */
template <typename backend_t = affinity_backend_t>
status_t try_pin_current_thread(cpu_mask_t const &mask) noexcept {
    return try_pin_thread<backend_t>(backend_t::current_thread(), mask);
}

/**
 *  @brief  Pins the calling thread to the listed cores, e.g. `topology.cores_in(domain)`. Refused with
 *          `invalid_argument`, without a system call, if the list is empty or names an id `>= max_cpus_k`.
 */
template <typename backend_t = affinity_backend_t>
status_t try_pin_current_thread(core_ids_t cores) noexcept {
    cpu_mask_t mask;
    for (std::uint32_t core : cores)
        if (!mask.set(core))
            return count_affinity_refusal(
                detail::refuse("try_pin_current_thread: a core id is at or above max_cpus_k"));
    return try_pin_current_thread<backend_t>(mask);
}

/**  @brief  Reads the cores `thread` may run on into `mask` (empty on failure, which is counted). */
template <typename backend_t = affinity_backend_t>
status_t try_read_thread_affinity(typename backend_t::thread_handle_t thread, cpu_mask_t &mask) noexcept {
    return count_affinity_refusal(backend_t::try_get_thread(thread, mask));
}

/**  @brief  Reads the cores the calling thread may run on into `mask` (empty on failure, which is counted). */
template <typename backend_t = affinity_backend_t>
status_t try_read_current_affinity(cpu_mask_t &mask) noexcept {
    return try_read_thread_affinity<backend_t>(backend_t::current_thread(), mask);
}

/**  @brief  Names `thread`, cutting `name` to 15 bytes (see the file comment). `invalid_argument` if null. */
template <typename backend_t = affinity_backend_t>
status_t try_name_thread(typename backend_t::thread_handle_t thread, char const *name) noexcept {
    if (!name) return count_affinity_refusal(detail::refuse("try_name_thread: name is null"));
    char cut[thread_name_capacity_k] = {};
    truncate_thread_name(cut, name);
    return count_affinity_refusal(backend_t::try_set_name(thread, cut));
}

/**  @brief  Names the calling thread, cutting `name` to 15 bytes. */
template <typename backend_t = affinity_backend_t>
status_t try_name_current_thread(char const *name) noexcept {
    return try_name_thread<backend_t>(backend_t::current_thread(), name);
}

/**  @brief  Reads the calling thread's name into `name` (empty on failure, which is counted). */
template <typename backend_t = affinity_backend_t>
status_t try_read_current_thread_name(char (&name)[thread_name_capacity_k]) noexcept {
    return count_affinity_refusal(backend_t::try_get_name(backend_t::current_thread(), name, thread_name_capacity_k));
}

/**
 *  @brief  One thread's affinity, saved so it can be put back: what a pool that pins its caller keeps.
 *
 *  `try_save()` records the calling thread and its mask; `try_restore()` puts that mask back on that thread, from
 *  whichever thread calls it (so a pool's `terminate` may run anywhere), and may be called again. 1 KiB plus a
 *  handle; no allocation. Not synchronized: one owner calls save and restore.
 */
template <typename backend_t = affinity_backend_t>
class basic_saved_affinity_t {
    cpu_mask_t mask_;
    typename backend_t::thread_handle_t thread_{};
    bool saved_ = false;

public:
    /**  Records the calling thread and its current mask. On failure nothing is saved. */
    status_t try_save() noexcept {
        thread_ = backend_t::current_thread();
        status_t const status = try_read_thread_affinity<backend_t>(thread_, mask_);
        saved_ = static_cast<bool>(status);
        return status;
    }
    /**  Puts the saved mask back on the saved thread; `invalid_argument` if nothing was saved. */
    status_t try_restore() const noexcept {
        if (!saved_) return count_affinity_refusal(detail::refuse("try_restore: no mask was saved"));
        return try_pin_thread<backend_t>(thread_, mask_);
    }
    bool saved() const noexcept { return saved_; }
    cpu_mask_t const &mask() const noexcept { return mask_; }
};

using saved_affinity_t = basic_saved_affinity_t<>;

} // namespace forkunion
