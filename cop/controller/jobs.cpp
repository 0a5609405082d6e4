#include "controller/jobs.h"

#include <algorithm>

namespace cop::controller {

bool Jobs::in_use(int ppn) const {
  return std::any_of(jobs_.begin(), jobs_.end(), [&](const auto& j) { return j.second.ppn == ppn; });
}

link::JoinRefusal Jobs::join(int channel, uint16_t tkno, const std::string& id, uint32_t uid, int wanted,
                             uint8_t& ppn) {
  if (id.empty() || id.size() > link::kMaxJobId) return link::JoinRefusal::bad_request;
  auto it = jobs_.find(id);
  if (it != jobs_.end()) {
    if (it->second.uid != uid) return link::JoinRefusal::other_user;
  } else {
    int p = wanted >= 1 && wanted < partitions_ && !in_use(wanted) ? wanted : -1;
    for (int k = 1; k < partitions_ && p < 0; ++k)
      if (!in_use(k)) p = k;
    if (p < 0) return link::JoinRefusal::no_partition;
    it = jobs_.emplace(id, Job{uint8_t(p), uid, 0}).first;
  }
  it->second.tasks++;
  members_[{channel, tkno}] = id;
  ppn = it->second.ppn;
  return link::JoinRefusal::none;
}

std::optional<uint8_t> Jobs::leave(int channel, uint16_t tkno) {
  auto m = members_.find({channel, tkno});
  if (m == members_.end()) return std::nullopt;
  auto it = jobs_.find(m->second);
  members_.erase(m);
  if (it == jobs_.end() || --it->second.tasks > 0) return std::nullopt;
  const uint8_t ppn = it->second.ppn;
  jobs_.erase(it);
  return ppn;
}

std::optional<uint8_t> Jobs::member_of(int channel, uint16_t tkno, const std::string& id, uint32_t uid) const {
  const auto m = members_.find({channel, tkno});
  if (m == members_.end() || m->second != id) return std::nullopt;
  const auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.uid != uid) return std::nullopt;
  return it->second.ppn;
}

}  // namespace cop::controller
