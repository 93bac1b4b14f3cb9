/**
 *  @file   forkunion.h
 *  @brief  The C99 API of forkunion: opaque handles, status codes and function-pointer callbacks over the C++
 *          pools, topology, memory placement and fabric, shipped as `libforkunion_static.a` and
 *          `libforkunion_shared.so` (CMake: `forkunion::static`, `forkunion::shared`).
 *
 *  @code
 *  static void hello(void *context, size_t thread, size_t compute_domain) {
 *      (void)context;
 *      printf("thread %zu on compute domain %zu\n", thread, compute_domain);
 *  }
 *  int main(void) {
 *      fu_topology_t topology = fu_topology_new();
 *      fu_pool_t pool = fu_pool_new("hello", fu_capabilities_all_k);
 *      if (!topology || !pool || fu_pool_spawn(topology, pool, fu_logical_cores_count(topology),
 *                                              fu_caller_inclusive_k) != fu_success_k)
 *          return 1;
 *      fu_status_t status = fu_pool_for_threads(pool, hello, NULL);
 *      fu_pool_delete(pool);
 *      fu_topology_delete(topology);
 *      return status == fu_success_k ? 0 : 1;
 *  }
 *  @endcode
 *
 *  @section conventions Conventions
 *  - Every fallible call returns a `fu_status_t`: `fu_success_k` (0) or a negative code; `status < 0` tests for
 *    any failure, `fu_status_to_string` names it. The codes are those of the C++ `status_code_t`, one to one.
 *  - Handles are opaque pointers. A NULL handle, a NULL callback or a NULL output pointer is
 *    `fu_invalid_argument_k`, never a crash. Queries that return a number answer 0 for a NULL handle or an index
 *    out of range (0 also means "unknown"), so loops over `fu_*_count()` run zero times.
 *  - Nothing aborts, throws or prints: no C++ exception crosses this boundary. Callbacks are C functions; a C++
 *    callback that throws through one of them reaches a `noexcept` frame and calls `std::terminate`.
 *  - Names follow the C++ API with an `fu_` prefix (`for_n` is `fu_pool_for_n`, `local_memory_of` is
 *    `fu_local_memory_of`). Byte counts are `uint64_t` where the machine's totals may exceed 4 GiB on 32-bit
 *    hosts, `size_t` where they describe this process's memory.
 *
 *  @section threads Which threads may call what
 *  As in C++: a topology is immutable and may be queried from any thread. A pool is spawned, terminated and
 *  deleted by the thread that controls it, never from inside one of its callbacks. Dispatches, `fu_pool_nap` and
 *  `fu_pool_sleep` may come from any thread, one at a time: any other, concurrent or nested, is refused at once with
 *  `fu_contended_k` (it never blocks and never corrupts). The one exception is thread 0 of a caller-exclusive
 *  pool on one compute domain (`fu_pool_compute_domains_count` is 1), which may dispatch blocking forms from inside
 *  its own slice. Every blocking dispatch happens-after
 *  everything its caller did before it, and everything its callbacks did happens-before its return.
 *
 *  @section fork Processes that fork
 *  A `fork()`ed child has only the thread that forked: the workers of its parent's pools do not exist there.
 *  In the child, every pool that was spawned before the fork refuses each dispatch (blocking or split),
 *  `fu_pool_nap` and `fu_pool_sleep` with `fu_forked_k`, at once (it never waits for the missing workers), and
 *  reports 0 threads; the `_or_run_on_caller` forms run their loop on the calling thread instead. A join in the
 *  child of a dispatch from before the fork returns `fu_forked_k` at once, and so does a dispatch (of any form)
 *  whose callback forked on the calling thread (thread 0 of a caller-inclusive pool, inside its own slice): the
 *  other slices do not run in the child. `fu_pool_spawn`, `fu_pool_terminate` and `fu_pool_delete` forget those
 *  workers without joining them and free their thread table, so `fu_pool_spawn` starts fresh threads in the child.
 *  Detecting the fork costs one relaxed load per dispatch of a word that only a `pthread_atfork` child handler
 *  writes. The parent's pools are untouched.
 */
#ifndef FORKUNION_H
#define FORKUNION_H

#include <stddef.h> /* `size_t` */
#include <stdint.h> /* `uint64_t`, `UINT64_C` */

#if defined(FORKUNION_C_BUILD)
#if defined(_WIN32) && defined(FORKUNION_C_SHARED)
#define FORKUNION_API __declspec(dllexport)
#elif defined(_WIN32)
#define FORKUNION_API
#else
#define FORKUNION_API __attribute__((visibility("default")))
#endif
#else
#define FORKUNION_API
#endif

/*  A status a caller must read: a refused dispatch ran nothing, and ignoring that loses work silently. */
#if defined(__GNUC__) || defined(__clang__)
#define FORKUNION_NODISCARD __attribute__((warn_unused_result))
#else
#define FORKUNION_NODISCARD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status codes ---------------------------------------------------------------------------------------- */

/**
 *  @brief  What every fallible call returns: 0 on success, a negative code on failure.
 *  Values equal the C++ `forkunion::status_code_t` ones (checked at compile time by the library).
 */
