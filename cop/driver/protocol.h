// What a task and copdrv say over the driver's Unix socket (DIR/copdrv.sock,
// the emulation's /dev/cop). SOCK_SEQPACKET keeps each request one message.
//
// Every task first registers (the driver's Pid table: pid, tid, TKNO) and
// gets the channel window (a memfd) and, in direct mode, the channel's UDP
// socket: the equivalent of the thesis's ioctl + mmap of the interface
// registers. The connection stays open for the task's life; when it closes
// the driver frees the TKNO. In normal mode every later request travels this
// connection and the driver does the channel work (two copies each way).
#pragma once
#include <cop/wire.h>

#include <cstdint>

#include "driver/channel.h"

namespace cop::driver {

inline constexpr const char* kSocketName = "copdrv.sock";

enum class Op : uint32_t { register_ = 1, exchange = 2, send_only = 3, finish = 4, await = 5, options = 6 };

struct RegisterRequest {
  Op op = Op::register_;
  int32_t pid = 0;
  int32_t tid = 0;
  int32_t wanted_tkno = -1;  // -1: any free one; -2: the tid's L field mod task spaces, or refuse
  uint32_t direct = 1;
  LinkOptions link;
  // The task's job (COP_JOB, ...; cop.h "Jobs"), NUL-terminated; empty: copdrv
  // names it after the task's user. Its tasks share a partition (PPN).
  char job[link::kMaxJobId + 1] = {};
};

struct RegisterReply {
  int32_t status = 0;  // 0, or a negative libcop error (cop.h)
  uint16_t chno = 0;
  uint16_t tkno = 0;
  uint16_t ppn = 0;
  uint16_t pad = 0;
  uint32_t channels = 0, tasks_per_channel = 0, tas_words = 0, gas_words = 0;
  // The task's enrolment nonce E: copdrv enrolled the task with copd under it
  // (public: it travels in ENROL; the key below derives from it and the cluster key).
  uint64_t enrol_nonce = 0;
  char detail[160] = {};
  // The task's key T (cop/link.h "Keys"): its command and ACK frames are MACed
  // with H(T, "session", S) (direct mode; in normal mode copdrv sends for the
  // task). In no shared memory. And the channel's down key, which checks
  // copd's frames to the channel.
  uint8_t task_key[32] = {};
  uint8_t down_key[32] = {};
  // SCM_RIGHTS: the window memfd, then (direct mode) the UDP socket.
};

// Normal mode: a request carries at most kMaxNormalCommands commands (one
// message on the driver's socket, kept well under its buffer).
inline constexpr int kMaxNormalCommands = 255;
struct ExchangeRequest {
  Op op;
  uint32_t count;
  wire::Message commands[kMaxNormalCommands];
};
struct ExchangeReply {
  int32_t error;  // wire::Error
  uint32_t count;
  Answer answers[kMaxNormalCommands];
};
inline constexpr uint32_t kMaxAwait = 1024;
struct AwaitRequest {
  Op op;
  Wanted wanted;
};
struct AwaitReply {
  int32_t error;
  uint32_t count;
  uint64_t at_cycle;
  wire::Message results[kMaxAwait];
};
struct OptionsRequest {
  Op op;
  LinkOptions link;
};

}  // namespace cop::driver
