// The coordination processor (seed 000, ch. IV-V) as a transport-independent core.
//
// Commands arrive per channel (receive), set that channel's DATA_RDY, and are
// serviced one at a time (step) in the order of the round-robin poll counter;
// LOCK stops the round robin at the locking channel until its UNLOCK for the
// commands of its partition (another partition's, another job's whose words the
// locked sequence cannot reach, are serviced while it waits: issue 34); on that
// channel the sequence is its sender's: another task's LOCK queued inside it
// (the tasks of a host share its channel) waits, with what that task sends
// after it, for the UNLOCK (next_channel). Every
// serviced command yields its link-level ACK (or a NACK with an error code) to
// the sender plus whatever data the operation sends to nodes: RSRAM/RMW answers,
// reduction results and barrier exits broadcast through the broadcast mask RAM,
// BCAST data. The daemon (copd), the tests and the timing model all drive this
// one core; the core also keeps a modelled-hardware clock (cycles) that charges
// Hall's costs for what it services.
//
// What the core enforces, and where the thesis has it (ch. V):
//  - U/S bit: a command with U/S set is the operating system's. Only a sender
//    the link authenticated as supervisor (the channel's driver) may set it;
//    from a task it is refused with NACK protection. Only U/S commands write
//    the system address space (CNTNO, each channel's PPN: privilege otherwise)
//    or reach outside the sender's partition: the channel's, or the one the
//    operating system put the task in (its job's, set_task_partition below;
//    copd gives each job its own, cop/controller/jobs.h). A task naming
//    another partition is refused (NACK partition).
//  - Pid register / task address space protection: a task acts only as the
//    task number its driver enrolled it under. A command whose TKNO names
//    another task is refused (protection); SETTC/SETBM carry a count there and
//    are not checked. "A task address space can be accessed for writing only by
//    the owner task, but any task can read any task address spaces. Only
//    read-modify-write operations from a task can write to the task address
//    spaces of other tasks" (ch. V, libcop): WSRAM to a TAS needs the owner
//    (this channel and the sender's own TKNO); RSRAM and RMW reach any task
//    space of the partition (cop_rmw's shared counters). The operating system
//    (U/S) may write any task address space.
//  - Every field is range-checked before it indexes a RAM bank, whoever sent
//    it: the rules wire::decode applies (channel, TTKNO against
//    tasks_per_channel, TAS offset, GAS/SAS offsets, SETTC/SETBM counts) and the
//    PPN against the partitions configured. Nothing a command says reaches
//    outside the banks.
//  - Accessed bits serialise operations on one tag: a SETTC sets the accessed
//    bit of its terminal-count entries, the last contribution resets it. A
//    channel whose head command would take part a second time in an operation
//    still in progress (it is in the entry's mask and has contributed already:
//    its SETTC/SETBM/contribution/BCAST belongs to the next operation on the
//    tag) is not serviced: its DATA_RDY stays up and the poll counter passes it
//    until that operation completes. For a head LOCK the commands up to its
//    UNLOCK are looked at, so a locked sequence never stalls the round robin.
//    Commands of a channel stay in FIFO order within a partition; a command
//    of another partition (another job on the channel) passes a held head,
//    as the jobs' operations are independent (copd matches each answer to
//    the oldest queued command of its task and PPN: Delivery::hop.origin).
//    A SETTC/SETBM on an entry of the operation in progress from a channel
//    still pending in it is answered mask_in_use as before: libcop reads that as "initialised by a peer" (SPMD). As with any
//    blocking collective, every channel must enter the operations on a tag in
//    the same order. A held command is ACKed when it is serviced, so a
//    transport's transmit timer must allow for the wait (the time the slowest
//    channel takes to reach the operation in progress).
//  - Deadlock timer (ch. IV: a LOCK stops the poll counter at one channel, so
//    a holder that never sends its UNLOCK would stop every other channel):
//    a LOCK held longer than Config::lock_limit_us of the caller's clock
//    (tick()) is taken back and the round robin runs again. The holder's
//    commands that come after, up to and including its UNLOCK, are refused
//    with NACK lock_timeout (nothing of the locked sequence runs unlocked);
//    its next LOCK starts afresh. The core keeps no clock of its own for this:
//    copd gives it the time (milliseconds since it started, in microseconds),
//    the tests advance it.
//  - Contributions to one operation carry the first one's opcode (one function on one
//    datatype, or BENTRY): one that differs (tasks disagreeing on the call) is counted
//    and refused with NACK mismatch, and the operation ends with a NACK mismatch to
//    those awaiting its result instead of combining SUMF and SUMI64 bit patterns (a
//    level 2: to every level-1 of it). A level-1 whose nodes disagree on an X
//    operation sends the NACK up; the level 2 counts it as that controller's part,
//    in that controller's command order (behind the SETTC/SETBM X its nodes sent first).
//  - A task that ends (end_task) leaves nothing behind: queued commands, a held
//    lock, its task address space, operations that can no longer complete.
//
// Two levels (seed 000 ch. IV, Figure 5; ch. V, the X bit and CNTNO): up to 64
// level-1 controllers, each with 64 nodes, under one level-2 controller whose
// channel c is the level-1 controller with CNTNO c-1 (SAS word [0] of each
// level-1 holds its CNTNO; host H is on controller (H-1)/64). Config::level and
// Config::has_parent say which this core is. A level-1 without a parent
// refuses X (channel_range) as a single-level COP always did.
//  - Global operations with X (BENTRY, every reduction): each level-1 completes
//    its local part with its own TC entry (its nodes, set by an ordinary
//    SETTC), then sends ONE combined contribution up (same opcode, X set, its
//    CNTNO in the address word) and keeps the entry accessed ("forwarded")
//    until the result comes down, so the next operation on the tag waits as
//    above. The level 2 combines the level-1 contributions with its TC entry
//    (whose mask names level-1 controllers) and sends the result (barrier
//    exit) to its broadcast mask's level-1 controllers (its TC mask for a
//    barrier without one). Each level-1 sends it to its own broadcast mask's
//    nodes (a barrier: its TC mask). Contributions to one operation either all
//    carry X or none (not_participant otherwise).
//  - BCAST32/64 with X (broadcast, and multicast through a broadcast mask
//    naming a subset) goes up as it is; the level 2 sends it to its broadcast
//    mask's level-1 controllers, which send it to their broadcast masks' nodes.
//    A result coming down before the level-1's SETBM for its tag waits for it.
//  - Held masks (two levels only; an operation identity, wire.h, beside the thesis's
//    one mask entry a word): a level-1's mask for a broadcast from above is set by a
//    receiving node long before the data comes (casts.cpp), and a level 2's by each
//    sender from its own level-1, so two operations on one word (two multicasts to
//    other recipients, back to back or from two senders at once) meet there, which
//    one level never sees (the sender's SETBM and BCAST are one locked burst). A
//    SETBM (X or not) that finds the word's entry set for another operation is held
//    beside it instead of refused (mask_in_use, read as "a peer set it", left that
//    operation's receivers waiting for ever); the data of a broadcast, or a result
//    from above, goes only to its own operation's mask, the entry's or a held one,
//    and waits (parked) while it has none. A VOID, a task's end and a cleared
//    partition free held masks as they free the entry. A SETBM of an operation whose
//    broadcast has gone out already (a receiver on the sender's host that set the mask
//    too, late) is refused mask_in_use ("a peer set it") instead of set for ever.
//    PROBE's answer carries X at a level-1 with a parent (the partition extends beyond
//    it): a receiver naming no sender sets its controller's mask, as the sender may be
//    on another controller; a BCAST is then not sent back to its own channel.
//  - SETTC/SETBM with X program the level-2 entries: libcop sends them like the
//    local ones, with X set and a mask of CNTNOs (bit k: controller k); the
//    level-1 forwards them and the task gets the level 2's ACK, or NACK
//    mask_in_use for an entry a peer has set (SPMD, as above).
//  - RSRAM/WSRAM/RMW with X: the GAS and SAS ones are the level 2's own words
//    (variables shared by the whole two-level partition). A TAS access with X
//    needs Z: CNTNO and CHNO in the address name the controller and channel;
//    the level 2 sends it down to that level-1 controller (its channel
//    CNTNO+1), which executes it with the rules above: the owner of a task
//    address space is the task on that controller and channel, so the
//    original sender travels with the command (Sender::cntno/chno).
//  - Answers (ACK/NACK, read data) for a forwarded command go back the same way
//    to the asking task: it gets exactly one ACK or NACK, from the controller
//    that executed the command. LOCK, UNLOCK and PROBE with X are refused
//    (channel_range); a level-1 executes a command from its parent between
//    channel polls (the parent's link is not a channel).
//  - Protection and partitions: the level-1 checks U/S, TKNO and PPN as for any
//    command before forwarding; the level 2 checks them again against the
//    carried sender and against its own partitions (its SAS word [c] is the
//    partition of level-1 controller c: a two-level partition takes whole
//    level-1 controllers). fail_channel on a level-2 channel (a level-1
//    controller gone) NACKs link_down to the other level-1 controllers of the
//    operations waiting for it; each level-1 passes the NACK to its nodes in
//    the operation and frees its entries. A level-1 that voids an X operation
//    its nodes had begun to contribute to (fail_channel, end_task) sends the
//    NACK up, and the level 2 voids it for the other level-1 controllers.
//  - Transport: Delivery::to_parent marks a message going up (level-1 ->
//    level-2) and Delivery::hop what it is (a command to execute, an answer
//    for a task, or a result/broadcast when none). A transport carries hop
//    beside the words (a link header) and hands what comes down to
//    receive_from_parent and what comes up to receive_from_child.
//  - Cycles: each pass through a level charges its t_OP; the link up is
//    charged t_CN-COP (the level-1 writes into the level 2 as a node writes
//    into its COP) and the link down t_COP-CN (hardware/timing.h), so a
//    broadcast to 4095 nodes is the thesis's three passes through a COP level.
#pragma once

