/*
 *  flat.pml: a Promela model of `basic_pool_t`'s dispatch protocol, as written down at the top of
 *  include/forkunion/pools/flat.hpp (shared words, invariants I1-I7, transitions T0-T4, T2n and M).
 *
 *  Run: `ctest -L model` (test/model/CMakeLists.txt registers every configuration and mutant below), or by hand:
 *      spin -a -DEXCLUSIVE flat.pml && cc -O1 -DSAFETY -DCOLLAPSE -o pan pan.c && ./pan -m100000
 *      spin -t -p -g -DEXCLUSIVE flat.pml      # replays a counterexample (same -D flags)
 *  The model mirrors flat.hpp by hand: change it when the protocol changes.
 *
 *  Granularity. Each Promela statement is one access to a shared word of flat.hpp; ghost bookkeeping rides
 *  inside the `atomic` of a real access. A step also takes the reads of words that nobody may write at that
 *  moment (the configuration and the fork state while the claim is held), which is exact. A wait loop is a
 *  blocking guard on what it polls ("until a word I read changes"), exact for side-effect-free polls, and it
 *  turns a hang into an invalid end state. Spin interleaves with sequential consistency: the acquire/release
 *  and seq_cst orders are argued in flat.hpp next to each access, not here.
 *
 *  Shared words (flat.hpp's names):
 *    claim    4q + state, state in {free, held, closed}; the sequence q steps at every claim and every spawn
 *    outer    the generation of the hold's outermost publication
 *    outer_hold  the claim word of the hold that stored outer
 *    pending, dispatcher   inclusive pools: the generation whose slice 0 is owed, and who owes it
 *    e        the epoch: odd, every publication steps it by 2 modulo EMOD (a 3-bit index_t, or 2-bit with
 *             EMOD = 4, so wrap and aliasing are reached); a generation is the epoch it published
 *    r[t]     the last epoch contributor t retired; contributor t > 0 reports to (t - 1) / F, 0 is the root
 *    parked   workers inside park_;  wake  the futex ticket, kept as `bumped` (bit t: the ticket moved since
 *             worker t read it, exact for an unbounded counter) and `asleep` (the futex queue)
 *    idle     the idle policy word: SPIN_K, or PARK_A / PARK_B, two parking policies that differ only in their
 *             parameter (so that "wait the new way" is observable);  stop;  threads, excl (the configuration)
 *  Transitions:
 *    T0   spawn: r[t] = e, read the gate, start the workers (each blocks until `wake` moves), claim
 *         closed -> free(q + 1), open the gate (wake_parked_). -DSPAWN_FAIL: the respawn's second thread is
 *         refused: stop = 1, e += 2 as T4 does, open the gate, join the started one, stay closed
 *         (-DMUTATE_FAILED_SPAWN_NO_EPOCH omits the epoch step, as flat.hpp once did, and the model finds the
 *         hang: mutate_failed_spawn_no_epoch).
 *    T1   claim: load claim; free => read closing; not closing => CAS free(q) -> held(q + 1), else refused,
 *         never retried. The holder reads the thread count and the exclusivity after the claim.
 *    T2   publish: the fork state (ghost `fs`: trampoline, context, cursors), outer = e + 2, then outer_hold =
 *         the claim word, on inclusive pools (dispatcher, pending) = (me, g); e = g (seq_cst); parked != 0 =>
 *         wake_parked_ (ticket++, wake all).
 *    T2n  thread 0 of an exclusive pool forks from inside its slice (NEST forks per outer slice, DEPTH deep):
 *         wait r_c = e for its children, fork state, g = e + 2 (e + 4 if that equals outer), publish as T2, run
 *         slice 0, wait r_c = e (its fork's, or a deeper fork's), then its guard joins (is_complete).
 *    T3   retire: wait r_c = e for each child c, then r_t = e; the root instead releases the claim (held ->
 *         free). Inclusive pools: the dispatcher is contributor 0 and the root; its join takes slice 0 with one
 *         CAS of (dispatcher, pending), runs it and retires. Exclusive pools: thread 0 is the root, dispatchers
 *         poll is_complete (claim not held, or outer_hold != that claim, or outer != g: three loads).
 *    T4   terminate, by the controlling thread: (inclusive) join an owed slice 0 if it is its own; closing = 1;
 *         claim by waiting; stop = 1; e += 2 (seq_cst) with the parked check; wake_parked_; join every worker;
 *         reset the configuration; closing = 0; claim -> closed(q + 1).
 *    M    set_idle_policy, from a thread of its own at any time (NM changes, each to spin or to the other
 *         parking word): store the word (seq_cst), then parked != 0 => wake_parked_. No claim.
 *    idle A worker waits as the word it read says: spin (until e or the word changes), or park_: read the
 *         ticket, parked++ (seq_cst), re-read e, the word and stop, FUTEX_WAIT (compare the ticket and enqueue
 *         as one step), parked--. A parked worker never wakes by a timeout or spuriously here, so a lost wake-up
 *         is a hang.
 *
 *  Checks:
 *    - every slice of every publication runs exactly once, on its own thread (`ranmask`; slice 0 of an
 *      inclusive dispatch on the thread that dispatched it: `owner`), and never once its guard's join returned
 *      (`done`: no run on a dead fork object);
 *    - a worker runs the fork state its epoch announced (`epoch_pub`): no aliasing for workers (I3);
 *    - a join returns only once every slice of its publication finished, counted with the true thread count
 *      (`finmask`, `cnt`); a T2n fork is complete when it returns; with -DREJOIN_COMPLETE, is_complete of a
 *      generation whose join returned answers complete at once, whatever the next hold is doing (no generation
 *      aliases it in those runs);
 *    - nobody writes the fork state while another thread may read it (`readers`); the root releases only a held
 *      claim; a claim read before a terminate and respawn is refused (`spawns`);
 *    - a monitor checks in every state I1 (free => no reader and every r_t = e), I2 (held <=> exactly one
 *      holder) and I6 (free => spawned and not stopping);
 *    - no invalid end state: every dispatcher, controller and policy changer finishes; only workers may be left
 *      blocked, and only on an idle turn (spinning, or parked);
 *    - in the final state the policy word is the last one M stored (no other write undid it) and every parked
 *      worker parked under it (a policy change reaches every sleeper).
 *
 *  Processes: the controlling thread (me = 1: K dispatches; with -DTERMINATE a terminate; with -DRESPAWN then a
 *  spawn of T2 threads, exclusive with -DEXCLUSIVE2, and K2 more dispatches), a foreign dispatcher (me = 2: K1
 *  attempts, at any time), a policy changer (NM changes) and the workers. Inclusive pools (the default) have
 *  T - 1 workers and the dispatcher is contributor 0; -DEXCLUSIVE: T workers. F = 1 with T = 3 is a tree of
 *  depth 2 (0 <- 1 <- 2); F = 2 is flat. IDLE0 is the policy at start (default PARK_A, as adaptive parks).
 *
 *  Configurations (each must explore every state without an error):
 *    inclusive_tree       two dispatchers race on an inclusive pool of 3 with an inner tree node, workers
 *                         parking: exactly-once, join after every slice, the tree's fan-in, the handshake;
 *    inclusive_flat       the same on a flat tree, spinning, two dispatches each;
 *    inclusive_policy     two policy changes at any time against parking workers and two dispatchers;
 *    exclusive_tree       an exclusive pool of 3 with an inner node: thread 0 is the root, dispatchers poll;
 *    exclusive_park       the park/wake handshake on an exclusive pool (thread 0 parks too);
 *    exclusive_policy     policy changes against an exclusive pool's two parking workers;
 *    exclusive_nested     T2n: two forks per outer slice, two deep, against a foreign dispatcher;
 *    exclusive_nested_park  the same with parking workers (T2n's own parked check);
 *    nested_alias         four forks in one outer slice: the fourth skips the generation equal to outer;
 *    terminate_exclusive  T4 against a foreign dispatcher and a policy changer on an exclusive pool, the shape
 *                         of the old late-exchange bug: no double run, no hang, the policy survives (spinning
 *                         at start: workers park once the changer picks a parking word);
 *    terminate_inclusive  T4 against a foreign dispatcher on an inclusive pool of 3 (owed slice 0);
 *    respawn_inclusive    terminate, spawn(T2 = 2) and dispatch, against a foreign dispatcher that may have read
 *                         the claim before: refused, or served with the new count;
 *    respawn_exclusive    the same from an exclusive pool of 2 to an inclusive pool of 3;
 *    respawn_to_exclusive the same from an inclusive pool of 3 to an exclusive pool of 2 (spinning, flat);
 *    stale_rejoin         a second join of an old token after the generations wrapped (EMOD = 4) returns
 *                         without running another dispatcher's slice 0;
 *    rejoin_complete_inclusive, rejoin_complete_exclusive  each dispatcher asks is_complete of its generation
 *                         once more right after its join, against the other's claim and publication;
 *    spawn_failure_fixed  a respawn that fails after starting a thread, against a policy changer and a foreign
 *                         dispatcher: the started thread leaves, and the spawn returns.
 *  The failed-spawn mutant (flat.hpp before the fix this model found):
 *    mutate_failed_spawn_no_epoch  a set_idle_policy (or a publisher) reads parked != 0 on the old pool and wakes
 *                                 late, after terminate and after the respawn read its gate: the new worker
 *                                 passes the gate before the failing spawn stores stop, waits for a publication
 *                                 that never comes (it re-checks stop only in park_, which then returns at once),
 *                                 and the failed spawn's join of it hangs.
 *  Mutants (each must yield its counterexample, proving the model can fail):
 *    mutate_late_exchange_die     the publisher writes the idle word after its epoch store (the old wake_()),
 *                                 and terminate's stop is that word's `die`: the late exchange undoes die, and a
 *                                 worker runs the finished dispatch's slice again on its dead fork;
 *    mutate_late_exchange_policy  the same late write undoes a concurrent set_idle_policy;
 *    mutate_stale_count           the holder reads T before its claim: after terminate and spawn(3) it serves
 *                                 the new pool with the old count and releases while a slice runs;
 *    mutate_no_sequence           the claim without its sequence: a claim read before a respawn succeeds;
 *    mutate_no_parked_check       the publisher does not look for parked workers: a dropped wake-up, a hang;
 *    mutate_park_no_recheck       a worker parks without re-reading e after parked++: a hang;
 *    mutate_policy_no_wake        M stores the word without waking sleepers: they sleep the old way;
 *    mutate_early_release         the root releases the claim before waiting for its children;
 *    mutate_early_report          an inner tree node stores r_t before its children retired;
 *    mutate_nested_alias          T2n does not skip outer: the fork's own join waits for itself, a hang;
 *    mutate_t2n_own_generation    T2n's second wait compares r_c with its own generation, not e: a fork from
 *                                 inside a fork's slice 0 waits for ever;
 *    mutate_pending               slice 0 taken by comparing `pending` alone: a stale join runs another
 *                                 dispatcher's slice 0;
 *    mutate_split_pending_check   `dispatcher` loaded, then `pending` CASed, as two words: the same, through
 *                                 the window between the two;
 *    mutate_no_outer_hold         is_complete without outer_hold (claim not held, or outer != g): between the
 *                                 next hold's claim and its store of outer, a finished generation reads in flight;
 *  Probes (-DPROBE=n, in the configuration of the mutant they back): REACH(n, c) fails when c holds, so the
 *  correct model provably reaches the state each bug needs: 1 a sleeper woken by a publication, 2 by a policy
 *  change, 3 a claim read on the old pool refused after a respawn, 4 the foreign dispatcher served by a respawned
 *  pool of another size, 5 a publisher's parked check after terminate stored stop, 6 T2n skipping outer, 7 a
 *  failing spawn's worker leaving on stop, 8 the gate passed early, 9 a policy change during terminate, 10 an
 *  is_complete of a joined generation between the next hold's claim and its store of outer.
 *
 *  Not modelled: the C++ memory orders (above); for_n_dynamic's cursors (one ghost with the fork state; their
 *  arithmetic is swept by cursor_sweep.cpp); timed sleeps and spurious wake-ups (they only add wake-ups); nap
 *  (a spin with another micro-wait, to the protocol); the fork() child; non-progress cycles (a parked worker
 *  that loops without sleeping is a livelock, which the safety search does not report). Sizes are small:
 *  T <= 3, two dispatchers, a few dispatches, two policy changes, nesting <= 4.
 */

