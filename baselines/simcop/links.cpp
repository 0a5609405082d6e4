// The simulated COP's links, in-process (links.h).
#include "simcop/links.h"

#include <algorithm>
#include <cmath>

namespace copbench::simcop {

uint64_t Wire::carry(uint64_t ready, uint64_t messages, uint64_t wire_cycles) {
  std::erase_if(busy_, [&](const auto& b) { return b.second <= ready; });
  double left = double(messages * wire_cycles), t = double(ready);
  for (;;) {
    // Others on the wire at t, and the next time that changes.
    int others = 0;
    double next = INFINITY;
    for (const auto& [on, off] : busy_) {
      if (double(on) <= t && t < double(off)) ++others;
      if (double(on) > t) next = std::min(next, double(on));
      if (double(off) > t) next = std::min(next, double(off));
    }
    const double rate = 1.0 / (others + 1);
    if (left <= (next - t) * rate) {
      t += left / rate;
      break;
    }
    left -= (next - t) * rate;
    t = next;
  }
  const uint64_t off = uint64_t(std::ceil(t - 1e-9));
  busy_.emplace_back(ready, off);
  return off;
}

void DownLink::put(std::span<const cop::wire::Message> msgs, uint64_t send_cycle, bool answers) {
  if (msgs.empty()) return;
  const uint64_t wire = link_.wire;
  const uint64_t ready = send_cycle + t_cop_cn_ - wire;
  if (answers) {
    // One burst of answers: on the wire m wire times, the node has them after the last.
    const uint64_t has = wire_.carry(ready, msgs.size(), wire) + link_.flight;
    for (const auto& m : msgs) queue_.push_back(Arrival{has, m, true});
  } else {
    for (const auto& m : msgs) queue_.push_back(Arrival{wire_.carry(ready, 1, wire) + link_.flight, m, false});
  }
  if (need_ > 0 && queue_.size() >= need_) {
    need_ = 0;
    bell_->release();
  }
}

DownLink::Arrival DownLink::take(size_t need) {
  if (queue_.empty()) {
    need_ = std::max<size_t>(need, 1);
    bell_->acquire();
  }
  Arrival a = queue_.front();
  queue_.pop_front();
  return a;
}

void Inbox::put(std::unique_ptr<Packet> p, uint64_t cycle) {
  queue_.push(Item{cycle, order_++, std::shared_ptr<Packet>(std::move(p))});
  if (!waiting_) return;
  waiting_ = false;  // one ring a wait: the controller looks at the queue again
  bell_->release();
}

std::unique_ptr<Packet> Inbox::take(uint64_t now) {
  if (queue_.empty() || queue_.top().cycle > now) return nullptr;
  auto p = std::make_unique<Packet>(std::move(*queue_.top().p));
  queue_.pop();
  return p;
}

void Inbox::wait(double seconds) {
  waiting_ = true;
  if (seconds < 0)
    bell_->acquire();
  else if (bell_->acquire_timeout(seconds))  // timed out: nothing rang
    waiting_ = false;
}

}  // namespace copbench::simcop