typedef enum fu_status_t {
    fu_success_k = 0,            /**< Done. */
    fu_bad_alloc_k = -1,         /**< Memory ran out: a handle, a thread table, an allocation too large to map. */
    fu_invalid_argument_k = -2,  /**< A NULL handle or callback, 0 threads, a domain out of range, a bad size. */
    fu_already_spawned_k = -3,   /**< `fu_pool_spawn*` on a pool that has threads: terminate it first. */
    fu_not_spawned_k = -4,       /**< A dispatch on a pool with no threads: never spawned, or terminated. */
    fu_thread_refused_k = -5,    /**< The OS refused a thread; the threads that did start were joined. */
    fu_contended_k = -6,         /**< The pool runs another dispatch (concurrent or nested): refused, nothing ran. */
    fu_unsupported_k = -7,       /**< The build, the platform or the pool's allowed capabilities lack the feature. */
    fu_placement_refused_k = -8, /**< The OS refused to bind memory (or threads) where asked. */
    fu_stale_generation_k = -9,  /**< A generation that is no longer the pool's pending split dispatch. */
    fu_forked_k = -10            /**< The pool was spawned by the parent of this `fork()`ed process: its threads
                                      do not exist here. Every dispatch is refused; terminate or delete it. */
} fu_status_t;

/**  @brief  The canonical name of a status (`"contended"`), `"unknown"` for any other value; never NULL. */
FORKUNION_API char const *fu_status_to_string(fu_status_t status);

/**
 *  @brief  Why the latest call on this thread that returned `fu_invalid_argument_k` refused: which argument and
 *          why, e.g. `"spawn: pool is NULL"` or `"distributed spawn: threads is below the topology's compute
 *          domains; ..."`. Never NULL; `""` before any refusal on this thread.
 *
 *  The contract of `errno`: every call of this API that returns `fu_invalid_argument_k` (`fu_pool_is_complete`'s
 *  negative answer included) sets it before returning, and nothing else writes it, so it is meaningful right after
 *  such a refusal and stale after anything else. Thread-local: each thread reads its own latest refusal, and any
 *  thread may call it at any time. The text is a static string: keep the pointer as long as you like, never free
 *  it. Costs nothing on the success paths: it is written only where a call refuses.
 */
FORKUNION_API char const *fu_last_refusal_reason(void);

/**  @brief  Receives one warning: `line` is one line without its newline, valid only during the call. */
typedef void (*fu_warning_handler_t)(void *context, char const *line);

/**
 *  @brief  Sends the library's warnings to `handler(context, line)` instead of stderr; `handler == NULL` puts
 *          stderr (`forkunion: warning: <line>`) back.
 *
 *  A warning reports something the library skipped and worked around, never a failure: today, each sysfs file a
 *  topology harvest found but could not use (malformed, unreadable, too long), named by its path. The handler is
 *  this library's own: a C++ program's `forkunion::set_warning_sink` does not reach a shared `libforkunion`, and
 *  this call does not reach a header-only copy.
 *
 *  Threads: any thread may call it at any time, and `handler` may be called from any thread that harvests, also
 *  concurrently with itself. A warning already on its way when the handler is replaced may still reach the
 *  previous one: keep that callable until such calls (e.g. a harvest in progress) have returned. Each call with a
 *  new `(handler, context)` keeps a 40-byte record until the process exits, so that a concurrent warning never
 *  reads freed memory; installing the pair already installed keeps nothing.
 *
 *  @retval fu_success_k   installed.
 *  @retval fu_bad_alloc_k the record could not be allocated; the previous handler stays installed.
 */
FORKUNION_API fu_status_t fu_set_warning_handler(fu_warning_handler_t handler, void *context);

/* ---- Versions and capabilities ---------------------------------------------------------------------------- */

/**  @brief  The library's version: `FORKUNION_VERSION_MAJOR/MINOR/PATCH` of the build. */
FORKUNION_API int fu_version_major(void);
FORKUNION_API int fu_version_minor(void);
FORKUNION_API int fu_version_patch(void);

/**  @brief  A set of capability bits: the C++ `capability_t` bits, one to one. */
typedef uint64_t fu_capabilities_t;

/*  Capability bits. Macros, because C99 enumerators cannot hold 64-bit values; `UINT64_C` rather than a cast, so
 *  that C++ compiled with -Wold-style-cast includes them cleanly. */