/* ---- Parameters ---- */
#ifndef T
#define T 3 /* contributors of the first spawn */
#endif
#ifndef T2
#define T2 2 /* contributors after -DRESPAWN */
#endif
#ifndef F
#define F 1 /* fan-in of the retirement tree */
#endif
#ifndef EMOD
#define EMOD 8 /* epoch modulus: a 3-bit index_t */
#endif
#ifndef K
#define K 1 /* dispatches of the controlling thread before terminate */
#endif
#ifndef K1
#define K1 1 /* dispatch attempts of the foreign dispatcher */
#endif
#ifndef K2
#define K2 0 /* dispatches of the controlling thread after the respawn */
#endif
#ifndef NM
#define NM 0 /* idle policy changes */
#endif
#ifndef NEST
#define NEST 0 /* T2n forks per outer slice of thread 0 (exclusive pools) */
#endif
#ifndef DEPTH
#define DEPTH 1 /* and how deep */
#endif
#ifndef IDLE0
#define IDLE0 PARK_A /* the policy at start: the default (adaptive) parks */
#endif
#ifdef EXCLUSIVE
#define X1 1
#else
#define X1 0
#endif
#ifdef EXCLUSIVE2
#define X2 1
#else
#define X2 0
#endif
#define TMAX 3
#define QMOD 64 /* claim sequences: more than every claim and spawn of a run, so no wrap */
#define MAXPUB ((K + K1 + K2 + 1) * (NEST + 1) + 1)

