// Group windows of the global address space (library.h, cop.h "Tags"): each group
// name holds one window of the GAS, so two groups using the same tag numbers at
// once meet in no terminal-count or broadcast mask entry (seed 000 ch. V: a tag is
// a GAS address; PVM's tags in disjoint groups never meet).
//
// The windows are handed out through PVM's mailbox, which the master pvmd keeps for
// the whole virtual machine (and so for every COP level and controller of it):
//   copbench.cop.windows          the count of windows the GAS is cut into
//   copbench.cop.window.<k>       window k is claimed (holds the group's name)
//   copbench.cop.group.<name>     the group's window number k
//   copbench.cop.users.<k>        one instance per task using window k (its group's name)
// A pvm_putinfo without PvmMboxOverWritable fails with PvmExists when another task
// holds the name, which makes each insert a test-and-set: the first task to use a
// group claims the lowest window nobody holds (one it does not hold already, and no
// task still uses), then names the group; a task that loses the race to name the
// group gives its window back and reads the winner's. Every entry belongs to the
// task that inserted it and goes when that task ends (not PvmMboxPersistent): a
// window is free again once the task that claimed it and every task that used it
// have ended. A group whose claimer ended while others still use it is found again
// through their users entries, so it keeps its window. With a single window
// (CopGroupWindows 1) nothing is asked: the one group a task may use has the whole GAS.
#include <pvm3.h>

#include <chrono>
#include <string>
#include <thread>

#include "lib/library.h"

