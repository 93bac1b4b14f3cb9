/**
 *  @file   c/gomp/worksharing.cpp
 *  @brief  Worksharing constructs: loops (every schedule, `ordered`, doacross), `sections`, `single`.
 *
 *  The schedules and the slot protocol are described in `runtime.cpp` (design) and `runtime.hpp` (`ws_slot_t`).
 *  Each thread computes a loop's shape from the arguments GCC passes it (every member gets the same ones), so the
 *  slot holds only what members share: the chunk cursor, the `ordered` turn, `copyprivate`'s pointer and its
 *  readers, task-reduction copies and scratch memory. A loop is handed out in *logical* iterations `[0, n)`;
 *  `to_user` maps a chunk back to the iteration variable, and the last chunk ends at the loop's own bound, so no end
 *  value can overflow its type.
 */
#include "runtime.hpp"

#include <bit>     // `std::popcount`
#include <cstdarg> // `va_list`
#include <cstdlib> // `std::calloc`
#include <cstring> // `std::memset`
#include <new>     // `std::nothrow`

namespace forkunion::gomp {
namespace {

// ---- Slots ----

constexpr std::uint64_t free_k = 0, initializing_k = 1, ready_k = 2, diverted_k = 3;

/**  A slot's `copy` once the winner of a cancelled region's `single copyprivate` withdrew its data (never the
 *   address of data: GCC's lives on the winner's stack, aligned). */
constexpr std::uintptr_t withdrawn_copy_k = 1;

ws_slot_t &slot_of(team_t &team, std::uint64_t id) noexcept {
    return team.slots[id % ws_slots_k];
}

/**  How a member entered a construct's slot. */
enum class entry_t { first, follower, cancelled, retry };

// ---- Overflow slots: an open-addressing table keyed by construct number, under the team's overflow lock ----

using overflow_table_t = team_t::overflow_line_t::table_t;

std::uint64_t overflow_home(overflow_table_t const &table, std::uint64_t id) noexcept {
    // Fibonacci hashing: ids are consecutive. The mask is 2^k - 1, so the top k bits of the product.
    return (id * 0x9e3779b97f4a7c15ull) >> (64 - std::popcount(table.mask));
}

/**  Stores an entry so that a `fork()` snapshot taken after it also holds every store before it. */
void overflow_store(ws_slot_t *&entry, ws_slot_t *slot) noexcept {
    __atomic_store_n(&entry, slot, __ATOMIC_RELEASE);
}

ws_slot_t *overflow_find(team_t &team, std::uint64_t id) noexcept {
    overflow_table_t *const table = team.overflow.table.load(std::memory_order_relaxed);
    if (!team.overflow.used.load(std::memory_order_relaxed)) return nullptr;
    for (std::uint64_t index = overflow_home(*table, id);; index = (index + 1) & table->mask) {
        ws_slot_t *const slot = table->entries()[index];
        if (!slot || slot->control.diverted == id) return slot;
    }
}

void overflow_place(overflow_table_t &table, ws_slot_t *slot) noexcept {
    std::uint64_t index = overflow_home(table, slot->control.diverted);
    while (table.entries()[index]) index = (index + 1) & table.mask;
    overflow_store(table.entries()[index], slot);
}

/**  Adds `slot`; the table stays at most half full, doubling (16 entries at first) when it would not. */
void overflow_insert(team_t &team, ws_slot_t *slot) noexcept {
    team_t::overflow_line_t &line = team.overflow;
    overflow_table_t *table = line.table.load(std::memory_order_relaxed);
    std::uint64_t const used = line.used.load(std::memory_order_relaxed);
    if (!table || 2 * (used + 1) > table->mask + 1) {
        std::uint64_t const entries = table ? 2 * (table->mask + 1) : 16;
        auto *const grown =
            static_cast<overflow_table_t *>(std::calloc(1, sizeof(overflow_table_t) + entries * sizeof(ws_slot_t *)));
        if (!grown) refuse("a worksharing construct's overflow slot", "out of memory");
        grown->mask = entries - 1;
        if (table)
            for (std::uint64_t index = 0; index <= table->mask; ++index)
                if (table->entries()[index]) overflow_place(*grown, table->entries()[index]);
        // Release: a snapshot with the new table has it filled.
        line.table.store(grown, std::memory_order_release);
        std::free(table);
        table = grown;
    }
    line.used.store(used + 1, std::memory_order_relaxed);
    overflow_place(*table, slot); // a release store, after the count
}

/**  Removes `slot` (present), moving back over it the entries a hole there would hide from their lookups (linear
 *   probing), and clearing the last position one came from; until then that entry is present twice. */
void overflow_erase(team_t &team, ws_slot_t *slot) noexcept {
    overflow_table_t &table = *team.overflow.table.load(std::memory_order_relaxed);
    std::uint64_t hole = overflow_home(table, slot->control.diverted);
    while (table.entries()[hole] != slot) hole = (hole + 1) & table.mask;
    for (std::uint64_t index = (hole + 1) & table.mask; table.entries()[index]; index = (index + 1) & table.mask) {
        std::uint64_t const home = overflow_home(table, table.entries()[index]->control.diverted);
        // The entry may fill the hole unless its home lies cyclically in `(hole, index]`.
        bool const stays = hole <= index ? (home > hole && home <= index) : (home > hole || home <= index);
        if (stays) continue;
        overflow_store(table.entries()[hole], table.entries()[index]);
        hole = index;
    }
    overflow_store(table.entries()[hole], nullptr);
    team.overflow.used.fetch_sub(1, std::memory_order_relaxed);
}

/**  Holds a team's overflow lock for a scope. */
struct overflow_lock_t {
    explicit overflow_lock_t(team_t &team) noexcept : word(team.overflow.lock) { mutex_lock(word); }
    ~overflow_lock_t() { mutex_unlock(word); }
    overflow_lock_t(overflow_lock_t const &) = delete;
    overflow_lock_t &operator=(overflow_lock_t const &) = delete;
    std::atomic<std::uint32_t> &word;
};

/**
 *  Enters construct `id` through an overflow slot (see `ws_slot_t`), given the ring slot's `seen` state: held by an
 *  earlier construct (`id` is, or now becomes, diverted) or past `id` (it was diverted). `retry` when the ring slot
 *  changed meanwhile.
 */
template <typename init_fn_type_>
[[gnu::noinline]] entry_t overflow_enter(team_t &team, ws_slot_t &ring, std::uint64_t seen, std::uint64_t id,
                                         ws_slot_t *&entered, init_fn_type_ &&init) noexcept {
    overflow_lock_t const lock(team);
    if (ring.control.state.load(std::memory_order_acquire) != seen) return entry_t::retry;
    if ((seen >> 2) < id) {
        // Races with the holder's last leaver, which frees a `ready` slot by compare-and-swap outside the lock.
        if ((seen & 3) == ready_k &&
            !ring.control.state.compare_exchange_strong(seen, (seen & ~std::uint64_t(3)) | diverted_k,
                                                        std::memory_order_acq_rel, std::memory_order_acquire))
            return entry_t::retry;
        if (ring.control.diverted < id) ring.control.diverted = id;
    }
    if (ws_slot_t *const found = overflow_find(team, id)) return entered = found, entry_t::follower;
    // The first member: no member has left `id`, so no slot for it was made and freed before.
    ws_slot_t *const slot = new (std::nothrow) ws_slot_t;
    if (!slot) refuse("a worksharing construct's overflow slot", "out of memory");
    slot->control.overflow = true;
    slot->control.diverted = id;
    init(*slot);
    overflow_insert(team, slot); // published to the other members by the lock
    entered = slot;
    return entry_t::first;
}

/**
 *  Enters construct `id`: the first member to arrive claims its slot (`entered`), runs `init` on it and publishes
 *  it; the others wait for that publication. Returns whether this member was the first, or `cancelled` when it had
 *  to wait and the region is cancelled: the slot may be held for good by a construct that members which left for
 *  the region's end never leave, so this member does not enter it (and must not leave it).
 */
template <typename init_fn_type_>
entry_t slot_enter(team_t &team, std::uint64_t id, ws_slot_t *&entered, init_fn_type_ &&init) noexcept {
    ws_slot_t &slot = slot_of(team, id);
    for (;;) {
        // Acquire pairs with the release of `ready` (the shared fields are set) or of `free` (everyone left).
        std::uint64_t state = slot.control.state.load(std::memory_order_acquire);
        std::uint64_t const holder = state >> 2, phase = state & 3;
        if (holder == id && phase >= ready_k) return entered = &slot, entry_t::follower;
        if (phase == free_k && holder <= id) {
            if (slot.control.state.compare_exchange_strong(state, id * 4 + initializing_k, std::memory_order_acq_rel,
                                                           std::memory_order_acquire)) {
                init(slot);
                // Pairs with the acquire loads above: the other members see the initialized fields.
                slot.control.state.store(id * 4 + ready_k, std::memory_order_release);
                team_notify(team);
                entered = &slot;
                return entry_t::first;
            }
            continue;
        }
        // Held by an earlier construct that is set up, or moved past `id` (diverted): an overflow slot. A cancelled
        // region's member instead waits (and gives up) as below, so it never makes a slot the others never leave.
        if (((holder < id && phase >= ready_k) || holder > id) && !region_cancelled(team)) {
            entry_t const entry = overflow_enter(team, slot, state, id, entered, init);
            if (entry != entry_t::retry) return entry;
            continue;
        }
        // Initializing, or the region is cancelled: wait for a change.
        if (!team_wait_unless_cancelled(
                team, [&]() noexcept { return slot.control.state.load(std::memory_order_acquire) != state; }))
            return entry_t::cancelled;
    }
}

/**  Leaves construct `id` in `slot`. The last member frees a ring slot for the next construct of its residue that
 *   was not diverted, and an overflow slot for good. */
void slot_leave(team_t &team, ws_slot_t &slot, std::uint64_t id) noexcept {
    // Acq_rel: the last leaver sees every member's use of the slot before it frees it.
    if (slot.control.left.fetch_add(1, std::memory_order_acq_rel) + 1 != team.header.size) return;
    if (slot.shared.memory_owned) std::free(slot.shared.memory);
    slot.shared.memory = nullptr;
    slot.shared.memory_owned = false;
    if (slot.control.overflow) [[unlikely]] {
        {
            overflow_lock_t const lock(team);
            overflow_erase(team, &slot);
        }
        delete &slot;
        return;
    }
    slot.control.left.store(0, std::memory_order_relaxed); // ordered before the next user by the release below
    // Release: the next user sees every member's use of the slot.
    std::uint64_t held = id * 4 + ready_k;
    if (!slot.control.state.compare_exchange_strong(held, (id + ws_slots_k) * 4 + free_k, std::memory_order_release,
                                                    std::memory_order_relaxed)) {
        // Diverted: the constructs up to `diverted` run in overflow slots, so the ring serves the one after.
        overflow_lock_t const lock(team);
        slot.control.state.store((slot.control.diverted + ws_slots_k) * 4 + free_k, std::memory_order_release);
    }
    team_notify(team);
}

/**  Where a doacross loop's progress words start in its slot's memory: after `memory_bytes` of the caller's. */
constexpr std::uint64_t progress_offset(std::uint64_t memory_bytes) noexcept {
    return (memory_bytes + line_k - 1) / line_k * line_k;
}

/**  Gives the slot `bytes` of zeroed team-shared memory, as `GOMP_loop_start`'s `mem` asks. */
void slot_memory(ws_slot_t &slot, std::uint64_t bytes) noexcept {
    if (bytes <= sizeof(slot.shared.inline_memory)) {
        std::memset(slot.shared.inline_memory, 0, sizeof(slot.shared.inline_memory));
        slot.shared.memory = slot.shared.inline_memory;
        return;
    }
    slot.shared.memory = std::calloc(1, static_cast<std::size_t>(bytes));
    if (!slot.shared.memory) refuse("a worksharing construct's shared memory", "out of memory");
    slot.shared.memory_owned = true;
}

// ---- Stealing cursors ----
//
// A cursor is `tag << 40 | offset`: the tag is the construct number modulo 2^24; chunk `offset` of the owner's block
// is the claimant's when `offset` is below the block's count. Outside a construct a cursor is closed: its offset is
// 2^39 or more, above every block's count, so it reads as dry under any tag. For thread `t` and the cursor row
// `id % ws_slots_k` of construct `id`:
//   S1. Only `t` stores to its cursor: `id`'s tag when it publishes its block, a closed value when it leaves. The
//       others only increment it, and only after a load showed their own construct's tag with chunks left.
//   S2. `t` publishes its block for `id` only once every member has left construct `id - ws_slots_k` (the members'
//       departure words, release, read with acquire): every increment made in an earlier construct of the row then
//       precedes the tag in the cursor's modification order, so none consumes a chunk of `id`.
//   S3. A thread steals in `id` only while `id - floor < 2^24`, where `floor` is its `ws_floor` (every member has
//       left every construct below it): an open cursor then carries the tag of a construct in `[floor, id]` (one
//       above `id` would need this thread to have left `id`, by S2), distinct modulo 2^24 from `id`'s unless it is
//       `id`'s.
// A member that cannot see S2 hold (a member is `ws_slots_k` constructs behind) drains its block alone and leaves
// it unpublished. Owners always drain their own blocks, so no chunk is lost, and S1-S3 make none run twice.

constexpr unsigned offset_bits_k = 40;
/**  Chunk counts (plus one overshoot per thread) must stay below the offset field's closed range. */
constexpr std::uint64_t max_stealing_chunks_k = std::uint64_t(1) << (offset_bits_k - 1);
constexpr std::uint64_t closed_cursor_k = max_stealing_chunks_k;
/**  S3: constructs a thread may run ahead of `ws_floor` and still steal. */
constexpr std::uint64_t steal_window_k = std::uint64_t(1) << (64 - offset_bits_k);

std::atomic<std::uint64_t> &departure_of(team_t &team, unsigned thread) noexcept {
    return team.header.cursors[ws_slots_k * team.header.capacity + thread].value;
}

std::uint64_t chunks_of(loop_shape_t const &shape) noexcept {
    if (shape.chunk == 1) return shape.n; // the usual `schedule(dynamic)`: no division
    return shape.n / shape.chunk + (shape.n % shape.chunk != 0);
}

/**  Raises `task.ws_floor` to the lowest departure word of the other members (S2, S3): acquire loads, no waiting. */
[[gnu::noinline]] void raise_floor(task_t &task, team_t &team) noexcept {
    std::uint64_t floor = ~std::uint64_t(0);
    for (unsigned thread = 0; thread != team.header.size; ++thread) {
        if (thread == task.thread_num) continue;
        // Acquire pairs with the release in `loop_leave`: that member's increments of earlier cursors are visible.
        std::uint64_t const departed = departure_of(team, thread).load(std::memory_order_acquire);
        if (departed < floor) floor = departed;
    }
    if (floor > task.ws_floor) task.ws_floor = floor;
}

// ---- Claiming chunks ----

/**  The exact guided or dynamic claim, one compare-and-swap per attempt: for spaces near 2^64. */
[[gnu::noinline]] bool claim_exact_slow(std::atomic<std::uint64_t> &cursor, loop_shape_t const &shape, unsigned size,
                                        bool guided, std::uint64_t &first, std::uint64_t &last) noexcept {
    std::uint64_t begin = cursor.load(std::memory_order_relaxed);
    for (;;) {
        if (begin >= shape.n) return false;
        std::uint64_t const left = shape.n - begin;
        std::uint64_t take = guided ? left / size + (left % size != 0) : shape.chunk;
        if (take < shape.chunk) take = shape.chunk;
        if (take > left) take = left;
        // Relaxed: the claim only needs atomicity; results are published by the construct's barrier.
        if (cursor.compare_exchange_weak(begin, begin + take, std::memory_order_relaxed, std::memory_order_relaxed)) {
            first = begin, last = begin + take;
            return true;
        }
    }
}

bool claim_shared(task_t &task, std::uint64_t &first, std::uint64_t &last) noexcept {
    team_t &team = *task.team;
    loop_shape_t const &shape = task.ws.loop;
    std::atomic<std::uint64_t> &cursor = task.ws.slot->cursor.value;
    bool const guided = shape.kind == loop_kind_t::guided_k;
    if (!task.ws.additive) [[unlikely]]
        return claim_exact_slow(cursor, shape, team.header.size, guided, first, last);
    std::uint64_t take = shape.chunk;
    if (guided) {
        // The iterations left, read a moment ago: a racing claim can only make this chunk a little too large.
        std::uint64_t const seen = cursor.load(std::memory_order_relaxed);
        if (seen >= shape.n) return false;
        std::uint64_t const left = shape.n - seen, size = team.header.size;
        std::uint64_t const share = left / size + (left % size != 0);
        if (share > take) take = share;
    }
    // The cursor never wraps (`additive_claims`).
    std::uint64_t const begin = cursor.fetch_add(take, std::memory_order_relaxed);
    if (begin >= shape.n) return false;
    first = begin;
    last = shape.n - begin < take ? shape.n : begin + take;
    return true;
}

bool claim_static(task_t &task, std::uint64_t &first, std::uint64_t &last) noexcept {
    ws_state_t &ws = task.ws;
    loop_shape_t const &shape = ws.loop;
    std::uint64_t const size = task.team_size, thread = task.thread_num;
    if (shape.chunk == 0) {
        if (ws.next != thread) return false; // the one block was handed out
        ws.next = ~std::uint64_t(0);
        slice_t<std::uint64_t> const block = static_slice<std::uint64_t>(shape.n, size, thread);
        if (block.count == 0) return false;
        first = block.first, last = block.first + block.count;
        return true;
    }
    std::uint64_t const chunk = ws.next;
    if (chunk >= chunks_of(shape)) return false;
    ws.next = chunk + size < chunk ? ~std::uint64_t(0) : chunk + size;
    first = chunk * shape.chunk;
    last = shape.n - first < shape.chunk ? shape.n : first + shape.chunk;
    return true;
}

[[gnu::always_inline]] inline bool claim_stealing(task_t &task, std::uint64_t &first, std::uint64_t &last) noexcept {
    ws_state_t &ws = task.ws;
    loop_shape_t const &shape = ws.loop;
    for (;;) {
        unsigned const victim = ws.victim;
        bool const long_block = victim < ws.remainder;
        std::uint64_t const count = ws.quotient + long_block;
        std::uint64_t offset = 0;
        bool taken = false;
        if (victim == task.thread_num && !ws.published) {
            taken = ws.next < count; // an unpublished block is this thread's alone
            offset = ws.next++;
        } else {
            std::atomic<std::uint64_t> &cursor = ws.row[victim].value;
            // A load first: thieves sweeping dry cursors share the lines instead of writing them. The xor is below
            // `count` only for this construct's tag with chunks left (a closed or other tag sets higher bits).
            if ((cursor.load(std::memory_order_relaxed) ^ ws.tag) < count) {
                // Relaxed: atomicity alone makes every chunk unique; the construct's barrier publishes the results.
                offset = cursor.fetch_add(1, std::memory_order_relaxed) ^ ws.tag;
                taken = offset < count;
            }
        }
        if (taken) {
            std::uint64_t const chunk = victim * ws.quotient + (long_block ? victim : ws.remainder) + offset;
            first = chunk * shape.chunk;
            last = shape.n - first < shape.chunk ? shape.n : first + shape.chunk;
            // GCC's `lastprivate` code copies out on the thread whose last chunk ends the loop: the thread that
            // takes the final chunk takes no other after it (its own block is dry; the rest is drained by their
            // owners, who always finish their own blocks).
            if (last == shape.n) ws.victims_left = 0;
            return true;
        }
        // Dry, closed, or its owner has not published it for this construct (then it drains the block itself).
        if (ws.victims_left == 0) return false;
        --ws.victims_left;
        ws.victim = next_in_coprime_order<unsigned>(victim, ws.stride, task.team_size);
    }
}

/**  Waits for the `ordered` turn of the chunk this thread holds; false when the region was cancelled first (an
 *   earlier chunk's thread may have left for the region's end: the turn may never come). */
bool wait_for_turn(task_t &task) noexcept {
    ws_state_t &ws = task.ws;
    std::atomic<std::uint64_t> &turn = ws.slot->shared.ordered_turn;
    std::uint64_t const first = ws.first;
    // Acquire pairs with the release in `hand_on_turn`: the previous chunk's ordered regions happened before.
    return team_wait_unless_cancelled(*task.team,
                                      [&]() noexcept { return turn.load(std::memory_order_acquire) == first; });
}

/**  Once every earlier chunk has handed the turn on, hands it on past this thread's chunk (in a cancelled region
 *   the turn stays where it is: the chunks are no longer ordered). */
void hand_on_turn(task_t &task) noexcept {
    if (wait_for_turn(task)) task.ws.slot->shared.ordered_turn.store(task.ws.last, std::memory_order_release);
    task.ws.holds_chunk = false;
    team_notify(*task.team);
}

// ---- Doacross: one progress word per chunk, the flattened index of the last posted iteration, plus one ----

/**  Dimension `dim`'s count of the doacross loop in progress. */
std::uint64_t doacross_count(ws_state_t const &ws, unsigned dim) noexcept {
    return std::atomic_ref<std::uint64_t>(ws.doacross_count_table[dim]).load(std::memory_order_relaxed);
}

std::uint64_t flatten(ws_state_t const &ws, std::uint64_t const *vector) noexcept {
    std::uint64_t flat = 0;
    for (unsigned dim = 0; dim != ws.doacross_dims; ++dim) flat = flat * doacross_count(ws, dim) + vector[dim];
    return flat;
}

std::uint64_t progress_index(task_t const &task, std::uint64_t outer) noexcept {
    loop_shape_t const &shape = task.ws.loop;
    if (shape.kind != loop_kind_t::static_k || shape.chunk != 0) return outer / shape.chunk;
    // `schedule(static)`: one block per thread, so the index is the block's owner.
    std::uint64_t const size = task.team_size, quotient = shape.n / size, remainder = shape.n % size;
    std::uint64_t const long_blocks = remainder * (quotient + 1);
    return outer < long_blocks ? outer / (quotient + 1) : remainder + (outer - long_blocks) / quotient;
}

} // namespace

// ---- Loops ----

loop_shape_t signed_shape(long start, long end, long incr, long chunk, loop_kind_t kind, bool ordered) noexcept {
    loop_shape_t shape;
    auto const s = static_cast<std::uint64_t>(start), e = static_cast<std::uint64_t>(end);
    auto const i = static_cast<std::uint64_t>(incr);
    if (incr > 0 && start < end) shape.n = i == 1 ? e - s : (e - s - 1) / i + 1; // unit steps need no division
    if (incr < 0 && start > end) shape.n = (s - e - 1) / (0 - i) + 1;
    shape.start = s, shape.incr = i, shape.end = e;
    shape.kind = kind;
    shape.ordered = ordered;
    shape.chunk = chunk > 0 ? static_cast<std::uint64_t>(chunk) : (kind == loop_kind_t::static_k ? 0 : 1);
    return shape;
}

loop_shape_t unsigned_shape(bool up, unsigned long long start, unsigned long long end, unsigned long long incr,
                            unsigned long long chunk, loop_kind_t kind, bool ordered) noexcept {
    loop_shape_t shape;
    if (up && start < end) shape.n = incr == 1 ? end - start : (end - start - 1) / incr + 1;
    if (!up && start > end) shape.n = (start - end - 1) / (0 - incr) + 1;
    shape.start = start, shape.incr = incr, shape.end = end;
    shape.kind = kind;
    shape.ordered = ordered;
    shape.chunk = chunk > 0 ? chunk : (kind == loop_kind_t::static_k ? 0 : 1);
    return shape;
}

loop_kind_t runtime_kind(task_t const &task, bool monotonic, bool ordered, long &chunk) noexcept {
    int const sched = task.icv.run_sched;
    bool const icv_monotonic = (static_cast<unsigned>(sched) & sched_monotonic_k) != 0;
    chunk = task.icv.run_chunk;
    switch (sched & ~static_cast<int>(sched_monotonic_k)) {
    case sched_dynamic_k:
        return monotonic || icv_monotonic || ordered ? loop_kind_t::shared_k : loop_kind_t::stealing_k;
    case sched_guided_k:
        return loop_kind_t::guided_k;
    case sched_auto_k:
        chunk = 0;
        return loop_kind_t::static_k; // `auto`: the implementation's choice is static
    default:
        return loop_kind_t::static_k;
    }
}

namespace {
/**
 *  A construct entered after its region was cancelled, whose slot this thread could not get (`slot_enter`): it
 *  hands this thread nothing (`ws_cancelled`), through the shared-cursor path that checks for that (never the
 *  inlined stealing claim), and gives it what GCC's code writes to, private: scratch memory (freed at its end) and
 *  task-reduction copies. Doacross waits and posts find no progress words and return.
 */
[[gnu::noinline, gnu::cold]] void enter_cancelled(task_t &task, void **memory, std::uint64_t memory_bytes,
                                                  std::uintptr_t *reductions) noexcept {
    ws_state_t &ws = task.ws;
    ws.loop.kind = loop_kind_t::shared_k;
    ws.loop.ordered = false;
    ws.cancelled = ws.id;
    if (memory) {
        ws.solo_memory = std::calloc(1, memory_bytes ? static_cast<std::size_t>(memory_bytes) : 1);
        if (!ws.solo_memory) refuse("a worksharing construct's shared memory", "out of memory");
        *memory = ws.solo_memory;
    }
    if (reductions) enter_task_reductions(reductions, task.team_size, true);
}
} // namespace

void loop_enter(task_t &task, loop_shape_t const &requested, void **memory, std::uint64_t memory_bytes,
                std::uintptr_t *reductions) noexcept {
    ws_state_t &ws = task.ws;
    // Only what some schedule reads before setting it (see `ws_state_t`).
    ws.slot = nullptr;
    ws.plain_cursor = nullptr;
    ws.additive = false;
    ws.loop = requested;
    ws.id = task.ws_next++;
    ws.open = true;
    ws.next = 0;
    ws.holds_chunk = false;
    ws.pending = false;
    ws.solo_memory = nullptr;
    ws.doacross_dims = 0;
    ws.doacross_progress = nullptr;
    team_t *team = task.team;
    if (!team) {
        // A team of one runs the whole loop as one chunk; its scratch memory is its own.
        ws.pending = ws.loop.n != 0;
        if (memory) {
            ws.solo_memory = std::calloc(1, memory_bytes ? static_cast<std::size_t>(memory_bytes) : 1);
            if (!ws.solo_memory) refuse("a worksharing construct's shared memory", "out of memory");
            *memory = ws.solo_memory;
        }
        if (reductions) enter_task_reductions(reductions, 1, true);
        return;
    }
    loop_shape_t &shape = ws.loop;
    unsigned const size = team->header.size;
    std::uint64_t const chunks = shape.kind == loop_kind_t::stealing_k ? chunks_of(shape) : 0; // static: chunk 0
    // `ordered` needs the chunks in hand-out order; stealing cursors need chunk counts that fit their offsets.
    if (shape.kind == loop_kind_t::stealing_k &&
        (shape.ordered || chunks >= max_stealing_chunks_k - size || shape.n >= huge_space_k))
        shape.kind = loop_kind_t::shared_k;
    if (shape.kind == loop_kind_t::static_k) ws.next = task.thread_num;
    if ((shape.kind != loop_kind_t::static_k && shape.kind != loop_kind_t::stealing_k) || shape.ordered || memory ||
        shape.progress_words || reductions) {
        ws_slot_t *entered = nullptr;
        entry_t const entry = slot_enter(*team, ws.id, entered, [&](ws_slot_t &slot) noexcept {
            slot.cursor.value.store(0, std::memory_order_relaxed);
            slot.shared.ordered_turn.store(0, std::memory_order_relaxed);
            // One zeroed block: the caller's memory first, then a doacross loop's progress words.
            if (shape.progress_words)
                slot_memory(slot, progress_offset(memory_bytes) + shape.progress_words * sizeof(std::uint64_t));
            else if (memory)
                slot_memory(slot, memory_bytes);
            // The previous construct's copies, if any, were thread 0's: every member left it, so it entered it.
            slot.shared.task_blocks = nullptr;
            slot.shared.task_blocks_adopted = false;
            if (!reductions) return;
            // The first member makes the copies; the slot's publication hands them to the others.
            slot.shared.task_blocks = enter_task_reductions(reductions, size, task.thread_num == 0);
        });
        if (entry == entry_t::cancelled) [[unlikely]]
            return enter_cancelled(task, memory, memory_bytes, reductions);
        ws.slot = entered;
        ws.additive = additive_claims(shape, size);
        if (shape.kind == loop_kind_t::shared_k && !shape.ordered && ws.additive && !settings().cancellation)
            ws.plain_cursor = &ws.slot->cursor.value;
        if (reductions) {
            bool const combiner = task.thread_num == 0;
            if (entry == entry_t::follower)
                follow_task_reductions(reductions, ws.slot->shared.task_blocks, size, combiner);
            // Read only after the join (`reset_worksharing`); the slot's next construct, which every member has then
            // left, rewrites it.
            if (combiner) ws.slot->shared.task_blocks_adopted = true;
        }
        if (memory) *memory = ws.slot->shared.memory;
        if (shape.progress_words)
            ws.doacross_progress = reinterpret_cast<std::atomic<std::uint64_t> *>(
                static_cast<char *>(ws.slot->shared.memory) + progress_offset(memory_bytes));
    }
    if (shape.kind != loop_kind_t::stealing_k) return;
    unsigned const thread = task.thread_num;
    ws.quotient = chunks / size;
    ws.remainder = chunks % size;
    ws.row = team->header.cursors + (ws.id % ws_slots_k) * team->header.capacity;
    ws.tag = ws.id << offset_bits_k; // the construct number modulo 2^24, in the tag field
    if (ws.id >= task.ws_floor + ws_slots_k) raise_floor(task, *team);
    std::uint64_t const lead = ws.id > task.ws_floor ? ws.id - task.ws_floor : 0;
    ws.published = lead < ws_slots_k; // S2
    // Relaxed: a thief needs only the tag; the chunks' iterations come from the loop's arguments.
    if (ws.published) ws.row[thread].value.store(ws.tag, std::memory_order_relaxed);
    ws.victim = thread;
    ws.victims_left = lead < steal_window_k ? size - 1 : 0; // S3
    if (task.stride_team != size) [[unlikely]]
        task.steal_stride = coprime_stride<unsigned>(size, thread), task.stride_team = size;
    ws.stride = task.steal_stride;
}

std::uint64_t ws_mark(task_t const &task) noexcept {
    return task.ws.open ? task.ws.id : task.ws_next;
}

bool ws_cancelled(task_t const &task) noexcept {
    // The mark is the cancelled construct's number, which every member of a region counts alike.
    std::uint64_t const mark = ws_mark(task);
    if (task.ws.cancelled == mark) return true; // a team of one's, or this thread's alone (`enter_cancelled`)
    if (team_t const *team = task.team) return team->taskloop.cancelled_ws.load(std::memory_order_acquire) == mark;
    return false;
}

bool loop_next_logical(task_t &task, std::uint64_t &first, std::uint64_t &last) noexcept {
    // A cancelled loop hands out nothing more (checked only while cancel-var is true: one load of a setting).
    if (settings().cancellation && ws_cancelled(task)) [[unlikely]]
        return false;
    ws_state_t &ws = task.ws;
    if (!task.team) {
        if (!ws.pending) return false;
        ws.pending = false;
        first = 0, last = ws.loop.n;
        return true;
    }
    if (ws.holds_chunk) hand_on_turn(task);
    bool claimed = false;
    switch (ws.loop.kind) {
    case loop_kind_t::static_k:
        claimed = claim_static(task, first, last);
        break;
    case loop_kind_t::stealing_k:
        claimed = claim_stealing(task, first, last);
        break;
    default:
        claimed = claim_shared(task, first, last);
        break;
    }
    if (claimed && ws.loop.ordered) ws.first = first, ws.last = last, ws.holds_chunk = true;
    return claimed;
}

bool loop_leave(task_t &task, bool barrier) noexcept {
    ws_state_t &ws = task.ws;
    team_t *team = task.team;
    if (!ws.open) [[unlikely]] {
        // The end of a `schedule(static)` loop GCC ran without entering it here (as it does for one that contains a
        // `cancel for`): it takes the number an entered one would have had, which `ws_mark` gave it meanwhile, and
        // leaves it like one. Every member makes the same calls, so the numbers stay the team's.
        ws.id = task.ws_next++;
        ws.slot = nullptr;
        ws.holds_chunk = false;
        ws.loop.kind = loop_kind_t::static_k;
    }
    ws.open = false;
    if (!team || ws.solo_memory) [[unlikely]] { // a team of one's scratch, or a cancelled region's private one
        std::free(ws.solo_memory);
        ws.solo_memory = nullptr;
        if (!team) {
            if (barrier && tasks_incomplete()) [[unlikely]] // a team of one's barrier: its tasks complete here too
                finish_region_tasks(task.implicit);
            if (barrier) ws.cancelled = no_ws_mark_k; // as `team_barrier` clears a team's
            return false;
        }
    }
    if (ws.holds_chunk) hand_on_turn(task);
    if (ws.loop.kind == loop_kind_t::stealing_k && ws.published)
        // S1. Closed: this thread's block is dry, and a late thief must not mistake it for a later construct's.
        ws.row[task.thread_num].value.store(closed_cursor_k, std::memory_order_relaxed);
    // S2. Release pairs with the acquire in `raise_floor`: this thread's increments of every cursor in this and
    // earlier constructs (and its own cursor's close) precede any later publication in their rows.
    departure_of(*team, task.thread_num).store(ws.id + 1, std::memory_order_release);
    if (ws.slot) slot_leave(*team, *ws.slot, ws.id);
    ws.slot = nullptr;
    ws.plain_cursor = nullptr;
    ws.loop.kind = loop_kind_t::static_k;
    return barrier && team_barrier(*team);
}

void free_combined_blocks(team_t &team, void *blocks) noexcept {
    // Unless the region is cancelled, every member passed the barrier at the construct's end, which completes the
    // region's tasks, before thread 0 combined: nothing reads the copies any more.
    if (!region_cancelled(team)) return std::free(blocks);
    auto &line = team.taskloop;
    if (line.deferred_count == line.deferred_capacity) {
        std::uint32_t const capacity = line.deferred_capacity ? 2 * line.deferred_capacity : 8;
        void *const grown = std::realloc(line.deferred_blocks, capacity * sizeof(void *));
        if (!grown) refuse("a cancelled region's task-reduction copies", "out of memory");
        line.deferred_blocks = static_cast<void **>(grown), line.deferred_capacity = capacity;
    }
    line.deferred_blocks[line.deferred_count++] = blocks;
}

void sections_enter(task_t &task, std::uint64_t count, void **memory, std::uint64_t memory_bytes,
                    std::uintptr_t *reductions) noexcept {
    loop_shape_t shape;
    shape.n = count, shape.chunk = 1, shape.incr = 1, shape.end = count;
    shape.kind = loop_kind_t::shared_k;
    loop_enter(task, shape, memory, memory_bytes, reductions);
}

namespace {
/**  Frees what a slot that some member never left holds: its scratch memory, and the task-reduction copies of a
 *   construct thread 0 never entered (it left for the region's end first, or was turned away). */
void release_slot(ws_slot_t &slot) noexcept {
    if (slot.shared.memory_owned) std::free(slot.shared.memory);
    slot.shared.memory = nullptr;
    slot.shared.memory_owned = false;
    if (!slot.shared.task_blocks_adopted) std::free(slot.shared.task_blocks);
    slot.shared.task_blocks = nullptr;
    slot.shared.task_blocks_adopted = false;
    slot.control.left.store(0, std::memory_order_relaxed);
}
} // namespace

void forget_worksharing_in_child(team_t &team) noexcept {
    team.overflow.lock.store(0, std::memory_order_relaxed);
    for (ws_slot_t &slot : team.slots) {
        std::uint64_t const state = slot.control.state.load(std::memory_order_relaxed);
        if ((state & 3) == initializing_k) slot.control.state.store(state - initializing_k + free_k);
    }
}

void reset_worksharing(team_t &team, std::uint64_t next) noexcept {
    team.taskloop.cancelled_ws.store(no_ws_mark_k, std::memory_order_relaxed); // ordered by the next publication
    team_t::overflow_line_t &overflow = team.overflow;
    if (overflow.used.load(std::memory_order_relaxed)) {
        overflow_table_t &table = *overflow.table.load(std::memory_order_relaxed);
        for (std::uint64_t index = 0; index <= table.mask; ++index)
            if (ws_slot_t *const slot = table.entries()[index]) {
                table.entries()[index] = nullptr;
                release_slot(*slot);
                delete slot;
            }
    }
    overflow.used.store(0, std::memory_order_relaxed);
    for (std::uint64_t index = 0; index != ws_slots_k; ++index) {
        ws_slot_t &slot = team.slots[index];
        release_slot(slot);
        slot.control.diverted = 0;
        // Free for the first construct from `next` on that this slot serves.
        std::uint64_t const id = next + (index + ws_slots_k - next % ws_slots_k) % ws_slots_k;
        slot.control.state.store(id * 4 + free_k, std::memory_order_relaxed);
    }
    auto &line = team.taskloop;
    for (std::uint32_t index = 0; index != line.deferred_count; ++index) std::free(line.deferred_blocks[index]);
    std::free(line.deferred_blocks);
    line.deferred_blocks = nullptr, line.deferred_count = 0, line.deferred_capacity = 0;
    reset_cursor_table(team.header.cursors, team.header.capacity);
}

/**  A fresh table: every cursor closed (no construct may mistake one for its own), every departure word 0 (the
 *   threads have left nothing; a region's first `ws_slots_k` constructs need no departure, see `init_implicit`). */
void reset_cursor_table(cursor_line_t *cursors, std::size_t capacity) noexcept {
    for (std::size_t line = 0; line != ws_slots_k * capacity; ++line)
        cursors[line].value.store(closed_cursor_k, std::memory_order_relaxed);
    for (std::size_t thread = 0; thread != capacity; ++thread)
        cursors[ws_slots_k * capacity + thread].value.store(0, std::memory_order_relaxed);
}

} // namespace forkunion::gomp

