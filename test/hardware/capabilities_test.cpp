/**
 *  @file   capabilities_test.cpp
 *  @brief  Tests of `include/forkunion/hardware/capabilities.hpp` and `features.hpp`: names and their parse, the
 *          compile-time masks, and run-time detection checked against two independent sources: whether each
 *          instruction executes (every target, emulated ones included) and `/proc/cpuinfo` (native builds).
 */
#include <gtest/gtest.h>

#include <csetjmp>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <forkunion/hardware/capabilities.hpp>
#include <forkunion/hardware/detail/system_windows.hpp> // `AddVectoredExceptionHandler`, on Windows only

namespace fu = forkunion;

namespace {

std::string name_of(fu::capabilities_t mask) {
    std::size_t const length = fu::name_capabilities(mask, nullptr, 0);
    std::string text(length, '\0');
    EXPECT_EQ(fu::name_capabilities(mask, text.data(), length + 1), length);
    return text;
}

/**  Masks to round-trip: every named bit, every pair of them, unnamed bits, and a SplitMix64 stream. */
std::vector<fu::capabilities_t> sample_masks() {
    std::vector<fu::capabilities_t> masks{fu::capabilities_none_k, fu::capabilities_all_k, fu::capabilities_isa_k,
                                          fu::comptime_capabilities(), fu::runtime_capabilities()};
    for (auto const &a : fu::capability_names_k)
        for (auto const &b : fu::capability_names_k) masks.push_back(a.bit | b.bit);
    for (unsigned bit = 0; bit != 64; ++bit) masks.push_back(fu::capabilities_t(1) << bit);
    std::uint64_t state = 42;
    for (int i = 0; i != 1000; ++i) {
        std::uint64_t x = (state += 0x9E3779B97F4A7C15ull);
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
        masks.push_back(x ^ (x >> 31));
    }
    return masks;
}

} // namespace

TEST(capabilities, every_named_bit_is_one_distinct_bit) {
    fu::capabilities_t seen = 0;
    std::set<std::string> names;
    for (auto const &entry : fu::capability_names_k) {
        EXPECT_EQ(entry.bit & (entry.bit - 1), 0u) << entry.name << " is not a single bit";
        EXPECT_EQ(seen & entry.bit, 0u) << entry.name << " repeats a bit";
        EXPECT_TRUE(names.insert(entry.name).second) << entry.name << " repeats a name";
        seen |= entry.bit;
        EXPECT_STREQ(fu::capability_name(entry.bit), entry.name);
    }
    EXPECT_EQ(fu::capability_name(0), nullptr);
    EXPECT_EQ(fu::capability_name(fu::capability_arm64_lse_k | fu::capability_x86_waitpkg_k), nullptr);
}

TEST(capabilities, names_round_trip) {
    for (fu::capabilities_t mask : sample_masks()) {
        std::string const text = name_of(mask);
        fu::capabilities_t parsed = ~mask;
        ASSERT_TRUE(fu::try_parse_capabilities(text.c_str(), parsed)) << text;
        EXPECT_EQ(parsed, mask) << text;
    }
    EXPECT_EQ(name_of(0), "none");
    EXPECT_EQ(name_of(fu::capability_x86_waitpkg_k | fu::capability_os_threads_k), "x86_waitpkg,os_threads");
    EXPECT_EQ(name_of(fu::capabilities_t(1) << 63), "bit63");
}

TEST(capabilities, naming_truncates_like_snprintf) {
    fu::capabilities_t const mask = fu::capability_arm64_lse_k | fu::capability_riscv_zawrs_k | (1ull << 50);
    std::string const whole = name_of(mask);
    for (std::size_t capacity = 0; capacity <= whole.size() + 2; ++capacity) {
        std::string buffer(capacity + 1, '#'); // one guard byte past the capacity
        EXPECT_EQ(fu::name_capabilities(mask, buffer.data(), capacity), whole.size());
        EXPECT_EQ(buffer[capacity], '#') << "wrote past the capacity " << capacity;
        if (capacity == 0) continue;
        std::size_t const kept = std::min(capacity - 1, whole.size());
        EXPECT_EQ(std::string(buffer.c_str()), whole.substr(0, kept)) << "capacity " << capacity;
    }
}

