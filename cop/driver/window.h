// The channel window: the shared memory through which local tasks and copdrv
// see one channel interface (seed 000 ch. V, "Compute Node to COP Channel
// Interface Registers" and "The COP Interface Driver").
//
// copdrv creates it (a memfd, handed to each task at registration, so it needs
// no name and disappears with the last user) and holds:
//   - the CSR: RDY (the channel is registered with copd), ERR and ERR_CODE
//     (a wire::Error: link_down when copd or the driver is gone);
//   - the Pid register: the TKNO of the task reading the channel right now;
//     it takes only messages with its own TKNO (answers to its commands) and
//     the results it is waiting for;
//   - the out-of-context buffer: everything else the reader sees (another
//     task's answers, a broadcast that arrives before its receiver asks) is
//     filed here and never lost, and the task it is for takes it later;
//   - the channel lock (the thesis's semaphore): who may read the channel;
//     sending needs no lock, as each frame is one datagram;
//   - the driver's task table (pid, tid, TKNO of each registered local task);
//   - the receive state of copd's sequenced reply stream (cop/link.h);
//   - the host area libcop uses for partial barriers, reductions and
//     broadcasts among the tasks of this host before one of them uses the
//     channel (ch. V, "Barrier Implementation").
// Locks are process-shared robust mutexes, so a task killed inside one does
// not hang the others; waiting is a futex on an event counter.
#pragma once
#include <pthread.h>
#include <sys/types.h>

#include <cop/wire.h>

#include <atomic>
#include <cstdint>

