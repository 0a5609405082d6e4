// cop_difftest's program generator (program.h). The random numbers are the seed's own
// (splitmix64, modulo draws): no library distribution whose output could change between
// builds, so a seed printed by one build replays the same program on another.
#include "program.h"

#include <cop/cop.h>
#include <pvm3.h>

#include <algorithm>
#include <map>
#include <sstream>

namespace difftest {
namespace {

struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int below(int n) { return n <= 1 ? 0 : int(next() % uint64_t(n)); }
  bool chance(int percent) { return below(100) < percent; }
  template <class T>
  T pick(const std::vector<T>& v) { return v[size_t(below(int(v.size())))]; }
  int pick_of(const std::set<int>& from) {
    auto it = from.begin();
    std::advance(it, below(int(from.size())));
    return *it;
  }
};

// Where each kind's words lie in a group's window (4096 words, cop.h "Tags"): kinds apart,
// so libcop's overlap check (CopErrTagOverlap) never refuses a well-formed program, and few
// tags per kind, so a tag is used again and again (a stale word finds its next call).
const std::vector<int> kReduceTags = {512, 1024, 1536}, kCastTags = {2048, 2560, 3072}, kBarrierTags = {3584, 3600},
                       kMcastTags = {0, 600, 1200}, kFaaWords = {200, 201, 202, 203};
constexpr int kGatherTag = 16, kScatterTag = 100;  // TAS words too: tag + count * members <= 200
const std::vector<int> kCounts = {1, 1, 1, 2, 3, 4, 7, 8, 16, 64, 128, 129, 300, 512};
const std::vector<int> kTypes = {PVM_INT, PVM_LONG, PVM_FLOAT, PVM_DOUBLE};

bool is_int(int type) { return type == PVM_INT || type == PVM_LONG; }
std::string type_name(int t) {
  return t == PVM_INT ? "INT" : t == PVM_LONG ? "LONG" : t == PVM_FLOAT ? "FLOAT" : t == PVM_DOUBLE ? "DOUBLE" : "?";
}
std::string func_name(int f) {
  static const char* n[] = {"?", "SUM", "MAX", "MIN", "AND", "OR", "EXOR"};
  return f >= 1 && f <= 6 ? n[f] : "?";
}

// The kinds the features allow, each as often as its weight.
std::vector<Kind> candidates(const std::set<std::string>& f) {
  std::vector<std::pair<const char*, std::vector<Kind>>> table = {
      {"barrier", {Kind::barrier}},
      {"reduce", {Kind::reduce, Kind::reduce, Kind::reduce}},
      {"bcast", {Kind::bcast, Kind::bcast, Kind::bcast}},
      {"short", {Kind::bcast, Kind::bcast}},
      {"types", {Kind::bcast}},
      {"mcast", {Kind::mcast, Kind::mcast}},
      {"gather", {Kind::gather, Kind::scatter}},
      {"faa", {Kind::faa, Kind::faa}},
      {"groups", {Kind::join, Kind::leave}},
      {"pvmgroups", {Kind::join, Kind::leave}},
      {"kill", {Kind::kill}},
      {"stop", {Kind::fault}},
      {"partition", {Kind::fault}},
      {"restart", {Kind::fault}},
  };
  std::vector<Kind> out;
  for (auto& [name, kinds] : table)
    if (f.count(name)) out.insert(out.end(), kinds.begin(), kinds.end());
  return out;
}

}  // namespace

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> n = {"barrier", "reduce", "bcast",     "mcast", "short",   "types",
                                             "gather",  "faa",    "groups",    "pvmgroups", "kill", "stop",
                                             "partition", "restart", "jobs", "jobs-default"};
  return n;
}
const char* default_features() { return "barrier,reduce,bcast,mcast,gather,faa"; }

const char* kind_name(Kind k) {
  static const char* n[] = {"barrier", "reduce", "bcast", "mcast", "gather", "scatter",
                            "faa",     "join",   "leave", "kill",  "fault"};
  return n[int(k)];
}
const char* fault_name(Fault f) { return f == Fault::stop ? "stop" : f == Fault::partition ? "partition" : "restart"; }

bool parse_features(const std::string& list, std::set<std::string>& out, std::string& why) {
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');) {
    if (name.empty()) continue;
    if (name == "all") {
      out.insert(feature_names().begin(), feature_names().end());
      continue;
    }
    if (std::find(feature_names().begin(), feature_names().end(), name) == feature_names().end()) {
      why = "unknown feature class '" + name + "' (all, or some of:";
      for (auto& n : feature_names()) why += " " + n;
      why += ")";
      return false;
    }
    out.insert(name);
  }
  if (out.empty()) why = "no feature class named";
  return !out.empty();
}