#include <cop/wire.h>

#include <array>
#include <bitset>
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "controller/data_ram.h"
#include "hardware/timing.h"

namespace cop::controller {

struct Config {
  int channels = wire::kChannels;
  uint32_t tasks_per_channel = 16;  // task address spaces in each channel address space
  uint32_t tas_words = 256;         // 64-bit words in one task address space
  uint32_t gas_words = 65536;       // global address space (one TC and BM entry per word)
  uint32_t sas_words = 128;         // system address space: [0] CNTNO, [1..64] channel PPN
  int partitions = 4;               // PPN values in use (each has its own CAS, GAS and masks)
  uint8_t cntno = 0;
  int level = 1;            // 1: channels are nodes; 2: channels are level-1 controllers
  bool has_parent = false;  // level 1 only: a level-2 controller takes X commands
  // The deadlock timer: a LOCK held longer than this (microseconds of the time
  // tick() is given) is taken back from its holder. 0: never (the thesis's
  // hardware without the timer; the timing model, which gives no time).
  uint64_t lock_limit_us = 0;
  // An operation whose terminal-count mask names a vacant channel (set_vacant)
  // is voided when the channel is still vacant this long after its SETTC. 0: never.
  uint64_t vacant_limit_us = 0;
  // Runs (issue 36; copd sets it): a run of a burst's element commands queued by
  // receive_run is serviced in one tight loop while its channel holds the lock (the
  // element path would service those elements back to back: locked_channel_next), and
  // its ACKs and the data words they send come out as run deliveries (Delivery::run).
  // Each element is still serviced on its own (its checks, cycles, RAM: runs.cpp), so the
  // state and the modelled at_cycle of every element are the element path's;
  // expand_runs gives the element path's deliveries back. false: every run is split
  // into elements as they reach the poll counter (the timing model, the tests).
  bool runs = false;