#define fu_capabilities_none_k UINT64_C(0)
#define fu_capabilities_all_k (~UINT64_C(0))
#define fu_capability_x86_waitpkg_k (UINT64_C(1) << 0)       /* UMONITOR/UMWAIT/TPAUSE */
#define fu_capability_x86_cmpccxadd_k (UINT64_C(1) << 1)     /* CMPccXADD */
#define fu_capability_x86_raoint_k (UINT64_C(1) << 2)        /* AADD/AAND/AOR/AXOR */
#define fu_capability_x86_cldemote_k (UINT64_C(1) << 3)      /* CLDEMOTE */
#define fu_capability_arm64_lse_k (UINT64_C(1) << 8)         /* LSE atomics */
#define fu_capability_arm64_wfxt_k (UINT64_C(1) << 9)        /* WFET */
#define fu_capability_arm64_evtstrm_k (UINT64_C(1) << 10)    /* event stream bounding WFE */
#define fu_capability_riscv_amo_k (UINT64_C(1) << 16)        /* A-extension AMOs */
#define fu_capability_riscv_zawrs_k (UINT64_C(1) << 17)      /* WRS.NTO/WRS.STO */
#define fu_capability_riscv_zacas_k (UINT64_C(1) << 18)      /* AMOCAS */
#define fu_capability_riscv_zicbom_k (UINT64_C(1) << 19)     /* CBO.* cache-line hints */
#define fu_capability_os_threads_k (UINT64_C(1) << 32)       /* the OS starts threads */
#define fu_capability_topology_k (UINT64_C(1) << 33)         /* compute/memory domains are harvested */
#define fu_capability_thread_pinning_k (UINT64_C(1) << 34)   /* threads can be bound to cores */
#define fu_capability_memory_placement_k (UINT64_C(1) << 35) /* memory can be bound to a domain */
#define fu_capability_huge_pages_k (UINT64_C(1) << 36)       /* huge pages can be mapped */
/*  Deprecated: the `risc5` spellings of the RISC-V bits, kept for one release (C cannot deprecate a macro). */
#define fu_capability_risc5_amo_k fu_capability_riscv_amo_k
#define fu_capability_risc5_zawrs_k fu_capability_riscv_zawrs_k
#define fu_capability_risc5_zacas_k fu_capability_riscv_zacas_k
#define fu_capability_risc5_zicbom_k fu_capability_riscv_zicbom_k
/*  Every wait beyond the pause hint: the address-monitor and timed waits a napping pool may park on. A pool
 *  created without them naps on the pause hint, as on a CPU that lacks them. */
#define fu_capabilities_waits_k                                                                                        \
    (fu_capability_x86_waitpkg_k | fu_capability_arm64_wfxt_k | fu_capability_arm64_evtstrm_k |                        \
     fu_capability_riscv_zawrs_k)

/**
 *  @brief  What this build may use: the `FORKUNION_WITH_*` instruction families compiled in, `os_threads`, and on
 *          Linux the OS facilities (`topology`, `thread_pinning`, `memory_placement`, `huge_pages`).
 */
FORKUNION_API fu_capabilities_t fu_comptime_capabilities(void);

/**
 *  @brief  What this machine offers: the instruction families its CPU reports, `os_threads`, and the OS facilities
 *          this process can reach now (sysfs topology, affinity calls, `mbind`, a huge-page pool). The first call
 *          detects (a few system calls); later ones read a cached word. A feature is used only where both masks,
 *          and a pool's allowed set, have it.
 */
FORKUNION_API fu_capabilities_t fu_runtime_capabilities(void);

/**
 *  @brief  Renders `mask` as comma-separated names in bit order (`x86_cldemote,os_threads`, `none` if empty), like
 *          `snprintf`: writes at most `capacity - 1` characters and a terminating zero (nothing when `buffer` is
 *          NULL or `capacity` is 0) and returns the length of the whole text, so a second call can size a buffer.
 */
FORKUNION_API size_t fu_name_capabilities(fu_capabilities_t mask, char *buffer, size_t capacity);

/**
 *  @brief  Parses what `fu_name_capabilities` writes (names and `bit<N>` separated by commas, blanks allowed;
 *          `none` or an empty text is the empty mask) into `*mask`, for example from an environment variable.
 *  @retval fu_invalid_argument_k  `text` or `mask` is NULL, or a token is no name; `*mask` is left unchanged.
 */
FORKUNION_API fu_status_t fu_parse_capabilities(char const *text, fu_capabilities_t *mask);

/* ---- Topology --------------------------------------------------------------------------------------------- */

/**  @brief  An immutable description of the machine's compute and memory domains (`machine_topology_t`). */
typedef struct fu_topology *fu_topology_t;

/**
 *  @brief  Harvests the running machine (sysfs on Linux, narrowed to this thread's affinity). Where nothing can
 *          be harvested it answers for one compute and one memory domain over the allowed cores
 *          (`fu_topology_harvested` says which). NULL only if memory ran out. Blocking; reads files.
 */
FORKUNION_API fu_topology_t fu_topology_new(void);

/**
 *  @brief  Harvests a recorded Linux sysfs tree in which `root` stands for `/`, whatever this process's affinity.
 *          NULL if `root` is NULL, if no online CPU can be found there, or if memory ran out.
 */
FORKUNION_API fu_topology_t fu_topology_new_from_sysfs(char const *root);

/**  @brief  Frees a topology; NULL is a no-op. Pools spawned on it do not need it afterwards. */
FORKUNION_API void fu_topology_delete(fu_topology_t topology);

/**  @brief  1 if a harvest described the machine, 0 for the single-domain stand-in (and for NULL). */
FORKUNION_API int fu_topology_harvested(fu_topology_t topology);

