// The poll counter (seed 000 ch. IV-V): which channel's command the controller
// services next. A command of an operation still in progress on its tags waits
// (controller.h, "same-tag operations"); another task's command (of its job or another)
// does not wait behind it; a locked sequence runs alone in its partition until its UNLOCK or the
// deadlock timer (other partitions' commands run while it waits for its holder).
#include "controller/controller.h"

#include <algorithm>
#include <bitset>

namespace cop::controller {

using wire::Message;
using wire::Opcode;
using wire::Space;

namespace {

// Commands that act on a global operation's mask entries (the GAS tags
// [first, first+n)): masks, contributions, the initialising write, broadcasts.
bool acts_on_operation(const Message& m, uint32_t& n) {
  switch (m.ins.opcode) {
    case Opcode::SETTC:
    case Opcode::SETBM:
      n = uint32_t(m.count());
      // A SETTC with an empty mask voids (void_operations): it ends an operation, so it
      // is never held for one.
      return !(m.ins.opcode == Opcode::SETTC && m.data64() == 0);
    case Opcode::BENTRY:
    case Opcode::BCAST32:
    case Opcode::BCAST64:
      n = 1;
      return true;
    case Opcode::WSRAM32:
    case Opcode::WSRAM64:
      n = 1;
      return m.ins.space == Space::GAS;
    default:
      n = 1;
      return wire::is_reduction(m.ins.opcode);
  }
}

}  // namespace

bool Controller::repeats_in_progress(int channel, const Message& m, uint32_t elements) const {
  uint32_t n = 1;
  if (!acts_on_operation(m, n) || m.ins.space != Space::GAS || m.ins.ppn >= ram_.partitions()) return false;
  if (elements > 1) n = elements;  // a run's elements: one tag each, consecutive
  const uint64_t bit = channel_bit(channel);
  // Only the words where the channel may have joined an operation in progress are read
  // (none, nearly always: its last operation completed before its next LOCK came, or the
  // next is on other words).
  const DataRam::Joined& joined = ram_.joined(m.ins.ppn, channel);
  const auto end = static_cast<uint32_t>(
      std::min<uint64_t>({uint64_t{m.addr.msgtag} + n, config_.gas_words, uint64_t{joined.hi}}));
  for (uint32_t tag = std::max(m.addr.msgtag, joined.lo); tag < end; ++tag) {
    const TcEntry& tc = ram_.tc(m.ins.ppn, tag);
    if (tc.accessed && (tc.mask & bit) && !(tc.pending & bit)) return true;
  }
  return false;
}

bool Controller::waits(int channel, size_t i) const {
  const auto& q = queue(channel);
  if (q[i].msg.ins.opcode != Opcode::LOCK) return repeats_in_progress(channel, q[i].msg);
  // A locked sequence is taken whole: holding it half-way would stop every channel.
  const uint8_t ppn = q[i].msg.ins.ppn;
  for (size_t k = i + 1; k < q.size(); ++k) {
    if (q[k].msg.ins.ppn != ppn) continue;  // another job's
    if (q[k].msg.ins.opcode == Opcode::UNLOCK) break;
    if (repeats_in_progress(channel, q[k].msg, q[k].elements())) return true;
  }
  return false;
}

int Controller::serviceable(int channel, uint32_t excluded) const {
  const auto& q = queue(channel);
  if (q.empty()) return -1;
  if (excluded == 0 && !waits(channel, 0)) return 0;
  // The head waits for an operation in progress (or its partition is excluded: a
  // locked one's). The commands of its sender stay behind it (each task's order, as
  // always); another task's, of another job or of the same one, need not wait for it:
  // two tasks on one channel would deadlock when the operation one waits for needs the
  // other's contribution queued behind it (issue 34: the agree of a cop_scatter of one
  // job behind its partner task's next reduction, difftest seed 9 with two jobs).
  const auto& counts = queued_ppn_[size_t(channel - 1)];
  size_t behind = 0;
  for (uint32_t p = 0; p <= wire::kMaxPpn; ++p)
    if (excluded & (1u << p)) behind += counts[p];
  struct Held {
    Sender from;
    uint8_t ppn;
  };
  std::array<Held, 16> held{};  // senders whose earlier command waits
  size_t nheld = 0;
  for (size_t i = 0; i < q.size() && behind < q.size(); ++i) {
    const uint8_t ppn = q[i].msg.ins.ppn & wire::kMaxPpn;
    if (excluded & (1u << ppn)) continue;
    if (std::any_of(held.begin(), held.begin() + long(nheld),
                    [&](const Held& h) { return h.ppn == ppn && same_sender(h.from, q[i].from); }))
      continue;
    // While another partition holds the lock a LOCK waits (one lock at a time), and its
    // sender's commands with it.
    if (!waits(channel, i) && !(excluded != 0 && q[i].msg.ins.opcode == Opcode::LOCK)) return int(i);
    if (nheld == held.size()) return -1;  // that many tasks held: the rest wait too
    held[nheld++] = Held{q[i].from, ppn};
  }
  return -1;
}

bool Controller::held(int channel) const { return !queue(channel).empty() && serviceable(channel) < 0; }

int Controller::next_channel() {
  if (!locked_) return polled_channel(0);
  if (const int c = locked_channel_next(); c != 0) return c;
  // The locked sequence waits for its holder's next commands. A LOCK stops the poll
  // counter at the locked channel (seed 000 ch. IV) so that the sequence's accesses to
  // its partition's words are atomic; another partition's commands (another job's,
  // whose words the sequence cannot reach) are serviced meanwhile, on every channel:
  // a job's LOCK never stalls another job for longer than one of its commands.
  return polled_channel(1u << (lock_ppn_ & wire::kMaxPpn));
}

int Controller::locked_channel_next() {
  // Only the locked channel runs. If its head is held, nothing else can
  // complete the operation it waits for: it is serviced and refused
  // (mask_in_use, not_participant) instead of stopping the controller.
  const auto& q = queue(locked_);
  if (q.empty()) return 0;
  // The locked sequence's own partition first: another job's commands on the
  // channel (one held, say) are not part of it. Within it, another sender's LOCK
  // (another task of the host's channel) and what that sender sends after it wait
  // until the sequence's UNLOCK: run between, its LOCK and UNLOCK would end the
  // sequence half-way (a locked array longer than one request to copdrv comes in
  // two, and the other task's burst could come between). The holder's commands
  // behind them are serviced; when none is queued the channel waits for them (the
  // deadlock timer takes the lock back from a holder that sends no more).
  chosen_ = 0;
  // Nearly always (the elements of a locked burst): the head is the holder's, in the
  // locked partition, which the search below would choose at once.
  if (q[0].msg.ins.ppn == lock_ppn_ && same_sender(q[0].from, lock_owner_)) {
    cycles_ = std::max(cycles_, q[0].ready_at);
    return locked_;
  }
  bool waits_for_owner = false, found = false;
  std::array<Sender, 4> later{};  // senders of a LOCK queued inside the sequence: theirs comes after it
  size_t nlater = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    if (q[i].msg.ins.ppn != lock_ppn_) continue;
    const Sender& from = q[i].from;
    const bool deferred = std::any_of(later.begin(), later.begin() + long(nlater), [&](const Sender& s) { return same_sender(s, from); });
    if (!deferred && q[i].msg.ins.opcode == Opcode::LOCK && !same_sender(from, lock_owner_) && nlater < later.size())
      later[nlater++] = from;
    if (deferred || (nlater > 0 && same_sender(later[nlater - 1], from))) {
      waits_for_owner = true;
      continue;
    }
    chosen_ = i;
    waits_for_owner = false;
    found = true;
    break;
  }
  if (waits_for_owner || !found) return 0;
  cycles_ = std::max(cycles_, q[chosen_].ready_at);
  return locked_;
}