  wire::Limits limits() const {
    return wire::Limits{channels, tasks_per_channel, tas_words, gas_words, sas_words};
  }
};

// Who sent a command, as the link established it (never what the command's own
// fields claim): the channel's driver may send supervisor (U/S) commands; a
// task may act only as the task number its driver enrolled it under.
struct Sender {
  bool supervisor = false;
  uint16_t tkno = 0;  // the enrolled task (unused when supervisor: its commands' TKNO is trusted)
  // A command forwarded between levels: the level-1 controller (CNTNO) and its
  // channel it came from (chno 0: that controller itself, its combined contribution).
  uint8_t cntno = 0;
  uint8_t chno = 0;
};

// What a message between levels is, besides its words (a transport's link header).
struct Hop {
  enum Kind : uint8_t {
    none,     // a result, barrier exit or broadcast (down), or not between levels
    command,  // a command to execute; origin sent it
    answer,   // ACK/NACK or read data for origin's task (origin.chno 0: for the level-1 itself)
    release,  // down: the operation on the message's (PPN, tag) is complete and this level-1
              // is not among its receivers (not in the level 2's broadcast mask): free its entries
  };
  Kind kind = none;
  Sender origin;
};

// A message going out to nodes: one channel for answers, a mask for broadcasts.
struct Delivery {
  uint64_t channels = 0;  // bit (c-1) set for channel c
  wire::Message msg;
  uint64_t at_cycle = 0;  // modelled time at which the receiving nodes have it
  bool link_level = false;  // ACK/NACK/resend, produced by the channel interface
  bool to_parent = false;   // level 1 -> level 2 (channels is 0)
  // A NACK that ends an operation (fail_operation: voided, mismatch, task ended, link
  // down) for every node of `channels`: no command's answer, even to one channel and
  // even when it comes out of servicing a command (a mismatched contribution, a VOID).
  bool ends_operation = false;
  Hop hop;
  // A run (Config::runs; 0: one message). run >= 1: `run` elements, element k at
  // at_cycle + k * run_step; an ACK run's elements are all `msg`, a data run's (results,
  // broadcast words: run_data not empty) are `msg` with MSGTAG + k and data words
  // run_data[k] (Message::data64). run_interleaved (an ACK run): its elements alternate
  // with the next delivery's, the data run they sent (ACK 0, data 0, ACK 1, ...), the
  // order the element path gives (Controller::expand_runs).
  uint32_t run = 0;
  uint64_t run_step = 0;
  std::vector<uint64_t> run_data;
  bool run_interleaved = false;