#define FREE_K 0
#define HELD_K 1
#define CLOSED_K 2
#define STATE(c) ((c) & 3)
#ifndef MUTATE_NO_SEQUENCE
#define NEXT(c) ((((c) / 4 + 1) % QMOD) * 4)
#else
#define NEXT(c) 0 /* the claim word without its sequence: free, held and closed alone */
#endif

#define SPIN_K 0
#define PARK_A 1
#define PARK_B 2
#define DIE_K 3 /* mutate_late_exchange_die only: the old design kept terminate's stop in the idle word */

#define BIT(t) (1 << (t))
#define ALL(n) ((1 << (n)) - 1)
#define ALLBITS 7

#ifdef MUTATE_LATE_EXCHANGE_DIE
#define MUTATE_LATE_EXCHANGE
#define STOPPED (idle == DIE_K)
#else
#define STOPPED (stop)
#endif

/* ---- The pool's shared words ---- */
byte claim = CLOSED_K;
byte outer;
byte outer_hold;
byte pending;
byte dispatcher; /* 0: none, 1: the controlling thread, 2: the foreign dispatcher */
byte e;
byte r[TMAX];
byte parked;
byte bumped; /* wake ticket, per reader: bit t set once it moved since worker t read it */
byte asleep; /* futex queue: bit t while worker t blocks in FUTEX_WAIT */
byte idle;
bool stop;
byte threads;
bool excl;