// ---- Entry points ----

using namespace forkunion::gomp;

namespace {

task_t &implicit_task() noexcept {
    return *current_task().implicit;
}

/**  `loop_next_logical`, with a team's stealing claim inlined: the call a `schedule(dynamic)` loop makes per chunk. */
[[gnu::always_inline]] inline bool next_chunk(task_t &task, std::uint64_t &first, std::uint64_t &last) noexcept {
    // A stealing loop is never `ordered` (`loop_enter` gives those the shared cursor), so it holds no turn.
    if (task.team && task.ws.loop.kind == loop_kind_t::stealing_k) [[likely]]
        return claim_stealing(task, first, last);
    return loop_next_logical(task, first, last);
}

/**  The user's bounds of logical chunk `[first, last)`: `*iend` of the loop's last chunk is its bound. */
template <typename value_type_>
[[gnu::always_inline]] inline void user_bounds(loop_shape_t const &shape, std::uint64_t first, std::uint64_t last,
                                               value_type_ *istart, value_type_ *iend) noexcept {
    *istart = static_cast<value_type_>(shape.start + first * shape.incr);
    *iend = static_cast<value_type_>(last == shape.n ? shape.end : shape.start + last * shape.incr);
}

template <typename value_type_>
bool loop_next(task_t &task, value_type_ *istart, value_type_ *iend) noexcept {
    std::uint64_t first = 0, last = 0;
    if (!next_chunk(task, first, last)) return false;
    user_bounds(task.ws.loop, first, last, istart, iend);
    return true;
}

template <typename value_type_>
[[gnu::noinline]] bool loop_next_outlined(value_type_ *istart, value_type_ *iend) noexcept {
    return loop_next(implicit_task(), istart, iend);
}

/**
 *  What `GOMP_loop_*_next` does: the next chunk of the calling thread's loop, any schedule. `expected_` is the one
 *  the entry point names: a monotonic dynamic loop's claim is inlined ahead of everything else.
 */
template <loop_kind_t expected_, typename value_type_>
[[gnu::always_inline]] inline bool next_entry(value_type_ *istart, value_type_ *iend) noexcept {
    if constexpr (expected_ != loop_kind_t::shared_k) {
        return loop_next(implicit_task(), istart, iend);
    } else {
        // `schedule(monotonic: dynamic, 1)` claims once per iteration, every thread on one line: the fewer
        // instructions between two claims of a thread, the more often it claims again before the line leaves its
        // core. So this path holds the claim alone and leaves the rest to an outlined call.
        task_t *const current = current_task_pointer;
        if (!current) [[unlikely]]
            return loop_next_outlined(istart, iend);
        ws_state_t const &ws = current->implicit->ws;
        std::atomic<std::uint64_t> *const cursor = ws.plain_cursor;
        if (!cursor) [[unlikely]]
            return loop_next_outlined(istart, iend);
        loop_shape_t const &shape = ws.loop;
        std::uint64_t const n = shape.n, chunk = shape.chunk;
        // Relaxed: the claim only needs atomicity; results are published by the construct's barrier. The cursor
        // never wraps (`additive_claims`).
        std::uint64_t const begin = cursor->fetch_add(chunk, std::memory_order_relaxed);
        if (begin >= n) return false;
        std::uint64_t const last = n - begin < chunk ? n : begin + chunk;
        if (shape.incr == 1) [[likely]] { // no multiplication on the way to the next claim; start + n is the end
            *istart = static_cast<value_type_>(shape.start + begin);
            *iend = static_cast<value_type_>(shape.start + last);
            return true;
        }
        user_bounds(shape, begin, last, istart, iend);
        return true;
    }
}

bool signed_start(loop_kind_t kind, bool ordered, long start, long end, long incr, long chunk, long *istart,
                  long *iend) noexcept {
    task_t &task = implicit_task();
    loop_enter(task, signed_shape(start, end, incr, chunk, kind, ordered), nullptr, 0);
    return loop_next(task, istart, iend);
}

bool unsigned_start(loop_kind_t kind, bool ordered, bool up, unsigned long long start, unsigned long long end,
                    unsigned long long incr, unsigned long long chunk, unsigned long long *istart,
                    unsigned long long *iend) noexcept {
    task_t &task = implicit_task();
    loop_enter(task, unsigned_shape(up, start, end, incr, chunk, kind, ordered), nullptr, 0);
    return loop_next(task, istart, iend);
}

/**  `schedule(runtime)`: the kind and chunk come from the thread's run-sched-var. */
bool signed_runtime(bool monotonic, bool ordered, long start, long end, long incr, long *istart, long *iend) noexcept {
    long chunk = 0;
    loop_kind_t const kind = runtime_kind(implicit_task(), monotonic, ordered, chunk);
    return signed_start(kind, ordered, start, end, incr, chunk, istart, iend);
}

bool unsigned_runtime(bool monotonic, bool ordered, bool up, unsigned long long start, unsigned long long end,
                      unsigned long long incr, unsigned long long *istart, unsigned long long *iend) noexcept {
    long chunk = 0;
    loop_kind_t const kind = runtime_kind(implicit_task(), monotonic, ordered, chunk);
    return unsigned_start(kind, ordered, up, start, end, incr, static_cast<unsigned long long>(chunk > 0 ? chunk : 0),
                          istart, iend);
}

/**  The `sched` argument of the OpenMP 5.0 entry points: 0 runtime, 1 static, 2 dynamic, 3 guided, 4 nonmonotonic
 *   runtime; the top bit asks for a monotonic schedule. */
loop_kind_t decode_sched(long sched, long &chunk, bool ordered) noexcept {
    bool const monotonic = (static_cast<unsigned long>(sched) & sched_monotonic_k) != 0;
    switch (sched & 0x7fffffffL) {
    case 1:
        return loop_kind_t::static_k;
    case 2:
        return monotonic || ordered ? loop_kind_t::shared_k : loop_kind_t::stealing_k;
    case 3:
        return loop_kind_t::guided_k;
    default:
        return runtime_kind(implicit_task(), monotonic, ordered, chunk);
    }
}

} // namespace

