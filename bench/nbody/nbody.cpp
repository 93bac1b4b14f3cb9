/**
 *  @file   nbody.cpp
 *  @brief  N-body, the dispatch-latency benchmark: microseconds per step, two fork-joins per step.
 *
 *  Every task costs the same, so what differs between backends is scheduling. At the default N = thread count
 *  each dispatch hands exactly one body to each thread, and a step is two dispatches and almost no arithmetic.
 *
 *  Inputs: body i takes draws 7i..7i+6 for position xyz, velocity xyz and mass; a uniform float is
 *  `float(draw >> 40) * 2^-24`; mass = 1e10f + u * (1e15f - 1e10f). Positions and velocities are those uniforms.
 *  One step: a force pass (each body sums the pull of every other body, with the 0x5f3759df inverse square
 *  root and one Newton step) and an apply pass (v += a dt, then x += v dt), each one `for_n` over the bodies.
 *
 *  Strict IEEE: this file is compiled with `-ffp-contract=off -fno-fast-math` and no `-march`, and every backend
 *  runs these same two kernel functions, each body's sum in the same order, so the final state is bit-identical
 *  whichever thread computed which body. The row reports a hash of the state after `checkpoint_steps_k` steps;
 *  with FORKUNION_NBODY_CHECK=1 those steps also run serially and any differing bit fails the run (status 3).
 *
 *  `*_replicated`: the positions and masses every task reads are kept once per memory domain; the apply pass
 *  writes each moved body into every replica. With one domain that is the one array `shared` uses.
 */
#include <bit>     // `std::bit_cast`
#include <cstdint> // `std::uint32_t`
#include <cstdio>  // `std::printf`
#include <cstring> // `std::memcmp`
#include <vector>  // `std::vector`

#include "harness.hpp"
#include "runtimes.hpp"

namespace fu = forkunion;
namespace fub = forkunion::bench;

