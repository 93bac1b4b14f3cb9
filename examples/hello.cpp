#include <vector>

#include <forkunion.hpp>
#include "usage.h" // `forkunion_usage`: `--help`, unknown arguments refused
namespace fu = forkunion;

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0, "\nSquares 1000 numbers in parallel. Reads no environment.\n");
    fu::flat_pool_t pool;
    if (!pool.spawn(fu::allowed_cores_count())) return 1;
    std::vector<double> squares(1000);
    pool.for_n(squares.size(), [&](std::size_t i) noexcept { squares[i] = double(i) * double(i); })
        .join_or_run_on_caller();
    return squares[999] == 999.0 * 999.0 ? 0 : 1;
}