Members::Members(const Program& p) : of(p.initial) {
  for (int t = 0; t < p.tasks; ++t) alive.insert(t);
}

void Members::apply(const Step& s) {
  if (s.kind == Kind::join) of[size_t(s.group)].insert(s.task);
  if (s.kind == Kind::leave) of[size_t(s.group)].erase(s.task);
  if (s.kind == Kind::kill) {
    alive.erase(s.task);
    for (auto& m : of) m.erase(s.task);
  }
}

double value(int job, int step, int task, int i, int type) {
  // PVM packs a long in 32 bits and unpacks it without its sign: PVM_LONG values stay >= 0.
  const long long v = ((step * 131LL + task * 37LL + i * 11LL) % 1999) - (type == PVM_LONG ? 0 : 999) + job * 5000LL;
  return is_int(type) ? double(v) : double(v) + 0.25 * (task % 4);
}

namespace {

// Roots or a sender among a group's members (bcast: sometimes a task outside the group,
// cop.h: the sender need not be a member).
void draw_collective(Rng& r, const Program& p, const Members& m, Step& s) {
  const std::set<int>& members = m.of[size_t(s.group)];
  s.type = r.pick(kTypes);
  switch (s.kind) {
    case Kind::barrier: s.tag = r.pick(kBarrierTags); break;
    case Kind::reduce: {
      s.tag = r.pick(kReduceTags);
      s.count = r.pick(kCounts);
      const int funcs = is_int(s.type) ? 6 : 3;
      s.func = 1 + r.below(funcs);
      s.roots = {r.pick_of(members)};
      if (members.size() > 2 && r.chance(25)) {
        const int second = r.pick_of(members);
        if (second != s.roots[0]) s.roots.push_back(second);
      }
      break;
    }
    case Kind::gather:
    case Kind::scatter:
      s.tag = s.kind == Kind::gather ? kGatherTag : kScatterTag;
      s.count = 1 + r.below(s.kind == Kind::gather ? 8 : 96 / p.tasks);
      s.roots = {r.pick_of(members)};
      break;
    default: break;
  }
}

void draw_cast(Rng& r, const Program& p, const Members& m, Step& s) {
  s.type = r.pick(kTypes);
  s.count = r.pick(kCounts);
  s.recv_count = s.count;
  s.recv_type = s.type;
  s.any_source = r.chance(50);
  if (s.kind == Kind::bcast) {
    s.tag = r.pick(kCastTags);
    const std::set<int>& members = m.of[size_t(s.group)];
    s.roots = {r.chance(85) ? r.pick_of(members) : r.pick_of(m.alive)};
  } else {
    s.tag = r.pick(kMcastTags);
    s.roots = {r.pick_of(m.alive)};
    for (int t : m.alive)
      if (t != s.roots[0] && r.chance(60)) s.targets.push_back(t);
    if (s.targets.empty()) s.targets.push_back(*std::find_if(m.alive.begin(), m.alive.end(), [&](int t) { return t != s.roots[0]; }));
  }
  if (p.features.count("short") && s.count > 1 && r.chance(40)) s.recv_count = 1 + r.below(s.count - 1);
  if (p.features.count("types") && r.chance(30))
    s.recv_type = s.type == PVM_LONG ? PVM_DOUBLE : s.type == PVM_DOUBLE ? PVM_LONG : s.type == PVM_INT ? PVM_FLOAT : PVM_INT;
}

// A join or leave that keeps every group at two members or more; false when none fits.
bool draw_membership(Rng& r, const Program& p, const Members& m, Step& s) {
  if (p.groups.size() < 2) return false;
  s.group = 1 + r.below(int(p.groups.size()) - 1);
  const std::set<int>& members = m.of[size_t(s.group)];
  std::vector<int> outside;
  for (int t : m.alive)
    if (!members.count(t)) outside.push_back(t);
  if (s.kind == Kind::join && outside.empty()) s.kind = Kind::leave;
  if (s.kind == Kind::leave && members.size() < 3) {
    if (outside.empty()) return false;
    s.kind = Kind::join;
  }
  s.task = s.kind == Kind::join ? r.pick(outside) : r.pick_of(members);
  const bool lib = p.features.count("groups"), raw = p.features.count("pvmgroups");
  s.raw = raw && (!lib || r.chance(50));
  return true;
}

// A task killed -9 inside a reduction of group 0: never task 0 (it relays the faults) nor
// a fetch-and-add counter's owner (0, 1), and every group keeps two members.
bool draw_kill(Rng& r, const Members& m, Step& s) {
  std::vector<int> victims;
  for (int t : m.alive) {
    bool ok = t > 1;
    for (size_t g = 1; g < m.of.size(); ++g) ok &= !(m.of[g].count(t) && m.of[g].size() < 3);
    if (ok) victims.push_back(t);
  }
  if (victims.empty() || m.alive.size() < 4) return false;
  s.group = 0;
  s.task = r.pick(victims);
  s.tag = r.pick(kReduceTags);
  s.count = 1 + r.below(8);
  s.type = PVM_LONG;
  s.func = COP_SUM;
  s.roots = {r.below(2)};
  s.ms = r.below(30);
  return true;
}

// The rounds of each broadcast site (cop.h "Operation identity"): every task counts its own
// calls on a (group view, tag) word, and a sender outside the group (a multicast's sender is
// always outside its recipients) counts only its sends, so its identity is the receivers'
// only while it has sent every round they made on that word. Another outside sender, or one
// that sent before the members' own rounds, names an earlier round: its program is not
// well-formed for the COP (cop.h: "use a tag for them that the members use for nothing
// else"). Its receivers wait for their round, which never comes (timeouts; at two levels
// the level 2, which saw the earlier round go out, refuses its SETBM X mask_in_use:
// difftest seed 21 step 73, sender 2 outside dt21g1 after step 34's round by member 5 on
// tag 3072).
struct CastRounds {
  std::map<std::string, int> of;  // site -> rounds its receivers made; sent(S, site) -> S's sends from outside
  static std::string site(const Members& m, const Step& s) {
    std::string k = s.kind == Kind::mcast ? "mcast" : "group";
    if (s.kind == Kind::bcast) k += std::to_string(s.group);
    const std::set<int> who = s.kind == Kind::mcast ? std::set<int>(s.targets.begin(), s.targets.end())
                                                     : m.of[size_t(s.group)];
    for (int t : who) (k += ' ') += std::to_string(t);
    return (k += " tag ") += std::to_string(s.tag);
  }
  static std::string sent(int sender, const std::string& site) {
    std::string k = "sent by ";
    k += std::to_string(sender);
    return (k += " to ") += site;
  }
  static bool outside(const Members& m, const Step& s) {
    return s.kind == Kind::mcast || !m.of[size_t(s.group)].count(s.roots[0]);
  }
  // Whether `sender` from outside is at the receivers' round of the site.
  bool in_step(const std::string& site, int sender) { return of[sent(sender, site)] == of[site]; }
  // A sender in step for s (a bcast: a member in place of an outside sender that is not; a
  // multicast: the first live non-recipient that is), without drawing (the other steps
  // stay as drawn); false when a multicast has none.
  bool align(const Members& m, Step& s) {
    const std::string k = site(m, s);
    if (!outside(m, s) || in_step(k, s.roots[0])) return true;
    if (s.kind == Kind::bcast) {
      s.roots = {*m.of[size_t(s.group)].begin()};
      return true;
    }
    for (int t : m.alive)
      if (std::find(s.targets.begin(), s.targets.end(), t) == s.targets.end() && in_step(k, t)) {
        s.roots = {t};
        return true;
      }
    return false;
  }
  void count(const Members& m, const Step& s) {
    const std::string k = site(m, s);
    if (outside(m, s)) of[sent(s.roots[0], k)]++;
    of[k]++;
  }
};

void draw_fault(Rng& r, const Program& p, Step& s) {
  std::vector<Fault> kinds;
  if (p.features.count("stop")) kinds.push_back(Fault::stop);
  if (p.features.count("partition")) kinds.push_back(Fault::partition);
  if (p.features.count("restart")) kinds.push_back(Fault::restart);
  s.fault = r.pick(kinds);
  s.ms = 500 + r.below(2501);
  s.node = 1 + r.below(p.nodes);
}

}  // namespace

