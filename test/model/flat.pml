/*
 *  flat.pml: a Promela model of `basic_pool`'s dispatch protocol (include/forkunion/flat.hpp, I1-I5, T1-T4).
 *
 *  README
 *  Run: `ctest -L model` (test/model.cmake), or by hand:
 *      spin -a -DEXCLUSIVE flat.pml && cc -O1 -DSAFETY -DCOLLAPSE -o pan pan.c && ./pan -m100000
 *      spin -t -p -DEXCLUSIVE flat.pml      # replays a counterexample (same -D flags)
 *  The model mirrors flat.hpp by hand: change it when the protocol changes.
 *
 *  What it models, step for step with the header (each Promela statement is one atomic access there):
 *    T1   claim: one CAS of `s` (threads_to_sync) 0 -> T after reading `threads`; a loser runs nothing.
 *    T2   publish: wait for an even epoch (a retirer may sit between T3's two steps), write the fork state
 *         (trampoline, context and cursors: the ghost `fs`), outer = e+1, `pending` (inclusive), e -> e+1, wake_.
 *    T2n  exclusive pools: thread 0 forks from inside its slice, NEST times, DEPTH deep: wait s == 1, write the
 *         fork state, s = T, e -> e+2, wake_, run slice 0, wait s == 1, then its guard joins (`is_complete`).
 *    T3   retire: s-- (fetch_sub); whoever takes s from 1 to 0 loads e and stores e+1.
 *    T4   terminate (-DTERMINATE, by the controlling dispatcher once the other one is done): claim by waiting,
 *         wait even, mood = die, e+1, ticket+1 and wake, join the workers, e+2, threads = 0, s = 0.
 *    join inclusive pools: `unsafe_join(g)` runs slice 0 when pending == g, retires, then polls `is_complete`
 *         (complete <=> e even, or e odd and outer != g: two separate loads); exclusive pools only poll.
 *    sleep (-DSLEEP_MODE): the controlling dispatcher may call sleep(0) before each of its dispatches; idle
 *         workers read e and mood, then the ticket, e and mood again, and FUTEX_WAIT(ticket) (check and enqueue
 *         atomic); a publication that reads mood != spin exchanges it to spin, bumps the ticket, FUTEX_WAKEs all.
 *         The controller may also call nap() (transition M with mood = nap: workers spin with another wait);
 *         M exchanges the mood and, leaving sleep, bumps the ticket and FUTEX_WAKEs all itself.
 *  Epochs and generations wrap modulo EMOD (default 8: a 3-bit index_t, so aliasing is reached) from an initial
 *  epoch of 0, 2 or EMOD - 2. The ticket wraps modulo TMOD (default 4; a sleeper's ticket can be 2 behind, so
 *  TMOD 2 loses wake-ups and the real 2^32 is ample).
 *
 *  What it checks (assertions, a monitor process for I1/I3, and Spin's invalid-end-state search):
 *    - every slice of every publication runs exactly once and on the right thread (`ran`, `owner`); the outer
 *      publication retires (s: 1 -> 0) only after all T contributions finished (`fin`);
 *    - `is_complete(g)` never answers true while a slice of g is unfinished; a T2n fork returns complete;
 *    - nobody writes the fork state (T2 claimer, T2n) while another thread is between reading it and retiring,
 *      and nobody else writes the epoch between T3's two steps;
 *    - every worker reads the fork state of the publication whose epoch it consumed (no aliasing for workers);
 *    - no deadlock and no lost wake-up: all dispatchers finish; idle workers may only block at `end` labels.
 *  Waits are blocking guards ("until a value I read changes"), which is exact for side-effect-free polls, so a
 *  hang shows up as an invalid end state. Sensitivity: removing T2's wait for an even epoch, reading `last` after
 *  retiring, dropping T2n's first wait, or dropping the sleeper's mood re-check each yields a counterexample.
 *
 *  What it does not prove: Spin interleaves with sequential consistency, so the C++ orders (acquire/release,
 *  relaxed) are argued separately in the review; `for_n_dynamic`'s cursors are one ghost with the fork state
 *  (their u8 arithmetic is brute-forced by cursor_sweep.cpp), so the model cannot see an enclosing
 *  `for_n_dynamic` on thread 0 lose its cursors to a nested one; sizes are small (T <= 3, 2 dispatchers,
 *  2-4 dispatches, nesting <= 4).
 *
 *  Configurations (spin -D...): default: inclusive pool, T = 3 (the dispatching thread is contributor 0, plus
 *  2 workers), dispatcher 0 (controlling, K dispatches) and dispatcher 1 (racing, K1 dispatches).
 *  -DEXCLUSIVE: T workers, thread 0 forks (T2n). -DSLEEP_MODE, -DTERMINATE as above.
 *  Mutations that reintroduce the bugs the review found in an earlier flat.hpp (test/model.cmake expects each
 *  to find its counterexample, proving the model can fail):
 *    -DMUTATE_NESTED_ALIAS -DEXCLUSIVE -DNEST=4 -DDEPTH=1: T2n no longer skips outer; the 4th fork in one slice
 *        gets generation == outer and its join waits for itself;
 *    -DMUTATE_PENDING -DSTALE_REJOIN -DEMOD=4: slice 0 taken by comparing `pending` alone: a second, stale
 *        `unsafe_join` runs another dispatcher's slice 0;
 *    -DMUTATE_SLEEP_RACE -DSLEEP_MODE: sleep(0) without a claim while another thread's dispatch is in flight:
 *        that dispatch read mood == spin, the workers go to sleep after it published: hang;
 *    -DMUTATE_NAP_LOST_WAKE -DSLEEP_MODE: nap() after sleep(0) stores its mood without waking the kernel
 *        sleepers, and the next publication's exchange sees nap, not sleep, so it wakes nobody: hang (the bug
 *        CI hit in hot_path.dispatches_make_no_heap_allocations);
 *    -DMUTATE_TERMINATE_OPEN -DTERMINATE -DTERMINATE_RACE: T4 reopens the claim, so a dispatch that read
 *        `threads` before terminate claims the unspawned pool after it: hang.
 *  Without the mutations the same shapes must pass: T2n skips the generation equal to outer, slice 0 is taken by
 *  its own dispatcher with one CAS, sleep() claims the pool (transition M) and is refused when it loses, and an
 *  unspawned pool stays claimed (I6).
 */

