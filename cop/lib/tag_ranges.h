// Which GAS words this task's group operations may still be using, so a new
// one that would meet them in the controller's mask entries is refused at the
// call (CopErrTagOverlap) instead of stalling or mixing data.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cop::lib {

// The GAS words each group operation uses (seed 000 ch. V: a tag is the first word of a
// range of controller addresses; a reduction or broadcast of n elements uses the n words
// tag .. tag+n-1, each with its own terminal-count and broadcast mask entries; a barrier
// uses the one word tag). Two operations whose ranges overlap meet in the same mask
// entries, and the controller cannot tell them apart: the second is refused
// (CopErrMaskInUse), waits for the first, or mixes its data with it. So libcop keeps the
// ranges this task's group operations used since the last full barrier of their group
// (after which every member has made all its earlier calls, so the controller has
// completed them), and refuses at the call a range that overlaps one of them unless it
// is the same variable again (same first word, same kind of operation: successive
// operations on one tag are kept in order by the controller).
enum class Use : uint8_t { barrier, reduce, cast };

const char* use_name(Use u);

class TagRanges {
 public:
  // An id for a group name, or for a multicast's recipients ("" and their tids).
  int scope(const std::string& name, std::vector<int> tids = {});
  // 0, or CopErrTagOverlap with `why` saying which range is in the way.
  int take(uint32_t first, uint32_t count, Use use, int scope, std::string& why);
  // A full barrier of `group` (whose members are `tids`): the operations of the group,
  // and multicasts among its members, are complete on the controller.
  void fence(const std::string& group, const std::vector<int>& tids);
  void clear() { ranges_.clear(); }

 private:
  struct Range {
    uint64_t end;
    Use use;
    int scope;
  };
  struct Scope {
    std::string name;  // "" for a multicast
    std::vector<int> tids;
  };
  static std::string describe_range(uint64_t first, uint64_t end, Use use);
  std::string describe_scope(int scope) const;
  std::map<uint32_t, Range> ranges_;  // by first word; disjoint
  std::map<std::string, int> ids_;
  std::vector<Scope> scopes_;
};

}  // namespace cop::lib
