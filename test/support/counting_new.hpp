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
#if defined(_WIN32)
#include <malloc.h> // `_aligned_malloc`, `_aligned_free`
#endif

// The replacements below pair `malloc`/`posix_memalign` with `free` by design; GCC cannot see that.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
/**  Every call of a replaced allocation function so far. */
std::atomic<std::size_t> allocations{0};

#if defined(_WIN32)
// The CRT frees aligned blocks with `_aligned_free` only: every block comes from `_aligned_malloc`, so one release
// function serves every `delete`.
void *raw_allocate(std::size_t size, std::size_t alignment) noexcept {
    return ::_aligned_malloc(size, alignment < alignof(std::max_align_t) ? alignof(std::max_align_t) : alignment);
}
void raw_free(void *pointer) noexcept {
    ::_aligned_free(pointer);
}
#else
void *raw_allocate(std::size_t size, std::size_t alignment) noexcept {
    void *pointer = nullptr;
    if (alignment <= alignof(std::max_align_t)) return std::malloc(size);
    return ::posix_memalign(&pointer, alignment, size) == 0 ? pointer : nullptr;
}
void raw_free(void *pointer) noexcept {
    std::free(pointer);
}
#endif

void *counted_allocate(std::size_t size, std::size_t alignment = alignof(std::max_align_t)) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    return raw_allocate(size == 0 ? 1 : size, alignment);
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
    raw_free(pointer);
}
void operator delete[](void *pointer) noexcept {
    raw_free(pointer);
}
void operator delete(void *pointer, std::size_t) noexcept {
    raw_free(pointer);
}
void operator delete[](void *pointer, std::size_t) noexcept {
    raw_free(pointer);
}
void operator delete(void *pointer, std::align_val_t) noexcept {
    raw_free(pointer);
}
void operator delete[](void *pointer, std::align_val_t) noexcept {
    raw_free(pointer);
}
void operator delete(void *pointer, std::size_t, std::align_val_t) noexcept {
    raw_free(pointer);
}
void operator delete[](void *pointer, std::size_t, std::align_val_t) noexcept {
    raw_free(pointer);
}