#ifndef T
#define T 3 /* contributions per dispatch */
#endif
#ifndef EMOD
#define EMOD 8 /* epoch modulus: a 3-bit index_t */
#endif
#ifndef TMOD
#define TMOD 4 /* futex ticket modulus; a stale reader lags by up to 2 (TMOD 2 loses a wake-up) */
#endif
#ifndef K
#define K 2 /* dispatch attempts of the controlling dispatcher */
#endif
#ifndef K1
#define K1 K /* dispatch attempts of the racing dispatcher */
#endif
#ifndef NEST
#define NEST 2 /* T2n forks thread 0 may make inside one outer slice */
#endif
#ifndef DEPTH
#define DEPTH 2 /* and how deep */
#endif
#define MAXPUB ((K + K1) * (NEST + 1) + 1)

#define SPIN_K 0
#define SLEEP_K 1
#define DIE_K 2
#define NAP_K 3 /* to the protocol, nap is spinning with another micro-wait */

#ifdef EXCLUSIVE
#define WORKER0 1 /* thread 0 is a worker */
#else
#define WORKER0 0 /* thread 0 is whoever dispatched */
#endif

/* The pool's shared words. */
byte e;          /* epoch */
byte outer;      /* generation of the outermost dispatch in flight */
byte s;          /* threads_to_sync */
byte pending;    /* inclusive: generation whose slice 0 has not run */
byte pending_by; /* FIX_PENDING: which dispatcher owns `pending` */
byte mood;
byte wake;       /* futex ticket */
byte asleep;     /* futex queue: bit t set while worker t sleeps in FUTEX_WAIT */
byte threads = T;

