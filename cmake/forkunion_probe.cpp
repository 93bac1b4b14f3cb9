// The compile probe of `forkunion_features.cmake`: built once per feature with FORKUNION_PROBE_<FEATURE> and
// FORKUNION_WITH_<FEATURE>=1 defined, it instantiates the very code the headers emit for that feature. It builds
// iff the compiler can emit it for this target: the headers `#error` on a target that cannot encode the feature,
// and the assembler must accept every instruction.
#include <atomic>
#include <cstdint>

#include <forkunion/hardware/atomics.hpp>
#include <forkunion/hardware/wait.hpp>

namespace fu = forkunion;

template <typename value_t>
void every_width(value_t value) {
    static value_t object = 0;
#if defined(FORKUNION_PROBE_CMPCCXADD)
    (void)fu::detail::x86_atomics_t::fetch_add_if_at_most(object, value, value, std::memory_order_seq_cst);
    (void)fu::detail::x86_atomics_t::fetch_sub_if_at_least(object, value, value, std::memory_order_seq_cst);
#elif defined(FORKUNION_PROBE_RAOINT)
    fu::detail::x86_atomics_t::add(object, value, std::memory_order_relaxed);
    fu::detail::x86_atomics_t::clear_bits(object, value, std::memory_order_relaxed);
    fu::detail::x86_atomics_t::set_bits(object, value, std::memory_order_relaxed);
    fu::detail::x86_atomics_t::flip_bits(object, value, std::memory_order_relaxed);
#elif defined(FORKUNION_PROBE_LSE)
    (void)fu::detail::arm64_atomics_t::fetch_max(object, value, std::memory_order_seq_cst);
    fu::detail::arm64_atomics_t::add(object, value, std::memory_order_release);
    (void)fu::detail::arm64_atomics_t::compare_exchange(object, value, value, std::memory_order_acquire,
                                                        std::memory_order_acquire);
#elif defined(FORKUNION_PROBE_ZACAS)
    (void)fu::detail::riscv_atomics_t::compare_exchange(object, value, value, std::memory_order_seq_cst,
                                                        std::memory_order_seq_cst);
#else
    (void)object, (void)value;
#endif
}

int main() {
    std::atomic<std::uint32_t> word{0};
    (void)word;
#if defined(FORKUNION_PROBE_WAITPKG)
    fu::x86_tpause_t{}();
    fu::x86_umwait_t{}(word, 1u);
#elif defined(FORKUNION_PROBE_WFXT)
    fu::arm64_wfet_t{}(word, 1u);
#elif defined(FORKUNION_PROBE_ZAWRS)
    fu::riscv_wrs_t{}(word, 1u);
#elif defined(FORKUNION_PROBE_CMPCCXADD) || defined(FORKUNION_PROBE_RAOINT)
    every_width<std::uint32_t>(1), every_width<std::int64_t>(1);
#elif defined(FORKUNION_PROBE_LSE)
    every_width<std::uint8_t>(1), every_width<std::int16_t>(1), every_width<std::uint32_t>(1);
    every_width<std::int64_t>(1);
#elif defined(FORKUNION_PROBE_ZACAS)
    every_width<std::uint32_t>(1), every_width<long>(1);
#else
#error "define one FORKUNION_PROBE_<FEATURE>"
#endif
    return 0;
}
