// Group windows of the global address space (library.h, cop.h "Tags"): each group
// name owns one window of the GAS, so two groups using the same tag numbers at
// once meet in no terminal-count or broadcast mask entry (seed 000 ch. V: a tag is
// a GAS address; PVM's tags in disjoint groups never meet).
//
// The windows are handed out through PVM's mailbox, which the master pvmd keeps for
// the whole virtual machine (and so for every COP level and controller of it):
//   copbench.cop.windows          the count of windows the GAS is cut into
//   copbench.cop.window.<k>       window k is taken (holds the group's name)
//   copbench.cop.group.<name>     the group's window number k
// A pvm_putinfo without PvmMboxOverWritable fails with PvmExists when the name is
// taken by another task, which makes each insert a test-and-set: the first task to
// use a group claims the lowest free window (one it does not hold already), then
// names the group; a task that loses the race to name the group gives its window
// back and reads the winner's. The entries are
// persistent (PvmMboxPersistent): a window stays with its group name until the
// virtual machine halts, and a name used again gets the same window.
#include <pvm3.h>

#include <string>

#include "lib/library.h"

namespace cop::lib {

namespace {

const char* const kCountEntry = "copbench.cop.windows";

std::string window_entry(uint32_t k) { return "copbench.cop.window." + std::to_string(k); }
std::string group_entry(const std::string& group) { return "copbench.cop.group." + group; }

// Inserts `name` holding the int `v` (or, with `text`, a string); PvmExists when taken.
int put(const std::string& name, int v, const std::string* text = nullptr) {
  const int buf = pvm_mkbuf(PvmDataDefault);
  if (buf < 0) return buf;
  const int old = pvm_setsbuf(buf);
  int rc = text ? pvm_pkstr(const_cast<char*>(text->c_str())) : pvm_pkint(&v, 1, 1);
  if (rc >= 0) rc = pvm_putinfo(const_cast<char*>(name.c_str()), buf, PvmMboxPersistent);
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

// 1 when `name` is in the mailbox, 0 when not, or a PVM error.
int exists(const std::string& name) {
  const int buf = pvm_recvinfo(const_cast<char*>(name.c_str()), 0, PvmMboxDefault);
  if (buf == PvmNotFound) return 0;
  if (buf < 0) return buf;
  pvm_freebuf(buf);
  return 1;
}

// The count of windows this virtual machine uses: the first task to use a group sets it.
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

}  // namespace

uint32_t window_words() { return info().gas_words / lib().group_windows; }

int group_window(const char* call, const std::string& group, uint32_t& window) {
  Library& l = lib();
  if (auto it = l.windows.find(group); it != l.windows.end()) {
    window = it->second;
    return 0;
  }
  if (int rc = agree_on_count(call); rc < 0) return rc;
  int k = -1;
  int rc = get(group_entry(group), k);
  // Window 0 is the multicasts' (cop_mcast names no group); with a single window the
  // one group shares it with them, as every tag did before group windows.
  const uint32_t first = l.group_windows == 1 ? 0 : 1;
  for (uint32_t w = first; rc == PvmNotFound && w < l.group_windows; ++w) {
    // Looked at first: the pvmd lets an entry's owner insert over it, so a window this
    // task claimed for another group would be claimed again. (Another task cannot: its
    // insert over an existing entry fails.)
    if (int seen = exists(window_entry(w)); seen != 0) {
      if (seen < 0) return seen;
      continue;
    }
    const int taken = put(window_entry(w), 0, &group);
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
                     " windows of the global address space are taken by other group names (CopGroupWindows)");
    return CopErrNoWindow;
  }
  if (rc < 0) return rc;
  if (k < 0 || uint32_t(k) >= l.group_windows) return CopErrMismatch;
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