/*  The compute axis. `domain` counts from 0; out of range answers 0. */
FORKUNION_API size_t fu_compute_domains_count(fu_topology_t topology);
FORKUNION_API size_t fu_compute_levels_count(fu_topology_t topology);
/**  @brief  Dense rank of the domain's capacity class: higher = faster. */
FORKUNION_API size_t fu_compute_level_in(fu_topology_t topology, size_t domain);
/**  @brief  Allowed online cores in all compute domains. */
FORKUNION_API size_t fu_logical_cores_count(fu_topology_t topology);
FORKUNION_API size_t fu_logical_cores_count_in(fu_topology_t topology, size_t domain);
/**  @brief  The kernel's `cpu_capacity` of the domain's cores (1024 = fastest core); 0 where unpublished (x86). */
FORKUNION_API size_t fu_compute_capacity_in(fu_topology_t topology, size_t domain);
/**  @brief  Bytes of the largest cache no core outside the domain shares; 0 if unknown. */
FORKUNION_API uint64_t fu_compute_cache_bytes_in(fu_topology_t topology, size_t domain);
/**  @brief  The memory domain compute domain `domain` should allocate from. */
FORKUNION_API size_t fu_local_memory_of(fu_topology_t topology, size_t domain);
/**
 *  @brief  Copies the OS CPU ids of compute domain `domain`, ascending, into `cores` (at most `capacity` of them)
 *          and returns how many the domain has (0 out of range), so a NULL `cores` asks for the count.
 */
FORKUNION_API size_t fu_cores_in(fu_topology_t topology, size_t domain, unsigned *cores, size_t capacity);
/**  @brief  The cores this process may use (equals `fu_logical_cores_count`) and all online cores. */
FORKUNION_API size_t fu_allowed_cores_count(fu_topology_t topology);
FORKUNION_API size_t fu_online_cores_count(fu_topology_t topology);

/*  The memory axis. `memory_domain` counts from 0; out of range answers 0. */
FORKUNION_API size_t fu_memory_domains_count(fu_topology_t topology);
/**  @brief  The OS NUMA node id of a memory domain. */
FORKUNION_API size_t fu_memory_node_id(fu_topology_t topology, size_t memory_domain);
FORKUNION_API uint64_t fu_volume_ram(fu_topology_t topology);
FORKUNION_API uint64_t fu_volume_ram_in(fu_topology_t topology, size_t memory_domain);
/**  @brief  Free huge pages (all sizes), of the machine or of one memory domain. */
FORKUNION_API size_t fu_huge_pages_count(fu_topology_t topology);
FORKUNION_API size_t fu_huge_pages_count_in(fu_topology_t topology, size_t memory_domain);
FORKUNION_API uint64_t fu_volume_huge_pages(fu_topology_t topology);
FORKUNION_API uint64_t fu_volume_huge_pages_in(fu_topology_t topology, size_t memory_domain);
/**  @brief  How many huge-page sizes a memory domain publishes, and the `index`-th one in bytes, ascending. */
FORKUNION_API size_t fu_huge_page_sizes_count_in(fu_topology_t topology, size_t memory_domain);
FORKUNION_API uint64_t fu_huge_page_size_in(fu_topology_t topology, size_t memory_domain, size_t index);
/**  @brief  The firmware's declared (ACPI SLIT) distance between two memory domains: 10 = local, 0 = unknown. */
FORKUNION_API size_t fu_declared_distance(fu_topology_t topology, size_t from_memory_domain, size_t to_memory_domain);

/* ---- Pools ------------------------------------------------------------------------------------------------ */

/**  @brief  A fork-join thread pool. */
typedef struct fu_pool *fu_pool_t;

/**  @brief  Whether the dispatching thread works as thread 0 (inclusive) or only submits and joins (exclusive). */
typedef enum fu_caller_exclusivity_t { fu_caller_inclusive_k = 0, fu_caller_exclusive_k = 1 } fu_caller_exclusivity_t;

/**  @brief  `fu_pool_for_threads` / `fu_pool_unsafe_for_threads` callback: once per thread. */
typedef void (*fu_for_threads_t)(void *context, size_t thread, size_t compute_domain);
/**  @brief  `fu_pool_for_n` / `fu_pool_for_n_dynamic` callback: once per task. */
typedef void (*fu_for_n_t)(void *context, size_t task, size_t thread, size_t compute_domain);
/**  @brief  `fu_pool_for_slices` callback: once per thread whose block is non-empty, `[first, first + count)`. */
typedef void (*fu_for_slices_t)(void *context, size_t first, size_t count, size_t thread, size_t compute_domain);

/**
 *  @brief  Creates an unspawned pool. Its workers are named `name:NNN` (thread index; Linux keeps 15 bytes, so a
 *          long name is cut); a NULL name leaves thread names alone. `allowed` narrows what the pool may use:
 *          - without any of `fu_capabilities_waits_k`, `fu_pool_nap` parks workers on the pause hint only;
 *          - without `fu_capability_thread_pinning_k`, threads keep the mask they inherit (no pinning);
 *          - without `fu_capability_memory_placement_k`, its thread tables are not bound to their domains' memory;
 *          - without `fu_capability_topology_k`, `fu_pool_spawn` sees one domain of every allowed core;
 *          - without `fu_capability_os_threads_k`, only a 1-thread caller-inclusive pool can spawn.
 *          `fu_pool_capabilities` reports the effective set. NULL only if memory ran out.
 */
