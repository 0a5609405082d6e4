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

namespace {

// Processor sharing: the cycle each flow is off the wire, the flows at an equal share of
// its rate while on it together.
std::vector<double> shared_ends(const std::vector<uint64_t>& ready, const std::vector<uint64_t>& work) {
  const size_t n = ready.size();
  std::vector<double> left(work.begin(), work.end()), end(n, -1);
  double t = double(*std::min_element(ready.begin(), ready.end()));
  for (size_t done = 0; done < n;) {
    std::vector<size_t> on;
    double next = INFINITY;
    for (size_t i = 0; i < n; ++i) {
      if (end[i] >= 0) continue;
      if (double(ready[i]) <= t) on.push_back(i);
      else next = std::min(next, double(ready[i]));
    }
    if (on.empty()) {
      t = next;
      continue;
    }
    double least = INFINITY;
    for (size_t i : on) least = std::min(least, left[i]);
    const double k = double(on.size()), dt = std::min(least * k, next - t);
    for (size_t i : on) left[i] -= dt / k;
    t += dt;
    for (size_t i : on)
      if (left[i] <= 1e-9) end[i] = t, ++done;
  }
  return end;
}

}  // namespace

uint64_t Wire::share(uint64_t ready, uint64_t messages, uint64_t wire_cycles, std::function<void(uint64_t)> redate) {
  bool idle = true;
  for (const Flow& f : period_) idle &= f.off <= ready;
  if (idle) period_.clear();
  period_.push_back(Flow{ready, messages * wire_cycles, 0, std::move(redate)});
  std::vector<uint64_t> r, w;
  for (const Flow& f : period_) r.push_back(f.ready), w.push_back(f.work);
  const std::vector<double> end = shared_ends(r, w);
  for (size_t i = 0; i < period_.size(); ++i) {
    const uint64_t off = uint64_t(std::ceil(end[i] - 1e-9));
    if (i + 1 < period_.size() && off != period_[i].off && period_[i].redate) period_[i].redate(off);
    period_[i].off = off;
  }
  return period_.back().off;
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

uint64_t Inbox::put(std::unique_ptr<Packet> p, uint64_t cycle) {
  const uint64_t order = order_++;
  queue_.emplace(std::pair(cycle, order), std::move(p));
  cycle_of_[order] = cycle;
  if (waiting_) {
    waiting_ = false;  // one ring a wait: the controller looks at the queue again
    bell_->release();
  }
  return order;
}

void Inbox::redate(uint64_t order, uint64_t cycle) {
  const auto at = cycle_of_.find(order);
  if (at == cycle_of_.end()) return;  // taken already
  auto node = queue_.extract(std::pair(at->second, order));
  node.key().first = at->second = cycle;
  queue_.insert(std::move(node));
}

std::unique_ptr<Packet> Inbox::take(uint64_t now) {
  if (queue_.empty() || queue_.begin()->first.first > now) return nullptr;
  cycle_of_.erase(queue_.begin()->first.second);
  std::unique_ptr<Packet> p = std::move(queue_.begin()->second);
  queue_.erase(queue_.begin());
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