namespace {

#if defined(__FAST_MATH__)
#error "nbody.cpp must be compiled with strict IEEE semantics: -fno-fast-math -ffp-contract=off"
#endif

constexpr float gravity_k = 6.674e-11f;
constexpr float time_step_k = 0.01f;
constexpr float softening_k = 1e-9f;
/**  Steps after which every run hashes its state: enough for one differing bit to spread to every body. */
constexpr std::size_t checkpoint_steps_k = 8;

/**  What every task of the force pass reads: replicated per memory domain by `*_replicated` backends. */
struct point_t {
    float x, y, z, mass;
};
struct vector_t {
    float x, y, z;
};

/**  The state that changes step to step, besides the points. */
struct motion_t {
    std::vector<vector_t> velocities, accelerations;
};

/**  Quake III's inverse square root: the 0x5f3759df guess and one Newton step. */
inline float fast_inverse_sqrt(float x) noexcept {
    float const half = 0.5f * x;
    std::uint32_t const bits = 0x5f3759dfu - (std::bit_cast<std::uint32_t>(x) >> 1);
    float const guess = std::bit_cast<float>(bits);
    return guess * (1.5f - half * guess * guess);
}

/**  Force pass for body `i`: the sum, over every other body j in order, of G m_j d / (|d|^2 + eps)^1.5. */
[[gnu::noinline]] void accumulate_force(point_t const *points, std::size_t count, std::size_t i,
                                        vector_t &acceleration) noexcept {
    point_t const self = points[i];
    float ax = 0, ay = 0, az = 0;
    for (std::size_t j = 0; j != count; ++j) {
        if (j == i) continue;
        point_t const other = points[j];
        float const dx = other.x - self.x, dy = other.y - self.y, dz = other.z - self.z;
        float const distance_squared = dx * dx + dy * dy + dz * dz + softening_k;
        float const inverse = fast_inverse_sqrt(distance_squared);
        float const scale = gravity_k * other.mass * (inverse * inverse * inverse);
        ax += dx * scale, ay += dy * scale, az += dz * scale;
    }
    acceleration = {ax, ay, az};
}

/**  Apply pass for body `i`: v += a dt, x += v dt, and the new position written to every replica. */
[[gnu::noinline]] void apply_motion(point_t *const *replicas, std::size_t replicas_count, std::size_t i,
                                    vector_t &velocity, vector_t const &acceleration) noexcept {
    velocity.x += acceleration.x * time_step_k;
    velocity.y += acceleration.y * time_step_k;
    velocity.z += acceleration.z * time_step_k;
    point_t point = replicas[0][i];
    point.x += velocity.x * time_step_k;
    point.y += velocity.y * time_step_k;
    point.z += velocity.z * time_step_k;
    for (std::size_t replica = 0; replica != replicas_count; ++replica) replicas[replica][i] = point;
}

/**  Bodies drawn from the counter-based SplitMix64 (file comment). */
void generate(std::uint32_t seed, std::size_t count, std::vector<point_t> &points, motion_t &motion) {
    fub::draws_t const draws(seed);
    points.resize(count);
    motion.velocities.resize(count);
    motion.accelerations.assign(count, vector_t{0, 0, 0});
    for (std::size_t i = 0; i != count; ++i) {
        std::uint64_t const c = 7 * std::uint64_t(i);
        points[i].x = draws.uniform(c + 0), points[i].y = draws.uniform(c + 1), points[i].z = draws.uniform(c + 2);
        motion.velocities[i] = {draws.uniform(c + 3), draws.uniform(c + 4), draws.uniform(c + 5)};
        points[i].mass = 1e10f + draws.uniform(c + 6) * (1e15f - 1e10f);
    }
}

/**  A hash of every bit of positions, masses and velocities. */
std::uint64_t hash_state(point_t const *points, motion_t const &motion) {
    std::uint64_t hash = 0;
    auto fold = [&](float value) { hash = fub::mix(hash ^ std::bit_cast<std::uint32_t>(value)); };
    for (std::size_t i = 0; i != motion.velocities.size(); ++i) {
        fold(points[i].x), fold(points[i].y), fold(points[i].z), fold(points[i].mass);
        fold(motion.velocities[i].x), fold(motion.velocities[i].y), fold(motion.velocities[i].z);
    }
    return hash;
}

/**  The serial reference for CHECK mode: `steps` steps with plain loops over the same kernels. */
std::uint64_t serial_state_after(std::size_t steps, std::vector<point_t> points, motion_t motion) {
    point_t *replicas[1] = {points.data()};
    for (std::size_t step = 0; step != steps; ++step) {
        for (std::size_t i = 0; i != points.size(); ++i)
            accumulate_force(points.data(), points.size(), i, motion.accelerations[i]);
        for (std::size_t i = 0; i != points.size(); ++i)
            apply_motion(replicas, 1, i, motion.velocities[i], motion.accelerations[i]);
    }
    return hash_state(points.data(), motion);
}

/**  The serial run's hash after the checkpoint, when CHECK mode computed one. */
struct expectation_t {
    bool known = false;
    std::uint64_t hash = 0;
};

template <typename runtime_type_, fub::schedule_t schedule_k>
void run(runtime_type_ &runtime, fub::settings_t const &settings, fub::backend_t const &backend,
         fub::floor_t const &floor, expectation_t const &expected, std::vector<point_t> &points, motion_t &motion) {
    std::size_t const count = points.size();
    fub::replicas_t<point_t> const replicas(runtime, points);
    std::vector<point_t *> replica_pointers;
    for (std::size_t replica = 0; replica != replicas.count(); ++replica) replica_pointers.push_back(replicas[replica]);
    point_t *const *const replicas_begin = replica_pointers.data();
    std::size_t const replicas_count = replica_pointers.size();

    auto force = [&](std::size_t i, std::size_t thread) noexcept {
        accumulate_force(replicas_begin[runtime.replica_of(thread)], count, i, motion.accelerations[i]);
    };
    auto apply = [&](std::size_t i, std::size_t) noexcept {
        apply_motion(replicas_begin, replicas_count, i, motion.velocities[i], motion.accelerations[i]);
    };
    auto step = [&]() noexcept {
        runtime.template for_n<schedule_k>(count, force);
        runtime.template for_n<schedule_k>(count, apply);
    };

    // Warm-up: at least the checkpoint's steps, with the census counting who ran each task.
    fub::census_t census(runtime.threads_count());
    auto counted_force = [&](std::size_t i, std::size_t thread) noexcept {
        census.count(thread);
        force(i, thread);
    };
    auto counted_apply = [&](std::size_t i, std::size_t thread) noexcept {
        census.count(thread);
        apply(i, thread);
    };
    std::size_t steps = 0;
    std::uint64_t checkpoint_hash = 0;
    fub::window_t const warm = fub::warm_up(settings.warmup, checkpoint_steps_k, [&]() noexcept {
        runtime.template for_n<schedule_k>(count, counted_force);
        runtime.template for_n<schedule_k>(count, counted_apply);
        if (++steps == checkpoint_steps_k) checkpoint_hash = hash_state(replicas[0], motion);
    });
    if (census.stray())
        fub::fail(fub::exit_unavailable_k, "%s passed a thread index outside [0, %zu)", backend.name.c_str(),
                  runtime.threads_count());
    fub::print_census(census, runtime.threads_count());

    char const *check = "skipped";
    if (expected.known) {
        if (expected.hash != checkpoint_hash)
            fub::fail(fub::exit_check_failed_k, "CHECK failed: %s state after %zu steps 0x%016llx, serial 0x%016llx",
                      backend.name.c_str(), checkpoint_steps_k, (unsigned long long)checkpoint_hash,
                      (unsigned long long)expected.hash);
        check = "passed";
        std::printf("# check: the state after %zu steps matches the serial run bit for bit\n", checkpoint_steps_k);
    }

    std::size_t const stride = fub::checkpoint_stride(warm.seconds / double(warm.iterations));
    fub::window_t const window = fub::timed_window(settings.time_limit, stride, step, [] { return false; });

    double const us_per_step = window.median_seconds * 1e6;
    fub::result_row_t row("nbody");
    row.add("backend", backend.name).add("family", backend.family);
    row.add("threads", std::uint64_t(runtime.threads_count())).add("bodies", std::uint64_t(count));
    row.add("steps", std::uint64_t(window.iterations)).add("seconds", window.seconds);
    row.add("us_per_step", us_per_step).add("us_per_step_mean", window.seconds * 1e6 / double(window.iterations));
    row.add("floor_ns", floor.round_trip_ns);
    // Two dispatches per step: what one costs, in round trips of the floor.
    if (floor.round_trip_ns > 0) row.add("dispatch_over_floor", us_per_step * 1e3 / 2 / floor.round_trip_ns);
    row.add("off_caller", census.off_caller_share());
    row.add_hex("state_after_8_steps", checkpoint_hash).add("check", std::string(check));
    row.print();
}

} // namespace