  Delivery() = default;
  Delivery(uint64_t to_channels, const wire::Message& m, uint64_t at, bool link = false, bool up = false, Hop h = {})
      : channels(to_channels), msg(m), at_cycle(at), link_level(link), to_parent(up), hop(h) {}

  bool to(int channel) const { return (channels >> (channel - 1)) & 1u; }
};

inline uint64_t channel_bit(int channel) { return channel < 1 ? 0 : uint64_t{1} << (channel - 1); }

struct Stats {
  uint64_t serviced = 0;
  uint64_t nacks = 0;
  uint64_t broadcasts = 0;
  uint64_t locks_taken_back = 0;  // by the deadlock timer (Config::lock_limit_us)
};

class Controller {
 public:
  explicit Controller(Config config = {}, hardware::Timing timing = {});

  const Config& config() const { return config_; }
  const hardware::Timing& timing() const { return timing_; }

  // A command fully received on `channel` (1..channels) from `from`, as the
  // link authenticated it: it waits for service from `ready_at` (modelled
  // cycles) on. A command claiming more than `from` may (U/S set by a task,
  // another task's number in TKNO) is refused with NACK protection when it is
  // serviced (in its channel's order) and changes nothing. Its ACK/NACK and
  // answers carry the sender's task number. Link-level messages (ACK, NACK,
  // XMIT) are handled at once by the channel interface and may produce a resend.
  // `checked`: the caller made `msg` with wire::decode(..., Direction::to_controller,
  // config().limits()) and changed nothing since (copd), so its fields are known to be
  // in range and servicing it does not validate them again; every other check
  // (U/S, TKNO, PPN, masks, ...) is made as for any command.
  void receive(int channel, const wire::Message& msg, uint64_t ready_at, Sender from, std::vector<Delivery>& out,
               bool checked = false);
  // A run of commands from one sender on `channel` (a frame's, in order), as many calls
  // of the above would queue them, in one call: each is still serviced on its own, in
  // the poll counter's order (another channel's commands may come between two of them
  // unless a LOCK holds the channel), with its own checks, ACK/NACK and cycles.
  void receive(int channel, std::span<const wire::Message> commands, uint64_t ready_at, Sender from,
               std::vector<Delivery>& out, bool checked = false);
  // For in-process use only (the timing model, tests, receive_words): the
  // sender is the user task that the command's own TKNO field names (task 0
  // for SETTC/SETBM, whose field is a count). It can never send a U/S command;
  // pass Sender{true, ...} to the overload above for that. A daemon serving a
  // network must use the overload above with what its link authenticated.
  void receive(int channel, const wire::Message& msg, uint64_t ready_at, std::vector<Delivery>& out) {
    receive(channel, msg, ready_at, in_process_sender(msg), out);
  }
  void receive(int channel, const wire::Message& msg, std::vector<Delivery>& out) {
    receive(channel, msg, cycles_, out);
  }
  static Sender in_process_sender(const wire::Message& msg);
  // A run of a burst's element commands (issue 36; seed 000 ch. VI): `first` and then
  // data.size() - 1 more, element k being `first` with MSGTAG + k and data words
  // data[k] (Message::data64), the same sender, instruction word and operation
  // identity; only BCAST32/64 and reductions (else std::invalid_argument). Queued as one
  // record; serviced as the elements would be one by one (Config::runs above).
  void receive_run(int channel, const wire::Message& first, std::span<const uint64_t> data, uint64_t ready_at,
                   Sender from, bool checked = false);
  // Whether `next` is the element after `prev` in a run receive_run takes (not X: a
  // level-1 passes those up one by one).
  static bool continues_run(const wire::Message& prev, const wire::Message& next);
  // The element path's deliveries for `in`: its run deliveries unpacked, in order.
  static std::vector<Delivery> expand_runs(std::span<const Delivery> in);
  // Raw words (in-process sender, as above): malformed ones are answered with a NACK at once.
  void receive_words(int channel, std::span<const uint32_t> words, std::vector<Delivery>& out);

