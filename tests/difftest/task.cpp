// cop_difftest's task: draws the program from its seed, runs each step on libcop and, as
// the reference, on PVM's own group calls (pvm_reduce, pvm_bcast, pvm_mcast, pvm_gather,
// pvm_scatter, pvm_barrier of libgpvm3) or a local computation (AND/OR/EXOR, fetch-and-add),
// and tells the parent every result that is neither the reference's nor a negative code.
#include "task.h"

#include <cop/cop.h>
#include <dlfcn.h>
#include <pvm3.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "buffer.h"

namespace difftest {
namespace {

struct Ctx {
  const Program& p;
  int me, job;
  std::vector<int> tids;
  Members m;
  std::string sync;  // a PVM-only group of every live task (setup and membership changes)
  Tally t;
  int step = 0;
  bool self_check = false;  // --self-check: a wrong element planted in every reduction result
  char* group(int g) { return const_cast<char*>(p.groups[size_t(g)].c_str()); }
  int inst(int g, int task) { return pvm_getinst(group(g), tids[size_t(task)]); }
  std::string where(const Step& s) {
    return "seed " + std::to_string(p.seed) + " job " + std::to_string(job) + " step " + std::to_string(step) + " task " +
           std::to_string(me) + " (" + describe(p, s) + ")";
  }
};

// A call's code: counted, and an error's first lines kept.
bool counted(Ctx& c, const Step& s, int rc) {
  c.t.ops[int(s.kind)]++;
  if (rc >= 0) return true;
  c.t.errors[int(s.kind)]++;
  c.t.codes[rc]++;
  if (c.t.codes[rc] <= 2 && c.t.lines.size() < 6000)
    c.t.lines += "  error " + c.where(s) + ": " + std::to_string(rc) + " " + cop_strerror(rc) + "\n";
  return false;
}

void wrong(Ctx& c, const Step& s, int rc, const std::string& what) {
  c.t.wrong[int(s.kind)]++;
  if (c.t.lines.size() < 20000) c.t.lines += "  WRONG " + c.where(s) + " rc " + std::to_string(rc) + ": " + what + "\n";
}

// The first element where `got` differs from `want` (n elements), or "".
std::string differs(const Buf& got, const Buf& want, int n) {
  for (int i = 0; i < n; ++i)
    if (got.get(i) != want.get(i) && !(std::isnan(got.get(i)) && std::isnan(want.get(i)))) {
      std::ostringstream o;
      o << "element " << i << " of " << n << ": expected " << want.get(i) << " got " << got.get(i);
      return o.str();
    }
  return "";
}

// A result that came with success is checked against the reference.
void check(Ctx& c, const Step& s, int rc, const Buf& got, const Buf& want, int n, const char* what) {
  if (rc < 0) return;
  if (std::string d = differs(got, want, n); !d.empty()) wrong(c, s, rc, std::string(what) + " " + d);
}

// PVM's reference against the local computation. The libcop result is checked against the
// local computation; a difference here is noted (refdiff), not a failure of libcop: it says
// the program or the tester is not what PVM ran (as when a join raced a pvm_reduce before
// run_membership waited for the step before).
void reference_agrees(Ctx& c, const Step& s, const Buf& pvm, const Buf& local, int n) {
  if (std::string d = differs(pvm, local, n); !d.empty()) {
    c.t.refdiff++;
    c.t.lines += "  REFDIFF " + c.where(s) + ": PVM's reference and the local computation differ: " + d + "\n";
  }
}

Buf contribution(Ctx& c, const Step& s, int task, int n, int type) {
  Buf b(type, n);
  for (int i = 0; i < n; ++i) b.set(i, value(c.job, c.step, task, i, s.type));
  return b;
}

double fold(int func, double a, double b) {
  const long long x = (long long)a, y = (long long)b;
  switch (func) {
    case COP_SUM: return a + b;
    case COP_MAX: return std::max(a, b);
    case COP_MIN: return std::min(a, b);
    case COP_AND: return double(x & y);
    case COP_OR: return double(x | y);
    default: return double(x ^ y);
  }
}

Buf local_reduce(Ctx& c, const Step& s, const std::set<int>& members) {
  Buf r(s.type, s.count);
  std::vector<Buf> parts;
  for (int t : members) parts.push_back(contribution(c, s, t, s.count, s.type));
  for (int i = 0; i < s.count; ++i) {
    bool first = true;
    double acc = 0;
    for (const Buf& part : parts) {
      const double v = part.get(i);
      acc = first ? v : fold(s.func, acc, v);
      first = false;
    }
    r.set(i, acc);
  }
  return r;
}

}  // namespace

namespace {

void run_barrier(Ctx& c, const Step& s) {
  const int size = int(c.m.of[size_t(s.group)].size());
  counted(c, s, cop_barrier(c.group(s.group), size, s.tag));
  pvm_barrier(c.group(s.group), size);  // the reference: it returns once every member came
}

using PvmFunc = void (*)(int*, void*, void*, int*, int*);

// cop_reduce at every member; the roots' results against pvm_reduce's (to the first
// root; SUM, MAX, MIN: PVM has no AND/OR/EXOR) and the local computation.
void run_reduce(Ctx& c, const Step& s) {
  const std::set<int>& members = c.m.of[size_t(s.group)];
  std::vector<int> roots;
  for (int r : s.roots) roots.push_back(c.inst(s.group, r));
  Buf mine = contribution(c, s, c.me, s.count, s.type), got = mine;
  const int rc = cop_reduce(s.func, got.data(), s.type, s.count, s.tag, c.group(s.group), roots.data(), int(roots.size()));
  counted(c, s, rc);
  bool is_root = false;
  for (int r : s.roots) is_root |= r == c.me;
  if (s.func <= COP_MIN) {
    PvmFunc f = s.func == COP_SUM ? PvmSum : s.func == COP_MAX ? PvmMax : PvmMin;
    Buf ref = mine;
    pvm_reduce(f, ref.data(), s.count, s.type, kRefTag + c.step, c.group(s.group), roots[0]);
    if (c.me == s.roots[0]) reference_agrees(c, s, ref, local_reduce(c, s, members), s.count);
  }
  if (is_root && c.self_check && rc >= 0) got.set(0, got.get(0) + 1);
  if (is_root) check(c, s, rc, got, local_reduce(c, s, members), s.count, "reduction");
}

// The sender's data, as the receivers must see it (their count and the sender's datatype).
Buf sent(Ctx& c, const Step& s) { return contribution(c, s, s.roots[0], s.count, s.type); }

// A receive: the cop result against what PVM delivered from the sender. A receiver naming
// another datatype than the sender's has no right answer but an error (cop.h "Porting").
void receive(Ctx& c, const Step& s, int rc, const Buf& got) {
  Buf ref(s.type, s.count);
  const int src = c.tids[size_t(s.roots[0])];
  pvm_recv(src, kRefTag + c.step);
  ref.unpack();
  const Buf local = sent(c, s);
  reference_agrees(c, s, ref, local, s.count);
  if (rc >= 0 && s.recv_type != s.type) {
    wrong(c, s, rc, "a receive of another datatype than the sender's returned success");
    return;
  }
  check(c, s, rc, got, local, s.recv_count, s.recv_count < s.count ? "short receive" : "receive");
}

void run_bcast(Ctx& c, const Step& s) {
  const int sender = s.roots[0];
  if (c.me == sender) {
    Buf data = sent(c, s);
    counted(c, s, cop_bcast(data.data(), s.count, s.type, c.group(s.group), s.tag, COP_SEND, -1));
    pvm_initsend(PvmDataDefault);
    data.pack();
    pvm_bcast(c.group(s.group), kRefTag + c.step);
    return;
  }
  if (!c.m.of[size_t(s.group)].count(c.me)) return;
  Buf got(s.recv_type, s.recv_count);
  const int rc = cop_bcast(got.data(), s.recv_count, s.recv_type, c.group(s.group), s.tag, COP_RECV,
                           s.any_source ? -1 : c.tids[size_t(sender)]);
  counted(c, s, rc);
  receive(c, s, rc, got);
}

void run_mcast(Ctx& c, const Step& s) {
  const int sender = s.roots[0];
  std::vector<int> to;
  for (int t : s.targets) to.push_back(c.tids[size_t(t)]);
  if (c.me == sender) {
    Buf data = sent(c, s);
    counted(c, s, cop_mcast(data.data(), s.count, s.type, to.data(), int(to.size()), s.tag, COP_SEND, -1));
    pvm_initsend(PvmDataDefault);
    data.pack();
    pvm_mcast(to.data(), int(to.size()), kRefTag + c.step);
    return;
  }
  if (std::find(s.targets.begin(), s.targets.end(), c.me) == s.targets.end()) return;
  Buf got(s.recv_type, s.recv_count);
  const int rc = cop_mcast(got.data(), s.recv_count, s.recv_type, to.data(), int(to.size()), s.tag, COP_RECV,
                           s.any_source ? -1 : c.tids[size_t(sender)]);
  counted(c, s, rc);
  receive(c, s, rc, got);
}

}  // namespace

namespace {

// cop_gather and pvm_gather into the root's array (members in instance order).
void run_gather(Ctx& c, const Step& s) {
  const int size = int(c.m.of[size_t(s.group)].size()), root = c.inst(s.group, s.roots[0]);
  Buf mine = contribution(c, s, c.me, s.count, s.type), got(s.type, s.count * size), ref(s.type, s.count * size);
  const int rc = cop_gather(got.data(), mine.data(), s.count, s.type, s.tag, c.group(s.group), root);
  counted(c, s, rc);
  pvm_gather(ref.data(), mine.data(), s.count, s.type, kRefTag + c.step, c.group(s.group), root);
  if (c.me != s.roots[0]) return;
  // Each member's slice at its instance (asked again when the group server's answer is an
  // error: it was seen to answer one of eight instances wrongly now and then).
  Buf local(s.type, s.count * size);
  for (int t : c.m.of[size_t(s.group)]) {
    int k = c.inst(s.group, t);
    for (int again = 0; again < 5 && (k < 0 || k >= size); ++again) k = c.inst(s.group, t);
    if (k < 0 || k >= size) {
      c.t.lines += "  note " + c.where(s) + ": PVM gave no instance for task " + std::to_string(t) + "; not checked\n";
      return;
    }
    for (int i = 0; i < s.count; ++i) local.set(k * s.count + i, value(c.job, c.step, t, i, s.type));
  }
  reference_agrees(c, s, ref, local, s.count * size);
  check(c, s, rc, got, local, s.count * size, "gathered array");
}

// cop_scatter and pvm_scatter of the root's array: each member's slice.
void run_scatter(Ctx& c, const Step& s) {
  const int size = int(c.m.of[size_t(s.group)].size()), root = c.inst(s.group, s.roots[0]);
  Buf all = contribution(c, s, s.roots[0], s.count * size, s.type), got(s.type, s.count), ref(s.type, s.count);
  const int rc = cop_scatter(got.data(), all.data(), s.count, s.type, s.tag, c.group(s.group), root);
  counted(c, s, rc);
  pvm_scatter(ref.data(), all.data(), s.count, s.type, kRefTag + c.step, c.group(s.group), root);
  Buf local(s.type, s.count);
  const int mine = pvm_getinst(c.group(s.group), pvm_mytid());
  for (int i = 0; i < s.count; ++i) local.set(i, all.get(mine * s.count + i));
  reference_agrees(c, s, ref, local, s.count);
  check(c, s, rc, got, local, s.count, "scattered slice");
}

// Fetch-and-add: reps increments of 1 by every live task on the owner's word; the old
// values go to the parent, which checks the history (unique, counter within bounds).
void run_faa(Ctx& c, const Step& s) {
  Counter& k = c.t.counters[s.task * 1000 + s.tag];
  for (int i = 0; i < s.reps; ++i) {
    long one = 1;
    const int rc = cop_rmw(&one, 1, PVM_LONG, c.tids[size_t(s.task)], s.tag, COP_NORMAL);
    if (counted(c, s, rc)) k.olds.push_back(one);
    else k.failed++;
  }
}

// libgpvm3's own pvm_joingroup / pvm_lvgroup: the next definition after libcop's.
int real_group_call(const char* name, char* group) {
  using Fn = int (*)(char*);
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  return fn ? fn(group) : PvmSysErr;
}

// Every live task waits (PVM's barrier) until the change is made: pvm_joingroup and
// pvm_lvgroup return once PVM's group server has it, and a program that tells its tasks
// of a change through PVM's barrier is what cop.h "Porting" says libcop's views follow.
void run_membership(Ctx& c, const Step& s) {
  // And before it: PVM's reference calls of the steps before (pvm_reduce's root counts the
  // group's members when it is called) see the group as it was.
  pvm_barrier(const_cast<char*>(c.sync.c_str()), int(c.m.alive.size()));
  if (c.me == s.task) {
    const char* name = s.kind == Kind::join ? "pvm_joingroup" : "pvm_lvgroup";
    int rc = s.raw ? real_group_call(name, c.group(s.group))
                   : (s.kind == Kind::join ? pvm_joingroup(c.group(s.group)) : pvm_lvgroup(c.group(s.group)));
    counted(c, s, rc);
  }
  pvm_barrier(const_cast<char*>(c.sync.c_str()), int(c.m.alive.size()));
}

void tell_parent(Ctx& c, const Step& s) {
  int msg[4] = {int(s.fault), s.ms, s.node, c.step};
  pvm_initsend(PvmDataDefault);
  pvm_pkint(msg, 4, 1);
  pvm_send(pvm_parent(), kFaultTag);
}

// A task killed -9 inside a SUM of group 0 (its report sent first): the others get the
// sum with it or without it, or an error.
void run_kill(Ctx& c, const Step& s) {
  const std::set<int> before = c.m.of[0];
  if (c.me == s.task) {
    c.t.killed = true;
    c.t.pack();
    pvm_send(pvm_parent(), kReportTag);
    std::thread([ms = s.ms] {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      ::kill(::getpid(), SIGKILL);
    }).detach();
  }
  int root = c.inst(0, s.roots[0]);
  Buf got = contribution(c, s, c.me, s.count, s.type);
  const int rc = cop_reduce(COP_SUM, got.data(), s.type, s.count, s.tag, c.group(0), &root, 1);
  if (c.me == s.task) ::pause();
  counted(c, s, rc);
  // The sum with the killed task (it had contributed) or without it (it was gone, so no
  // longer a member, before it called): both are answers of a program, nothing else is.
  std::set<int> after = before;
  after.erase(s.task);
  if (c.me == s.roots[0] && rc >= 0 && !differs(got, local_reduce(c, s, after), s.count).empty())
    check(c, s, rc, got, local_reduce(c, s, before), s.count, "sum neither with nor without the killed task");
  // Until PVM's group server has dropped the dead task from every group it was in.
  for (size_t g = 0; g < c.p.groups.size(); ++g)
    for (int i = 0; i < 500 && pvm_gsize(c.group(int(g))) > int(c.m.of[g].size()) - (c.m.of[g].count(s.task) ? 1 : 0); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  pvm_barrier(const_cast<char*>(c.sync.c_str()), int(c.m.alive.size()) - 1);
}

}  // namespace

void Tally::pack() const {
  std::vector<int> v(ops, ops + kKinds);
  v.insert(v.end(), errors, errors + kKinds);
  v.insert(v.end(), wrong, wrong + kKinds);
  v.push_back(refdiff);
  v.push_back(killed);
  v.push_back(int(counters.size()));
  for (auto& [key, k] : counters) {
    v.insert(v.end(), {key, k.failed, k.read ? 1 : 0, int(k.final), int(k.olds.size())});
    for (long o : k.olds) v.push_back(int(o));
  }
  int n = int(v.size());
  pvm_initsend(PvmDataDefault);
  pvm_pkint(&n, 1, 1);
  pvm_pkint(v.data(), n, 1);
  pvm_pkstr(const_cast<char*>(lines.c_str()));
}

void Tally::unpack(std::string& text) {
  int n = 0;
  pvm_upkint(&n, 1, 1);
  std::vector<int> v(size_t(std::max(n, 0)) + 1);
  pvm_upkint(v.data(), n, 1);
  size_t at = 0;
  for (int* part : {ops, errors, wrong})
    for (int k = 0; k < kKinds; ++k) part[k] = v[at++];
  refdiff = v[at++];
  killed = v[at++];
  const int nc = v[at++];
  for (int i = 0; i < nc; ++i) {
    Counter& k = counters[v[at]];
    k.failed = v[at + 1];
    k.read = v[at + 2];
    k.final = v[at + 3];
    const int olds = v[at + 4];
    at += 5;
    for (int j = 0; j < olds; ++j) k.olds.push_back(v[at++]);
  }
  std::vector<char> buf(1 << 20);
  pvm_upkstr(buf.data());
  text = buf.data();
}

namespace {

void run_step(Ctx& c, const Step& s) {
  const bool in_group = c.m.of[size_t(s.group)].count(c.me) > 0;
  if (s.sync_before) pvm_barrier(const_cast<char*>(c.sync.c_str()), int(c.m.alive.size()));
  switch (s.kind) {
    case Kind::barrier: if (in_group) run_barrier(c, s); break;
    case Kind::reduce: if (in_group) run_reduce(c, s); break;
    case Kind::bcast: run_bcast(c, s); break;
    case Kind::mcast: run_mcast(c, s); break;
    case Kind::gather: if (in_group) run_gather(c, s); break;
    case Kind::scatter: if (in_group) run_scatter(c, s); break;
    case Kind::faa: run_faa(c, s); break;
    case Kind::join:
    case Kind::leave: run_membership(c, s); break;
    case Kind::kill: run_kill(c, s); break;
    case Kind::fault: if (c.me == 0) tell_parent(c, s); break;
  }
}

// The end: every live task at PVM's barrier, the owners read their counters.
void finish(Ctx& c) {
  pvm_barrier(const_cast<char*>(c.sync.c_str()), int(c.m.alive.size()));
  if (c.me > 1) return;  // the owners of the counters (program.cpp: tasks 0 and 1, words 200-203)
  for (int word = 200; word < 204; ++word) {
    Counter& k = c.t.counters[c.me * 1000 + word];
    long v = -1;
    const int rc = cop_read(&v, 1, PVM_LONG, pvm_mytid(), word, COP_NORMAL);
    k.read = rc >= 0;
    k.final = rc >= 0 ? v : -1;
    if (rc < 0) c.t.lines += "  error reading counter word " + std::to_string(word) + ": " + cop_strerror(rc) + "\n";
  }
}

}  // namespace

// argv: index job seed tasks nodes features steps stackdir timeout_ms self_check
int task_main(int argc, char** argv) {
  if (argc < 11) return 2;
  const int me = std::atoi(argv[1]), job = std::atoi(argv[2]), tasks = std::atoi(argv[4]), nodes = std::atoi(argv[5]);
  std::set<std::string> features;
  std::string why;
  parse_features(argv[6], features, why);
  const Program p = generate(std::strtoull(argv[3], nullptr, 10), tasks, nodes, features, std::atoi(argv[7]));
  const int node = me / std::max(1, tasks / nodes) + 1;
  setenv("COP_DRIVER", (std::string(argv[8]) + "/node" + std::to_string(node)).c_str(), 1);
  Ctx c{p, me, job, std::vector<int>(size_t(tasks)), Members(p), p.groups[0] + "sync", Tally{}};
  c.self_check = std::strcmp(argv[10], "1") == 0;
  pvm_recv(pvm_parent(), kStartTag);
  pvm_upkint(c.tids.data(), tasks, 1);
  // An enrolment that fails (copd restarted by the other job's faults meanwhile) is an
  // error, and the task runs the program all the same (its calls give errors): the
  // others wait for it in PVM's barriers, and must not hang for it.
  int tid = cop_mytid();
  for (int again = 0; tid < 0 && again < 2; ++again) tid = cop_mytid();
  if (tid < 0) {
    c.t.lines += "  cop_mytid: " + std::string(cop_strerror(tid)) + "\n";
    c.t.errors[0]++;
  }
  cop_setopt(CopTimeout, std::atoi(argv[9]));
  pvm_joingroup(const_cast<char*>(c.sync.c_str()));
  for (size_t g = 0; g < p.groups.size(); ++g)
    if (p.initial[g].count(me)) pvm_joingroup(c.group(int(g)));
  pvm_barrier(const_cast<char*>(c.sync.c_str()), tasks);
  for (const Step& s : p.steps) {
    if (!c.m.alive.count(me)) break;
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&c.step, 1, 1);
    pvm_send(pvm_parent(), kStepTag);
    run_step(c, s);
    c.m.apply(s);
    c.step++;
  }
  finish(c);
  c.t.pack();
  pvm_send(pvm_parent(), kReportTag);
  pvm_barrier(const_cast<char*>(c.sync.c_str()), int(c.m.alive.size()));  // nobody leaves while others still call
  for (size_t g = 0; g < p.groups.size(); ++g)
    if (c.m.of[g].count(me)) pvm_lvgroup(c.group(int(g)));
  cop_exit();
  pvm_exit();
  return 0;
}

}  // namespace difftest
