/**
 *  @file   forkunion/base/array.hpp
 *  @brief  `detail::array_t<T>`: the growable array behind the topology's facts and the fabric's tables.
 *
 *  A small subset of `std::vector` (size, indexing, `push_back`, `assign`, `resize`, copies, moves, equality) that
 *  costs a translation unit next to nothing to include: `<vector>` alone adds about as much g++ -O2 time as the whole
 *  flat pool, and every program that includes the umbrella would pay it whether or not it harvests a topology
 *  (`.ci/compile_cost.sh` holds the umbrella to 1.25x a `<thread>` + `<atomic>` + `<vector>` hello world).
 *
 *  Elements must be nothrow copy- and move-constructible (plain facts and per-thread states), so the only failure is
 *  running out of memory: an operation that must allocate throws `std::bad_alloc` and leaves the array as it was.
 *  Where exceptions are off (`FORKUNION_EXCEPTIONS` is 0) running out of memory ends the program instead: inside
 *  `::operator new`, or with `std::abort()` for a count whose byte size overflows.
 *  Over-aligned element types get storage of their alignment. Thread rules are `std::vector`'s: `const` members may
 *  run concurrently, anything else needs exclusive access.
 */
#pragma once
#include <cstddef>     // `std::size_t`
#include <cstring>     // `std::memcpy`
#include <new>         // `::operator new`, `std::align_val_t`, `std::bad_alloc`
#include <type_traits> // `std::is_nothrow_copy_constructible_v`, `std::is_trivially_copyable_v`

#include <forkunion/base/types.hpp>

namespace forkunion::detail {

template <typename value_type_>
class array_t {
    static_assert(std::is_nothrow_copy_constructible_v<value_type_> &&
                      std::is_nothrow_move_constructible_v<value_type_> && std::is_nothrow_destructible_v<value_type_>,
                  "array_t holds elements whose copies and moves cannot fail");

public:
    using value_type = value_type_;
    using size_type = std::size_t;
    using iterator = value_type *;
    using const_iterator = value_type const *;

    array_t() noexcept = default;
    /**  @throws std::bad_alloc */
    array_t(size_type count, value_type const &value) { assign(count, value); }
    /**  @throws std::bad_alloc */
    array_t(array_t const &other) : data_(allocate_(other.size_)), capacity_(other.size_) {
        for (size_type i = 0; i != other.size_; ++i) ::new (static_cast<void *>(data_ + i)) value_type(other.data_[i]);
        size_ = other.size_;
    }
    array_t(array_t &&other) noexcept : data_(other.data_), size_(other.size_), capacity_(other.capacity_) {
        other.data_ = nullptr, other.size_ = 0, other.capacity_ = 0;
    }
    /**  @throws std::bad_alloc, leaving this array as it was. */
    array_t &operator=(array_t const &other) {
        if (this != &other) {
            array_t copy(other);
            swap(copy);
        }
        return *this;
    }
    array_t &operator=(array_t &&other) noexcept {
        array_t moved(static_cast<array_t &&>(other));
        swap(moved);
        return *this;
    }
    ~array_t() noexcept {
        clear();
        deallocate_(data_);
    }

    size_type size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    value_type *data() noexcept { return data_; }
    value_type const *data() const noexcept { return data_; }
    value_type &operator[](size_type i) noexcept { return data_[i]; }
    value_type const &operator[](size_type i) const noexcept { return data_[i]; }
    iterator begin() noexcept { return data_; }
    iterator end() noexcept { return data_ + size_; }
    const_iterator begin() const noexcept { return data_; }
    const_iterator end() const noexcept { return data_ + size_; }

    /**  Destroys every element; keeps the storage. */
    void clear() noexcept {
        for (size_type i = size_; i != 0; --i) data_[i - 1].~value_type();
        size_ = 0;
    }
    /**  @throws std::bad_alloc, leaving this array as it was. `value` may be one of the elements. */
    void push_back(value_type const &value) {
        value_type const copy(value); // before growing moves the elements `value` may refer to
        if (size_ == capacity_) reserve_(capacity_ ? capacity_ * 2 : 4);
        ::new (static_cast<void *>(data_ + size_)) value_type(copy);
        ++size_;
    }
    /**  `count` copies of `value`. @throws std::bad_alloc, leaving this array as it was. */
    void assign(size_type count, value_type const &value) {
        value_type const copy(value); // `value` may be one of the elements
        if (count > capacity_) {
            array_t fresh;
            fresh.data_ = allocate_(count), fresh.capacity_ = count;
            swap(fresh);
        }
        clear();
        for (; size_ != count; ++size_) ::new (static_cast<void *>(data_ + size_)) value_type(copy);
    }
    /**  Grows with value-initialized elements or shrinks. @throws std::bad_alloc, leaving this array as it was. */
    void resize(size_type count) {
        if (count > capacity_) reserve_(count);
        while (size_ > count) data_[--size_].~value_type();
        for (; size_ != count; ++size_) ::new (static_cast<void *>(data_ + size_)) value_type();
    }
    void swap(array_t &other) noexcept {
        value_type *data = data_;
        size_type size = size_, capacity = capacity_;
        data_ = other.data_, size_ = other.size_, capacity_ = other.capacity_;
        other.data_ = data, other.size_ = size, other.capacity_ = capacity;
    }

    friend bool operator==(array_t const &a, array_t const &b) noexcept {
        if (a.size_ != b.size_) return false;
        for (size_type i = 0; i != a.size_; ++i)
            if (!(a.data_[i] == b.data_[i])) return false;
        return true;
    }

private:
    static constexpr bool over_aligned_k = alignof(value_type) > __STDCPP_DEFAULT_NEW_ALIGNMENT__;

    value_type *data_ = nullptr;
    size_type size_ = 0;
    size_type capacity_ = 0;

    static value_type *allocate_(size_type count) {
        if (count == 0) return nullptr;
        if (count > size_type(-1) / sizeof(value_type)) FORKUNION_THROW(std::bad_alloc());
        if constexpr (over_aligned_k)
            return static_cast<value_type *>(
                ::operator new(count * sizeof(value_type), std::align_val_t(alignof(value_type))));
        else
            return static_cast<value_type *>(::operator new(count * sizeof(value_type)));
    }
    static void deallocate_(value_type *data) noexcept {
        if (!data) return;
        if constexpr (over_aligned_k)
            ::operator delete(static_cast<void *>(data), std::align_val_t(alignof(value_type)));
        else
            ::operator delete(static_cast<void *>(data));
    }
    /**  Moves the elements into storage for `capacity` of them (at least `size_`). */
    void reserve_(size_type capacity) {
        value_type *data = allocate_(capacity);
        if constexpr (std::is_trivially_copyable_v<value_type>) {
            if (size_)
                std::memcpy(static_cast<void *>(data), static_cast<void const *>(data_), size_ * sizeof(value_type));
        } else {
            for (size_type i = 0; i != size_; ++i) {
                ::new (static_cast<void *>(data + i)) value_type(static_cast<value_type &&>(data_[i]));
                data_[i].~value_type();
            }
        }
        deallocate_(data_);
        data_ = data, capacity_ = capacity;
    }
};

} // namespace forkunion::detail