Program generate(uint64_t seed, int tasks, int nodes, const std::set<std::string>& features, int steps) {
  Program p;
  p.seed = seed;
  p.tasks = tasks;
  p.nodes = nodes;
  p.features = features;
  Rng r{seed * 0x2545f4914f6cdd1dULL + 1};
  const std::string base = "dt" + std::to_string(seed % 1000000);
  const int groups = 2 + r.below(2);
  for (int g = 0; g < groups; ++g) {
    p.groups.push_back(base + "g" + std::to_string(g));
    std::set<int> m;
    for (int t = 0; t < tasks; ++t)
      if (g == 0 || r.chance(60)) m.insert(t);
    while (m.size() < 2) m.insert(r.below(tasks));
    p.initial.push_back(m);
  }
  const std::vector<Kind> kinds = candidates(features);
  Members m(p);
  int kills = 0, faults = 0;
  CastRounds rounds;  // outside senders kept in step (cop.h "Operation identity")
  std::map<std::pair<int, int>, int> last_cast;  // (group or -1 for mcast, tag) -> its last broadcast's step + 1
  // Groups whose membership changed: PVM's instance numbers then have holes, and
  // pvm_gather/pvm_scatter (the reference) count instances 0..gsize-1, so they would hang.
  std::set<int> changed;
  for (int i = 0; i < steps && !kinds.empty(); ++i) {
    Step s;
    s.kind = r.pick(kinds);
    s.group = r.below(groups);
    bool ok = true;
    switch (s.kind) {
      case Kind::bcast:
      case Kind::mcast: draw_cast(r, p, m, s); break;
      case Kind::faa:
        s.task = r.below(2);
        s.tag = r.pick(kFaaWords);
        s.reps = 1 + r.below(3);
        break;
      case Kind::join:
      case Kind::leave: ok = draw_membership(r, p, m, s); break;
      case Kind::kill: ok = kills < 2 && draw_kill(r, m, s) && ++kills; break;
      case Kind::fault:
        ok = faults < 3 && ++faults;
        draw_fault(r, p, s);
        break;
      default: draw_collective(r, p, m, s);
    }
    if (s.kind == Kind::gather || s.kind == Kind::scatter) ok = !changed.count(s.group);
    if (s.kind == Kind::bcast || s.kind == Kind::mcast) ok = rounds.align(m, s);
    if (!ok) continue;
    if (s.kind == Kind::join || s.kind == Kind::leave) changed.insert(s.group);
    if (s.kind == Kind::kill)
      for (size_t g = 0; g < m.of.size(); ++g)
        if (m.of[g].count(s.task)) changed.insert(int(g));
    if (s.kind == Kind::bcast || s.kind == Kind::mcast) {
      const auto key = std::make_pair(s.kind == Kind::mcast ? -1 : s.group, s.tag);
      const int last = last_cast[key] - 1;
      s.sync_before = last >= 0 && p.steps[size_t(last)].any_source && p.steps[size_t(last)].roots[0] != s.roots[0];
      rounds.count(m, s);
    }
    m.apply(s);
    p.steps.push_back(s);
    if (s.kind == Kind::bcast || s.kind == Kind::mcast)
      last_cast[std::make_pair(s.kind == Kind::mcast ? -1 : s.group, s.tag)] = int(p.steps.size());
  }
  return p;
}