  bool data_ready(int channel) const { return !queue(channel).empty(); }
  // Whether the channel's head command waits for an operation in progress on
  // its tag to complete (see the accessed bits above): DATA_RDY is up but the
  // poll counter passes the channel.
  bool held(int channel) const;
  // Services the next command in poll order (only the locked channel's while
  // a channel is locked), passing channels that are held. Returns false when
  // there is nothing it may service.
  bool step(std::vector<Delivery>& out);
  // Steps until nothing is serviceable; returns how many commands it serviced.
  int run(std::vector<Delivery>& out);

  // The caller's clock (microseconds, never going back): the time a LOCK is
  // taken at, and the deadlock timer. A LOCK held past Config::lock_limit_us
  // is taken back here (see the deadlock timer above); returns whether it was.
  // Operations waiting too long for a vacant channel are voided here (their NACKs in
  // `out`, for every channel of their masks, as end_task's).
  bool tick(uint64_t now_us, std::vector<Delivery>& out);
  bool tick(uint64_t now_us) {
    std::vector<Delivery> out;
    return tick(now_us, out);
  }
  // When the lock held now runs out (UINT64_MAX: no lock, or no limit).
  uint64_t lock_deadline_us() const;

  int poll_counter() const { return poll_; }
  int locked_channel() const { return locked_; }
  uint64_t cycles() const { return cycles_; }
  const Stats& stats() const { return stats_; }

  // Inspection, for tests and the daemon's status output.
  const DataRam& ram() const { return ram_; }
  uint8_t channel_partition(int channel) const;
  // Jobs (seed 000 ch. V, partitions): several jobs may have tasks on one
  // channel, each job in its own partition. The operating system (copd, when
  // the task joins its job) says which partition task `tkno` of `channel`
  // acts in; its commands must name that PPN (else NACK partition). A
  // channel may be named in a partition's masks and task address space
  // accesses when the partition is the channel's own (SAS word [c]) or a
  // job's (some task is in it: a job's tasks may be on any node, and each
  // task takes only its own partition's results). kChannelPartition: the channel's own (the
  // default, what a task that joined no job acts in). end_task and
  // reset_channel set it back to kChannelPartition. Level 1 only.
  static constexpr uint8_t kChannelPartition = 0xFF;
  void set_task_partition(int channel, uint16_t tkno, uint8_t ppn);
  uint8_t task_partition(int channel, uint16_t tkno) const;
  // A job's partition is free again (its last task ended): its GAS words,
  // mask entries, task address spaces and parked results are cleared, so the
  // next job given the PPN finds nothing of the last one.
  void clear_partition(uint8_t ppn);
  // Forgets a channel's queued commands and releases its lock (its node is gone).
  void reset_channel(int channel);
  // The channel's node is gone for good (copd's lease on it ran out): besides
  // reset_channel, every global operation still waiting for its contribution
  // can never complete, so the channels taking part or waiting for the result
  // get a NACK link_down for that tag and the mask entries are freed. Returns
  // how many operations were failed.
  int fail_channel(int channel, std::vector<Delivery>& out);
  // Task `tkno` of `channel` ended (its driver saw it exit or die, or the
  // number is being given to a new task): afterwards the number starts clean.
  //  - Its queued commands (sent as user task `tkno`) are dropped without an
  //    answer: a daemon that matches answers to commands by channel order must
  //    drop that task's entries from its own per-channel FIFO too.
  //  - A LOCK it holds is released (the round robin runs again), and a lock the
  //    deadlock timer took back from it is forgotten.
  //  - Its task address space is zeroed (every partition).
  //  - A global operation still in progress fails when it can no longer
  //    complete: it waits for this channel's contribution and either the task
  //    set its terminal-count entry (SETTC and contribution travel together,
  //    so the contribution was to be the task's), or a contribution to it was
  //    among the dropped commands, or no other task of the channel has sent a
  //    command since it (re)started. A broadcast mask entry the task set for a
  //    BCAST that has not come fails too. The entries are freed and every
  //    channel taking part (TC mask and broadcast mask, this one included)
  //    gets a NACK task_ended for the tag, like fail_channel's (send them to
  //    every channel in Delivery::channels, not as answers to queued commands).
  //    An operation the task set or contributed to that can still complete
  //    (its channel has contributed) runs on and frees its entries when done.
  // Returns how many global operations were failed.
  int end_task(int channel, uint16_t tkno, std::vector<Delivery>& out);
  // Whether the channel has no task any more (the daemon says so when the last
  // task enrolled on it ended, and no longer when a task enrols). end_task voids
  // the operations already waiting for such a channel; one whose SETTC comes
  // after (a member that died before the call) is voided the same way (NACK
  // task_ended to its channels) when the channel is still vacant
  // Config::vacant_limit_us after the SETTC (tick), so the others' wait ends
  // then instead of at their CopTimeout, while a task that enrols in time (a
  // new job's, slower to start than its peers) takes part as usual.
  void set_vacant(int channel, bool vacant);
  bool vacant(int channel) const { return (vacant_ & channel_bit(channel)) != 0; }