TEST(capabilities, parsing_accepts_blanks_and_rejects_malformed_text) {
    fu::capabilities_t mask = 0;
    ASSERT_TRUE(fu::try_parse_capabilities("  arm64_lse ,\tx86_waitpkg  ", mask));
    EXPECT_EQ(mask, fu::capability_arm64_lse_k | fu::capability_x86_waitpkg_k);
    for (char const *empty : {"", "   ", "none", " none "}) {
        mask = 7;
        ASSERT_TRUE(fu::try_parse_capabilities(empty, mask)) << '"' << empty << '"';
        EXPECT_EQ(mask, 0u) << '"' << empty << '"';
    }
    for (char const *bad : {"arm64_lse,", ",arm64_lse", "arm64_lse,,x86_waitpkg", "ARM64_LSE", "arm64 lse", "lse",
                            "bit64", "bit05", "bit", "bitx", "bit100", "arm64_lse;x86_waitpkg", "none,"}) {
        mask = 0x55;
        EXPECT_EQ(fu::try_parse_capabilities(bad, mask).code(), fu::status_code_t::invalid_argument_k) << bad;
        EXPECT_EQ(mask, 0x55u) << "a failed parse changed the mask: " << bad;
    }
    EXPECT_EQ(fu::try_parse_capabilities(nullptr, mask).code(), fu::status_code_t::invalid_argument_k);
}

TEST(capabilities, comptime_mask_mirrors_the_build_switches) {
    fu::capabilities_t const comptime = fu::comptime_capabilities();
    EXPECT_EQ(bool(comptime & fu::capability_x86_waitpkg_k), bool(FORKUNION_WITH_WAITPKG));
    EXPECT_EQ(bool(comptime & fu::capability_x86_cmpccxadd_k), bool(FORKUNION_WITH_CMPCCXADD));
    EXPECT_EQ(bool(comptime & fu::capability_x86_raoint_k), bool(FORKUNION_WITH_RAOINT));
    EXPECT_EQ(bool(comptime & fu::capability_arm64_lse_k), bool(FORKUNION_WITH_LSE));
    EXPECT_EQ(bool(comptime & fu::capability_arm64_wfxt_k), bool(FORKUNION_WITH_WFXT));
    EXPECT_EQ(bool(comptime & fu::capability_riscv_zawrs_k), bool(FORKUNION_WITH_ZAWRS));
    EXPECT_EQ(bool(comptime & fu::capability_riscv_zacas_k), bool(FORKUNION_WITH_ZACAS));
    EXPECT_TRUE(comptime & fu::capability_os_threads_k);
    if (FORKUNION_PORTABLE) {
        EXPECT_EQ(comptime & fu::capabilities_isa_k, 0u) << name_of(comptime);
    }
    // Nothing is usable that is not compiled in, whatever the CPU has.
    for (auto const &entry : fu::capability_names_k)
        if (!(comptime & entry.bit)) {
            EXPECT_FALSE(fu::capabilities_usable(entry.bit)) << entry.name;
        }
    EXPECT_TRUE(fu::capabilities_usable(fu::capabilities_none_k));
}

TEST(capabilities, runtime_detection_is_stable_and_reports_threads) {
    fu::capabilities_t const first = fu::runtime_capabilities();
    EXPECT_EQ(fu::runtime_capabilities(), first);
    EXPECT_TRUE(first & fu::capability_os_threads_k);
    EXPECT_EQ(first & ~(fu::capabilities_isa_k | fu::capability_os_threads_k), 0u)
        << "this layer reports only ISA bits and os_threads: " << name_of(first);
    // Usable = compiled in and (guaranteed or detected).
    for (auto const &entry : fu::capability_names_k) {
        bool const expected =
            (fu::comptime_capabilities() & entry.bit) && ((fu::target_capabilities() | first) & entry.bit);
        EXPECT_EQ(fu::capabilities_usable(entry.bit), expected) << entry.name;
    }
}

