/**
 *  @file   forkunion/hardware/detail/threads_linux.hpp
 *  @brief  The Linux backend of `forkunion/hardware/threads.hpp`: the POSIX threads, clock and fork counter, plus the thread
 *          limits Linux publishes, checked before a spawn starts its first thread.
 *
 *  Limits read, each skipped when unreadable or malformed (then the thread start itself reports the refusal):
 *  - `RLIMIT_NPROC` (`getrlimit`): processes and threads of the real user; root and `CAP_SYS_RESOURCE` are exempt,
 *    so it is applied to non-root users only, and only as a bound on the threads asked for;
 *  - `kernel.threads-max` and `kernel.pid_max` against the tasks that exist (the fourth field of `/proc/loadavg`);
 *  - the cgroup's `pids.max` against its `pids.current` (v2 unified hierarchy, or v1's `pids` controller), through
 *    the process's own entry in `/proc/self/cgroup`;
 *  - `vm.max_map_count` against the mappings of this process (lines of `/proc/self/maps`), two per thread (the
 *    stack and its guard page): the ~32,000-thread ceiling of a default 65,530;
 *  - `RLIMIT_AS`, and with `vm.overcommit_memory = 2` the commit limit, against the stacks' size.
 *  The file reads are skipped for spawns of fewer than `limits_file_check_threads_k` threads, where no default
 *  limit binds and a refused start costs nothing. Spawn-time only; never on a dispatch.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/hardware/detail/threads_posix.hpp>
#include <forkunion/base/types.hpp>

#if FORKUNION_OS_LINUX
#include <fcntl.h>        // `open`
#include <sys/resource.h> // `getrlimit`
#include <unistd.h>       // `read`, `close`, `geteuid`

namespace forkunion::detail {

/**  Spawns below this many threads skip the file-based limits: the smallest default they guard (a cgroup's
 *  `pids.max` of a container, usually in the thousands) is far above it, and reading them costs ~100 µs. */
inline constexpr std::size_t limits_file_check_threads_k = 64;

struct linux_threads_t : posix_threads_t {

    static status_t check_limits(std::size_t threads, std::size_t stack_bytes) noexcept {
        if (threads == 0) return status_code_t::success_k;
        rlimit limit{};
        if (::geteuid() != 0 && ::getrlimit(RLIMIT_NPROC, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
            threads > limit.rlim_cur)
            return status_code_t::thread_refused_k;
        std::uint64_t const stack = stack_bytes ? stack_bytes : default_stack_bytes_();
        std::uint64_t const stacks = stack * threads;
        if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && stacks > limit.rlim_cur)
            return status_code_t::thread_refused_k;
        if (threads < limits_file_check_threads_k) return status_code_t::success_k;

        std::uint64_t tasks = 0, value = 0;
        if (read_loadavg_tasks_(tasks)) {
            if (read_number_("/proc/sys/kernel/threads-max", value) && tasks + threads > value)
                return status_code_t::thread_refused_k;
            if (read_number_("/proc/sys/kernel/pid_max", value) && tasks + threads > value)
                return status_code_t::thread_refused_k;
        }
        std::uint64_t maps = 0;
        if (read_number_("/proc/sys/vm/max_map_count", value) && count_lines_("/proc/self/maps", maps) &&
            maps + 2 * std::uint64_t(threads) > value)
            return status_code_t::thread_refused_k;
        std::uint64_t pids_max = 0, pids_current = 0;
        if (read_cgroup_pids_(pids_max, pids_current) && pids_current + threads > pids_max)
            return status_code_t::thread_refused_k;
        if (read_number_("/proc/sys/vm/overcommit_memory", value) && value == 2) {
            std::uint64_t commit_limit = 0, committed = 0;
            if (read_meminfo_kib_("CommitLimit:", commit_limit) && read_meminfo_kib_("Committed_AS:", committed) &&
                committed * 1024 + stacks > commit_limit * 1024)
                return status_code_t::thread_refused_k;
        }
        return status_code_t::success_k;
    }

private:
    /**  glibc's default thread stack: `RLIMIT_STACK` when finite, else 2 MiB. */
    static std::uint64_t default_stack_bytes_() noexcept {
        rlimit limit{};
        if (::getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur != 0)
            return limit.rlim_cur;
        return std::uint64_t(2) << 20;
    }

    /**  Reads up to `capacity - 1` bytes of a small file and terminates them; false if unreadable. */
    static bool read_file_(char const *path, char *buffer, std::size_t capacity) noexcept {
        int const fd = ::open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return false;
        std::size_t length = 0;
        for (;;) {
            if (length + 1 >= capacity) break;
            long const got = static_cast<long>(::read(fd, buffer + length, capacity - 1 - length));
            if (got <= 0) break;
            length += static_cast<std::size_t>(got);
        }
        ::close(fd);
        buffer[length] = '\0';
        return length != 0;
    }