namespace cop::driver {

inline constexpr uint32_t kWindowMagic = 0x57504F43;  // "COPW"
inline constexpr uint32_t kWindowVersion = 10;  // 3: result_cycles; 4: HostSlot::since_ns; 5: register_nc, challenge; 6: sup_answer; 7: unsettled; 8: operation identities; 9: epochs, refusals; 10: UnsettledRange::ppn, forgotten_ppn
inline constexpr int kUnsettledRanges = 64;
// Operations a receiver found another call of (same round, other datatype or count:
// channel_entries.cpp): their words still to come are dropped, not filed.
inline constexpr int kForgottenOperations = 16;
inline constexpr int kOutOfContextSlots = 262144;  // 10 MB: a 64K-key exchange filed whole
inline constexpr int kMaxLocalTasks = 64;
inline constexpr int kHostSlots = 64;
inline constexpr int kHostBytes = 1024;  // one chunk: arrays are split at 1024 bytes

struct OutOfContext {
  uint8_t used;
  uint8_t kind;  // link::EntryKind
  uint8_t nwords;
  uint8_t pad;
  uint16_t tkno;  // of the message (its TKNO field)
  uint16_t index;
  uint32_t seq;
  uint32_t words[4];
  uint64_t at_cycle;
  uint64_t op_id;  // the entry's operation identity (link::Entry::op_id)
};

struct TaskSlot {
  int32_t pid;
  int32_t tid;
  int16_t tkno;  // -1: free
  uint8_t direct;
  uint8_t pad;
};

// One host-local collective in progress (libcop, cop/lib/host.cpp).
struct HostSlot {
  uint64_t key;       // 0: free; else hash of (operation, group, tag)
  uint32_t expected;  // local tasks taking part
  uint32_t arrived;
  uint32_t departed;  // tasks that have taken the result
  uint32_t readers;   // tasks that will take the result
  int32_t state;      // 0 gathering, 1 result ready, <0 error code
  int32_t count;      // elements in data/result
  uint64_t at_cycle;
  uint64_t since_ns;  // when the slot was taken (monotonic_ns): a slot nobody waits on any more is
                      // swept once it is older than the CopTimeout (cop/lib/host.cpp)
  uint64_t arrived_tknos;  // bit TKNO: the local tasks that have added their part (a member that
                           // ended without is told to the others, cop/lib/host.cpp)
  alignas(8) uint8_t data[kHostBytes];
};

// GAS words [first, first+count) of partition `ppn` (the failed call's job: two jobs'
// tasks on one node share the channel) of a collective that failed on this channel.
struct UnsettledRange {
  uint32_t first, count;
  uint32_t ppn;
};

struct Window {
  uint32_t magic;
  uint32_t version;
  int32_t driver_pid;
  uint16_t channel;  // CHNO
  uint16_t ppn;
  uint32_t channels, tasks_per_channel, tas_words, gas_words;
  // CSR
  std::atomic<uint32_t> csr_rdy;
  std::atomic<uint32_t> csr_err;
  std::atomic<uint32_t> csr_err_code;
  std::atomic<uint32_t> pid_register;
  std::atomic<uint32_t> event;    // futex word: bumped when something is filed or the lock is freed
  std::atomic<uint32_t> waiters;  // tasks sleeping on `event`
  std::atomic<uint64_t> last_heard_ns;  // CLOCK_MONOTONIC when copd was last heard
  std::atomic<uint64_t> modelled_cycles;
  // The modelled time of the last global result (barrier exit, reduction
  // result, broadcast data) a task of this node took: when the node starts
  // writing its next frame (seed 000 ch. VI: every call starts with its first
  // command's t_CN-COP; the node's own ACKs do not hold it, they pipeline).
  std::atomic<uint64_t> result_cycles;
  std::atomic<uint64_t> resends;        // frames sent again (link statistics)
  std::atomic<uint64_t> filed;          // messages filed out of context
  std::atomic<uint64_t> overflows;      // messages the buffer had no room for (should stay 0)
  // The receive side of the channel's sequenced reply stream (cop/link.h),
  // shared because whoever holds the channel lock reads the channel: copd's
  // session of this registration, the next reply seq expected (both changed
  // only under channel_lock), the last acknowledgment any sender of the
  // channel put on a frame, and when a gap was last reported.
  std::atomic<uint32_t> rx_session;
  std::atomic<uint32_t> rx_next;
  std::atomic<uint32_t> ack_sent;
  std::atomic<uint64_t> gap_reported_ns;
  std::atomic<uint64_t> rx_duplicates;  // reply frames received twice (dropped)
  std::atomic<uint64_t> rx_gaps;        // reply frames received out of order (dropped, resent by copd)
  // The driver's requests to copd (enrol, task_end) copd has confirmed: the
  // highest seq of its sup_ack, whoever read it. (No key is ever here:
  // every task maps this window.)
  std::atomic<uint32_t> sup_acked;
  pthread_mutex_t channel_lock;
  pthread_mutex_t buffer_lock;
  pthread_mutex_t table_lock;
  pthread_mutex_t host_lock;
  std::atomic<uint32_t> host_event;  // futex word for the host area
  std::atomic<uint32_t> host_waiters;
  // The channel's unsettled ranges (libcop, lib/library.cpp: unsettle, settle): words of
  // collectives that failed for a local task, voided on the controller before the
  // channel's next collective in their partition (a task of that job voids them).
  // settle_lock is held for the list and while one task voids.
  pthread_mutex_t settle_lock;
  uint32_t unsettled_count;
  UnsettledRange unsettled[kUnsettledRanges];
  uint32_t ooc_count;  // used slots (buffer_lock)
  uint32_t ooc_high;   // one past the highest used slot (buffer_lock)
  // Operations consumed whole by a receiver that asked for another call (buffer_lock):
  // a ring of their identities; what still comes of them is dropped.
  uint64_t forgotten_ops[kForgottenOperations];
  uint32_t forgotten_next;
  // The partition of each forgotten operation: two jobs share the channel, and another
  // job's operation may carry the same identity (its 16-bit site a hash, wire.h).
  uint8_t forgotten_ppn[kForgottenOperations];
  TaskSlot tasks[kMaxLocalTasks];
  HostSlot host[kHostSlots];
  OutOfContext ooc[kOutOfContextSlots];
  // The channel's registration (cop/link.h "Keys"): the driver's nonce Nc (a
  // REGISTERED frame is taken only with it), and copd's last CHALLENGE to it,
  // filed by whoever read it (challenge_seq bumped after challenge_ns) for the
  // driver to prove. Both are public: no key is here.
  std::atomic<uint64_t> register_nc;
  std::atomic<uint32_t> challenge_ns[4];
  std::atomic<uint32_t> challenge_seq;
  // The answer of copd's last sup_ack that carried one (a JOIN's): its seq in
  // the high word, then info[0] (1 + the job's PPN, 0: refused) and info[1]
  // (link::JoinRefusal), 16 bits each.
  std::atomic<uint64_t> sup_answer;
  // The epoch of the job's partition a JOIN's sup_ack gave (its seq in the high word),
  // stored before sup_answer: copdrv re-joins the task with it after a lease ran out or
  // copd restarted (cop.h "Epochs").
  std::atomic<uint64_t> sup_epoch;
  // copd's epoch (REGISTERED's ack field): new at every start of copd.
  std::atomic<uint32_t> copd_epoch;
  // REFUSED frames (cop/link.h "REFUSED"): one of copd's for this channel's session
  // asks copdrv to prove its registration again (reprove); a REFUSED with a wrong MAC
  // or for another session (forged, replayed) is ignored and counted here.
  std::atomic<uint32_t> reprove;
  std::atomic<uint64_t> refused_ignored;
};

// Initialises a fresh window (copdrv) in memory the caller mapped shared.
void init_window(Window* w, int driver_pid, uint16_t channel);

// The CSR is written only through these (ch. V, "Compute Node to COP Channel
// Interface Registers"): ERR_CODE is stored before ERR, so a task that sees
// ERR reads the code that goes with it.
// ERR with ERR_CODE `code`; RDY stays as it is (the message lost to a full
// out-of-context buffer, a wait that gave up on copd).
void csr_set_error(Window& w, wire::Error code);
// The channel is down (copd refused it or went silent, the driver is leaving):
// RDY cleared, ERR link_down.
void csr_channel_down(Window& w);
// copd registered the channel (again): ERR cleared, then RDY set.
void csr_channel_up(Window& w);

// Empties the out-of-context buffer (a channel no task holds: what is filed there is
// for operations of tasks gone).
void clear_out_of_context(Window& w);

// Locks a robust mutex, repairing it when its holder died.
void lock_robust(pthread_mutex_t* m);
bool try_lock_robust(pthread_mutex_t* m);

// futex wait on word while it equals `seen`, at most timeout_ms; and wake all.
void futex_wait(std::atomic<uint32_t>* word, uint32_t seen, int timeout_ms);
void futex_wake_all(std::atomic<uint32_t>* word);

uint64_t monotonic_ns();

}  // namespace cop::driver