#define FORKUNION_GOMP_SIGNED_LOOP(name, kind, ordered)                                                                \
    FORKUNION_GOMP_EXPORT bool GOMP_loop_##name##_start(long start, long end, long incr, long chunk, long *istart,     \
                                                        long *iend) {                                                  \
        return signed_start(kind, ordered, start, end, incr, chunk, istart, iend);                                     \
    }                                                                                                                  \
    FORKUNION_GOMP_EXPORT bool GOMP_loop_##name##_next(long *istart, long *iend) {                                     \
        return next_entry<kind>(istart, iend);                                                                         \
    }
#define FORKUNION_GOMP_UNSIGNED_LOOP(name, kind, ordered)                                                              \
    FORKUNION_GOMP_EXPORT bool GOMP_loop_ull_##name##_start(bool up, unsigned long long start, unsigned long long end, \
                                                            unsigned long long incr, unsigned long long chunk,         \
                                                            unsigned long long *istart, unsigned long long *iend) {    \
        return unsigned_start(kind, ordered, up, start, end, incr, chunk, istart, iend);                               \
    }                                                                                                                  \
    FORKUNION_GOMP_EXPORT bool GOMP_loop_ull_##name##_next(unsigned long long *istart, unsigned long long *iend) {     \
        return next_entry<kind>(istart, iend);                                                                         \
    }