/* Ghosts: identities the C++ code does not store, only checked here. */
byte fs;                 /* the publication the fork state (trampoline, context, cursors) belongs to */
byte epoch_pub;          /* the publication the current epoch value announces (0: none) */
byte outer_pub;          /* the publication `outer` names */
byte npub;               /* publications so far; ids 1.. */
byte owner[MAXPUB];      /* dispatcher that published it (255: thread 0's T2n) */
byte ran[MAXPUB * T];    /* slice runs per publication and thread */
byte fin[MAXPUB];        /* finished contributions per publication */
byte nreading;           /* threads between reading the fork state and retiring */
bool gap;                /* a retirer sits between T3's two steps */
byte exited;             /* workers that left on `die` */
bool done1;              /* dispatcher 1 has finished (the "between dispatches" of T4's contract) */

/* I1: s = 0 => nobody reads the fork state.  I3: e odd => a dispatch is claimed or a retirer is in T3's gap;
 * e even => the last publication is complete. */
#define INVARIANT ((s != 0 || nreading == 0) && \
                   (e % 2 == 0 || s != 0 || gap) && \
                   (e % 2 == 1 || nreading == 0) && \
                   (e % 2 == 1 || s != 0 || outer_pub == 0 || fin[outer_pub] == T))
active proctype monitor() {
end_monitor:
    atomic { !INVARIANT -> assert(false) }
}

/* `wake_`: the publisher reads mood (relaxed); if not spin, exchanges it to spin, and if the exchange saw sleep,
 * increments the ticket and FUTEX_WAKEs every sleeper. */
inline wake_() {
    if
    :: mood != SPIN_K ->
        if
        :: atomic { mood == SLEEP_K -> mood = SPIN_K };
            wake = (wake + 1) % TMOD;
            asleep = 0
        :: atomic { mood != SLEEP_K -> mood = SPIN_K }
        fi
    :: else
    fi
}

/* T3 for publication `cur`: fetch_sub; the one that takes s from 1 to 0 loads e and stores e+1. */
inline retire_(cur, ev) {
    if
    :: atomic { s > 1 -> nreading--; fin[cur]++; s--; cur = 0 }
    :: atomic { s == 1 -> nreading--; fin[cur]++; s = 0; cur = 0; gap = true;
                assert(fin[outer_pub] == T) } /* every slice of the outer publication finished */
        ev = e;
        assert(ev % 2 == 1);
        atomic { assert(e == ev); /* nobody else wrote epoch in T3's gap */
                 e = (ev + 1) % EMOD; epoch_pub = 0; gap = false; ev = 0 }
    fi
}

/* `while (!is_complete(g)) backoff`, then check the answer; blocks until e or outer moves after a miss. */
inline join_until_complete_(g, pub, ev, ov) {
    do
    :: ev = e;
        if
        :: ev % 2 == 0 -> ev = 0; break
        :: else ->
            ov = outer;
            if
            :: ov != g -> ev = 0; ov = 0; break
            :: else -> atomic { (e != ev || outer != ov) -> ev = 0; ov = 0 }
            fi
        fi
    od;
    assert(pub == 0 || fin[pub] == T) /* complete means every slice of it finished */
}

/* T2 after a won claim: returns the generation in g and the publication in p. */
inline publish_(me, g, p, ev) {
    atomic { (e % 2 == 0) -> ev = e }; /* wait_for_even_epoch_ (immediate unless a retirer is in the gap) */
    atomic {
        assert(nreading == 0); /* nobody reads the fork state we are about to write */
        npub++;
        assert(npub < MAXPUB);
        p = npub;
        fs = p;
        owner[p] = me;
        g = (ev + 1) % EMOD;
        ev = 0
    };
    atomic { outer = g; outer_pub = p };
#ifndef EXCLUSIVE
    atomic { pending = g; pending_by = me };
#endif
    atomic { e = g; epoch_pub = p }; /* release */
    wake_()
}

