/**
 *  @file   forkunion/threads.hpp
 *  @brief  Deprecated include path, kept for the 0.1 series: include `<forkunion/hardware/threads.hpp>` instead.
 *
 *  The headers live in one folder per layer (`docs/design.md`, "Layers"); this file only forwards. Define
 *  `FORKUNION_WARN_DEPRECATED_INCLUDES` to have the compiler name each old path still in use.
 */
#pragma once
#include <forkunion/hardware/threads.hpp>
#if defined(FORKUNION_WARN_DEPRECATED_INCLUDES)
#pragma message("<forkunion/threads.hpp> is deprecated: include <forkunion/hardware/threads.hpp>")
#endif