#define FORKUNION_GOMP_RUNTIME_LOOP(name, monotonic, ordered)                                                          \
    FORKUNION_GOMP_EXPORT bool GOMP_loop_##name##_start(long start, long end, long incr, long *istart, long *iend) {   \
        return signed_runtime(monotonic, ordered, start, end, incr, istart, iend);                                     \
    }                                                                                                                  \
    FORKUNION_GOMP_EXPORT bool GOMP_loop_##name##_next(long *istart, long *iend) {                                     \
        return loop_next(implicit_task(), istart, iend);                                                               \
    }                                                                                                                  \
    FORKUNION_GOMP_EXPORT bool GOMP_loop_ull_##name##_start(bool up, unsigned long long start, unsigned long long end, \
                                                            unsigned long long incr, unsigned long long *istart,       \
                                                            unsigned long long *iend) {                                \
        return unsigned_runtime(monotonic, ordered, up, start, end, incr, istart, iend);                               \
    }                                                                                                                  \
    FORKUNION_GOMP_EXPORT bool GOMP_loop_ull_##name##_next(unsigned long long *istart, unsigned long long *iend) {     \
        return loop_next(implicit_task(), istart, iend);                                                               \
    }

FORKUNION_GOMP_SIGNED_LOOP(static, loop_kind_t::static_k, false)
FORKUNION_GOMP_SIGNED_LOOP(dynamic, loop_kind_t::shared_k, false)
FORKUNION_GOMP_SIGNED_LOOP(guided, loop_kind_t::guided_k, false)
FORKUNION_GOMP_SIGNED_LOOP(nonmonotonic_dynamic, loop_kind_t::stealing_k, false)
FORKUNION_GOMP_SIGNED_LOOP(nonmonotonic_guided, loop_kind_t::guided_k, false)
FORKUNION_GOMP_SIGNED_LOOP(ordered_static, loop_kind_t::static_k, true)
FORKUNION_GOMP_SIGNED_LOOP(ordered_dynamic, loop_kind_t::shared_k, true)
FORKUNION_GOMP_SIGNED_LOOP(ordered_guided, loop_kind_t::guided_k, true)
FORKUNION_GOMP_UNSIGNED_LOOP(static, loop_kind_t::static_k, false)
FORKUNION_GOMP_UNSIGNED_LOOP(dynamic, loop_kind_t::shared_k, false)
FORKUNION_GOMP_UNSIGNED_LOOP(guided, loop_kind_t::guided_k, false)
FORKUNION_GOMP_UNSIGNED_LOOP(nonmonotonic_dynamic, loop_kind_t::stealing_k, false)
FORKUNION_GOMP_UNSIGNED_LOOP(nonmonotonic_guided, loop_kind_t::guided_k, false)
FORKUNION_GOMP_UNSIGNED_LOOP(ordered_static, loop_kind_t::static_k, true)
FORKUNION_GOMP_UNSIGNED_LOOP(ordered_dynamic, loop_kind_t::shared_k, true)
FORKUNION_GOMP_UNSIGNED_LOOP(ordered_guided, loop_kind_t::guided_k, true)
FORKUNION_GOMP_RUNTIME_LOOP(runtime, true, false)
FORKUNION_GOMP_RUNTIME_LOOP(nonmonotonic_runtime, false, false)
FORKUNION_GOMP_RUNTIME_LOOP(maybe_nonmonotonic_runtime, false, false)
FORKUNION_GOMP_RUNTIME_LOOP(ordered_runtime, true, true)