#ifndef EXCLUSIVE
/* `unsafe_join(g)` on an inclusive pool, by dispatcher `me`; `pub` is the publication the caller believes g is. */
inline unsafe_join_(me, g, pub, q, ev, ov) {
    if
#ifndef MUTATE_PENDING
    :: atomic { pending == g && pending_by == me -> pending = 0 }; /* dispatcher check, then one CAS */
#else
    :: pending == g ->
        pending = 0;
#endif
        atomic {
            q = fs; /* dispatch_.trampoline / context */
            nreading++;
            assert(owner[q] == me); /* slice 0 runs on the thread that dispatched it */
            ran[q * T]++;
            assert(ran[q * T] == 1)
        };
        retire_(q, ev)
    :: else
    fi;
    join_until_complete_(g, pub, ev, ov)
}
#endif

proctype worker(byte t; byte spawn_epoch) {
    byte last, ev, ev2, ticket, mv, q, cur;
#ifdef EXCLUSIVE
    byte nn, depth, np, g, ov;
    byte gstack[DEPTH + 1];
    byte pstack[DEPTH + 1];
#endif
    last = spawn_epoch; /* captured by `spawn` before the thread starts */
end_idle:
    do
    :: atomic { ev = e; if :: ev != last && ev % 2 == 1 -> q = epoch_pub :: else fi }; /* acquire */
        if
        :: ev != last && ev % 2 == 1 ->
#ifdef TERMINATE
            if
            :: atomic { mood == DIE_K -> exited++ }; goto end_exit
            :: else
            fi;
#endif
            atomic {
                nreading++;
                assert(fs == q); /* the fork state is the one this epoch announced */
                cur = fs;
                ran[cur * T + t]++;
                assert(ran[cur * T + t] == 1);
                q = 0;
                ev = 0
            };
#ifdef EXCLUSIVE
            if
            :: t == 0 -> /* thread 0 forks from inside its slice (T2n), at depth */
                do
                :: nn < NEST && depth < DEPTH ->
                    nn++;
                    assert(s >= 1); /* T1 loses: thread 0 still owes its contribution */
                    (s == 1);       /* wait_for_thread_zero_alone_ */
                    atomic {
                        assert(nreading == 1); /* only thread 0 itself */
                        npub++;
                        assert(npub < MAXPUB);
                        np = npub;
                        fs = np;
                        owner[np] = 255
                    };
                    s = T;
                    ev2 = e;
                    g = (ev2 + 2) % EMOD;
#ifndef MUTATE_NESTED_ALIAS
                    if
                    :: g == outer -> g = (g + 2) % EMOD /* T2n skips the generation equal to outer */
                    :: else
                    fi;
#endif
                    atomic { e = g; epoch_pub = np; ev2 = 0 };
                    wake_();
                    atomic {
                        depth++;
                        gstack[depth] = g;
                        pstack[depth] = np;
                        g = 0;
                        np = 0;
                        ran[pstack[depth] * T]++;
                        assert(ran[pstack[depth] * T] == 1)
                    }
                :: depth > 0 -> /* slice 0 of the innermost fork ends */
                    fin[pstack[depth]]++;
                    (s == 1);
                    assert(fin[pstack[depth]] == T); /* T2n returns complete */
                    join_until_complete_(gstack[depth], pstack[depth], ev2, ov); /* its guard's join */
                    atomic { gstack[depth] = 0; pstack[depth] = 0; depth-- }
                :: depth == 0 -> nn = 0; break
                od
            :: else
            fi;
#endif
            last = e;
            retire_(cur, ev2)
        :: else ->
            mv = mood;
            if
            :: mv == SLEEP_K ->
                ticket = wake; /* acquire */
                ev2 = e;       /* acquire */
                if
                :: (ev2 != last && ev2 % 2 == 1) || mood != SLEEP_K -> atomic { ev = 0; ev2 = 0; mv = 0; ticket = 0 }
                :: else ->
                    atomic {
                        if
                        :: wake == ticket -> asleep = asleep | (1 << t)
                        :: else
                        fi;
                        ev = 0; ev2 = 0; mv = 0; ticket = 0
                    };
end_futex:          ((asleep & (1 << t)) == 0)
                fi
            :: else ->
end_spin:       atomic { (e != ev || mood != mv) -> ev = 0; mv = 0 }
            fi
        fi
    od;
end_exit:
    skip
}

