#include "controller/jobs.h"
#include "link/auth.h"

#include <algorithm>

namespace cop::controller {

bool Jobs::in_use(int ppn) const {
  return std::any_of(jobs_.begin(), jobs_.end(), [&](const auto& j) { return j.second.ppn == ppn; });
}

link::JoinRefusal Jobs::join(int channel, uint16_t tkno, const std::string& id, uint32_t uid, int wanted,
                             uint32_t had_epoch, uint8_t& ppn, uint32_t& epoch) {
  if (id.empty() || id.size() > link::kMaxJobId) return link::JoinRefusal::bad_request;
  auto it = jobs_.find(id);
  if (it != jobs_.end() && it->second.uid != uid) return link::JoinRefusal::other_user;
  if (had_epoch != 0 && (it == jobs_.end() || it->second.epoch != had_epoch || int(it->second.ppn) != wanted))
    return link::JoinRefusal::epoch_lost;  // the partition it had is gone: never a cleared one as its own
  if (it == jobs_.end()) {
    int p = -1;
    for (int k = 1; k < partitions_ && p < 0; ++k)
      if (!in_use(k)) p = k;
    if (p < 0) return link::JoinRefusal::no_partition;
    uint32_t e = 0;
    while (e == 0) e = uint32_t(link::random_nonce());
    it = jobs_.emplace(id, Job{uint8_t(p), uid, 0, e, uint16_t(p)}).first;
  }
  it->second.tasks++;
  members_[{channel, tkno}] = id;
  ppn = it->second.ppn;
  epoch = it->second.epoch;
  return link::JoinRefusal::none;
}

uint32_t Jobs::epoch_of(const std::string& id) const {
  const auto it = jobs_.find(id);
  return it == jobs_.end() ? 0 : it->second.epoch;
}

std::optional<Jobs::Freed> Jobs::leave(int channel, uint16_t tkno) {
  auto m = members_.find({channel, tkno});
  if (m == members_.end()) return std::nullopt;
  auto it = jobs_.find(m->second);
  members_.erase(m);
  if (it == jobs_.end() || --it->second.tasks > 0) return std::nullopt;
  const Freed freed{it->second.ppn, it->second.slot};
  jobs_.erase(it);
  return freed;
}

void Jobs::adopt(const std::string& id, uint32_t uid, uint8_t ppn, uint32_t epoch, uint16_t slot) {
  jobs_[id] = Job{ppn, uid, 0, epoch, slot};
}

std::optional<Jobs::Freed> Jobs::release_if_empty(const std::string& id) {
  const auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.tasks > 0) return std::nullopt;
  const Freed freed{it->second.ppn, it->second.slot};
  jobs_.erase(it);
  return freed;
}

std::vector<std::pair<int, uint16_t>> Jobs::drop(const std::string& id) {
  std::vector<std::pair<int, uint16_t>> gone;
  for (auto m = members_.begin(); m != members_.end();) {
    if (m->second != id) {
      ++m;
      continue;
    }
    gone.push_back(m->first);
    m = members_.erase(m);
  }
  jobs_.erase(id);
  return gone;
}

std::vector<Jobs::Held> Jobs::held() const {
  std::vector<Held> out;
  for (const auto& [id, j] : jobs_) out.push_back(Held{id, j.uid, j.ppn, j.epoch, j.slot});
  return out;
}

std::optional<uint8_t> Jobs::member_of(int channel, uint16_t tkno, const std::string& id, uint32_t uid) const {
  const auto m = members_.find({channel, tkno});
  if (m == members_.end() || m->second != id) return std::nullopt;
  const auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.uid != uid) return std::nullopt;
  return it->second.ppn;
}

}  // namespace cop::controller
