/**
 *  @file   strict_consumer.c
 *  @brief  A C consumer of `forkunion.h` through `-I`, compiled with `-Wall -Wextra -Wpedantic -Werror` as C99 and
 *          C11 by the tests `install.strict.*` (test/install/CMakeLists.txt): every capability macro is expanded
 *          and the handle types are used. Compiled only: nothing here is linked or run.
 */
#include <forkunion.h>

#include <stddef.h> /* `size_t` */

int main(void) {
    fu_capabilities_t const instructions =
        fu_capability_x86_waitpkg_k | fu_capability_x86_cmpccxadd_k | fu_capability_x86_raoint_k |
        fu_capability_x86_cldemote_k | fu_capability_arm64_lse_k | fu_capability_arm64_wfxt_k |
        fu_capability_arm64_evtstrm_k | fu_capability_riscv_amo_k | fu_capability_riscv_zawrs_k |
        fu_capability_riscv_zacas_k | fu_capability_riscv_zicbom_k | fu_capabilities_waits_k;
    fu_capabilities_t const system = fu_capability_os_threads_k | fu_capability_topology_k |
                                     fu_capability_thread_pinning_k | fu_capability_memory_placement_k |
                                     fu_capability_huge_pages_k | fu_capabilities_none_k;
    char names[256];
    size_t const length = fu_name_capabilities(instructions | system, names, sizeof names);
    fu_topology_t const topology = fu_topology_new();
    size_t const domains = fu_compute_domains_count(topology);
    fu_topology_delete(topology);
    return (instructions & system) == fu_capabilities_all_k && length + domains == 0;
}
