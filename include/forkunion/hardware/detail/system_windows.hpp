/**
 *  @file   forkunion/hardware/detail/system_windows.hpp
 *  @brief  `<windows.h>` as every Windows backend includes it, and the Win32 calls they share.
 *
 *  Included only on Windows (`FORKUNION_OS_WINDOWS`). `<windows.h>` comes in lean and without its `min`/`max`
 *  macros: `WIN32_LEAN_AND_MEAN` and `NOMINMAX` are defined around the include unless the program defined them
 *  already, and removed again afterwards, so a program's own later definitions are not disturbed. (A program that
 *  wants the macros includes `<windows.h>` itself first.)
 *
 *  Compiles with MinGW-w64 GCC and Clang and, by construction, with MSVC: no GNU extension is used here (the
 *  MSVC build itself is not proven in CI).
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/base/types.hpp>

#if FORKUNION_OS_WINDOWS
#if !defined(WIN32_LEAN_AND_MEAN)
#define WIN32_LEAN_AND_MEAN
#define FORKUNION_DEFINED_WIN32_LEAN_AND_MEAN 1
#endif
#if !defined(NOMINMAX)
#define NOMINMAX
#define FORKUNION_DEFINED_NOMINMAX 1
#endif
#include <windows.h>
#if defined(FORKUNION_DEFINED_WIN32_LEAN_AND_MEAN)
#undef WIN32_LEAN_AND_MEAN
#undef FORKUNION_DEFINED_WIN32_LEAN_AND_MEAN
#endif
#if defined(FORKUNION_DEFINED_NOMINMAX)
#undef NOMINMAX
#undef FORKUNION_DEFINED_NOMINMAX
#endif

namespace forkunion::detail {

/**
 *  @brief  Fills `buffer` with `GetLogicalProcessorInformationEx(relation, ...)`.
 *  @return The bytes written, or 0 if the call failed or needs more than `capacity` bytes (`needed` then says
 *          how many). Blocking system call; any thread.
 */
inline std::size_t windows_processor_information(LOGICAL_PROCESSOR_RELATIONSHIP relation, void *buffer,
                                                 std::size_t capacity, std::size_t &needed) noexcept {
    DWORD length = static_cast<DWORD>(capacity);
    BOOL const done = ::GetLogicalProcessorInformationEx(
        relation, static_cast<PSYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX>(buffer), &length);
    needed = length;
    return done ? static_cast<std::size_t>(length) : 0;
}

/**
 *  @brief  A function of `kernel32.dll` found at run time, or null where this Windows lacks it (`SetThreadDescription`
 *          arrived in Windows 10 1607). Cast the result to the function's type.
 */
inline FARPROC windows_kernel32_function(char const *name) noexcept {
    HMODULE const kernel32 = ::GetModuleHandleW(L"kernel32.dll"); // always loaded: no reference to release
    return kernel32 ? ::GetProcAddress(kernel32, name) : nullptr;
}

} // namespace forkunion::detail
#endif // FORKUNION_OS_WINDOWS