FORKUNION_API fu_pool_t fu_pool_new(char const *name, fu_capabilities_t allowed);

/**  @brief  Terminates (see `fu_pool_terminate`) and frees the pool; NULL is a no-op. Controlling thread only. */
FORKUNION_API void fu_pool_delete(fu_pool_t pool);

/**
 *  @brief  Starts `threads` contributors on the machine `topology` describes. Inclusive: the caller is thread 0
 *          and `threads - 1` workers start. Exclusive: `threads` workers start. Controlling thread only.
 *
 *  Over several compute domains: one pool per domain (the C++ `distributed_pool_t`), threads split in proportion
 *  to the domains' cores, at least one each, numbered domain by domain, each pinned to its domain with its thread
 *  table on the domain's memory. Over one domain: one pool pinned to it (`colocated_pool_t`). A pin or a binding
 *  the OS refuses is counted (`fu_pool_unpinned_threads_count`, `fu_pool_memory_placed`), never fatal.
 *  @retval fu_invalid_argument_k  NULL handle, `threads == 0`, or fewer threads than compute domains.
 *  @retval fu_already_spawned_k   the pool has threads (a second spawn changes nothing).
 *  @retval fu_unsupported_k       more than one thread, or an exclusive pool, without `os_threads` allowed.
 *  @retval fu_bad_alloc_k, fu_thread_refused_k  nothing was started, nothing leaked.
 */
FORKUNION_API fu_status_t fu_pool_spawn(fu_topology_t topology, fu_pool_t pool, size_t threads,
                                        fu_caller_exclusivity_t exclusivity);

/**
 *  @brief  Like `fu_pool_spawn`, with every thread on compute domain `compute_domain` (callbacks receive it as
 *          their `compute_domain`), pinned to its cores where pinning is allowed and possible.
 *  @retval fu_invalid_argument_k  also for a domain out of the topology's range.
 */
FORKUNION_API fu_status_t fu_pool_spawn_on(fu_topology_t topology, fu_pool_t pool, size_t compute_domain,
                                           size_t threads, fu_caller_exclusivity_t exclusivity);

/**
 *  @brief  Completes the dispatch in flight (running the caller's owed slice of an unjoined inclusive split
 *          dispatch), stops and joins every worker. The pool may be spawned again. From inside a callback of this
 *          pool it does nothing (it would wait for itself). Controlling thread only.
 *  @retval fu_invalid_argument_k  NULL pool.  @retval fu_not_spawned_k  it had no threads (nothing to do).
 */
FORKUNION_API fu_status_t fu_pool_terminate(fu_pool_t pool);

/**  @brief  Contributors of every dispatch (workers, plus the caller on inclusive pools); 0 if unspawned or NULL. */
FORKUNION_API size_t fu_pool_threads_count(fu_pool_t pool);
/**  @brief  The exclusivity of the latest spawn (inclusive for NULL or unspawned pools). */
FORKUNION_API fu_caller_exclusivity_t fu_pool_caller_exclusivity(fu_pool_t pool);
/**  @brief  The capabilities this pool may use: its allowed set, narrowed to this build and this machine. */
FORKUNION_API fu_capabilities_t fu_pool_capabilities(fu_pool_t pool);
/**  @brief  Compute domains the pool's threads span: the topology's for a multi-domain `fu_pool_spawn`, 1 for a
 *          single-domain one and for `fu_pool_spawn_on`, 0 if unspawned or NULL. */
FORKUNION_API size_t fu_pool_compute_domains_count(fu_pool_t pool);
/**  @brief  Threads of the pool on compute domain `compute_domain` (a topology index); 0 for other domains. */
FORKUNION_API size_t fu_pool_threads_count_in(fu_pool_t pool, size_t compute_domain);
/**
 *  @brief  Threads running with the mask they inherited: every thread of a pool not allowed to pin, and those
 *          whose pin the OS refused (cores this process may not use). Refusals are counted, never fatal.
 */
FORKUNION_API size_t fu_pool_unpinned_threads_count(fu_pool_t pool);
/**  @brief  1 if the pool's per-thread tables sit on their domains' local memory, 0 otherwise (or if unspawned). */
FORKUNION_API int fu_pool_memory_placed(fu_pool_t pool);
/**  @brief  Bytes the pool owns: its handle, its C++ pool and its per-thread table. */
FORKUNION_API size_t fu_pool_memory_usage(fu_pool_t pool);

