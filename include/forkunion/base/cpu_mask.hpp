/**
 *  @file   forkunion/base/cpu_mask.hpp
 *  @brief  `cpu_mask_t`, a fixed-size set of CPU (or NUMA node) ids, and `core_ids_t`, a read-only view of
 *          ascending CPU ids. The vocabulary of the parsers, the topology and the affinity calls.
 *
 *  - `cpu_mask_t` holds ids `[0, max_cpus_k)` in `max_cpus_k / 8` bytes (1 KiB) with no allocation, so it can be
 *    a member of a pool (to save and restore a caller's affinity) and a stack variable of a parser. Its words are
 *    `unsigned long`, bit `i % bits` of word `i / bits`: the exact layout of the kernel's `cpu_set_t`, so it is
 *    handed to `sched_getaffinity`/`pthread_setaffinity_np` as is, on 32- and 64-bit ABIs alike.
 *  - `core_ids_t` is a pointer and a length, like `std::span<std::uint32_t const>` (and implicitly convertible
 *    to it, being a contiguous sized range), without `<span>`'s compile cost in the umbrella.
 *
 *  Both are plain values: no locking; a `const` object may be read from any number of threads.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint32_t`

#include <forkunion/base/types.hpp>

namespace forkunion {

/**
 *  @brief  The largest CPU count a `cpu_mask_t` represents: ids `0 .. max_cpus_k - 1`.
 *
 *  8192 is the largest `NR_CPUS` any Linux architecture configures (x86-64 `MAXSMP`, ppc64), so every id the
 *  kernel can print fits, and `sched_getaffinity` never fails with `EINVAL` for a too-small buffer. It costs
 *  1 KiB per mask. Ids at or above it are refused by the parsers and by `set`.
 */
inline constexpr std::size_t max_cpus_k = 8192;

/**
 *  @brief  A set of ids in `[0, max_cpus_k)`, laid out like the kernel's `cpu_set_t`. 1 KiB, no allocation.
 *
 *  Every member is `constexpr` and `noexcept`. Out-of-range ids are never stored: `set` refuses them and `test`
 *  answers `false`. Also used for NUMA node sets (`node/online` is written in the same list syntax).
 */
class cpu_mask_t {
public:
    using word_t = unsigned long;
    static constexpr std::size_t bits_per_word_k = sizeof(word_t) * 8;
    static constexpr std::size_t words_k = max_cpus_k / bits_per_word_k;
    static constexpr std::size_t bytes_k = words_k * sizeof(word_t);
    /**  What `first` and `next` return when there is no further id. */
    static constexpr std::size_t npos_k = max_cpus_k;

private:
    word_t words_[words_k] = {};

    static constexpr std::size_t count_bits_(word_t word) noexcept {
        std::size_t count = 0;
        for (; word; word &= word - 1) ++count;
        return count;
    }
    static constexpr std::size_t lowest_bit_(word_t word) noexcept {
        std::size_t index = 0;
        while (!(word & 1)) word >>= 1, ++index;
        return index;
    }

public:
    constexpr cpu_mask_t() noexcept = default;

    /**  Adds `id`; returns false (and changes nothing) if `id >= max_cpus_k`. */
    constexpr bool set(std::size_t id) noexcept {
        if (id >= max_cpus_k) return false;
        words_[id / bits_per_word_k] |= word_t(1) << (id % bits_per_word_k);
        return true;
    }

    /**  Adds every id of `[first, last]`; returns false (and changes nothing) unless `first <= last < max`. */
    constexpr bool set_range(std::size_t first, std::size_t last) noexcept {
        if (first > last || last >= max_cpus_k) return false;
        std::size_t const first_word = first / bits_per_word_k, last_word = last / bits_per_word_k;
        word_t const all = ~word_t(0);
        word_t const head = all << (first % bits_per_word_k);
        word_t const tail = all >> (bits_per_word_k - 1 - last % bits_per_word_k);
        if (first_word == last_word) {
            words_[first_word] |= head & tail;
            return true;
        }
        words_[first_word] |= head;
        for (std::size_t word = first_word + 1; word < last_word; ++word) words_[word] = all;
        words_[last_word] |= tail;
        return true;
    }

    /**  Removes `id`; ids out of range are ignored. */
    constexpr void reset(std::size_t id) noexcept {
        if (id < max_cpus_k) words_[id / bits_per_word_k] &= ~(word_t(1) << (id % bits_per_word_k));
    }