namespace {

/**  The OpenMP 5.0 loop entry points: `sched` encoded as in `decode_sched`, and `mem` for team-shared scratch. */
bool signed_start_50(char const *entry, bool ordered, long start, long end, long incr, long sched, long chunk,
                     long *istart, long *iend, std::uintptr_t *reductions, void **mem) noexcept {
    (void)entry;
    loop_kind_t const kind = decode_sched(sched, chunk, ordered);
    task_t &task = implicit_task();
    loop_enter(task, signed_shape(start, end, incr, chunk, kind, ordered), mem,
               mem ? *reinterpret_cast<std::uintptr_t *>(mem) : 0, reductions);
    // Without `istart` GCC schedules the loop itself and only wants the construct (and its memory) set up.
    return istart ? loop_next(task, istart, iend) : true;
}

bool unsigned_start_50(char const *entry, bool ordered, bool up, unsigned long long start, unsigned long long end,
                       unsigned long long incr, long sched, unsigned long long chunk, unsigned long long *istart,
                       unsigned long long *iend, std::uintptr_t *reductions, void **mem) noexcept {
    (void)entry;
    long signed_chunk = static_cast<long>(chunk);
    loop_kind_t const kind = decode_sched(sched, signed_chunk, ordered);
    task_t &task = implicit_task();
    loop_enter(task, unsigned_shape(up, start, end, incr, static_cast<unsigned long long>(signed_chunk), kind, ordered),
               mem, mem ? *reinterpret_cast<std::uintptr_t *>(mem) : 0, reductions);
    return istart ? loop_next(task, istart, iend) : true;
}

} // namespace