namespace cop::lib {

namespace {

const char* const kCountEntry = "copbench.cop.windows";

std::string window_entry(uint32_t k) { return "copbench.cop.window." + std::to_string(k); }
std::string users_entry(uint32_t k) { return "copbench.cop.users." + std::to_string(k); }
std::string group_entry(const std::string& group) { return "copbench.cop.group." + group; }

// Inserts `name` holding the int `v` or, with `text`, a string (`flags`: PvmMboxDefault,
// the only instance, or PvmMboxMultiInstance); 0, PvmExists when taken, or a PVM error.
int put(const std::string& name, int v, const std::string* text = nullptr, int flags = PvmMboxDefault) {
  const int buf = pvm_mkbuf(PvmDataDefault);
  if (buf < 0) return buf;
  const int old = pvm_setsbuf(buf);
  int rc = text ? pvm_pkstr(const_cast<char*>(text->c_str())) : pvm_pkint(&v, 1, 1);
  if (rc >= 0) rc = pvm_putinfo(const_cast<char*>(name.c_str()), buf, flags);
  pvm_setsbuf(old);
  pvm_freebuf(buf);
  return rc == PvmDenied ? PvmExists : (rc < 0 ? rc : 0);
}

// The int stored under `name`: 0, PvmNotFound, or another PVM error.
int get(const std::string& name, int& v) {
  const int buf = pvm_recvinfo(const_cast<char*>(name.c_str()), 0, PvmMboxDefault);
  if (buf < 0) return buf;
  const int old = pvm_setrbuf(buf);
  const int rc = pvm_upkint(&v, 1, 1);
  pvm_setrbuf(old);
  pvm_freebuf(buf);
  return rc < 0 ? rc : 0;
}

// The string of the first instance of `name`: 1, 0 when there is none, or a PVM error.
int first_text(const std::string& name, std::string& text) {
  const int buf = pvm_recvinfo(const_cast<char*>(name.c_str()), 0, PvmMboxFirstAvail);
  if (buf == PvmNotFound) return 0;
  if (buf < 0) return buf;
  char got[256] = {};
  const int old = pvm_setrbuf(buf);
  const int rc = pvm_upkstr(got);
  pvm_setrbuf(old);
  pvm_freebuf(buf);
  if (rc < 0) return rc;
  text = got;
  return 1;
}

// 1 when `name` is in the mailbox, 0 when not, or a PVM error.
int exists(const std::string& name) {
  const int buf = pvm_recvinfo(const_cast<char*>(name.c_str()), 0, PvmMboxDefault);
  if (buf == PvmNotFound) return 0;
  if (buf < 0) return buf;
  pvm_freebuf(buf);
  return 1;
}

// The count of windows the tasks of this virtual machine use now: the first task to use
// a group sets it (for as long as it lives).
int agree_on_count(const char* call) {
  Library& l = lib();
  if (l.windows_agreed) return 0;
  int vm = 0;
  int rc = get(kCountEntry, vm);
  if (rc == PvmNotFound) {
    rc = put(kCountEntry, int(l.group_windows));
    if (rc == 0) vm = int(l.group_windows);
    if (rc == PvmExists) rc = get(kCountEntry, vm);
  }
  if (rc < 0) return rc;
  if (vm != int(l.group_windows)) {
    report(call, "this task cuts the global address space into " + std::to_string(l.group_windows) +
                     " group windows (CopGroupWindows, COP_GROUP_WINDOWS), the virtual machine into " +
                     std::to_string(vm));
    return CopErrMismatch;
  }
  l.windows_agreed = true;
  return 0;
}

// Window k for `group`, claimed: 0, PvmExists when another task holds or uses it, or an error.
int claim(uint32_t k, const std::string& group) {
  // Looked at first: the pvmd lets an entry's owner insert over it, so a window this task
  // claimed for another group would be claimed again. (Another task cannot.)
  if (int seen = exists(window_entry(k)); seen != 0) return seen < 0 ? seen : PvmExists;
  if (int rc = put(window_entry(k), 0, &group); rc < 0) return rc;
  // Tasks of the group that had it may still use it (its claimer has ended): not free.
  std::string user;
  if (int used = first_text(users_entry(k), user); used != 0) {
    pvm_delinfo(const_cast<char*>(window_entry(k).c_str()), 0, PvmMboxDefault);
    return used < 0 ? used : PvmExists;
  }
  return 0;
}

// The window a task still using `group` holds (its claimer has ended): 1 and k, or 0.
int held_by_users(const std::string& group, uint32_t first, uint32_t& k) {
  for (uint32_t w = first; w < lib().group_windows; ++w) {
    std::string user;
    const int used = first_text(users_entry(w), user);
    if (used < 0) return used;
    if (used && user == group) {
      k = w;
      return 1;
    }
  }
  return 0;
}

}  // namespace

uint32_t window_words() { return info().gas_words / lib().group_windows; }

int group_window(const char* call, const std::string& group, uint32_t& window) {
  Library& l = lib();
  if (auto it = l.windows.find(group); it != l.windows.end()) {
    window = it->second;
    return 0;
  }
  if (l.group_windows == 1) {
    // One window: the GAS as before group windows, nothing asked of the mailbox (jobs
    // after jobs on one virtual machine, as a benchmark's points are, never wait for
    // one another's windows); a task may use one group only.
    if (!l.windows.empty()) {
      report(call, "group '" + group + "' after group '" + l.windows.begin()->first +
                       "' with a single group window (CopGroupWindows 1): one group a task");
      return CopErrNoWindow;
    }
    l.windows[group] = 0;
    window = 0;
    return 0;
  }
  if (int rc = agree_on_count(call); rc < 0) return rc;
  int k = -1;
  int rc = get(group_entry(group), k);
  // Window 0 is the multicasts' (cop_mcast names no group).
  const uint32_t first = 1;
  if (rc == PvmNotFound) {
    uint32_t held = 0;
    if (int found = held_by_users(group, first, held); found != 0) {
      if (found < 0) return found;
      k = int(held);
      rc = 0;
    }
  }
  // Tasks of the group that start at once each claim a window before one of them names
  // the group (the others then give theirs back): a task that finds none free looks
  // again for the group's name, for a while, before it gives up.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (uint32_t w = first; rc == PvmNotFound; ++w) {
    if (w == l.group_windows) {
      if (std::chrono::steady_clock::now() > give_up) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      rc = get(group_entry(group), k);
      w = first;
      if (rc != PvmNotFound) break;
    }
    const int taken = claim(w, group);
    if (taken == PvmExists) continue;
    if (taken < 0) return taken;
    rc = put(group_entry(group), int(w));
    if (rc == 0) {
      k = int(w);
    } else {
      // Another task named the group first: its window is the group's, this one goes back.
      pvm_delinfo(const_cast<char*>(window_entry(w).c_str()), 0, PvmMboxDefault);
      if (rc == PvmExists) rc = get(group_entry(group), k);
    }
  }
  if (rc == PvmNotFound) {
    report(call, "no free group window for group '" + group + "': the " + std::to_string(l.group_windows) +
                     " windows of the global address space are held by other groups' tasks (CopGroupWindows)");
    return CopErrNoWindow;
  }
  if (rc < 0) return rc;
  if (k < 0 || uint32_t(k) >= l.group_windows) return CopErrMismatch;
  // This task uses the window now: it stays the group's while this task lives.
  if (int used = put(users_entry(uint32_t(k)), 0, &group, PvmMboxMultiInstance); used < 0) return used;
  l.windows[group] = uint32_t(k);
  window = uint32_t(k);
  return 0;
}

int group_address(const char* call, const char* group, int msgtag, size_t count, Use use, int scope,
                  uint32_t& addr) {
  uint32_t window = 0;
  if (group)
    if (int rc = group_window(call, group, window); rc < 0) return rc;
  const uint32_t words = window_words();
  if (uint64_t(uint32_t(msgtag)) + count > words) {
    report(call, "tag " + std::to_string(msgtag) + " + " + std::to_string(count) + " words beyond the " +
                     (group ? "group's" : "multicasts'") + " window of the global address space (" +
                     std::to_string(words) + " words: " + std::to_string(info().gas_words) + " / " +
                     std::to_string(lib().group_windows) + " windows, CopGroupWindows)");
    return CopErrAddressRange;
  }
  addr = window * words + uint32_t(msgtag);
  return take_tags(call, int(addr), count, use, scope);
}

}  // namespace cop::lib
