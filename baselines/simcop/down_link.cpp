// A node's down link, in-process (down_link.h).
#include "simcop/down_link.h"

#include <algorithm>

namespace copbench::simcop {

void DownLink::put(std::span<const cop::wire::Message> msgs, uint64_t send_cycle, bool answers) {
  if (msgs.empty()) return;
  const uint64_t wire = link_.wire;
  if (answers) {
    // One burst of answers: on the wire m wire times, the node has them after the last.
    const uint64_t start = std::max(send_cycle, wire_free_);
    wire_free_ = start + msgs.size() * wire;
    const uint64_t has = start + t_cop_cn_ + (msgs.size() - 1) * wire + link_.flight;
    for (const auto& m : msgs) queue_.push_back(Arrival{has, m, true});
  } else {
    for (const auto& m : msgs) {
      const uint64_t start = std::max(send_cycle, wire_free_);
      wire_free_ = start + wire;
      queue_.push_back(Arrival{start + t_cop_cn_ + link_.flight, m, false});
    }
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

}  // namespace copbench::simcop