FORKUNION_GOMP_EXPORT bool GOMP_loop_start(long start, long end, long incr, long sched, long chunk, long *istart,
                                           long *iend, std::uintptr_t *reductions, void **mem) {
    return signed_start_50("GOMP_loop_start (a worksharing loop with a task reduction)", false, start, end, incr, sched,
                           chunk, istart, iend, reductions, mem);
}

FORKUNION_GOMP_EXPORT bool GOMP_loop_ull_start(bool up, unsigned long long start, unsigned long long end,
                                               unsigned long long incr, long sched, unsigned long long chunk,
                                               unsigned long long *istart, unsigned long long *iend,
                                               std::uintptr_t *reductions, void **mem) {
    return unsigned_start_50("GOMP_loop_ull_start (a worksharing loop with a task reduction)", false, up, start, end,
                             incr, sched, chunk, istart, iend, reductions, mem);
}

FORKUNION_GOMP_EXPORT bool GOMP_loop_ordered_start(long start, long end, long incr, long sched, long chunk,
                                                   long *istart, long *iend, std::uintptr_t *reductions, void **mem) {
    return signed_start_50("GOMP_loop_ordered_start (an ordered loop with a task reduction)", true, start, end, incr,
                           sched, chunk, istart, iend, reductions, mem);
}

FORKUNION_GOMP_EXPORT bool GOMP_loop_ull_ordered_start(bool up, unsigned long long start, unsigned long long end,
                                                       unsigned long long incr, long sched, unsigned long long chunk,
                                                       unsigned long long *istart, unsigned long long *iend,
                                                       std::uintptr_t *reductions, void **mem) {
    return unsigned_start_50("GOMP_loop_ull_ordered_start (an ordered loop with a task reduction)", true, up, start,
                             end, incr, sched, chunk, istart, iend, reductions, mem);
}

FORKUNION_GOMP_EXPORT void GOMP_loop_end(void) {
    loop_leave(implicit_task(), true);
}
FORKUNION_GOMP_EXPORT void GOMP_loop_end_nowait(void) {
    loop_leave(implicit_task(), false);
}
// GCC calls the cancellable end of a loop or `sections` only in a region that contains `cancel parallel`, also
// after a `cancel for` or `cancel sections` has ended the construct; true sends the thread to the region's end, so
// it says whether the region (not the construct) was cancelled.
FORKUNION_GOMP_EXPORT bool GOMP_loop_end_cancel(void) {
    return loop_leave(implicit_task(), true);
}

FORKUNION_GOMP_EXPORT void GOMP_ordered_start(void) {
    task_t &task = implicit_task();
    // In a cancelled region the wait may be given up: the ordered region then runs without its turn.
    if (task.team && task.ws.holds_chunk) (void)wait_for_turn(task);
}
FORKUNION_GOMP_EXPORT void GOMP_ordered_end(void) {} // the turn passes when the chunk ends, not at each ordered region

// ---- Doacross loops: `ordered(n)` with `depend(sink: ...)` and `depend(source)` ----