#if FORKUNION_TEST_EXPECTS_CAPABILITIES
/**  The cross builds name what the emulator offers (`FORKUNION_TEST_EXPECT_CAPABILITIES`, from the toolchain
 *   file), so a change of emulator that would silently move the suite onto other paths fails here instead. */
TEST(capabilities, runtime_detection_matches_what_the_emulator_offers) {
    char const *expected_text = std::getenv("FORKUNION_TEST_EXPECT_CAPABILITIES");
    ASSERT_NE(expected_text, nullptr) << "set FORKUNION_TEST_EXPECT_CAPABILITIES to what the emulated CPU offers";
    fu::capabilities_t expected = 0;
    ASSERT_TRUE(fu::try_parse_capabilities(expected_text, expected)) << expected_text;
    EXPECT_EQ(name_of(fu::runtime_capabilities() & fu::capabilities_isa_k), name_of(expected));
}
#endif

// ---- Does each instruction execute? An independent check of detection, on every target. ----

namespace {

#if FORKUNION_OS_WINDOWS
// Windows reports an illegal instruction as the structured exception EXCEPTION_ILLEGAL_INSTRUCTION. A vectored
// handler records it and resumes right after the instruction, whose length the probe names.
std::size_t probe_length = 0;
bool probe_trapped = false;
LONG WINAPI on_illegal_instruction(EXCEPTION_POINTERS *exception) {
    if (exception->ExceptionRecord->ExceptionCode != EXCEPTION_ILLEGAL_INSTRUCTION || !probe_length)
        return EXCEPTION_CONTINUE_SEARCH;
    probe_trapped = true;
    exception->ContextRecord->Rip += probe_length;
    return EXCEPTION_CONTINUE_EXECUTION;
}

/**  Runs `instruction` (`length` bytes of machine code) with illegal instructions caught: true if it executed. */
template <typename instruction_t>
bool executes(instruction_t instruction, std::size_t length) {
    void *const handler = ::AddVectoredExceptionHandler(1, on_illegal_instruction);
    probe_length = length, probe_trapped = false;
    instruction();
    probe_length = 0;
    ::RemoveVectoredExceptionHandler(handler);
    return !probe_trapped;
}
#else
sigjmp_buf probe_jump;
[[maybe_unused]] void on_illegal_instruction(int) {
    siglongjmp(probe_jump, 1);
}

/**  Runs `instruction` with SIGILL caught: true if it executed, false if it trapped. Main thread only. The
 *   length is for Windows, which resumes after the instruction instead of jumping out. */
template <typename instruction_t>
bool executes(instruction_t instruction, std::size_t) {
    struct sigaction action {
    }, previous{};
    action.sa_handler = on_illegal_instruction;
    sigemptyset(&action.sa_mask);
    sigaction(SIGILL, &action, &previous);
    bool executed = false;
    if (sigsetjmp(probe_jump, 1) == 0) {
        instruction();
        executed = true;
    }
    sigaction(SIGILL, &previous, nullptr);
    return executed;
}
#endif

struct probe_t {
    fu::capabilities_t bit;
    /**  Whether the encoding traps on every CPU (and emulator) without the feature, so execution implies the
     *   feature. False for encodings that alias a hint or a fence elsewhere. */
    bool traps_without;
    bool (*run)();
};

[[maybe_unused]] alignas(64) std::uint64_t probe_word = 0;

std::vector<probe_t> probes() {
    std::vector<probe_t> list;
#if FORKUNION_ARCH_X86 && FORKUNION_INLINE_ASM
    // TPAUSE with a deadline in the past returns at once. QEMU 7.2 decodes `66 0F AE F1` as a fence instead of
    // trapping, so execution does not imply WAITPKG there.
    list.push_back({fu::capability_x86_waitpkg_k, false, [] {
                        return executes(
                            [] {
                                __asm__ __volatile__(".byte 0x66, 0x0F, 0xAE, 0xF1" ::"c"(1u), "a"(0u), "d"(0u)
                                                     : "memory", "cc");
                            },
                            4);
                    }});
#endif
#if FORKUNION_ARCH_X86_64 && FORKUNION_INLINE_ASM
    list.push_back({fu::capability_x86_cmpccxadd_k, true, [] {
                        return executes(
                            [] {
                                std::uint32_t compare = 0;
                                __asm__ __volatile__(".byte 0xC4, 0xE2, 0x71, 0xE6, 0x07" // CMPBEXADD [rdi], eax, ecx
                                                     : "+a"(compare)
                                                     : "D"(&probe_word), "c"(0u)
                                                     : "memory", "cc");
                            },
                            5);
                    }});
    list.push_back(
        {fu::capability_x86_raoint_k, true, [] {
             return executes(
                 [] { __asm__ __volatile__(".byte 0x0F, 0x38, 0xFC, 0x07" ::"D"(&probe_word), "a"(0u)
                                           : "memory"); },
                 4);
         }});
#endif
#if FORKUNION_ARCH_ARM64 && FORKUNION_INLINE_ASM
    list.push_back({fu::capability_arm64_lse_k, true, [] {
                        return executes(
                            [] {
                                register std::uint64_t rs asm("x0") = 0;
                                register std::uint64_t rt asm("x1");
                                register void *rn asm("x2") = &probe_word;
                                __asm__ __volatile__(".inst 0xF8E00041"
                                                     : "=r"(rt)
                                                     : "r"(rs), "r"(rn)
                                                     : "memory"); // LDADDAL x0, x1, [x2]
                            },
                            4);
                    }});
    list.push_back({fu::capability_arm64_wfxt_k, true, [] {
                        return executes(
                            [] {
                                register std::uint64_t deadline asm("x0") = 0; // in the past: returns at once
                                __asm__ __volatile__(".inst 0xD5031000" ::"r"(deadline) : "memory"); // WFET x0
                            },
                            4);
                    }});
#endif
#if FORKUNION_ARCH_RISCV && FORKUNION_INLINE_ASM
    list.push_back(
        {fu::capability_riscv_amo_k, true, [] {
             return executes(
                 [] {
                     long old;
                     __asm__ __volatile__(".insn r 0x2F, 3, 0, %0, %1, x0" : "=r"(old) : "r"(&probe_word) : "memory");
                 },
                 4);
         }});
    // WRS.STO with no reservation held returns at once.
    list.push_back({fu::capability_riscv_zawrs_k, true, [] {
                        return executes([] { __asm__ __volatile__(".4byte 0x01D00073" ::: "memory"); }, 4);
                    }});
    list.push_back({fu::capability_riscv_zacas_k, true, [] {
                        return executes(
                            [] {
                                long compare = 1;
                                __asm__ __volatile__(".insn r 0x2F, 3, 0x14, %0, %1, x0" // AMOCAS.D
                                                     : "+r"(compare)
                                                     : "r"(&probe_word)
                                                     : "memory");
                            },
                            4);
                    }});
#endif
    return list;
}

} // namespace