/* ---- Ghosts: checked here, not stored by flat.hpp ---- */
byte fs;               /* the publication the fork state belongs to */
byte epoch_pub;        /* the publication the current epoch announces (0: terminate's) */
byte npub;             /* publications so far; ids 1.. */
byte owner[MAXPUB];    /* who published it: 1, 2, or 3 for thread 0's T2n */
byte cnt[MAXPUB];      /* its true contributor count */
byte ranmask[MAXPUB];  /* bit t: slice t started */
byte finmask[MAXPUB];  /* bit t: slice t finished */
bit done[MAXPUB];      /* its guard's join returned: the fork object is dead */
byte readers;          /* bit t: thread t runs a slice and may read the fork state */
byte holders;          /* claim holders (I2) */
byte nworkers;         /* workers of the current spawn */
byte exited;           /* workers that left on stop */
byte policy_set;       /* the last word M stored */
byte slept[TMAX];      /* the word worker t parked under */
byte nm;               /* policy changes made */
byte spawns;           /* T0s so far */
bit closing;           /* T4 is waiting for the claim: T1 refuses */
bit failing;           /* -DSPAWN_FAIL: the respawn is failing */

/* Reachability probes: with -DPROBE=n, the assertion of probe n fires when its state is reached, so that a probe
 * run of a correct configuration proves that the search reaches the state a mutant needs (the mutant's test
 * cannot pass vacuously). Each sits inside an existing atomic step: without -DPROBE it adds no state. */
#ifdef PROBE
#define REACH(n, c) assert(!(c) || PROBE != n)
#else
#define REACH(n, c) skip
#endif

/* The invariants, checked in every state by the monitor. I1: a free pool has no reader, and every contributor
 * retired the current epoch. I2: held <=> exactly one holder. I6: a free pool is spawned and not stopping. */
#define RETIRED_ALL ((threads < 2 || r[1] == e) && (threads < 3 || r[2] == e))
#define I1 (STATE(claim) != FREE_K || (readers == 0 && RETIRED_ALL))
#define I2 ((STATE(claim) == HELD_K) == (holders == 1) && holders <= 1)
#define I6 (STATE(claim) != FREE_K || (threads != 0 && !STOPPED))
/* The final state: every sleeper parked under the policy in force (a policy change reached it). */
#define SLEEPERS_OK ((!(asleep & BIT(0)) || slept[0] == idle) && (!(asleep & BIT(1)) || slept[1] == idle) && \
                     (!(asleep & BIT(2)) || slept[2] == idle))

active proctype monitor() {
end_monitor:
    do
    :: atomic { !I1 -> assert(I1) }
    :: atomic { !I2 -> assert(I2) }
    :: atomic { !I6 -> assert(I6) }
    :: atomic { timeout -> assert(idle == policy_set); assert(SLEEPERS_OK); break } /* no other write undid M */
    od
}

/* wake_parked_: bump the ticket (fetch_add), then FUTEX_WAKE every waiter: two steps. */
inline wake_parked_() {
    bumped = ALLBITS;
    asleep = 0
}

/* publish_epoch_: the last step of T2, T2n and T4: e = g (seq_cst), then one look at the parked count. */
inline publish_epoch_(g, p) {
    atomic { e = g; epoch_pub = p };
#ifdef MUTATE_LATE_EXCHANGE
    /* The old wake_(): after publishing, exchange the idle word back to spin, waking sleepers it held. */
    if
    :: atomic { (idle == PARK_A || idle == PARK_B) -> idle = SPIN_K }; wake_parked_()
    :: atomic { idle == DIE_K -> idle = SPIN_K }
    :: idle == SPIN_K
    fi;
#endif
#ifndef MUTATE_NO_PARKED_CHECK
    if
    :: atomic { parked != 0 -> REACH(5, p != 0 && STOPPED) }; wake_parked_()
    :: atomic { parked == 0 -> REACH(5, p != 0 && STOPPED) }
    fi
#else
    skip
#endif
}