namespace {

template <typename count_type_>
bool doacross_start(unsigned dims, count_type_ const *counts, loop_kind_t kind, long chunk, std::uintptr_t *reductions,
                    void **memory, count_type_ *istart, count_type_ *iend) noexcept {
    if (dims == 0) refuse("a doacross loop", "no ordered dimensions");
    task_t &task = implicit_task();
    // The outer dimension is scheduled, in logical iterations; the others run whole inside each outer iteration.
    // A guided chunk could not be found from an iteration: doacross guided and stealing loops take fixed chunks.
    if (kind == loop_kind_t::guided_k || kind == loop_kind_t::stealing_k) kind = loop_kind_t::shared_k;
    loop_shape_t shape = signed_shape(0, 0, 1, chunk, kind, false);
    shape.n = static_cast<std::uint64_t>(counts[0]);
    shape.end = shape.n;
    std::uint64_t total = 1;
    for (unsigned dim = 0; dim != dims; ++dim) {
        std::uint64_t const count = static_cast<std::uint64_t>(counts[dim]);
        if (count && total > ~std::uint64_t(0) / count)
            refuse("a doacross loop", "more than 2^64 iterations in its ordered dimensions");
        total *= count;
    }
    // One progress word per chunk (per thread under `schedule(static)`), allocated by the first member to arrive.
    // Deeper than the inline counts: the counts follow the progress words.
    std::uint64_t words = 0;
    if (task.team && shape.n) {
        words = shape.kind == loop_kind_t::static_k && shape.chunk == 0
                    ? task.team_size
                    : shape.n / shape.chunk + (shape.n % shape.chunk != 0);
        shape.progress_words = words + (dims > max_doacross_dims_k ? dims : 0);
    }
    std::uint64_t const memory_bytes = memory ? *reinterpret_cast<std::uintptr_t *>(memory) : 0;
    // The progress words and the caller's bytes are one block, whose size must not wrap: no memory holds either
    // limit, so a loop beyond them could never have run.
    if (shape.progress_words > (std::uint64_t(1) << 45))
        refuse("a doacross loop", "more than 2^45 chunks (one progress word each)");
    if (memory_bytes > (std::uint64_t(1) << 48))
        refuse("a doacross loop", "more than 2^48 bytes of team-shared memory beside its progress words");
    loop_enter(task, shape, memory, memory_bytes, reductions);
    ws_state_t &ws = task.ws;
    ws.doacross_dims = dims;
    ws.doacross_count_table = ws.doacross_counts;
    if (dims > max_doacross_dims_k)
        ws.doacross_count_table = ws.doacross_progress ? reinterpret_cast<std::uint64_t *>(ws.doacross_progress + words)
                                                       : nullptr; // a team of one waits for nothing
    if (ws.doacross_count_table)
        for (unsigned dim = 0; dim != dims; ++dim)
            std::atomic_ref<std::uint64_t>(ws.doacross_count_table[dim])
                .store(static_cast<std::uint64_t>(counts[dim]), std::memory_order_relaxed);
    std::uint64_t first = 0, last = 0;
    if (!loop_next_logical(task, first, last)) return false;
    *istart = static_cast<count_type_>(first), *iend = static_cast<count_type_>(last);
    return true;
}

void doacross_post(std::uint64_t const *vector) noexcept {
    task_t &task = implicit_task();
    ws_state_t &ws = task.ws;
    if (!ws.doacross_progress) return; // a team of one runs its iterations in order
    // Release pairs with the acquire in `doacross_wait`: the iteration's writes precede its posting.
    ws.doacross_progress[progress_index(task, vector[0])].store(flatten(ws, vector) + 1, std::memory_order_release);
    team_notify(*task.team);
}

void doacross_wait(std::uint64_t const *vector) noexcept {
    task_t &task = implicit_task();
    ws_state_t &ws = task.ws;
    if (!ws.doacross_progress) return;
    for (unsigned dim = 0; dim != ws.doacross_dims; ++dim)
        if (vector[dim] >= doacross_count(ws, dim)) return; // outside the iteration space: no dependence
    std::uint64_t const flat = flatten(ws, vector);
    std::atomic<std::uint64_t> &progress = ws.doacross_progress[progress_index(task, vector[0])];
    // In a cancelled region the iteration waited for may never run: the wait is given up.
    (void)team_wait_unless_cancelled(*task.team,
                                     [&]() noexcept { return progress.load(std::memory_order_acquire) > flat; });
}

} // namespace

#define FORKUNION_GOMP_DOACROSS(name, kind)                                                                            \
    FORKUNION_GOMP_EXPORT bool GOMP_loop_doacross_##name##_start(unsigned ncounts, long *counts, long chunk,           \
                                                                 long *istart, long *iend) {                           \
        return doacross_start<long>(ncounts, counts, kind, chunk, nullptr, nullptr, istart, iend);                     \
    }                                                                                                                  \
    FORKUNION_GOMP_EXPORT bool GOMP_loop_ull_doacross_##name##_start(                                                  \
        unsigned ncounts, unsigned long long *counts, unsigned long long chunk, unsigned long long *istart,            \
        unsigned long long *iend) {                                                                                    \
        return doacross_start<unsigned long long>(ncounts, counts, kind, static_cast<long>(chunk), nullptr, nullptr,   \
                                                  istart, iend);                                                       \
    }
FORKUNION_GOMP_DOACROSS(static, loop_kind_t::static_k)
FORKUNION_GOMP_DOACROSS(dynamic, loop_kind_t::shared_k)
FORKUNION_GOMP_DOACROSS(guided, loop_kind_t::guided_k)

FORKUNION_GOMP_EXPORT bool GOMP_loop_doacross_runtime_start(unsigned ncounts, long *counts, long *istart, long *iend) {
    long chunk = 0;
    loop_kind_t const kind = runtime_kind(implicit_task(), true, true, chunk);
    return doacross_start<long>(ncounts, counts, kind, chunk, nullptr, nullptr, istart, iend);
}
FORKUNION_GOMP_EXPORT bool GOMP_loop_ull_doacross_runtime_start(unsigned ncounts, unsigned long long *counts,
                                                                unsigned long long *istart, unsigned long long *iend) {
    long chunk = 0;
    loop_kind_t const kind = runtime_kind(implicit_task(), true, true, chunk);
    return doacross_start<unsigned long long>(ncounts, counts, kind, chunk, nullptr, nullptr, istart, iend);
}
FORKUNION_GOMP_EXPORT bool GOMP_loop_doacross_start(unsigned ncounts, long *counts, long sched, long chunk,
                                                    long *istart, long *iend, std::uintptr_t *reductions, void **mem) {
    loop_kind_t const kind = decode_sched(sched, chunk, true);
    return doacross_start<long>(ncounts, counts, kind, chunk, reductions, mem, istart, iend);
}
FORKUNION_GOMP_EXPORT bool GOMP_loop_ull_doacross_start(unsigned ncounts, unsigned long long *counts, long sched,
                                                        unsigned long long chunk, unsigned long long *istart,
                                                        unsigned long long *iend, std::uintptr_t *reductions,
                                                        void **mem) {
    long signed_chunk = static_cast<long>(chunk);
    loop_kind_t const kind = decode_sched(sched, signed_chunk, true);
    return doacross_start<unsigned long long>(ncounts, counts, kind, signed_chunk, reductions, mem, istart, iend);
}

// The iteration vectors below live on the stack: `max_doacross_dims_k` words, or `alloca` for deeper loops.
#define FORKUNION_GOMP_DOACROSS_VECTOR(name, dims)                                                                     \
    std::uint64_t name##_inline[max_doacross_dims_k] = {};                                                             \
    std::uint64_t *name = (dims) > max_doacross_dims_k                                                                 \
                              ? static_cast<std::uint64_t *>(__builtin_alloca((dims) * sizeof(std::uint64_t)))         \
                              : name##_inline

FORKUNION_GOMP_EXPORT void GOMP_doacross_post(long *counts) {
    ws_state_t const &ws = implicit_task().ws;
    FORKUNION_GOMP_DOACROSS_VECTOR(vector, ws.doacross_dims);
    for (unsigned dim = 0; dim != ws.doacross_dims; ++dim) vector[dim] = static_cast<std::uint64_t>(counts[dim]);
    doacross_post(vector);
}
FORKUNION_GOMP_EXPORT void GOMP_doacross_ull_post(unsigned long long *counts) {
    ws_state_t const &ws = implicit_task().ws;
    FORKUNION_GOMP_DOACROSS_VECTOR(vector, ws.doacross_dims);
    for (unsigned dim = 0; dim != ws.doacross_dims; ++dim) vector[dim] = counts[dim];
    doacross_post(vector);
}
FORKUNION_GOMP_EXPORT void GOMP_doacross_wait(long first, ...) {
    ws_state_t const &ws = implicit_task().ws;
    FORKUNION_GOMP_DOACROSS_VECTOR(vector, ws.doacross_dims);
    vector[0] = static_cast<std::uint64_t>(first);
    va_list rest;
    va_start(rest, first);
    for (unsigned dim = 1; dim < ws.doacross_dims; ++dim) vector[dim] = static_cast<std::uint64_t>(va_arg(rest, long));
    va_end(rest);
    doacross_wait(vector);
}
FORKUNION_GOMP_EXPORT void GOMP_doacross_ull_wait(unsigned long long first, ...) {
    ws_state_t const &ws = implicit_task().ws;
    FORKUNION_GOMP_DOACROSS_VECTOR(vector, ws.doacross_dims);
    vector[0] = first;
    va_list rest;
    va_start(rest, first);
    for (unsigned dim = 1; dim < ws.doacross_dims; ++dim) vector[dim] = va_arg(rest, unsigned long long);
    va_end(rest);
    doacross_wait(vector);
}

// ---- Combined constructs: the region and its first worksharing construct ----

#define FORKUNION_GOMP_PARALLEL_LOOP(name, kind)                                                                       \
    FORKUNION_GOMP_EXPORT void GOMP_parallel_loop_##name(void (*fn)(void *), void *data, unsigned nthreads,            \
                                                         long start, long end, long incr, long chunk,                  \
                                                         unsigned flags) {                                             \
        loop_shape_t const shape = signed_shape(start, end, incr, chunk, kind, false);                                 \
        run_parallel(fn, data, nthreads, flags, &shape, nullptr);                                                      \
    }
FORKUNION_GOMP_PARALLEL_LOOP(static, loop_kind_t::static_k)
FORKUNION_GOMP_PARALLEL_LOOP(dynamic, loop_kind_t::shared_k)
FORKUNION_GOMP_PARALLEL_LOOP(guided, loop_kind_t::guided_k)
FORKUNION_GOMP_PARALLEL_LOOP(nonmonotonic_dynamic, loop_kind_t::stealing_k)
FORKUNION_GOMP_PARALLEL_LOOP(nonmonotonic_guided, loop_kind_t::guided_k)

namespace {
loop_shape_t runtime_shape(bool monotonic, long start, long end, long incr) noexcept {
    long chunk = 0;
    loop_kind_t const kind = runtime_kind(current_task(), monotonic, false, chunk);
    return signed_shape(start, end, incr, chunk, kind, false);
}
} // namespace

