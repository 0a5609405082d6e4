// The channel part of each collective: the one task of a host that goes to the
// controller for all of them (seed 000 ch. V, "Barrier Implementation") sends
// the call's burst (lib/commands.h) and, where the call has a result, waits for
// the controller's broadcast of it.
#include "lib/library.h"

namespace cop::lib {

using driver::Answer;
using driver::ResultKind;
using driver::Wanted;
using wire::Error;
using wire::Message;
using wire::Opcode;

// The answers' SETTC and SETBM (entries 1 and 2 of each burst) may be refused as
// already initialised by a peer channel (SPMD): only other refusals are errors.
constexpr size_t kFirstMask = 1;

int channel_barrier(uint32_t tag, uint64_t mask, uint64_t l2) {
  const commands::Burst burst = two_level(commands::barrier(sender(), tag, mask), l2, l2);
  // One datagram in; the answers come back with the exit (copd holds them for it).
  auto& port = *lib().port;
  if (Error e = port.send_only(burst); e != Error::none) return fail_and_notify(code(e));
  Message exit;
  const Error waited = port.await(Wanted{ResultKind::barrier, tag, 1, 0}, std::span<Message>(&exit, 1), nullptr);
  std::vector<Answer> a;
  if (Error e = port.finish(a); e != Error::none) return fail_and_notify(code(e));
  if (!refused_only_as_initialised(a, kFirstMask, mask_commands(burst))) return first_error(a);
  return fail_and_notify(code(waited));
}

int channel_reduce(Opcode op, uint32_t tag, std::span<uint64_t> words, uint64_t tc, uint64_t bm, bool here_root,
                   uint64_t l2_tc, uint64_t l2_bm) {
  const commands::Burst burst = two_level(commands::reduction(sender(), op, tag, words, tc, bm), l2_tc, l2_bm);
  const size_t masks = mask_commands(burst);
  auto& port = *lib().port;
  std::vector<Answer> a;
  if (!here_root) {  // no root here: nothing comes back but the answers
    if (Error e = port.exchange(burst, a); e != Error::none) return fail_and_notify(code(e));
    return refused_only_as_initialised(a, kFirstMask, masks) ? 0 : first_error(a);
  }
  if (Error e = port.send_only(burst); e != Error::none) return fail_and_notify(code(e));
  std::vector<Message> results(words.size());
  const Error waited = port.await(Wanted{ResultKind::reduction, tag, uint32_t(words.size()), 0}, results, nullptr);
  if (Error e = port.finish(a); e != Error::none) return fail_and_notify(code(e));
  if (!refused_only_as_initialised(a, kFirstMask, masks)) return first_error(a);
  if (waited != Error::none) return fail_and_notify(code(waited));
  for (size_t i = 0; i < words.size(); ++i) words[i] = wire::payload(results[i]);
  return 0;
}

int channel_bcast(Opcode op, uint32_t tag, std::span<const uint64_t> words, uint64_t mask, uint64_t l2) {
  const commands::Burst burst = two_level(commands::broadcast(sender(), op, tag, words, mask), l2, l2);
  std::vector<Answer> a;
  if (Error e = lib().port->exchange(burst, a); e != Error::none) return fail_and_notify(code(e));
  return first_error(a);
}

}  // namespace cop::lib
