// The GAS ranges of group operations that may still be in progress (tag_ranges.h).
#include "lib/tag_ranges.h"

#include <cop/cop.h>

#include <algorithm>
#include <iterator>

namespace cop::lib {

const char* use_name(Use u) {
  switch (u) {
    case Use::barrier: return "cop_barrier";
    case Use::reduce: return "cop_reduce";
    case Use::cast: return "cop_bcast/cop_mcast";
  }
  return "?";
}

int TagRanges::scope(const std::string& name, std::vector<int> tids) {
  std::sort(tids.begin(), tids.end());
  std::string key = name;
  for (int t : tids) key.append(1, ',').append(std::to_string(t));
  auto [it, fresh] = ids_.try_emplace(key, int(scopes_.size()));
  if (fresh) scopes_.push_back(Scope{name, std::move(tids)});
  return it->second;
}

int TagRanges::take(uint32_t first, uint32_t count, Use use, int scope, std::string& why) {
  if (count == 0) return 0;
  const uint64_t end = uint64_t(first) + count;
  auto it = ranges_.upper_bound(first);
  if (it != ranges_.begin()) --it;
  for (; it != ranges_.end() && it->first < end; ++it) {
    const Range& r = it->second;
    if (r.end <= first) continue;
    if (it->first == first && r.use == use) continue;  // the same variable again
    why = describe_range(first, end, use) + " overlaps " + describe_range(it->first, r.end, r.use) + " of " +
          describe_scope(r.scope) + ", which may still be in progress (no full cop_barrier of that group since)";
    return CopErrTagOverlap;
  }
  // Only the same variable may overlap: merge into it (a longer array extends it).
  if (auto same = ranges_.find(first); same != ranges_.end()) {
    same->second.end = std::max<uint64_t>(same->second.end, end);
    same->second.scope = scope;
    return 0;
  }
  ranges_.emplace(first, Range{end, use, scope});
  return 0;
}

void TagRanges::fence(const std::string& group, const std::vector<int>& tids) {
  std::vector<int> members(tids);
  std::sort(members.begin(), members.end());
  for (auto it = ranges_.begin(); it != ranges_.end();) {
    const Scope& sc = scopes_[size_t(it->second.scope)];
    const bool covered = sc.name == group || (sc.name.empty() && std::includes(members.begin(), members.end(),
                                                                               sc.tids.begin(), sc.tids.end()));
    it = covered ? ranges_.erase(it) : std::next(it);
  }
}

std::string TagRanges::describe_range(uint64_t first, uint64_t end, Use use) {
  return std::string(use_name(use)) + " words " + std::to_string(first) + ".." + std::to_string(end - 1);
}

std::string TagRanges::describe_scope(int scope) const {
  const Scope& sc = scopes_[size_t(scope)];
  return sc.name.empty() ? "a multicast to " + std::to_string(sc.tids.size()) + " tasks" : "group '" + sc.name + "'";
}

}  // namespace cop::lib
