// A consumer of forkunion: sums 0..999 on every allowed core and checks the answer.
#include <atomic>
#include <cstdio>
#include <forkunion.hpp>

namespace fu = forkunion;

int main() {
    fu::flat_pool_t pool;
    if (!pool.spawn(fu::allowed_cores_count())) return 1;
    std::atomic<std::size_t> sum{0};
    if (!pool.for_n(1000, [&](std::size_t task) noexcept { sum.fetch_add(task, std::memory_order_relaxed); }).join())
        return 3;
    std::printf("consumer: sum = %zu on %zu threads\n", sum.load(), pool.threads_count());
    return sum.load() == 499500 ? 0 : 2;
}