/* Transition M: sleep() or nap() claims the pool like T1 and is refused (no change) when it loses; it exchanges
 * the mood and, leaving sleep, bumps the ticket and FUTEX_WAKEs every sleeper, who then wait the new way. */
inline change_mood_(target) {
    if
    :: atomic { s == 0 -> s = T };
        atomic { prev_ = mood; mood = target };
#ifndef MUTATE_NAP_LOST_WAKE
        if
        :: prev_ == SLEEP_K -> wake = (wake + 1) % TMOD; asleep = 0
        :: else
        fi;
#endif
        atomic { s = 0; prev_ = 0 }
    :: else -> skip
    fi
}

proctype dispatcher(byte me) {
    byte k, g, p, q, ev, ov, first_g, first_p;
    bool won;
    byte prev_;
    do
    :: (me == 0 && k < K) || (me == 1 && k < K1) ->
        k++;
#ifdef SLEEP_MODE
        if
        :: me == 0 -> /* only the controlling thread calls sleep(0) */
#ifndef MUTATE_SLEEP_RACE
            change_mood_(SLEEP_K);
            if /* and maybe nap() right after, while the workers may already block in the kernel */
            :: change_mood_(NAP_K)
            :: skip
            fi
#else
            mood = SLEEP_K /* the old contract: nothing stops a racing dispatch from being in flight */
#endif
        :: true
        fi;
#endif
        if
        :: threads == 0 -> skip /* not_spawned */
        :: else ->
            if
            :: atomic { s == 0 -> s = T }; /* T1 won */
                publish_(me, g, p, ev);
#ifdef STALE_REJOIN
                if
                :: first_g == 0 -> first_g = g; first_p = p
                :: else
                fi;
#endif
#ifdef EXCLUSIVE
                join_until_complete_(g, p, ev, ov);
#else
                unsafe_join_(me, g, p, q, ev, ov);
#endif
                atomic { g = 0; p = 0 }
            :: else -> skip /* T1 lost: refused with `contended`, runs nothing, token 0 */
            fi
        fi
    :: else -> break
    od;
#ifdef STALE_REJOIN
    /* A second `unsafe_join` of this dispatcher's first token: documented as returning at once. */
    if
    :: first_g != 0 -> unsafe_join_(me, first_g, 0, q, ev, ov)
    :: else
    fi;
#endif
#ifdef TERMINATE
    if
    :: me == 0 -> /* T4 by the controlling thread */
#ifndef TERMINATE_RACE
        (done1);
#endif
        atomic { s == 0 -> s = T };
        atomic { (e % 2 == 0) -> ev = e };
        mood = DIE_K;
        atomic { e = (ev + 1) % EMOD; epoch_pub = 0 };
        wake = (wake + 1) % TMOD;
        asleep = 0;
        (exited == T - 1 + WORKER0);
        e = (ev + 2) % EMOD;
        mood = SPIN_K;
        threads = 0
#ifdef MUTATE_TERMINATE_OPEN
        ; s = 0 /* the old T4 reopened the claim of an unspawned pool */
#endif
        /* I6: `s` stays claimed while the pool is unspawned, so a late claimer is refused */
    :: else -> done1 = true
    fi;
#endif
    skip
}

init {
    byte t;
    atomic {
        if
        :: e = 0
        :: e = 2
        :: e = EMOD - 2
        fi;
        t = 1 - WORKER0;
        do
        :: t < T -> run worker(t, e); t++
        :: else -> break
        od;
        run dispatcher(0);
        run dispatcher(1)
    }
}