std::string describe(const Program& p, const Step& s) {
  std::ostringstream o;
  if (s.sync_before) o << "(pvm_barrier) ";
  o << kind_name(s.kind);
  if (s.kind == Kind::fault) {
    o << " " << fault_name(s.fault);
    if (s.fault != Fault::restart) o << " " << s.ms << " ms";
    if (s.fault == Fault::partition) o << " node " << s.node;
    return o.str();
  }
  if (s.kind != Kind::mcast && s.kind != Kind::faa) o << " group " << p.groups[size_t(s.group)];
  if (s.kind == Kind::join || s.kind == Kind::leave)
    return o.str() + " task " + std::to_string(s.task) + (s.raw ? " by libgpvm3" : " by libcop");
  if (s.kind == Kind::faa)
    return o.str() + " owner " + std::to_string(s.task) + " word " + std::to_string(s.tag) + " x" + std::to_string(s.reps);
  o << " tag " << s.tag;
  if (s.kind == Kind::barrier) return o.str();
  o << " count " << s.count << " " << type_name(s.type);
  if (s.kind == Kind::reduce || s.kind == Kind::kill) o << " " << func_name(s.func);
  o << (s.kind == Kind::bcast || s.kind == Kind::mcast ? " sender" : " root");
  for (int t : s.roots) o << " " << t;
  if (s.kind == Kind::mcast) {
    o << " to";
    for (int t : s.targets) o << " " << t;
  }
  if (s.kind == Kind::bcast || s.kind == Kind::mcast) {
    o << (s.any_source ? " srctid -1" : " srctid explicit");
    if (s.recv_count != s.count) o << " receive " << s.recv_count;
    if (s.recv_type != s.type) o << " as " << type_name(s.recv_type);
  }
  if (s.kind == Kind::kill) o << " task " << s.task << " killed after " << s.ms << " ms";
  return o.str();
}

std::string print(const Program& p) {
  std::ostringstream o;
  o << "program seed " << p.seed << " tasks " << p.tasks << " nodes " << p.nodes << " features";
  for (auto& f : p.features) o << " " << f;
  o << "\n";
  for (size_t g = 0; g < p.groups.size(); ++g) {
    o << "  group " << p.groups[g] << ":";
    for (int t : p.initial[g]) o << " " << t;
    o << "\n";
  }
  for (size_t i = 0; i < p.steps.size(); ++i) o << "  step " << i << ": " << describe(p, p.steps[i]) << "\n";
  return o.str();
}

}  // namespace difftest
