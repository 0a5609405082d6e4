// The channel part of each collective: the one task of a host that goes to the
// controller for all of them (seed 000 ch. V, "Barrier Implementation") sends
// the call's bursts (lib/commands.h) and, where the call has a result, waits for
// the controller's broadcast of it. An array goes as bursts of t_MAX-OP's 128
// element commands inside one LOCK/UNLOCK (ch. VI), as many whole bursts a
// frame as the port carries (direct access: as fit in one link frame in compact
// runs, cop/link.h).
#include <cop/link.h>

#include "lib/elements.h"
#include "lib/library.h"

namespace cop::lib {

using driver::Answer;
using driver::ResultKind;
using driver::Wanted;
using wire::Error;
using wire::Message;
using wire::Opcode;

namespace {

// Every command answered ACK, except SETTC/SETBM answered "in use": a peer
// channel initialised the masks (SPMD). Found by opcode: a frame holds many bursts.
bool masks_refused_only(std::span<const Message> cmds, const std::vector<Answer>& a) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].error == Error::none) continue;
    const Opcode op = i < cmds.size() ? cmds[i].ins.opcode : Opcode::ACK;
    if ((op == Opcode::SETTC || op == Opcode::SETBM) && a[i].error == Error::mask_in_use) continue;
    return false;
  }
  return true;
}

// The first error among the answers that is not a mask command's "in use" (a peer
// initialised the masks; the refusal that matters, e.g. a contribution's mismatch, may
// come later in the frame).
int first_refusal(std::span<const Message> cmds, const std::vector<Answer>& a) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].error == Error::none) continue;
    const Opcode op = i < cmds.size() ? cmds[i].ins.opcode : Opcode::ACK;
    if ((op == Opcode::SETTC || op == Opcode::SETBM) && a[i].error == Error::mask_in_use) continue;
    return code(a[i].error);
  }
  return 0;
}

// One frame of a reduction at a host with a root: sent, its results awaited
// (copd holds the frame's answers for them), then the answers checked.
int reduce_frame_at_root(const commands::FramedBursts& fr, uint32_t tag, std::span<uint64_t> words) {
  auto& port = *lib().port;
  // A result of these words already here came before this contribution: an earlier operation's.
  driver::forget_results(*port.window(), uint8_t(info().ppn), fr.first_tag, fr.words, false);
  if (Error e = port.send_only(fr.commands); e != Error::none) return fail_and_notify(code(e));
  std::vector<Message>& results = lib().results;
  results.resize(fr.words);  // every one written by a wait that succeeds: not cleared
  const Error waited = port.await(Wanted{ResultKind::reduction, fr.first_tag, fr.words, 0, lib().op_id}, results, nullptr);
  std::vector<Answer>& a = lib().answers;
  if (Error e = port.finish(a); e != Error::none) return fail_and_notify(code(e));
  if (!masks_refused_only(fr.commands, a)) return first_refusal(fr.commands, a);
  if (waited != Error::none) return fail_and_notify(code(waited));
  copy_payloads(std::span<const Message>(results).first(fr.words), words.subspan(fr.first_tag - tag, fr.words));
  return 0;
}

// Whole bursts in frames of as many commands as the port takes and, in direct
// access (the port's commands are one link frame), as many bytes as fit in one,
// with room to spare: a burst's bytes are counted alone (cop/link.h encoded_bytes).
// Into the library's kept storage (Library::frames): valid until the next array call.
const std::vector<commands::FramedBursts>& frames_of(const std::vector<commands::ArrayBurst>& bursts) {
  auto& port = *lib().port;
  std::vector<commands::FramedBursts>& frames = lib().frames;
  if (!port.direct()) {
    commands::pack_into(frames, bursts, port.max_commands());
    return frames;
  }
  constexpr size_t kBudget = link::kMaxFrameBytes - link::kHeaderBytes - 4096;
  commands::pack_into(frames, bursts, port.max_commands(), kBudget,
                      [](const commands::Burst& b) { return link::encoded_bytes(b); });
  return frames;
}

// Each burst of an array call with its level-2 twins (two_level) when the
// call's members span level-1 controllers; unchanged otherwise.
std::vector<commands::ArrayBurst> with_level2(std::vector<commands::ArrayBurst> bursts, uint64_t l2_tc,
                                              uint64_t l2_bm) {
  if (l2_tc != 0)
    for (commands::ArrayBurst& b : bursts) b.commands = two_level(b.commands, l2_tc, l2_bm);
  return bursts;
}

}  // namespace

int channel_barrier(uint32_t tag, uint64_t mask, uint64_t l2) {
  if (int rc = settle(); rc < 0) return rc;
  const commands::Burst burst = two_level(commands::barrier(sender(), tag, mask), l2, l2);
  // One datagram in; the answers come back with the exit (copd holds them for it).
  auto& port = *lib().port;
  // An exit of this tag already here came before this BENTRY: an earlier barrier's.
  driver::forget_results(*port.window(), uint8_t(info().ppn), tag, 1, false);
  if (Error e = port.send_only(burst); e != Error::none) return fail_and_notify(code(e));
  Message exit;
  const Error waited = port.await(Wanted{ResultKind::barrier, tag, 1, 0, lib().op_id}, std::span<Message>(&exit, 1), nullptr);
  std::vector<Answer> a;
  if (Error e = port.finish(a); e != Error::none) return fail_and_notify(code(e));
  if (!masks_refused_only(burst, a)) return first_refusal(burst, a);
  return fail_and_notify(code(waited));
}

// A root host waits for each frame's results before it sends the next; a host
// without a root only has the answers to wait for.
int channel_reduce(Opcode op, uint32_t tag, std::span<uint64_t> words, uint64_t tc, uint64_t bm, bool here_root,
                   uint64_t l2_tc, uint64_t l2_bm) {
  if (int rc = settle(); rc < 0) return rc;
  auto& port = *lib().port;
  const auto& frames =
      frames_of(with_level2(commands::reduction_bursts(sender(), op, tag, words, tc, bm, kChunk), l2_tc, l2_bm));
  for (const commands::FramedBursts& fr : frames) {
    if (here_root) {
      if (int rc = reduce_frame_at_root(fr, tag, words); rc < 0) return rc;
      continue;
    }
    std::vector<Answer>& a = lib().answers;
    if (Error e = port.exchange(fr.commands, a); e != Error::none) return fail_and_notify(code(e));
    if (!masks_refused_only(fr.commands, a)) return first_refusal(fr.commands, a);
  }
  return 0;
}

int channel_bcast(Opcode op, uint32_t tag, std::span<const uint64_t> words, uint64_t mask, uint64_t l2) {
  if (int rc = settle(); rc < 0) return rc;
  auto& port = *lib().port;
  const auto& frames = frames_of(with_level2(commands::broadcast_bursts(sender(), op, tag, words, mask, kChunk), l2, l2));
  for (const commands::FramedBursts& fr : frames) {
    std::vector<Answer>& a = lib().answers;
    if (Error e = port.exchange(fr.commands, a); e != Error::none) return fail_and_notify(code(e));
    // Over two levels the designated host's receiver may have set this controller's
    // broadcast mask (casts.cpp, an any-sender receiver that had not yet seen the
    // sender's host-area slot, or one that cannot tell whether the sender is on another
    // controller): the operation's own mask, so "in use" is not a failure there.
    if ((l2 != 0 || lib().extends) && masks_refused_only(fr.commands, a)) continue;
    if (int rc = first_error(a); rc < 0) return rc;
  }
  return 0;
}

}  // namespace cop::lib