/**
 *  @brief  Calls `callback(context, thread, compute_domain)` once on every thread and returns when all returned.
 *          Serial equivalent: `for (t = 0; t < threads; ++t) callback(context, t, domain_of(t));`
 *  @retval fu_invalid_argument_k  NULL pool or callback.
 *  @retval fu_not_spawned_k, fu_contended_k, fu_forked_k  refused: nothing ran (another dispatch holds the pool, the
 *          call comes from inside one of its callbacks, or the pool is unspawned or inherited through `fork()`).
 *          The `_or_run_on_caller` forms below run the loop anyway.
 */
FORKUNION_NODISCARD FORKUNION_API fu_status_t fu_pool_for_threads(fu_pool_t pool, fu_for_threads_t callback,
                                                                  void *context);

/**
 *  @brief  Calls `callback(context, task, thread, compute_domain)` for every task in `[0, n)`, statically split:
 *          thread t of T runs the contiguous block starting at `q*t + min(t, r)` of length `q + (t < r)`,
 *          `q = n / T`, `r = n % T`. Serial equivalent: `for (i = 0; i < n; ++i) callback(context, i, ...);`
 *  @retval as `fu_pool_for_threads`.
 */
FORKUNION_NODISCARD FORKUNION_API fu_status_t fu_pool_for_n(fu_pool_t pool, size_t n, fu_for_n_t callback,
                                                            void *context);

/**
 *  @brief  The same loop for tasks of uneven cost: each thread drains its own block, then steals single tasks
 *          from the others. Serial equivalent: `for (i = 0; i < n; ++i) callback(context, i, ...);`
 */
FORKUNION_NODISCARD FORKUNION_API fu_status_t fu_pool_for_n_dynamic(fu_pool_t pool, size_t n, fu_for_n_t callback,
                                                                    void *context);

/**
 *  @brief  Calls `callback(context, first, count, thread, compute_domain)` once per thread whose block of
 *          `fu_pool_for_n`'s split is non-empty (a thread with nothing to do is not called). Serial equivalent:
 *          `for (t = 0; t < T; ++t) if (count_t) callback(context, first_t, count_t, t, ...);`
 */
FORKUNION_NODISCARD FORKUNION_API fu_status_t fu_pool_for_slices(fu_pool_t pool, size_t n, fu_for_slices_t callback,
                                                                 void *context);

/**
 *  @brief  The four dispatches above, each of which runs every task even when the pool refuses: then on the
 *          calling thread, as a team of one (`thread` and `compute_domain` 0; `for_threads` calls the callback
 *          once, `for_slices` once with the whole range). For library code that may be called from inside a
 *          callback of the same pool, or share the pool with other threads: OpenMP's answer to a nested region.
 *  @retval fu_success_k           every task ran (on the pool or here).
 *  @retval fu_invalid_argument_k  NULL pool or callback: nothing ran.
 *  @retval fu_forked_k            in the child of a `fork()` a callback made on the calling thread (see "Processes
 *                                 that fork"): the other slices do not run there.
 */
FORKUNION_API fu_status_t fu_pool_for_threads_or_run_on_caller(fu_pool_t pool, fu_for_threads_t callback,
                                                               void *context);
FORKUNION_API fu_status_t fu_pool_for_n_or_run_on_caller(fu_pool_t pool, size_t n, fu_for_n_t callback, void *context);
FORKUNION_API fu_status_t fu_pool_for_n_dynamic_or_run_on_caller(fu_pool_t pool, size_t n, fu_for_n_t callback,
                                                                 void *context);
FORKUNION_API fu_status_t fu_pool_for_slices_or_run_on_caller(fu_pool_t pool, size_t n, fu_for_slices_t callback,
                                                              void *context);

/**
 *  @brief  Broadcasts `callback` to every thread without waiting and writes the dispatch's odd generation
 *          to `*generation` (0 when refused). On exclusive pools the workers start now: poll
 *          `fu_pool_is_complete` and join. On inclusive pools thread 0's slice runs inside `fu_pool_unsafe_join`,
 *          which the same thread must call. `context` must stay valid until the dispatch completes.
 *  @retval fu_invalid_argument_k  NULL pool, callback or `generation`.
 *  @retval fu_not_spawned_k, fu_contended_k, fu_forked_k  refused (unspawned, another dispatch, split or
 *                                 blocking, is in flight, or the pool is inherited through `fork()`).
 */
FORKUNION_API fu_status_t fu_pool_unsafe_for_threads(fu_pool_t pool, fu_for_threads_t callback, void *context,
                                                     size_t *generation);

/**
 *  @brief  Whether split dispatch `generation` has completed on every thread. Never blocks; any thread. A
 *          completed answer makes every slice's writes visible to the caller.
 *  @return 1 if complete (also for any older, already completed generation), 0 if still running, or
 *          `fu_invalid_argument_k` for a NULL pool or a generation that no dispatch can have (0 or even).
 */
FORKUNION_API int fu_pool_is_complete(fu_pool_t pool, size_t generation);