  // Two levels (levels.cpp). A level-1 with a parent: what came down from the
  // level 2 (a result, a command to execute, an answer to pass on).
  void receive_from_parent(const Delivery& down, std::vector<Delivery>& out);
  // A level 2: what came up from level-1 controller `channel` (CNTNO channel-1):
  // commands are queued as receive() does, with the carried sender; answers
  // for a task on another level-1 go down to it.
  void receive_from_child(int channel, const Delivery& up, std::vector<Delivery>& out);

 private:
  struct Pending {
    wire::Message msg;
    uint64_t ready_at;
    Sender from;
    bool checked = false;  // decoded against config().limits() (receive's `checked`)
    // A run (receive_run): every element's data words; `msg` is element `next`'s.
    std::vector<uint64_t> run;
    uint32_t next = 0;
    uint32_t elements() const { return run.empty() ? 1 : uint32_t(run.size()) - next; }
    Pending(const wire::Message& m, uint64_t ready, Sender f, bool c = false)
        : msg(m), ready_at(ready), from(f), checked(c) {}
  };
  using TaskSet = std::bitset<wire::kMaxTkno + 1>;

  std::deque<Pending>& queue(int channel) { return queues_[static_cast<size_t>(channel - 1)]; }
  const std::deque<Pending>& queue(int channel) const { return queues_[static_cast<size_t>(channel - 1)]; }
  int next_channel();
  // The locked sequence's next command (on the locked channel), 0 when it waits.
  int locked_channel_next();
  // The round robin over every channel, commands of the `excluded` partitions
  // (bit PPN) left out; 0 when nothing is serviceable.
  int polled_channel(uint32_t excluded);
  // Whether `msg` from `channel` would take part a second time in an operation in progress.
  // `elements`: a run's, on the tags after msg's too.
  bool repeats_in_progress(int channel, const wire::Message& msg, uint32_t elements = 1) const;
  // Whether queued command i of `channel` waits for an operation in progress
  // (a LOCK: its partition's commands up to the UNLOCK).
  bool waits(int channel, size_t i) const;
  // The queued command of `channel` the poll counter may service: the head, or
  // when it waits, the first of another partition (another job) whose own
  // commands before it do not wait; -1 when none.
  int serviceable(int channel, uint32_t excluded = 0) const;
  void service(int channel, const Pending& p, std::vector<Delivery>& out);
  // Runs (runs.cpp): the run record chosen_ of `channel` serviced, in one loop while the
  // lock holds (Config::runs) or one element.
  void step_run(int channel, std::vector<Delivery>& out);
  // The record's `n` elements from `next` taken off it (the record gone after its last); false then.
  bool advance_run(int channel, uint32_t n = 1);
  // One serviced element's deliveries (`element`) joined to the run deliveries in `out`
  // (at ack_at, data_at); false when they are not of a run's shape.
  bool extend_run(std::vector<Delivery>& element, std::vector<Delivery>& out, size_t& ack_at, size_t& data_at) const;
  // The elements of `channel`'s run record r from its element `next` on that are the
  // common case continuing the open run (a broadcast with its mask, a contribution that
  // leaves its operation pending or completes it, one level without a parent), serviced in
  // one loop: the state and run deliveries service() and extend_run would give, without
  // their generality; how many (0: the first is not one, nothing changed). r not advanced.
  uint32_t plain_elements(int channel, const Pending& r, std::vector<Delivery>& out, size_t ack_at, size_t data_at);
  // plain_elements' loop for the record's opcode: its function and payload width decided
  // once (issue 36); each element its own checks, RAM and cycles, its ACK and data word
  // added to the open runs `acks` and `d` (null: none). How many; it stops, that element
  // unchanged, at the first that is not the common case.
  uint32_t plain_loop(int channel, const Pending& r, Delivery& acks, Delivery* d);
  uint32_t plain_casts(const Pending& r, Delivery& acks, Delivery* d, bool wide);
  template <wire::Opcode OP>
  uint32_t plain_contributions(int channel, const Pending& r, Delivery& acks, Delivery* d, bool wide);
  bool plain_element_valid(const Pending& r, uint32_t n) const;
  bool plain_checks(int channel, const Pending& r) const;  // execute()'s first checks, passed
  std::vector<Delivery> scratch_;  // step_run's, per element
  wire::Error execute(int channel, const wire::Message& msg, Sender from, std::vector<Delivery>& out,
                      bool checked = false);
  // RSRAM/WSRAM/RMW (data_ram_access.cpp).
  wire::Error data_ram_access(int channel, const wire::Message& msg, Sender from, std::vector<Delivery>& out);
  wire::Error read_mask_entry(int channel, const wire::Message& msg, std::vector<Delivery>& out);
  // A WSRAM to the GAS word of an operation in progress: its first partial result.
  wire::Error initialise_operation(int channel, const wire::Message& msg, std::vector<Delivery>& out);
  // The word `msg` addresses, after the space's protection rules.
  wire::Error locate_word(int channel, const wire::Message& msg, Sender from, uint64_t*& word);
  // Global operations (global_ops.cpp).
  wire::Error contribute(int channel, const wire::Message& msg, std::vector<Delivery>& out);
  wire::Error set_mask(int channel, const wire::Message& msg, Sender from, bool broadcast_ram,
                       std::vector<Delivery>& out);
  // SETTC with an empty mask (see "Voiding" above): the operations on the words that
  // this channel takes part in are voided (NACK voided to their other channels), except,
  // when the VOID carries an operation identity (wire.h), one of that call's own round or
  // a later one (global_ops.cpp).
  wire::Error void_operations(int channel, const wire::Message& msg, std::vector<Delivery>& out);
  // Voids the operation on (ppn, tag): frees its entries and NACKs `dest` with `why`.
  void fail_operation(uint8_t ppn, uint32_t tag, uint64_t dest, wire::Error why, std::vector<Delivery>& out);
  wire::Error broadcast(int channel, const wire::Message& msg, std::vector<Delivery>& out);
  wire::Error check_mask(uint64_t mask, uint8_t ppn) const;
  // The partition `from`'s commands on `channel` act in (its job's, else the channel's).
  uint8_t partition_of(int channel, Sender from) const;
  // Whether a command of `from` on `channel` may name partition `ppn` (its task's, at
  // a level 2 the channel's own or one of its level-1's jobs').
  bool acts_in(int channel, Sender from, uint8_t ppn) const;
  // Whether `channel` may take part in partition `ppn` (its own, or a job's).
  bool in_partition(int channel, uint8_t ppn) const;
  // The last contribution is in: the result (or the barrier exit) goes to the
  // broadcast mask's channels and the entries are free again.
  void complete_operation(uint8_t ppn, uint32_t tag, const wire::Message& op, std::vector<Delivery>& out);
  void emit(uint64_t mask, const wire::Message& msg, std::vector<Delivery>& out);
  // Keeps what went last to each channel, for the interface's resend (XMIT).
  void remember(uint64_t mask, const wire::Message& msg);
  uint64_t cost(const wire::Message& msg) const;
  wire::Message acknowledgment(const wire::Message& msg, Sender from, wire::Error e);
  // An answer (read data, PROBE) to the asking task: its channel, or back the
  // way a forwarded command came.
  void answer(int channel, const wire::Message& msg, std::vector<Delivery>& out);
  // Two levels (levels.cpp).
  uint8_t own_cntno() const { return static_cast<uint8_t>(ram_.sas(0)); }
  // A level-1's X command: contributions stay here, the rest goes up.
  wire::Error forward(int channel, const wire::Message& msg, Sender from, std::vector<Delivery>& out);
  // A level 2's TAS access with X and Z: down to the level-1 controller CNTNO.
  wire::Error route_down(const wire::Message& msg, Sender from, std::vector<Delivery>& out);
  void send_up(const wire::Message& msg, Hop hop, std::vector<Delivery>& out);
  // The local part of an X operation is complete: its combined contribution goes up.
  void contribute_up(uint8_t ppn, uint32_t tag, const wire::Message& op, std::vector<Delivery>& out);
  // A result or broadcast from the level 2: to this level-1's nodes.
  void relay_down(const wire::Message& msg, uint64_t ready_at, std::vector<Delivery>& out);
  // Results that came down before the SETBM of their tag, delivered by it.
  void deliver_parked(uint8_t ppn, uint32_t first, uint32_t n, std::vector<Delivery>& out);
  // Held masks (the rules above; levels.cpp). Whether this core keeps them: a level 2
  // or a level-1 with a parent.
  bool holds_masks() const { return config_.level == 2 || config_.has_parent; }
  // The broadcast mask of the operation `op_id` on (ppn, tag): the word's entry when it
  // is that operation's (on one level: when it is set at all), else a held mask of it;
  // nullptr when it has none.
  const BmEntry* mask_of(uint8_t ppn, uint32_t tag, uint64_t op_id) const;
  // `m` (from mask_of(ppn, tag, ...)) has had its result: the entry's accessed bit reset, a
  // held mask dropped.
  void free_mask(uint8_t ppn, uint32_t tag, const BmEntry* m);
  // Whether `op_id` is an earlier round of the operation of a mask set on (ppn, tag).
  bool older_than_a_mask(uint8_t ppn, uint32_t tag, uint64_t op_id);
  // Voids the held masks on (ppn, [first, first+n)) that `doomed` picks: NACK `why` to
  // their channels but `except`. Returns how many.
  int void_held_masks(uint8_t ppn, uint32_t first, uint32_t n, const std::function<bool(const BmEntry&)>& doomed,
                      uint64_t except, wire::Error why, std::vector<Delivery>& out);
  void execute_from_parent(const Delivery& down, std::vector<Delivery>& out);
  // A level-1 voids an X operation its nodes can no longer complete: the level 2 voids it for the others.
  void void_upward(uint8_t ppn, uint32_t tag, wire::Error why, std::vector<Delivery>& out);
  void void_from_child(int channel, const wire::Message& nack, std::vector<Delivery>& out);
  // A level-1's NACK mismatch queued by receive_from_child, serviced in its channel's order.
  wire::Error mismatch_from_child(int channel, const wire::Message& nack, std::vector<Delivery>& out);
  void answer_from_parent(const Delivery& down, std::vector<Delivery>& out);