int Controller::polled_channel(uint32_t excluded) {
  // The earliest ready head that is not held sets the clock; held() is asked
  // only of channels the poll counter reaches (a LOCK's look-ahead costs).
  // A held head's channel may still have another job's command to service (serviceable()).
  std::bitset<wire::kChannels> passed;  // held: DATA_RDY up, but not serviceable yet
  std::array<int, wire::kChannels> pick;
  pick.fill(-2);  // not asked yet
  auto candidate = [&](int c) -> const Pending& {
    const int k = pick[size_t(c - 1)];
    return queue(c)[k >= 0 ? size_t(k) : 0];
  };
  for (;;) {
    uint64_t earliest = UINT64_MAX;
    for (int c = 1; c <= config_.channels; ++c) {
      const auto& q = queue(c);
      if (!q.empty() && !passed.test(size_t(c - 1))) earliest = std::min(earliest, candidate(c).ready_at);
    }
    if (earliest == UINT64_MAX) return 0;
    const uint64_t now = std::max(cycles_, earliest);
    for (int i = 1; i <= config_.channels; ++i) {
      const int c = (poll_ + i - 1) % config_.channels + 1;
      const auto& q = queue(c);
      if (q.empty() || passed.test(size_t(c - 1)) || candidate(c).ready_at > now) continue;
      int& k = pick[size_t(c - 1)];
      if (k == -2) k = serviceable(c, excluded);
      if (k < 0) {
        passed.set(size_t(c - 1));
        continue;
      }
      if (q[size_t(k)].ready_at > now) continue;
      cycles_ = now;
      chosen_ = size_t(k);
      return c;
    }
  }
}

bool Controller::same_sender(const Sender& a, const Sender& b) {
  return a.supervisor == b.supervisor && a.tkno == b.tkno && a.cntno == b.cntno && a.chno == b.chno;
}

bool Controller::step(std::vector<Delivery>& out) {
  const int c = next_channel();
  if (c == 0) return false;
  auto& q = queue(c);
  if (!q[chosen_].run.empty()) {
    step_run(c, out);
    return true;
  }
  const Pending p = q[chosen_];
  // Nearly always the head (a channel's commands in order): popped, not erased.
  if (chosen_ == 0) q.pop_front();
  else q.erase(q.begin() + std::ptrdiff_t(chosen_));
  queued_ppn_[size_t(c - 1)][p.msg.ins.ppn & wire::kMaxPpn]--;
  poll_ = c;
  service(c, p, out);
  ++steps_;
  return true;
}

int Controller::run(std::vector<Delivery>& out) {
  const int before = steps_;
  while (step(out)) {
  }
  return steps_ - before;
}

}  // namespace cop::controller