TEST(capabilities, runtime_detection_never_claims_an_instruction_that_traps) {
    fu::capabilities_t const detected = fu::runtime_capabilities();
    for (probe_t const &probe : probes()) {
        bool const executed = probe.run();
        char const *name = fu::capability_name(probe.bit);
        if (detected & probe.bit) {
            EXPECT_TRUE(executed) << name << " is detected but its instruction traps";
        }
        if (probe.traps_without) {
            EXPECT_EQ(bool(detected & probe.bit), executed)
                << name << (executed ? " executes but is not detected" : " traps but is detected");
        }
    }
}

// ---- /proc/cpuinfo: the kernel's view, native builds only (qemu-user shows the host's file) ----
// Under wine a Windows program executes CPUID on the host CPU, whose kernel view wine maps at Z:\proc\cpuinfo
// (`FORKUNION_TEST_CPUINFO`); a real Windows has no such file, and the test says so and skips.

#if !defined(FORKUNION_TEST_CPUINFO)
#define FORKUNION_TEST_CPUINFO "/proc/cpuinfo"
#endif

#if !FORKUNION_TEST_EMULATED && (FORKUNION_OS_LINUX || FORKUNION_OS_WINDOWS)
namespace {

/**  The words of the first line of /proc/cpuinfo whose key is `key`, split at blanks or `separators`. */
std::set<std::string> cpuinfo_words(char const *key, char separator = ' ') {
    std::ifstream file(FORKUNION_TEST_CPUINFO);
    std::string line;
    while (std::getline(file, line)) {
        std::size_t const colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string name = line.substr(0, colon);
        while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
        if (name != key) continue;
        std::set<std::string> words;
        std::string value = line.substr(colon + 1);
        for (char &c : value)
            if (c == separator || c == '\t') c = ' ';
        std::istringstream stream(value);
        for (std::string word; stream >> word;) words.insert(word);
        return words;
    }
    return {};
}

} // namespace

