/**
 *  @file   catch_compat.hpp
 *  @brief  Includes Catch2 v2 (single header, Debian 12) or v3 alike. The TU that defines
 *          `FORKUNION_CATCH2_MAIN` provides `main` under v2; v3 links `Catch2::Catch2WithMain`.
 */
#pragma once
#if FORKUNION_CATCH2_V3
#include <catch2/catch_all.hpp>
#else
#if defined(FORKUNION_CATCH2_MAIN)
#define CATCH_CONFIG_MAIN
#endif
#include <catch2/catch.hpp>
#endif