/* Waits until every child of contributor t (of tn) retired epoch ep: their subtrees are done (I4). */
inline wait_children_(t, ep, tn) {
    (t * F + 1 >= tn || r[t * F + 1] == ep);
#if F >= 2
    (t * F + 2 >= tn || r[t * F + 2] == ep);
#endif
    skip
}

/* The root releases the pool; nobody else writes the claim while it is held (I2), so a plain store. */
#define RELEASE_ assert(STATE(claim) == HELD_K); claim = (claim & 252) | FREE_K; holders--

/* T3 for contributor t of a pool of tn, retiring epoch ep. */
inline retire_(t, ep, tn) {
#if defined(MUTATE_EARLY_REPORT) || defined(MUTATE_EARLY_RELEASE)
    atomic {
        if
#ifdef MUTATE_EARLY_REPORT
        :: t != 0 -> r[t] = ep /* reports before its children did */
#endif
#ifdef MUTATE_EARLY_RELEASE
        :: t == 0 -> RELEASE_  /* releases before its children retired */
#endif
        :: else
        fi
    };
#endif
    wait_children_(t, ep, tn);
    atomic {
        if
#ifndef MUTATE_EARLY_REPORT
        :: t != 0 -> r[t] = ep /* release: pairs with the parent's acquire */
#else
        :: t != 0
#endif
#ifndef MUTATE_EARLY_RELEASE
        :: else -> RELEASE_
#else
        :: else
#endif
        fi
    }
}

/* `while (!is_complete(g)) backoff`: complete once the claim c is not held, or outer_hold != c, or outer != g
 * (three loads; -DMUTATE_NO_OUTER_HOLD skips the second). */
inline is_complete_poll_(g) {
    do
    :: STATE(claim) != HELD_K -> break
    :: atomic { STATE(claim) == HELD_K -> cv = claim };
        if
#ifndef MUTATE_NO_OUTER_HOLD
        :: atomic { outer_hold != cv -> cv = 0 }; break
        :: outer_hold == cv ->
#else
        :: skip ->
#endif
            if
            :: atomic { outer != g -> cv = 0 }; break
            :: atomic { outer == g -> ov = g }; atomic { (claim != cv || outer != ov) -> cv = 0; ov = 0 }
            fi
        fi
    od
}

#ifdef REJOIN_COMPLETE
/* One is_complete(g) right after g's join returned: g's hold has released the claim, and no later publication of
 * these runs equals g, so each branch must answer complete, also between the next hold's claim and its store of
 * outer (outer still g), where outer_hold names g's hold, not the claim's. */
inline is_complete_once_(g) {
    atomic { cv = claim };
    if
    :: STATE(cv) != HELD_K
    :: else ->
        if
#ifndef MUTATE_NO_OUTER_HOLD
        :: atomic { outer_hold != cv -> REACH(10, outer == g) } /* the window mutate_no_outer_hold falls into */
        :: outer_hold == cv ->
#else
        :: skip ->
#endif
            atomic { assert(outer != g) }
        fi
    fi;
    cv = 0
}
#endif

/* The guard's join returned for publication p: every slice finished, and its fork object dies now. */
#define JOINED_(p) assert(finmask[p] == ALL(cnt[p])); done[p] = 1

/* Slice 0 of the current fork state starts on the inclusive caller me. */
#define SLICE0_START_(me) \
    cur = fs; \
    assert((ranmask[cur] & 1) == 0); \
    assert(!done[cur]); \
    assert(owner[cur] == me); /* slice 0 runs on the thread that dispatched it */ \
    ranmask[cur] = ranmask[cur] | 1; \
    readers = readers | 1

/* unsafe_join(g) on an inclusive pool by me, whose count is tl. Slice 0 is taken by one CAS that needs both
 * `pending == g` and `dispatcher == me` (one word); it runs it and retires as the root. A join by another
 * thread returns at once; the dispatcher's own later join polls is_complete. */