int main(int argc, char **argv) {
    forkunion_usage(
        argc, argv, "--list", 0,
        "[--list]\nN-body: microseconds per step, two dispatches per step, on bit-identical inputs.\n"
        "  --list  prints the backends (the values of FORKUNION_BACKEND) and exits\n" FORKUNION_BENCH_SETTINGS_USAGE);
    std::vector<fub::backend_t> const backends = fub::available_backends();
    if (fub::list_requested(argc, argv, fub::backend_names(backends))) return 0;
    fub::machine_t const machine = fub::harvest_machine();
    fub::settings_t const settings = fub::read_settings(fub::backend_names(backends), machine.cpus.size());
    fub::backend_t const &backend = fub::find_backend(backends, settings.backend);
    fub::print_banner("nbody", settings, machine);
    std::printf("# nbody: FORKUNION_NBODY_COUNT=%zu bodies, FORKUNION_NBODY_CHECK=%d, 2 dispatches per step, "
                "G=6.674e-11 dt=0.01 softening=1e-9, strict IEEE\n",
                settings.nbody_count, settings.nbody_check ? 1 : 0);

    std::vector<point_t> points;
    motion_t motion;
    generate(settings.seed, settings.nbody_count, points, motion);
    expectation_t expected;
    if (settings.nbody_check) expected = {true, serial_state_after(checkpoint_steps_k, points, motion)};

    // The floor, in this process, right before the runtime under test exists.
    fub::floor_t const floor = fub::measure_floor(machine);
    fub::print_floor(floor);

    fub::pin_plan_t plan(machine, settings.threads);
    fub::with_runtime(backend.runtime, plan, [&](auto &runtime) {
        fub::print_runtime(backend, runtime, plan);
        runtime.enter([&] {
            fub::with_schedule(backend.schedule, [&](auto schedule) {
                run<std::decay_t<decltype(runtime)>, decltype(schedule)::value>(runtime, settings, backend, floor,
                                                                                expected, points, motion);
            });
        });
    });
    return 0;
}
