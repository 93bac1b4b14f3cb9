/**
 *  @file   test/model/cursor_sweep.cpp
 *  @brief  Brute-force check of claim I5 in `flat.hpp` for `std::uint8_t`: the claim cursors of `for_n_dynamic`
 *          never hand out a wrapped offset, and every task runs exactly once, for every n in [0, 255] and every
 *          thread count T in [1, 255], under adversarial interleavings.
 *
 *  Each simulated thread replays `n_dynamic_job_t::drain` step by step with `std::uint8_t` arithmetic and the
 *  library's own `static_slice`, `coprime_stride` and `next_in_coprime_order`: drain its own cursor, then one
 *  victim after another (a thief loads first, the owner does not; `fetch_add(1)` until the first offset past the
 *  block, or until it claimed the block's last task). One scheduler step is one atomic access. A wide shadow
 *  counter per cursor records the true (unwrapped) offsets.
 *  Schedules per (n, T):
 *    - pile-up on cursor c (c = 0 and c = T - 1): no thread may `fetch_add` on c until every unfinished thread
 *      stands at a `fetch_add` on c, so all T threads pass the load check before anyone exhausts it; this is the
 *      worst case of the "one failing increment per thread per cursor" rule: every thread but the one that claims
 *      the last task fails once, offset count_c + T - 2;
 *    - round robin, and a seeded pseudo-random schedule.
 *  Checks: every task exactly once; no offset above 255 is ever returned (it would wrap); the largest returned
 *  offset matches ceil(n/T) + T - 2 under the pile-up on cursor 0; each thread visits every other cursor once.
 *  Exits non-zero and names the first failing (n, T, schedule), or if any cursor's stored value wrapped to 0:
 *  since no thread increments after claiming a block's last task, the largest stored value is ceil(n/T) + T - 1
 *  ≤ 255 (before that rule a cursor could end at 256, wrapped, once every thread had left it).
 *  By default the pile-up on cursor 0 runs for every (n, T) and the other schedules for every n and every 8th T
 *  plus T >= 248 (~15 s of one core); `--full` runs all four schedules everywhere (~1 min); `--quick`, for
 *  sanitizer builds, runs all four only for T <= 8 and T >= 254, where ceil(n/T) + T - 1 reaches 255.
 */
#include <cstdint>     // `std::uint8_t`
#include <cstdio>      // `std::printf`
#include <string_view> // `std::string_view`
#include <vector>      // `std::vector`

#include <forkunion/base/types.hpp>

namespace {

using index_t = std::uint8_t;

struct thread_state_t {
    index_t stride = 1;
    index_t victim = 0;
    unsigned visited = 0; // cursors visited so far, own included
    bool at_fetch = false;
    bool done = false;
};

struct sweep_t {
    unsigned n = 0, threads = 0;
    std::vector<index_t> cursor; // the real u8 cursors
    std::vector<unsigned> wide;  // unwrapped fetch_add counts
    std::vector<unsigned> runs;  // per task
    std::vector<thread_state_t> state;
    std::vector<std::vector<bool>> seen; // per thread: cursors visited
    unsigned max_offset = 0;
    unsigned long long wrapped_cursors = 0;
    char const *failure = nullptr;

    void reset(unsigned tasks, unsigned thread_count) {
        n = tasks, threads = thread_count, max_offset = 0, failure = nullptr;
        cursor.assign(threads, 0);
        wide.assign(threads, 0);
        runs.assign(n, 0);
        state.assign(threads, {});
        seen.assign(threads, std::vector<bool>(threads, false));
        for (unsigned t = 0; t < threads; ++t) {
            state[t].stride =
                forkunion::coprime_stride<index_t>(static_cast<index_t>(threads), static_cast<index_t>(t));
            state[t].victim = static_cast<index_t>(t);
            state[t].at_fetch = true; // its own cursor first, which the owner claims without a load
            seen[t][t] = true;
            state[t].visited = 1;
        }
    }

    forkunion::slice_t<index_t> block(unsigned owner) const {
        return forkunion::static_slice<index_t>(static_cast<index_t>(n), static_cast<index_t>(threads),
                                                static_cast<index_t>(owner));
    }

    void advance(unsigned t) {
        thread_state_t &me = state[t];
        me.at_fetch = false;
        if (me.visited == threads) {
            me.done = true;
            return;
        }
        me.victim = forkunion::next_in_coprime_order<index_t>(me.victim, me.stride, static_cast<index_t>(threads));
        if (seen[t][me.victim]) failure = "a thread visited a cursor twice";
        seen[t][me.victim] = true;
        ++me.visited;
    }