    /**  Removes every id. */
    constexpr void clear() noexcept {
        for (word_t &word : words_) word = 0;
    }

    /**  Whether `id` is in the set; false for ids out of range. */
    constexpr bool test(std::size_t id) const noexcept {
        return id < max_cpus_k && ((words_[id / bits_per_word_k] >> (id % bits_per_word_k)) & 1);
    }

    constexpr std::size_t count() const noexcept {
        std::size_t count = 0;
        for (word_t word : words_) count += count_bits_(word);
        return count;
    }

    constexpr bool empty() const noexcept {
        for (word_t word : words_)
            if (word) return false;
        return true;
    }

    /**  The smallest id in the set, or `npos_k` if it is empty. */
    constexpr std::size_t first() const noexcept { return next_from(0); }

    /**  The smallest id `>= id` in the set, or `npos_k`. `for (i = m.first(); i != npos_k; i = m.next_from(i+1))`. */
    constexpr std::size_t next_from(std::size_t id) const noexcept {
        if (id >= max_cpus_k) return npos_k;
        std::size_t word_index = id / bits_per_word_k;
        word_t word = words_[word_index] & (~word_t(0) << (id % bits_per_word_k));
        while (!word) {
            if (++word_index == words_k) return npos_k;
            word = words_[word_index];
        }
        return word_index * bits_per_word_k + lowest_bit_(word);
    }

    /**  Keeps only the ids also in `other`. */
    constexpr cpu_mask_t &intersect_with(cpu_mask_t const &other) noexcept {
        for (std::size_t word = 0; word != words_k; ++word) words_[word] &= other.words_[word];
        return *this;
    }
    /**  Adds every id of `other`. */
    constexpr cpu_mask_t &unite_with(cpu_mask_t const &other) noexcept {
        for (std::size_t word = 0; word != words_k; ++word) words_[word] |= other.words_[word];
        return *this;
    }
    /**  Removes every id of `other`. */
    constexpr cpu_mask_t &subtract(cpu_mask_t const &other) noexcept {
        for (std::size_t word = 0; word != words_k; ++word) words_[word] &= ~other.words_[word];
        return *this;
    }
    /**  Whether every id of this set is in `other` (the empty set is inside every set). */
    constexpr bool is_subset_of(cpu_mask_t const &other) const noexcept {
        for (std::size_t word = 0; word != words_k; ++word)
            if (words_[word] & ~other.words_[word]) return false;
        return true;
    }
    constexpr bool operator==(cpu_mask_t const &other) const noexcept {
        for (std::size_t word = 0; word != words_k; ++word)
            if (words_[word] != other.words_[word]) return false;
        return true;
    }

    /**  The raw words, for the affinity system calls (`bytes_k` bytes). */
    word_t *words() noexcept { return words_; }
    word_t const *words() const noexcept { return words_; }
};

static_assert(cpu_mask_t::bytes_k == max_cpus_k / 8, "one bit per id, no padding");
static_assert(sizeof(cpu_mask_t) == cpu_mask_t::bytes_k, "a mask is exactly its words, like `cpu_set_t`");

/**
 *  @brief  A read-only view of ascending CPU ids: what `machine_topology_t::cores_in(d)` returns.
 *
 *  A pointer and a length into storage owned by someone else (the topology); valid while that owner lives and
 *  is not re-harvested. A contiguous sized range, so range-for works and `std::span<std::uint32_t const>`
 *  converts from it implicitly. `operator[]` requires `i < size()`, as for `std::span`.
 */
class core_ids_t {
    std::uint32_t const *data_ = nullptr;
    std::size_t size_ = 0;

public:
    constexpr core_ids_t() noexcept = default;
    constexpr core_ids_t(std::uint32_t const *data, std::size_t size) noexcept : data_(data), size_(size) {}

    constexpr std::uint32_t const *data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr std::uint32_t const *begin() const noexcept { return data_; }
    constexpr std::uint32_t const *end() const noexcept { return data_ + size_; }
    constexpr std::uint32_t operator[](std::size_t i) const noexcept { return data_[i]; }

    /**  The ids as a mask; ids at or above `max_cpus_k` are dropped. */
    constexpr cpu_mask_t to_mask() const noexcept {
        cpu_mask_t mask;
        for (std::uint32_t id : *this) mask.set(id);
        return mask;
    }
};

} // namespace forkunion