TEST(capabilities, runtime_detection_matches_proc_cpuinfo) {
    if (!std::ifstream(FORKUNION_TEST_CPUINFO)) GTEST_SKIP() << FORKUNION_TEST_CPUINFO << " is absent: no kernel view";
    fu::capabilities_t const detected = fu::runtime_capabilities();
    struct flag_t {
        char const *word;
        fu::capabilities_t bit;
        bool kernel_prints_it; // Linux hides some CPUID bits from /proc/cpuinfo: then only presence is evidence
    };
    std::set<std::string> words;
    std::vector<flag_t> flags;
    if (fu::arch_x86_k) {
        words = cpuinfo_words("flags");
        // Linux names `waitpkg` and `cldemote`; it keeps CMPccXADD hidden ("" in cpufeatures.h) and has no RAO-INT.
        flags = {{"waitpkg", fu::capability_x86_waitpkg_k, true},
                 {"cldemote", fu::capability_x86_cldemote_k, true},
                 {"cmpccxadd", fu::capability_x86_cmpccxadd_k, false},
                 {"raoint", fu::capability_x86_raoint_k, false}};
    } else if (fu::arch_arm64_k) {
        words = cpuinfo_words("Features");
        flags = {{"atomics", fu::capability_arm64_lse_k, true},
                 {"wfxt", fu::capability_arm64_wfxt_k, true},
                 {"evtstrm", fu::capability_arm64_evtstrm_k, true}};
    } else if (fu::arch_riscv_k) {
        // `isa : rv64imafdc_zicsr_zawrs`: the base and single letters, then `_`-separated names.
        std::set<std::string> const isa = cpuinfo_words("isa", '_');
        ASSERT_FALSE(isa.empty()) << "no isa line in /proc/cpuinfo";
        for (std::string const &word : isa)
            if (word.rfind("rv", 0) == 0 && word.find_first_of("ag", 4) != std::string::npos) words.insert("a");
        words.insert(isa.begin(), isa.end());
        flags = {{"a", fu::capability_riscv_amo_k, true},
                 {"zawrs", fu::capability_riscv_zawrs_k, true},
                 {"zacas", fu::capability_riscv_zacas_k, true},
                 {"zicbom", fu::capability_riscv_zicbom_k, true}};
    } else {
        EXPECT_EQ(detected & fu::capabilities_isa_k, 0u) << "no detector exists for this architecture";
        return;
    }
    ASSERT_FALSE(words.empty()) << "/proc/cpuinfo lists no flags for this architecture";
    for (flag_t const &flag : flags) {
        bool const listed = words.count(flag.word) != 0;
        if (flag.kernel_prints_it || listed) {
            EXPECT_EQ(bool(detected & flag.bit), listed)
                << flag.word
                << (listed ? " is in /proc/cpuinfo but not detected" : " is detected but not in /proc/cpuinfo");
        }
    }
}
#endif

// ---- The pure decoders, on recorded inputs, on every target ----

