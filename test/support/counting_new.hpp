/**
 *  @file   counting_new.hpp
 *  @brief  Replaces the global allocation functions with ones that count every call, so a test can prove that
 *          a path allocates nothing (or exactly once). Include it in exactly one translation unit of a test
 *          binary: it defines the replacements. `allocations` is the count, read and compared by the tests.
 */
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

// The replacements below pair `malloc`/`posix_memalign` with `free` by design; GCC cannot see that.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
/**  Every call of a replaced allocation function so far. */
std::atomic<std::size_t> allocations{0};

void *counted_allocate(std::size_t size, std::size_t alignment = alignof(std::max_align_t)) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (size == 0) size = 1;
    void *pointer = nullptr;
    if (alignment <= alignof(std::max_align_t))
        pointer = std::malloc(size);
    else if (::posix_memalign(&pointer, alignment, size) != 0)
        pointer = nullptr;
    return pointer;
}
} // namespace

void *operator new(std::size_t size) {
    if (void *pointer = counted_allocate(size)) return pointer;
    throw std::bad_alloc();
}
void *operator new[](std::size_t size) {
    return ::operator new(size);
}
void *operator new(std::size_t size, std::align_val_t alignment) {
    if (void *pointer = counted_allocate(size, static_cast<std::size_t>(alignment))) return pointer;
    throw std::bad_alloc();
}
void *operator new[](std::size_t size, std::align_val_t alignment) {
    return ::operator new(size, alignment);
}
void *operator new(std::size_t size, std::nothrow_t const &) noexcept {
    return counted_allocate(size);
}
void *operator new[](std::size_t size, std::nothrow_t const &) noexcept {
    return counted_allocate(size);
}
void *operator new(std::size_t size, std::align_val_t alignment, std::nothrow_t const &) noexcept {
    return counted_allocate(size, static_cast<std::size_t>(alignment));
}
void *operator new[](std::size_t size, std::align_val_t alignment, std::nothrow_t const &) noexcept {
    return counted_allocate(size, static_cast<std::size_t>(alignment));
}
void operator delete(void *pointer) noexcept {
    std::free(pointer);
}
void operator delete[](void *pointer) noexcept {
    std::free(pointer);
}
void operator delete(void *pointer, std::size_t) noexcept {
    std::free(pointer);
}
void operator delete[](void *pointer, std::size_t) noexcept {
    std::free(pointer);
}
void operator delete(void *pointer, std::align_val_t) noexcept {
    std::free(pointer);
}
void operator delete[](void *pointer, std::align_val_t) noexcept {
    std::free(pointer);
}
void operator delete(void *pointer, std::size_t, std::align_val_t) noexcept {
    std::free(pointer);
}
void operator delete[](void *pointer, std::size_t, std::align_val_t) noexcept {
    std::free(pointer);
}