inline unsafe_join_(me, g, tl) {
    if
#if defined(MUTATE_PENDING)
    :: atomic { pending == g -> pending = 0; SLICE0_START_(me) }; /* `pending` alone, no `dispatcher` */
#elif defined(MUTATE_SPLIT_PENDING_CHECK)
    :: dispatcher != me /* load `dispatcher`, then CAS `pending`: two words */
    :: dispatcher == me ->
        if
        :: atomic { pending == g -> pending = 0; SLICE0_START_(me) };
#else
    :: atomic { dispatcher == me && pending == g -> pending = 0; SLICE0_START_(me) };
#endif
            atomic { finmask[cur] = finmask[cur] | 1; readers = readers & 6; ev = e; cur = 0 };
            retire_(0, ev, tl)
#if defined(MUTATE_PENDING)
    :: else -> is_complete_poll_(g)
#elif defined(MUTATE_SPLIT_PENDING_CHECK)
        :: else -> is_complete_poll_(g)
        fi
#else
    :: dispatcher != me
    :: dispatcher == me && pending != g -> is_complete_poll_(g)
#endif
    fi
}

/* T1, T2 and the guard's join, by me (1: the controlling thread, 2: the foreign dispatcher). The fork state,
 * the count and the exclusivity are read in the claim's step: nobody else may write them while it is held. */
inline dispatch_(me) {
#ifdef MUTATE_STALE_COUNT
    tl = threads; /* the old order: the count before the claim */
#endif
    if
    :: atomic { STATE(claim) == FREE_K -> cv = claim; sg = spawns };
        if
        :: atomic { closing -> cv = 0; sg = 0; tl = 0 } /* a terminate is waiting: contended, never retried */
        :: else ->
            if
            :: atomic {
                   claim == cv -> claim = NEXT(cv) | HELD_K; holders++; cv = 0;
                   assert(sg == spawns); /* a claim read before a terminate and respawn is refused */
                   REACH(4, me == 2 && spawns > 0 && threads != T);
                   sg = 0;
    #ifndef MUTATE_STALE_COUNT
                   tl = threads;
    #endif
                   xl = excl;
                   assert(readers == 0); /* cursors, trampoline, context: nobody reads them (I1) */
                   npub++;
                   assert(npub < MAXPUB);
                   p = npub;
                   fs = p;
                   owner[p] = me;
                   cnt[p] = threads;
                   g = (e + 2) % EMOD
               };
                outer = g;
                outer_hold = claim; /* release, after outer: nobody else writes the claim while it is held */
                if
    #ifndef MUTATE_SPLIT_PENDING_CHECK
                :: !xl -> atomic { dispatcher = me; pending = g }
    #else
                :: !xl -> dispatcher = me; pending = g
    #endif
                :: else
                fi;
                publish_epoch_(g, p); /* T2 */
    #ifdef STALE_REJOIN
                if
                :: first_g == 0 -> first_g = g
                :: else
                fi;
    #endif
                if
                :: xl -> is_complete_poll_(g)
                :: else -> unsafe_join_(me, g, tl)
                fi;
                atomic { JOINED_(p); p = 0; tl = 0; xl = 0; ev = 0 };
#ifdef REJOIN_COMPLETE
                is_complete_once_(g);
#endif
                g = 0
            :: atomic { claim != cv -> REACH(3, sg != spawns); cv = 0; sg = 0; tl = 0 } /* lost: contended */
            fi
        fi
    :: atomic { STATE(claim) != FREE_K -> tl = 0 } /* contended, or not_spawned when closed */
    fi
}