TEST(capabilities, cpuid_decoding_checks_each_leaf_is_present) {
    using decoder = fu::detail::x86_cpuid_decoder_t;
    decoder::cpuid_t all{~0u, ~0u, ~0u, ~0u};
    fu::capabilities_t const every = fu::capability_x86_waitpkg_k | fu::capability_x86_cldemote_k |
                                     fu::capability_x86_raoint_k | fu::capability_x86_cmpccxadd_k;
    EXPECT_EQ(decoder::from_leaves(7, all, all), every);
    // A maximal leaf below 7: the registers are another leaf's data, not flags.
    EXPECT_EQ(decoder::from_leaves(6, all, all), 0u);
    // Subleaf 1 absent (leaf 7.0 EAX = 0): its register holds no flags.
    decoder::cpuid_t leaf_7_0 = all;
    leaf_7_0.eax = 0;
    EXPECT_EQ(decoder::from_leaves(0x20, leaf_7_0, all), fu::capability_x86_waitpkg_k | fu::capability_x86_cldemote_k);
    // Single bits, as the SDM places them: 7.0 ECX[5] WAITPKG, ECX[25] CLDEMOTE; 7.1 EAX[3] RAO-INT, EAX[7] CMPccXADD.
    decoder::cpuid_t none{1, 0, 0, 0}, one{};
    one.ecx = 1u << 5;
    EXPECT_EQ(decoder::from_leaves(7, decoder::cpuid_t{1, 0, 1u << 5, 0}, one), fu::capability_x86_waitpkg_k);
    EXPECT_EQ(decoder::from_leaves(7, decoder::cpuid_t{1, 0, 1u << 25, 0}, none), fu::capability_x86_cldemote_k);
    EXPECT_EQ(decoder::from_leaves(7, none, decoder::cpuid_t{1u << 3, 0, 0, 0}), fu::capability_x86_raoint_k);
    EXPECT_EQ(decoder::from_leaves(7, none, decoder::cpuid_t{1u << 7, 0, 0, 0}), fu::capability_x86_cmpccxadd_k);
}

TEST(capabilities, riscv_isa_strings_decode_by_exact_name) {
    using decoder = fu::detail::riscv_isa_decoder_t;
    auto decode = [](char const *text) { return decoder::from_isa_string(text, std::strlen(text)); };
    EXPECT_EQ(decode("rv64imafdc_zicbom_zicboz_zihintpause_zawrs_zacas"),
              fu::capability_riscv_amo_k | fu::capability_riscv_zicbom_k | fu::capability_riscv_zawrs_k |
                  fu::capability_riscv_zacas_k);
    EXPECT_EQ(decode("rv64gc"), fu::capability_riscv_amo_k) << "g stands for imafd";
    EXPECT_EQ(decode("rv64imfdc_zawrsx_xzacas_zicbo"), 0u) << "names match exactly, letters before the first _ only";
    EXPECT_EQ(decode("RV32IMA_ZAWRS"), fu::capability_riscv_amo_k | fu::capability_riscv_zawrs_k);
    EXPECT_EQ(decode("x86_64"), 0u);
    EXPECT_EQ(decode(""), 0u);
    EXPECT_EQ(decode("rv64ima_"), fu::capability_riscv_amo_k);
}

TEST(capabilities, riscv_cpuinfo_uses_the_first_complete_isa_line) {
    using decoder = fu::detail::riscv_isa_decoder_t;
    auto decode = [](std::string const &text) { return decoder::from_cpuinfo(text.data(), text.size()); };
    std::string const hart = "processor\t: 0\nhart\t\t: 1\nisa\t\t: rv64imafdc_zawrs\nmmu\t\t: sv39\n";
    EXPECT_EQ(decode(hart), fu::capability_riscv_amo_k | fu::capability_riscv_zawrs_k);
    EXPECT_EQ(decode(hart + "\nprocessor\t: 1\nisa\t\t: rv64imafdc_zacas\n"),
              fu::capability_riscv_amo_k | fu::capability_riscv_zawrs_k)
        << "the first hart's line wins";
    EXPECT_EQ(decode("processor\t: 0\nisa\t\t: rv64imafdc_zaw"), 0u) << "a line cut by the read is not trusted";
    EXPECT_EQ(decode("isa-version\t: 2.2\nisa : rv64ima\n"), fu::capability_riscv_amo_k);
    EXPECT_EQ(decode("flags\t\t: fpu vme waitpkg\n"), 0u) << "another architecture's file";
    EXPECT_EQ(decoder::from_hwcap(1ul << ('a' - 'a')), fu::capability_riscv_amo_k);
    EXPECT_EQ(decoder::from_hwcap(~1ul), 0u);
}