FORKUNION_GOMP_EXPORT void GOMP_parallel_loop_runtime(void (*fn)(void *), void *data, unsigned nthreads, long start,
                                                      long end, long incr, unsigned flags) {
    loop_shape_t const shape = runtime_shape(true, start, end, incr);
    run_parallel(fn, data, nthreads, flags, &shape, nullptr);
}
FORKUNION_GOMP_EXPORT void GOMP_parallel_loop_nonmonotonic_runtime(void (*fn)(void *), void *data, unsigned nthreads,
                                                                   long start, long end, long incr, unsigned flags) {
    loop_shape_t const shape = runtime_shape(false, start, end, incr);
    run_parallel(fn, data, nthreads, flags, &shape, nullptr);
}
FORKUNION_GOMP_EXPORT void GOMP_parallel_loop_maybe_nonmonotonic_runtime(void (*fn)(void *), void *data,
                                                                         unsigned nthreads, long start, long end,
                                                                         long incr, unsigned flags) {
    loop_shape_t const shape = runtime_shape(false, start, end, incr);
    run_parallel(fn, data, nthreads, flags, &shape, nullptr);
}

#define FORKUNION_GOMP_LEGACY_PARALLEL_LOOP(name, kind)                                                                \
    FORKUNION_GOMP_EXPORT void GOMP_parallel_loop_##name##_start(void (*fn)(void *), void *data, unsigned nthreads,    \
                                                                 long start, long end, long incr, long chunk) {        \
        loop_shape_t const shape = signed_shape(start, end, incr, chunk, kind, false);                                 \
        start_parallel(fn, data, nthreads, &shape, nullptr);                                                           \
    }
FORKUNION_GOMP_LEGACY_PARALLEL_LOOP(static, loop_kind_t::static_k)
FORKUNION_GOMP_LEGACY_PARALLEL_LOOP(dynamic, loop_kind_t::shared_k)
FORKUNION_GOMP_LEGACY_PARALLEL_LOOP(guided, loop_kind_t::guided_k)

FORKUNION_GOMP_EXPORT void GOMP_parallel_loop_runtime_start(void (*fn)(void *), void *data, unsigned nthreads,
                                                            long start, long end, long incr) {
    loop_shape_t const shape = runtime_shape(true, start, end, incr);
    start_parallel(fn, data, nthreads, &shape, nullptr);
}

// ---- Sections ----

namespace {
unsigned sections_next(task_t &task) noexcept {
    if (settings().cancellation && ws_cancelled(task)) [[unlikely]]
        return 0;
    std::uint64_t first = 0, last = 0;
    ws_state_t &ws = task.ws;
    if (!task.team) {
        // A team of one hands its sections out one by one, like a team would.
        if (ws.next >= ws.loop.n) return 0;
        return static_cast<unsigned>(++ws.next);
    }
    return loop_next_logical(task, first, last) ? static_cast<unsigned>(first + 1) : 0;
}
} // namespace

FORKUNION_GOMP_EXPORT unsigned GOMP_sections_start(unsigned count) {
    task_t &task = implicit_task();
    sections_enter(task, count, nullptr, 0);
    return sections_next(task);
}
FORKUNION_GOMP_EXPORT unsigned GOMP_sections2_start(unsigned count, std::uintptr_t *reductions, void **mem) {
    task_t &task = implicit_task();
    sections_enter(task, count, mem, mem ? *reinterpret_cast<std::uintptr_t *>(mem) : 0, reductions);
    return sections_next(task);
}
FORKUNION_GOMP_EXPORT unsigned GOMP_sections_next(void) {
    return sections_next(implicit_task());
}
FORKUNION_GOMP_EXPORT void GOMP_sections_end(void) {
    loop_leave(implicit_task(), true);
}
FORKUNION_GOMP_EXPORT void GOMP_sections_end_nowait(void) {
    loop_leave(implicit_task(), false);
}
FORKUNION_GOMP_EXPORT bool GOMP_sections_end_cancel(void) {
    return loop_leave(implicit_task(), true); // whether the region was cancelled, as `GOMP_loop_end_cancel`
}
FORKUNION_GOMP_EXPORT void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned nthreads, unsigned count,
                                                  unsigned flags) {
    std::uint64_t const sections = count;
    run_parallel(fn, data, nthreads, flags, nullptr, &sections);
}
FORKUNION_GOMP_EXPORT void GOMP_parallel_sections_start(void (*fn)(void *), void *data, unsigned nthreads,
                                                        unsigned count) {
    std::uint64_t const sections = count;
    start_parallel(fn, data, nthreads, nullptr, &sections);
}

// ---- Single ----

namespace {
/**  A `single` takes a construct number but touches no cursor: its thread has left it for the stealing loops'
 *   purposes at once. Without this, eight `single`s in a row would leave every departure word eight constructs
 *   behind, and no owner of a later stealing loop would open its block to thieves (S2). */
void depart_single(team_t &team, unsigned thread, std::uint64_t id) noexcept {
    departure_of(team, thread).store(id + 1, std::memory_order_release);
}
} // namespace

FORKUNION_GOMP_EXPORT bool GOMP_single_start(void) {
    task_t &task = implicit_task();
    if (!task.team) return true;
    std::uint64_t const id = task.ws_next++;
    depart_single(*task.team, task.thread_num, id);
    // No slot (see `team_t::single`): a slot is freed only once every member left its previous construct, so a
    // member that runs ahead past `ws_slots_k` of them would wait for one that lags behind, for ever if that one
    // waits for it (a lock the first holds across them). Relaxed: the body publishes nothing through this word.
    std::atomic<std::uint64_t> &won = task.team->single.won;
    std::uint64_t seen = won.load(std::memory_order_relaxed);
    while (seen <= id)
        if (won.compare_exchange_weak(seen, id + 1, std::memory_order_relaxed, std::memory_order_relaxed)) return true;
    return false;
}

FORKUNION_GOMP_EXPORT void *GOMP_single_copy_start(void) {
    task_t &task = implicit_task();
    if (!task.team) return nullptr;
    team_t &team = *task.team;
    std::uint64_t const id = task.ws_next++;
    task.ws.id = id;
    depart_single(team, task.thread_num, id);
    ws_slot_t *entered = nullptr;
    entry_t const entry = slot_enter(team, id, entered, [](ws_slot_t &slot) noexcept {
        slot.shared.copy.store(nullptr, std::memory_order_relaxed);
        slot.shared.copy_readers.store(0, std::memory_order_relaxed);
    });
    // The winner runs the body, then `GOMP_single_copy_end` publishes its data; it leaves the slot at the barrier
    // after (`copyprivate_barrier`), as the readers do. In a cancelled region a member that could not enter the slot
    // runs the body as its own winner, and touches no slot.
    task.ws.slot = entry == entry_t::cancelled ? nullptr : entered;
    if (entry != entry_t::follower) return nullptr;
    ws_slot_t &slot = *entered;
    // Seq_cst, with the load below and the writer's withdrawal and count: either the writer waits for this reader,
    // or this reader sees the data withdrawn.
    slot.shared.copy_readers.fetch_add(1, std::memory_order_seq_cst);
    void *data = nullptr;
    // Pairs with the release in `GOMP_single_copy_end`: the winner's values are visible.
    team_wait(team, [&]() noexcept { return (data = slot.shared.copy.load(std::memory_order_seq_cst)) != nullptr; });
    if (reinterpret_cast<std::uintptr_t>(data) != withdrawn_copy_k) {
        task.ws.copy = copy_role_t::reader_k;
        return data;
    }
    // The winner left a cancelled region: its variables are gone, so this member runs the body as its own winner.
    slot.shared.copy_readers.fetch_sub(1, std::memory_order_release);
    team_notify(team);
    task.ws.slot = nullptr;
    slot_leave(team, slot, id);
    return nullptr;
}

FORKUNION_GOMP_EXPORT void GOMP_single_copy_end(void *data) {
    task_t &task = implicit_task();
    // Only the winner calls this with its slot (a member running the body as its own winner has none).
    if (!task.team || !task.ws.slot) return;
    task.ws.slot->shared.copy.store(data, std::memory_order_release);
    task.ws.copy = copy_role_t::writer_k;
    team_notify(*task.team);
}

namespace forkunion::gomp {
bool copyprivate_barrier(task_t &task) noexcept {
    team_t &team = *task.team;
    ws_slot_t &slot = *task.ws.slot;
    task.ws.slot = nullptr;
    copy_role_t const role = task.ws.copy;
    task.ws.copy = copy_role_t::none_k;
    if (role == copy_role_t::reader_k) {
        // GCC's code copied before this call. Release: the copies precede the writer's leaving.
        slot.shared.copy_readers.fetch_sub(1, std::memory_order_release);
        team_notify(team);
        slot_leave(team, slot, task.ws.id);
        return team_barrier(team);
    }
    bool const cancelled = team_barrier(team);
    // A barrier that completed saw every member arrive, every reader done. A cancelled one did not.
    if (cancelled) {
        slot.shared.copy.store(reinterpret_cast<void *>(withdrawn_copy_k), std::memory_order_seq_cst);
        team_wait(team, [&]() noexcept { return slot.shared.copy_readers.load(std::memory_order_seq_cst) == 0; });
    }
    slot_leave(team, slot, task.ws.id);
    return cancelled;
}
} // namespace forkunion::gomp

FORKUNION_GOMP_EXPORT void GOMP_scope_start(std::uintptr_t *reductions) {
    // A `scope` region only calls the runtime for task reductions; without them there is nothing to set up.
    // With them, it is a `nowait` worksharing construct of no iterations whose first member makes the copies.
    if (!reductions) return;
    task_t &task = implicit_task();
    loop_enter(task, loop_shape_t{}, nullptr, 0, reductions);
    loop_leave(task, false);
}