/**
 *  @brief  Runs thread 0's slice (inclusive pools) and blocks until split dispatch `generation` completes.
 *  @retval fu_invalid_argument_k  NULL pool, or a generation that no dispatch can have (0 or even); or an inclusive
 *                                 pool's split dispatch joined from another thread than the one that dispatched it
 *                                 (misuse: only that thread can run slice 0). Nothing ran and nothing changed: the
 *                                 dispatch stays incomplete until its dispatcher joins it.
 *  @retval fu_success_k           the dispatch has completed (also when, once it had, another split dispatch took
 *                                 its place before this call returned).
 *  @retval fu_stale_generation_k  not the pool's pending split dispatch when the call began: already joined, or
 *                                 superseded after it completed, or joined by a `fu_pool_terminate` (also when its
 *                                 dispatcher stored the token after that terminate). Returns at once, waits for
 *                                 nothing; harmless.
 *  @retval fu_forked_k            in a `fork()`ed child: the pool is inherited, or the caller forked inside its own
 *                                 slice; the other slices do not run here. Returns at once.
 */
FORKUNION_API fu_status_t fu_pool_unsafe_join(fu_pool_t pool, size_t generation);

/**
 *  @brief  How a pool's idle workers wait between dispatches (the C++ `idle_mode_t`, value for value):
 *          - `fu_idle_spin_k`: the pause hint in a loop; the lowest latency, a core per idle worker;
 *          - `fu_idle_adaptive_k`: spin for a window of microseconds, then block in the kernel (the default, with
 *            `FU_DEFAULT_IDLE_WINDOW_US`); a dispatch after a long gap pays one kernel wake-up;
 *          - `fu_idle_nap_k`: light sleep on the CPU's address monitor (UMWAIT, WFET, WFE, WRS) where the CPU and
 *            the pool's allowed capabilities have one, the pause hint otherwise;
 *          - `fu_idle_sleep_k`: block in the kernel at once; with microseconds > 0, also wake that often to look.
 */
typedef enum fu_idle_mode_t {
    fu_idle_spin_k = 0,
    fu_idle_adaptive_k = 1,
    fu_idle_nap_k = 2,
    fu_idle_sleep_k = 3
} fu_idle_mode_t;

/**  @brief  The spin window of the default idle policy, `fu_idle_adaptive_k`, in microseconds. */
#define FU_DEFAULT_IDLE_WINDOW_US 100

/**
 *  @brief  Sets how idle workers wait, from now on and across respawns, until set again. `microseconds` is the
 *          window of `fu_idle_adaptive_k` and the period of `fu_idle_sleep_k` (0: only a dispatch wakes them);
 *          ignored otherwise. Any thread, any time; never refused by a dispatch in flight. Parked workers are
 *          woken so they wait the new way.
 *  @retval fu_invalid_argument_k  NULL pool, an unknown mode, or 2^61 microseconds or more.
 */
FORKUNION_API fu_status_t fu_pool_set_idle_policy(fu_pool_t pool, fu_idle_mode_t mode, uint64_t microseconds);

/**  @brief  Writes the idle policy in force to `*mode` and `*microseconds`.  @retval fu_invalid_argument_k NULLs. */
FORKUNION_API fu_status_t fu_pool_idle_policy(fu_pool_t pool, fu_idle_mode_t *mode, uint64_t *microseconds);

/**  @brief  Workers blocked in the kernel right now (adaptive past its window, or sleep): a snapshot; 0 for NULL. */
FORKUNION_API size_t fu_pool_parked_threads_count(fu_pool_t pool);

/**
 *  @brief  The stack size of the workers the next spawn starts; 0 (the default) keeps the platform's. Controlling
 *          thread, between spawns.
 *  @retval fu_unsupported_k       a non-zero size where the platform's threads cannot take one.
 *  @retval fu_invalid_argument_k  NULL pool, or below the platform's minimum (`PTHREAD_STACK_MIN`).
 */
FORKUNION_API fu_status_t fu_pool_set_stack_size(fu_pool_t pool, size_t bytes);
/**  @brief  What `fu_pool_set_stack_size` last set (0: the platform's default). */
FORKUNION_API size_t fu_pool_stack_size(fu_pool_t pool);

/**
 *  @brief  Deprecated: `fu_pool_set_idle_policy(pool, fu_idle_nap_k, 0)`, which now lasts until changed.
 *  @retval fu_invalid_argument_k, fu_not_spawned_k, fu_forked_k
 */
FORKUNION_API fu_status_t fu_pool_nap(fu_pool_t pool);

/**
 *  @brief  Deprecated: `fu_pool_set_idle_policy(pool, fu_idle_sleep_k, microseconds)`, which now lasts until
 *          changed (any duration, 1 s and more included).
 *  @retval fu_invalid_argument_k, fu_not_spawned_k, fu_forked_k
 */
FORKUNION_API fu_status_t fu_pool_sleep(fu_pool_t pool, size_t microseconds);

/* ---- Memory ----------------------------------------------------------------------------------------------- */

/**  @brief  What an allocation returned: the real (rounded) sizes, not the requested ones. */
typedef struct fu_allocation_t {
    void *address;       /**< First byte (slice 0); NULL on failure or for a 0-byte request. */
    size_t bytes;        /**< Total bytes mapped: `slices_count * slice_bytes`. */
    size_t slice_bytes;  /**< Bytes of each slice: the request rounded up to the page granule. */
    size_t slices_count; /**< 1 for `fu_allocate_on`; the memory domains for `fu_allocate_symmetric`. */
    size_t page_bytes;   /**< The page size that really backs it: the huge page, or the base page. */
    int placed;          /**< 1 if bound to the memory domain(s) asked for, 0 if left to the OS (first touch). */
} fu_allocation_t;