  Config config_;
  hardware::Timing timing_;
  DataRam ram_;
  std::vector<std::deque<Pending>> queues_;
  std::vector<wire::Message> last_sent_;  // per channel, for XMIT
  std::vector<bool> has_last_sent_;
  static bool same_sender(const Sender& a, const Sender& b);  // what service()'s command gives, before its ACK goes out
  std::vector<TaskSet> live_;  // per channel: tasks that sent commands since they (re)started
  int poll_ = 0;    // channel serviced last (0 before the first)
  int locked_ = 0;  // channel holding the lock, 0 when the round robin runs
  Sender lock_owner_;  // who sent the LOCK
  uint64_t vacant_ = 0;        // channels whose tasks have all ended (set_vacant)
  // Operations set up over a vacant channel, voided at deadline_us if it stays vacant.
  struct VacantWait {
    uint8_t ppn;
    uint32_t first, n;
    uint64_t deadline_us;
  };
  std::vector<VacantWait> vacant_waits_;
  uint64_t now_us_ = 0;        // the caller's clock, as of the last tick()
  uint64_t locked_at_us_ = 0;  // when the LOCK was serviced
  // Per channel: a task whose LOCK the deadlock timer took back; its commands
  // up to its UNLOCK are refused (lock_timeout).
  struct Revoked {
    bool set = false;
    Sender owner;
  };
  std::vector<Revoked> revoked_;
  bool refused_as_revoked(int channel, const Pending& p);
  uint8_t lock_ppn_ = 0;  // and in which partition
  uint64_t cycles_ = 0;
  Stats stats_;
  // The command being serviced: whom its answers go to, and whether it came
  // from the parent (answers go up) or went elsewhere (no ACK from here).
  Sender asker_;
  bool from_parent_ = false;
  bool passed_on_ = false;
  std::vector<wire::Message> parked_;
  struct HeldMask {
    uint8_t ppn;
    uint32_t tag;
    BmEntry entry;
  };
  std::vector<HeldMask> held_masks_;  // in the order they were set
  // Two levels: the identity of the last broadcast that went out on each (PPN << 32 | tag)
  // (a SETBM of that round comes too late: refused mask_in_use, not left set for ever).
  std::unordered_map<uint64_t, uint64_t> cast_done_;
  void cast_went_out(uint8_t ppn, uint32_t tag, uint64_t op_id);
  bool cast_gone(uint8_t ppn, uint32_t tag, uint64_t op_id) const;
  std::vector<uint8_t> task_ppn_;  // per (channel, TKNO): set_task_partition's PPN or kChannelPartition
  std::array<uint32_t, wire::kMaxPpn + 1> ppn_tasks_{};  // tasks set_task_partition put in each partition
  std::vector<std::array<uint32_t, wire::kMaxPpn + 1>> queued_ppn_;  // per channel: queued commands per PPN
  size_t chosen_ = 0;  // next_channel's pick in its channel's queue
  int steps_ = 0;      // commands serviced (run()'s count; a run record services many in one step)
};

}  // namespace cop::controller