    /**  Parses the decimal number at `text` (leading blanks skipped); false if there is none or it overflows. */
    static bool parse_number_(char const *&text, std::uint64_t &value) noexcept {
        while (*text == ' ' || *text == '\t') ++text;
        if (*text < '0' || *text > '9') return false;
        std::uint64_t parsed = 0;
        for (; *text >= '0' && *text <= '9'; ++text) {
            std::uint64_t const digit = static_cast<std::uint64_t>(*text - '0');
            if (parsed > (~std::uint64_t(0) - digit) / 10) return false;
            parsed = parsed * 10 + digit;
        }
        value = parsed;
        return true;
    }

    static bool read_number_(char const *path, std::uint64_t &value) noexcept {
        char buffer[64];
        char const *cursor = buffer;
        return read_file_(path, buffer, sizeof(buffer)) && parse_number_(cursor, value);
    }

    /**  `/proc/loadavg` is `1.0 0.5 0.2 running/total last_pid`: the total is every task of the system. */
    static bool read_loadavg_tasks_(std::uint64_t &tasks) noexcept {
        char buffer[128];
        if (!read_file_("/proc/loadavg", buffer, sizeof(buffer))) return false;
        char const *cursor = buffer;
        while (*cursor && *cursor != '/') ++cursor;
        if (*cursor != '/') return false;
        ++cursor;
        return parse_number_(cursor, tasks);
    }

    static bool count_lines_(char const *path, std::uint64_t &lines) noexcept {
        int const fd = ::open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return false;
        char buffer[4096];
        std::uint64_t count = 0;
        for (long got; (got = static_cast<long>(::read(fd, buffer, sizeof(buffer)))) > 0;)
            for (long i = 0; i != got; ++i) count += buffer[i] == '\n';
        ::close(fd);
        lines = count;
        return true;
    }

    static bool read_meminfo_kib_(char const *key, std::uint64_t &kib) noexcept {
        char buffer[4096];
        if (!read_file_("/proc/meminfo", buffer, sizeof(buffer))) return false;
        for (char const *line = buffer; *line;) {
            char const *k = key, *cursor = line;
            while (*k && *cursor == *k) ++k, ++cursor;
            if (!*k) return parse_number_(cursor, kib);
            while (*line && *line != '\n') ++line;
            if (*line) ++line;
        }
        return false;
    }

    /**  The cgroup's `pids.max` ("max" = no limit: false) and `pids.current`, v2 first, then v1's controller. */
    static bool read_cgroup_pids_(std::uint64_t &max, std::uint64_t &current) noexcept {
        char membership[1024];
        if (!read_file_("/proc/self/cgroup", membership, sizeof(membership))) return false;
        // Lines are `id:controllers:path`; v2 is `0::/path`, v1's pids controller is `N:pids:/path`.
        for (char *line = membership; *line;) {
            char *end = line;
            while (*end && *end != '\n') ++end;
            char const saved = *end;
            *end = '\0';
            char *first_colon = line;
            while (*first_colon && *first_colon != ':') ++first_colon;
            char *second_colon = *first_colon ? first_colon + 1 : first_colon;
            while (*second_colon && *second_colon != ':') ++second_colon;
            if (*first_colon && *second_colon) {
                std::size_t const controllers = static_cast<std::size_t>(second_colon - first_colon - 1);
                bool const v2 = controllers == 0;
                bool const v1 = controllers == 4 && first_colon[1] == 'p' && first_colon[2] == 'i' &&
                                first_colon[3] == 'd' && first_colon[4] == 's';
                if ((v2 || v1) &&
                    read_pids_at_(v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/pids", second_colon + 1, max, current))
                    return true;
            }
            *end = saved;
            line = *end ? end + 1 : end;
        }
        return false;
    }

    static bool read_pids_at_(char const *mount, char const *path, std::uint64_t &max,
                              std::uint64_t &current) noexcept {
        char file[1400];
        auto compose = [&](char const *leaf) noexcept {
            std::size_t length = 0;
            char const *const parts[] = {mount, path, "/", leaf};
            for (char const *part : parts)
                for (; *part && length + 1 < sizeof(file); ++part) file[length++] = *part;
            file[length] = '\0';
            return length + 1 < sizeof(file);
        };
        return compose("pids.max") && read_number_(file, max) && compose("pids.current") && read_number_(file, current);
    }
};

} // namespace forkunion::detail
#endif // FORKUNION_OS_LINUX