proctype worker(byte t; byte tn; byte last; bit xcl) {
    byte q, pol, cur, ev;
#if NEST > 0
    byte nn, depth, np, g, cv, ov;
    byte gstack[DEPTH + 1];
    byte pstack[DEPTH + 1];
#endif
    atomic { (bumped & BIT(t)) -> REACH(8, STATE(claim) == CLOSED_K && !STOPPED) } /* T0's gate: until `wake` moves */
    if
    :: atomic { STOPPED -> exited++ }; goto exit_ /* a failed spawn */
    :: else
    fi;
idle_:
    if
    :: atomic { e != last -> q = epoch_pub } /* acquire: a publication */
    :: else ->
        if
        :: idle == SPIN_K ->
end_spin:   (e != last || idle != SPIN_K)
#ifdef MUTATE_LATE_EXCHANGE_DIE
        :: idle == DIE_K ->
end_die:    (e != last || idle != DIE_K)
#endif
        :: atomic { (idle == PARK_A || idle == PARK_B) -> pol = idle }; /* park_ */
            bumped = bumped & (ALLBITS - BIT(t)); /* ticket = wake (acquire) */
            parked++;                             /* seq_cst */
            if
#ifndef MUTATE_PARK_NO_RECHECK
            :: e != last /* re-read e (seq_cst) */
            :: else ->
#else
            :: true ->
#endif
                if
                :: idle != pol /* re-read the policy (seq_cst) */
                :: else ->
                    if
                    :: STOPPED
                    :: else ->
                        atomic { /* FUTEX_WAIT: compare the ticket and enqueue, one step */
                            if
                            :: !(bumped & BIT(t)) -> asleep = asleep | BIT(t); slept[t] = pol;
end_futex:                      !(asleep & BIT(t));
                                REACH(1, e != last);  /* woken by a publication */
                                REACH(2, idle != pol) /* woken by a policy change */
                            :: else
                            fi
                        }
                    fi
                fi
            fi;
            atomic { parked--; slept[t] = 0; pol = 0 }
        fi;
        goto idle_
    fi;
    /* stop (stored before T4's epoch), then the trampoline and context of the fork state, which nobody may
     * write before this worker retires (I2, I3) */
    if
    :: atomic { STOPPED -> REACH(7, failing); exited++; q = 0 }; goto exit_
    :: atomic {
           !STOPPED -> cur = fs;
           assert((ranmask[cur] & BIT(t)) == 0); /* each slice once */
           assert(!done[cur]);                   /* never on a dead fork */
           assert(cur == q);                     /* the fork state its epoch announced */
           ranmask[cur] = ranmask[cur] | BIT(t);
           readers = readers | BIT(t);
           q = 0
       }
    fi;
#ifdef LIVENESS
progress_slice: /* -DLIVENESS: a cycle that never passes here (a worker idling for ever while work waits) fails */
    skip;
#endif
#if NEST > 0
    /* T2n: thread 0 of an exclusive pool forks from inside its slice. */
    if
    :: t == 0 && xcl ->
        do
        :: nn < NEST && depth < DEPTH ->
            /* T1 loses to the enclosing hold; the lost-claim path reads the configuration and e (stable) */
            atomic { assert(STATE(claim) == HELD_K); nn++; ev = e };
            wait_children_(0, ev, tn);
            atomic {
                assert(readers == 1); /* only thread 0 itself, inside its slice */
                npub++;
                assert(npub < MAXPUB);
                np = npub;
                fs = np;
                owner[np] = 3;
                cnt[np] = tn;
                g = (ev + 2) % EMOD;
#ifndef MUTATE_NESTED_ALIAS
                if
                :: g == outer -> g = (g + 2) % EMOD; REACH(6, true) /* skip the enclosing generation */
                :: else
                fi;
#endif
                ev = 0
            };
            publish_epoch_(g, np); /* T2n */
            atomic { /* slice 0 of the fork */
                assert((ranmask[np] & 1) == 0);
                ranmask[np] = ranmask[np] | 1;
                depth++;
                gstack[depth] = g;
                pstack[depth] = np;
                g = 0;
                np = 0
            }
        :: depth > 0 -> /* the innermost fork's slice 0 ends: wait r_c = e (its own or a deeper fork's) */
#ifndef MUTATE_T2N_OWN_GENERATION
            atomic { finmask[pstack[depth]] = finmask[pstack[depth]] | 1; ev = e };
#else
            atomic { finmask[pstack[depth]] = finmask[pstack[depth]] | 1; ev = gstack[depth] };
#endif
            wait_children_(0, ev, tn);
            ev = 0;
            atomic { assert(finmask[pstack[depth]] == ALL(tn)) }; /* T2n returns complete */
            is_complete_poll_(gstack[depth]);
            atomic { JOINED_(pstack[depth]); gstack[depth] = 0; pstack[depth] = 0; depth-- }
        :: depth == 0 -> nn = 0; break
        od
    :: else
    fi;
#endif
    atomic { finmask[cur] = finmask[cur] | BIT(t); readers = readers & (ALLBITS - BIT(t)); cur = 0; last = e };
    retire_(t, last, tn);
    goto idle_;
exit_:
    skip
}

#ifdef SPAWN_FAIL
/* T0 failing: the first thread starts behind the gate, the second one is refused; stop, open the gate, join. */
inline spawn_(tn, xl) {
    atomic {
        ev = e;
        threads = tn;
        excl = xl;
        t_ = 1 - xl;
        nworkers = 1;
        failing = 1;
        r[t_] = ev;
        bumped = bumped & (ALLBITS - BIT(t_));
        run worker(t_, tn, ev, xl);
        t_ = 0;
        ev = 0
    };
#ifndef MUTATE_FAILED_SPAWN_NO_EPOCH
    /* End like T4, so a worker let through the gate early by a stale wake-up sees an epoch, then stop. */
    atomic { stop = true; ev = (e + 2) % EMOD };
    publish_epoch_(ev, 0);
    ev = 0;
#else
    stop = true; /* the mutant (flat.hpp before the fix): stop, then open the gate, no epoch */
#endif
    wake_parked_();       /* open the gate */
    (exited == nworkers); /* join the started thread */
    atomic { exited = 0; nworkers = 0; threads = 0; excl = false; stop = false; failing = 0 }
}
#else
/* T0 by the controlling thread: tn threads, exclusive if xl. */
inline spawn_(tn, xl) {
    atomic {
        ev = e; /* the epoch every contributor starts from (I1) */
        threads = tn;
        excl = xl;
        t_ = 1 - xl;
        nworkers = tn - 1 + xl;
        do
        :: t_ < tn -> r[t_] = ev; bumped = bumped & (ALLBITS - BIT(t_)); run worker(t_, tn, ev, xl); t_++
        :: else -> break
        od;
        t_ = 0;
        ev = 0
    };
    atomic { claim = NEXT(claim) | FREE_K; spawns++ }; /* release */
    wake_parked_()                                     /* open the gate */
}
#endif

