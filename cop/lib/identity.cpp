// Operation identity (issue 34; cop/wire.h, cop.h "Operation identity"): every
// collective call carries which call of which program it is, so that a word, a
// result or a piece of controller state of another round, job, datatype or count is
// never taken as the call's own. The thesis's words have no room for it (seed 000
// ch. IV-V fix their 32 bits); it travels as link data beside them.
#include <cop/wire.h>

#include <cstring>
#include <string>

#include "lib/library.h"

namespace cop::lib {
namespace {

// FNV-1a (64 bits): the same at every member, whatever its build or host, unlike
// std::hash, which need not be.
constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull, kFnvPrime = 0x100000001b3ull;
uint64_t fnv(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * kFnvPrime;
  return h;
}
template <typename T>
uint64_t fnv_value(uint64_t h, T v) {
  return fnv(h, &v, sizeof v);
}

// The check (cop/wire.h): the site, a hash of the job, the partition, the group (its
// scope), the GAS word and the kind of call; the shape, a hash of the datatype, the
// count and `variant` (a reduction's opcode). The site is never 0, so neither is the check.
uint32_t check_of(const std::string& scope, uint32_t addr, uint32_t kind, uint32_t variant, int datatype,
                  size_t count) {
  const Library& l = lib();
  uint64_t site = fnv(kFnvOffset, l.job.data(), l.job.size());
  site = fnv_value(site, uint8_t(0));
  site = fnv_value(site, uint32_t(info().ppn));
  site = fnv(site, scope.data(), scope.size());
  site = fnv_value(site, uint8_t(0));
  site = fnv_value(site, addr);
  site = fnv_value(site, kind);
  uint64_t shape = fnv_value(kFnvOffset, variant);
  shape = fnv_value(shape, int32_t(datatype));
  shape = fnv_value(shape, uint64_t(count));
  uint32_t s16 = uint32_t(site ^ (site >> 16) ^ (site >> 32) ^ (site >> 48)) & 0xFFFF;
  if (s16 == 0) s16 = 1;
  return (s16 << 16) | (uint32_t(shape ^ (shape >> 16) ^ (shape >> 32) ^ (shape >> 48)) & 0xFFFF);
}

}  // namespace

std::string member_scope(const char* group, const Group& g) {
  uint64_t h = kFnvOffset;
  for (const Member& m : g.members) h = fnv_value(h, int32_t(m.tid));
  return std::string(group) + '\0' + std::to_string(h);
}

uint32_t& generation(const std::string& scope, uint32_t addr) {
  return lib().generations[scope + '\0' + std::to_string(addr)];
}

CallIdentity::CallIdentity(const std::string& scope, uint32_t addr, uint32_t kind, uint32_t variant, int datatype,
                           size_t count) {
  Library& l = lib();
  saved_ = l.op_id;
  if (l.forced_op_id != 0) {
    id_ = l.forced_op_id;  // cop_resync's: the same at every member, whatever its generation
  } else {
    uint32_t& g = generation(scope, addr);
    id_ = wire::make_identity(g++, check_of(scope, addr, kind, variant, datatype, count));
  }
  l.op_id = id_;
}

CallIdentity::~CallIdentity() { lib().op_id = saved_; }

// cop_resync's identity: a generation no counter gives in practice, and a check of its own.
uint64_t resync_identity(const std::string& scope, uint32_t addr) {
  return wire::make_identity(0xFFFFFFFFu, check_of(scope, addr, 'R', 0, 0, 0));
}

}  // namespace cop::lib