    /**  One atomic access of thread t: a thief's relaxed pre-check load, or one `fetch_add`. */
    void step(unsigned t) {
        thread_state_t &me = state[t];
        forkunion::slice_t<index_t> const b = block(me.victim);
        if (!me.at_fetch) {
            if (cursor[me.victim] >= b.count)
                advance(t);
            else
                me.at_fetch = true;
            return;
        }
        index_t const offset = cursor[me.victim]++;
        unsigned const true_offset = wide[me.victim]++;
        if (true_offset > 255u) failure = "a fetch_add returned an offset above 255 (wrapped)";
        if (offset != static_cast<index_t>(true_offset)) failure = "shadow mismatch";
        if (true_offset > max_offset) max_offset = true_offset;
        if (offset < b.count) {
            unsigned const task = static_cast<unsigned>(b.first) + offset;
            if (task >= n)
                failure = "task index out of range";
            else if (++runs[task] != 1)
                failure = "a task ran twice";
            if (offset + 1u == b.count) advance(t); // the block's last task: no increment after it
        } else {
            advance(t);
        }
    }

    bool finished() const {
        for (auto const &s : state)
            if (!s.done) return false;
        return true;
    }

    void check_end() {
        for (unsigned t = 0; t < threads; ++t) wrapped_cursors += wide[t] >= 256u;
        if (failure) return;
        for (unsigned task = 0; task < n; ++task)
            if (runs[task] != 1) failure = "a task was skipped";
        for (unsigned t = 0; t < threads && !failure; ++t)
            if (state[t].visited != threads) failure = "a thread skipped a cursor";
    }

    void round_robin() {
        while (!finished() && !failure)
            for (unsigned t = 0; t < threads; ++t)
                if (!state[t].done) step(t);
        check_end();
    }

    void random(std::uint64_t seed) {
        while (!finished() && !failure) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            unsigned t = static_cast<unsigned>(seed >> 33) % threads;
            while (state[t].done) t = (t + 1) % threads;
            step(t);
        }
        check_end();
    }

    /**  Holds every `fetch_add` on cursor `target` until all unfinished threads stand at one, then releases. */
    void pile_up(unsigned target) {
        bool released = false;
        while (!finished() && !failure) {
            bool moved = false, all_waiting = true;
            for (unsigned t = 0; t < threads; ++t) {
                thread_state_t const &me = state[t];
                if (me.done) continue;
                bool const waiting = !released && me.at_fetch && me.victim == target;
                if (waiting) continue;
                all_waiting = false;
                step(t);
                moved = true;
            }
            if (!moved && all_waiting) released = true;
        }
        check_end();
    }
};

} // namespace

int main(int argc, char **argv) {
    std::string_view const mode = argc > 1 ? argv[1] : "";
    bool const full = mode == "--full", quick = mode == "--quick";
    sweep_t sweep;
    unsigned long long schedules = 0, wrapped = 0;
    unsigned worst = 0;
    for (unsigned threads = 1; threads <= 255; ++threads) {
        if (quick && threads > 8 && threads < 254) continue;
        int const schedules_here = full || quick || threads % 8 == 1 || threads >= 248 ? 4 : 1;
        for (unsigned n = 0; n <= 255; ++n) {
            unsigned const longest = (n + threads - 1) / threads; // ceil(n / T): block 0's length
            for (int schedule = 0; schedule < schedules_here; ++schedule) {
                sweep.reset(n, threads);
                switch (schedule) {
                case 0:
                    sweep.pile_up(0);
                    break;
                case 1:
                    sweep.pile_up(threads - 1);
                    break;
                case 2:
                    sweep.round_robin();
                    break;
                default:
                    sweep.random(n * 1000003ull + threads);
                    break;
                }
                ++schedules;
                wrapped += sweep.wrapped_cursors;
                if (!sweep.failure && schedule == 0 && n > 0 && sweep.max_offset != longest + threads - 2)
                    sweep.failure = "the pile-up did not reach the bound ceil(n/T) + T - 2 (schedule too weak)";
                if (sweep.failure) {
                    std::printf("FAIL n=%u T=%u schedule=%d: %s\n", n, threads, schedule, sweep.failure);
                    return 1;
                }
                if (sweep.max_offset > worst) worst = sweep.max_offset;
            }
        }
    }
    std::printf("ok: %llu schedules, every task once, largest offset returned %u (<= 254), %llu cursors wrapped\n",
                schedules, worst, wrapped);
    return worst <= 254 && wrapped == 0 ? 0 : 1;
}