/**
 *  @brief  Maps at least `bytes` zeroed bytes bound to memory domain `memory_domain` of `topology`, on huge pages
 *          of `huge_page_bytes` (0 = base pages) with fallback to base pages. `allowed` narrows it: without
 *          `fu_capability_memory_placement_k` nothing is bound; without `fu_capability_huge_pages_k` base pages
 *          are used. Any thread. Free with `fu_deallocate`.
 *  @retval fu_invalid_argument_k  NULL topology or `allocation`, a domain out of range, a page size that is not
 *                                 a power of two.
 *  @retval fu_bad_alloc_k         too large to map (or to round).
 *  @retval fu_placement_refused_k the OS refused to bind the memory there (nothing stays mapped).
 */
FORKUNION_API fu_status_t fu_allocate_on(fu_topology_t topology, size_t memory_domain, size_t bytes,
                                         size_t huge_page_bytes, fu_capabilities_t allowed,
                                         fu_allocation_t *allocation);

/**
 *  @brief  Maps one virtual range of one slice per memory domain, slice d (at `address + d * slice_bytes`) of at
 *          least `slice_bytes` bytes bound to memory domain d. All slices are placed, or none. Otherwise as
 *          `fu_allocate_on`.
 */
FORKUNION_API fu_status_t fu_allocate_symmetric(fu_topology_t topology, size_t slice_bytes, size_t huge_page_bytes,
                                                fu_capabilities_t allowed, fu_allocation_t *allocation);

/**
 *  @brief  Unmaps what `fu_allocate_on` or `fu_allocate_symmetric` returned and zeroes `*allocation`; an allocation
 *          with a NULL address is a no-op. Any thread; nothing may access the memory afterwards.
 *  @retval fu_invalid_argument_k  `allocation` is NULL.
 */
FORKUNION_API fu_status_t fu_deallocate(fu_allocation_t *allocation);

/* ---- Fabric ----------------------------------------------------------------------------------------------- */

/**  @brief  The memory fabric as measured: latency and bandwidth of every compute→memory edge. */
typedef struct fu_fabric *fu_fabric_t;

/**  @brief  An empty fabric: every query reads 0 until a harvest. NULL only if memory ran out. */
FORKUNION_API fu_fabric_t fu_fabric_new(void);
/**  @brief  Frees a fabric; NULL is a no-op. */
FORKUNION_API void fu_fabric_delete(fu_fabric_t fabric);

/**
 *  @brief  Measures every edge through `pool`'s workers, pinned to each compute domain of `topology` in turn,
 *          with buffers of `buffer_bytes` per memory domain (0 = the default: 4x the largest cache, 64 MiB to
 *          1 GiB). Seconds of work; call it from the thread that controls the pool. A failed harvest leaves the
 *          fabric as it was.
 *  @retval fu_invalid_argument_k  NULL handle.  @retval fu_not_spawned_k, fu_contended_k  the pool refused.
 *  @retval fu_unsupported_k       the pool may not pin threads or place memory (its allowed capabilities), or
 *                                 this platform cannot pin and the topology has several compute domains.
 *  @retval fu_placement_refused_k no edge could be measured.  @retval fu_bad_alloc_k
 */
FORKUNION_API fu_status_t fu_fabric_harvest(fu_fabric_t fabric, fu_topology_t topology, fu_pool_t pool,
                                            size_t buffer_bytes);

/**  @brief  1 after a successful harvest, 0 before (and for NULL). */
FORKUNION_API int fu_fabric_harvested(fu_fabric_t fabric);
/**  @brief  Dense memory levels of the media measured (0 = fastest); 0 before a harvest. */
FORKUNION_API size_t fu_fabric_memory_levels_count(fu_fabric_t fabric);
/**  @brief  The level of memory domain `memory_domain`; `fu_fabric_memory_levels_count` for an unreached one. */
FORKUNION_API size_t fu_fabric_memory_level_in(fu_fabric_t fabric, size_t memory_domain);
/**  @brief  Measured distance of an edge on the SLIT scale (10 = local); 0 if unreached or before a harvest. */
FORKUNION_API size_t fu_fabric_memory_distance(fu_fabric_t fabric, size_t compute_domain, size_t memory_domain);
/**  @brief  Dependent-load latency of an edge in nanoseconds; 0 if unreached or before a harvest. */
FORKUNION_API double fu_fabric_memory_latency_ns(fu_fabric_t fabric, size_t compute_domain, size_t memory_domain);
/**  @brief  Saturated read bandwidth of an edge in bytes per second; 0 if unreached or before a harvest. */
FORKUNION_API double fu_fabric_memory_bandwidth(fu_fabric_t fabric, size_t compute_domain, size_t memory_domain);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FORKUNION_H */