/* T4 by the controlling thread (me = 1). */
inline terminate_() {
    if /* an unjoined inclusive dispatch of its own: run its slice first (another thread's returns at once) */
    :: atomic { !excl && pending != 0 -> pv = pending; tl = threads }; unsafe_join_(1, pv, tl); atomic { pv = 0; tl = 0; ev = 0 }
    :: else
    fi;
    closing = true; /* T1 refuses from here on: no stream of claims starves this one */
    do /* claim like T1, but wait */
    :: atomic { STATE(claim) == FREE_K -> cv = claim };
        if
        :: atomic { claim == cv -> claim = NEXT(cv) | HELD_K; holders++; cv = 0 }; break
        :: atomic { claim != cv -> cv = 0 }
        fi
    :: atomic { STATE(claim) == HELD_K -> cv = claim }; atomic { claim != cv -> cv = 0 }
    :: STATE(claim) == CLOSED_K -> assert(false) /* one controlling thread */
    od;
#ifdef MUTATE_LATE_EXCHANGE_DIE
    atomic { saved_ = idle; idle = DIE_K; ev = (e + 2) % EMOD };
#else
    atomic { stop = true; ev = (e + 2) % EMOD };
#endif
    publish_epoch_(ev, 0);
    ev = 0;
    wake_parked_();       /* every worker, parked or not */
    (exited == nworkers); /* join */
    atomic {
        exited = 0;
        nworkers = 0;
        threads = 0;
        excl = false;
        stop = false;
#ifdef MUTATE_LATE_EXCHANGE_DIE
        idle = saved_;
        saved_ = 0;
#endif
        pending = 0;
        closing = false;
        claim = NEXT(claim) | CLOSED_K; /* release */
        holders--
    }
}

proctype user(byte me) {
    byte k, cv, ov, p, g, tl, cur, ev, pv, t_, first_g, sg;
    bit xl;
#ifdef MUTATE_LATE_EXCHANGE_DIE
    byte saved_;
#endif
    do
    :: (me == 1 && k < K) || (me == 2 && k < K1) -> k++; dispatch_(me)
    :: else -> break
    od;
    k = 0;
#ifdef STALE_REJOIN
    /* A second join of its first token, documented as returning at once. */
    if
    :: first_g != 0 ->
        atomic { xl = excl; tl = threads };
        if
        :: xl -> is_complete_poll_(first_g)
        :: else -> unsafe_join_(me, first_g, tl)
        fi;
        atomic { xl = 0; tl = 0; ev = 0 }
    :: else
    fi;
#endif
#ifdef TERMINATE
    if
    :: me == 1 ->
        terminate_();
#ifdef RESPAWN
        spawn_(T2, X2);
        do
        :: k < K2 -> k++; dispatch_(me)
        :: else -> break
        od
#endif
    :: else
    fi
#endif
}

/* M: set_idle_policy from its own thread at any time: store the word (seq_cst), then the parked check. */
proctype changer() {
    do
    :: nm < NM ->
        if
        :: atomic { idle = SPIN_K; policy_set = SPIN_K; nm++; REACH(9, STOPPED && !failing) }
        :: atomic { idle = (idle == PARK_A -> PARK_B : PARK_A); policy_set = idle; nm++; REACH(9, STOPPED && !failing) }
        fi;
#ifndef MUTATE_POLICY_NO_WAKE
        if
        :: parked != 0 -> wake_parked_()
        :: else
        fi
#else
        skip
#endif
    :: else -> break
    od
}

init {
    byte t_;
    atomic {
        e = EMOD - 1; /* the first publication wraps */
        idle = IDLE0;
        policy_set = IDLE0;
        threads = T;
        excl = X1;
        nworkers = T - 1 + X1;
        t_ = 1 - X1;
        do
        :: t_ < T -> r[t_] = e; run worker(t_, T, e, X1); t_++
        :: else -> break
        od;
        claim = NEXT(claim) | FREE_K;
        bumped = ALLBITS; /* the gate is open */
        run user(1);
        run user(2);
        if
        :: NM > 0 -> run changer()
        :: else
        fi
    }
}
