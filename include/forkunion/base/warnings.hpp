/**
 *  @file   forkunion/base/warnings.hpp
 *  @brief  Where the library's warnings go: one line each, to stderr unless a sink is installed.
 *
 *  A warning reports something the library skipped and worked around, never a failure: the call that warned
 *  still returns its documented result. The topology harvest warns once for each sysfs file it found but could
 *  not use (malformed, unreadable, not a regular file, too long), naming the file's path.
 *
 *  @code
 *      static void to_my_log(void *log, char const *line) noexcept { static_cast<my_log_t *>(log)->add(line); }
 *      static fu::warning_sink_t const sink{&to_my_log, &my_log};
 *      fu::warning_sink_t const *previous = fu::set_warning_sink(&sink);  // nullptr puts stderr back
 *  @endcode
 *
 *  Threads: any thread may warn or install a sink at any time. A warning reads the sink installed last (acquire,
 *  pairs with the release in `set_warning_sink`), so the sink's fields are seen as they were written; the sink must
 *  stay alive and callable from any thread as long as it may be in use (until it is replaced and every harvest
 *  that could still read it returned). The sink is per copy of the library: a shared library that hides its
 *  symbols (the C API's `libforkunion_shared.so`) has a sink of its own, which this call does not change.
 *  Costs nothing unless something warns: no allocation either way (the line is formatted on the stack).
 */
#pragma once
#include <atomic> // `std::atomic`
#include <cstdio> // `std::fprintf`, `std::snprintf`

namespace forkunion {

/**  Receives each warning: `line` is one line, without a newline, valid only during the call. */
using warning_report_t = void (*)(void *context, char const *line) noexcept;

/**  A warning destination: `report(context, line)` is called once per warning. */
struct warning_sink_t {
    warning_report_t report = nullptr;
    void *context = nullptr;
};

namespace detail {
inline std::atomic<warning_sink_t const *> &warning_sink_slot() noexcept {
    static std::atomic<warning_sink_t const *> slot{nullptr}; // constant-initialized: no guard, no allocation
    return slot;
}
} // namespace detail

/**  @brief  Installs `sink` for every later warning (nullptr: stderr) and returns the previous one (nullptr: stderr). */
inline warning_sink_t const *set_warning_sink(warning_sink_t const *sink) noexcept {
    // Release: pairs with the acquire in `warn`, which then sees the sink's fields.
    return detail::warning_sink_slot().exchange(sink, std::memory_order_acq_rel);
}

/**  @brief  Sends `line` to the installed sink, or prints `forkunion: warning: <line>` to stderr. */
inline void warn(char const *line) noexcept {
    warning_sink_t const *sink = detail::warning_sink_slot().load(std::memory_order_acquire); // pairs as above
    if (sink && sink->report)
        sink->report(sink->context, line);
    else
        std::fprintf(stderr, "forkunion: warning: %s\n", line);
}

/**  @brief  `warn("<what> <path>")`, formatted on the stack (a path is cut at 4 KiB). */
inline void warn_about_file(char const *what, char const *path) noexcept {
    char line[4096 + 256];
    std::snprintf(line, sizeof line, "%s %s", what, path);
    warn(line);
}

} // namespace forkunion
