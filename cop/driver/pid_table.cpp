// copdrv's Pid table (seed 000 ch. V, "The COP Interface Driver"): a task that
// connects to DIR/copdrv.sock is checked (its uid, as the kernel says), gets a TKNO,
// its job's partition and its key from copd, and the window and the channel socket
// (direct access) or a thread here that does the channel work for it (normal access).
#include "driver/driver.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include <cop/cop.h>
#include "link/auth.h"
#include <fmt/format.h>

namespace cop::driver {

using link::FrameType;

namespace {

// A PVM tid's L field (bits 17..0: the task's number on its host), modulo the
// channel's task address spaces: the TKNO a task gets under the direct mapping.
int tid_task_space(int32_t tid, int spaces) {
  constexpr uint32_t kTidLocalMask = 0x3FFFF;
  return int(uint32_t(tid) & kTidLocalMask) % spaces;
}


bool send_with_fds(int sock, const void* data, size_t len, const int* fds, int nfds) {
  iovec iov{const_cast<void*>(data), len};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  if (nfds > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(size_t(nfds) * sizeof(int));
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(size_t(nfds) * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds, size_t(nfds) * sizeof(int));
  }
  return ::sendmsg(sock, &msg, MSG_NOSIGNAL) == ssize_t(len);
}

}  // namespace

int Driver::assign_slot(const RegisterRequest& req, std::string& why) {
  lock_robust(&window_->table_lock);
  const int n = int(window_->tasks_per_channel);
  auto is_free = [&](int t) { return window_->tasks[t].tkno < 0; };
  int chosen = -1;
  RegisterRequest want = req;
  // -2: exactly the tid's L field modulo the task spaces (the direct mapping).
  if (want.wanted_tkno == -2) want.wanted_tkno = tid_task_space(req.tid, n);
  if (want.wanted_tkno >= 0) {
    const int t = want.wanted_tkno;
    if (t >= n)
      why = fmt::format("TKNO {} is beyond this channel's {} task address spaces", t, n);
    else if (!is_free(t))
      why = fmt::format("TKNO {} is in use by pid {}", t, window_->tasks[t].pid);
    else
      chosen = t;
  } else {
    const int preferred = tid_task_space(req.tid, n);
    for (int k = 0; k < n && chosen < 0; ++k)
      if (is_free((preferred + k) % n)) chosen = (preferred + k) % n;
    if (chosen < 0) why = fmt::format("all {} task address spaces of this channel are in use", n);
  }
  bool alone = chosen >= 0;
  for (int t = 0; t < n && alone; ++t) alone = is_free(t);
  if (chosen >= 0) window_->tasks[chosen] = TaskSlot{req.pid, req.tid, int16_t(chosen), uint8_t(req.direct), 0};
  pthread_mutex_unlock(&window_->table_lock);
  // The channel's first task since all left: results and NACKs still filed (or in the
  // socket) are of operations of tasks gone; the new task must not take them for its
  // own, as it does not read what they left in its task address space (seed 000 ch. V).
  if (alone && drain_->drain(0)) clear_out_of_context(*window_);
  return chosen;
}

void Driver::free_slot(int slot) {
  {
    std::lock_guard lock(requests_mu_);
    tokens_[slot] = 0;
    jobs_[slot] = SlotJob{};
  }
  // copd forgets the task's key and frees what it left in the controller.
  request(FrameType::task_end, uint16_t(slot), 0);
  lock_robust(&window_->table_lock);
  window_->tasks[slot].tkno = -1;
  pthread_mutex_unlock(&window_->table_lock);
  // Answers still filed for that TKNO have no reader any more.
  lock_robust(&window_->buffer_lock);
  for (uint32_t i = 0; i < window_->ooc_high; ++i) {
    OutOfContext& o = window_->ooc[i];
    if (o.used && o.kind == uint8_t(link::EntryKind::answer) && o.tkno == slot) {
      o.used = 0;
      window_->ooc_count--;
    }
  }
  pthread_mutex_unlock(&window_->buffer_lock);
}

bool Driver::admitted(uid_t uid) const {
  return uid == 0 || uid == (config_.allow_uid >= 0 ? uid_t(config_.allow_uid) : ::geteuid());
}

// Sends the refusal `rep` (its status and detail set) to the task on `fd`, says so in
// the log and closes the connection.
void Driver::refuse_task(int fd, const RegisterReply& rep, const std::string& who) {
  ::send(fd, &rep, sizeof rep, MSG_NOSIGNAL);
  log_(link::LogLevel::warn, fmt::format("{} refused: {}", who, rep.detail));
  ::close(fd);
}

// The task of `slot` in its job, then enrolled with its nonce, each confirmed by copd
// within dead_ms: its partition + 1 (PPN + 1), or 0 with rep's status and detail saying
// why not (the slot freed).
uint32_t Driver::enrol_task(int slot, uint64_t token, const std::string& job, uid_t uid, RegisterReply& rep) {
  const uint64_t deadline = monotonic_ns() + uint64_t(config_.dead_ms) * 1000000ull;
  auto wait_confirmed = [&](uint32_t seq) {
    while (!confirmed(seq) && monotonic_ns() < deadline && window_->csr_rdy.load()) {
      send_pending_request();
      if (!drain_->drain(2)) ::usleep(500);  // a task reads the channel: it files copd's sup_ack
      heartbeat();
      prove();
    }
    return confirmed(seq);
  };
  // First its job (cop.h "Jobs"): copd gives the job's partition, the same on every
  // node, and the enrolment that follows puts the task in it.
  uint32_t seq = request(FrameType::join, uint16_t(slot), 0, job, uid, 0);
  {
    std::lock_guard lock(requests_mu_);
    jobs_[slot] = SlotJob{job, uid, 0};
  }
  const bool answered = wait_confirmed(seq);
  const uint64_t answer = window_->sup_answer.load();
  const uint64_t epoch_answer = window_->sup_epoch.load();
  const bool ours = answered && uint32_t(answer >> 32) == seq;
  const uint32_t joined = ours ? uint32_t(answer >> 16) & 0xFFFFu : 0;
  {
    // The partition's epoch (cop.h "Epochs"), re-joined with after a lease or a copd restart.
    std::lock_guard lock(requests_mu_);
    jobs_[slot].epoch = uint32_t(epoch_answer >> 32) == seq ? uint32_t(epoch_answer) : 0;
  }
  if (answered && joined == 0) {
    const auto why_not = static_cast<link::JoinRefusal>(ours ? answer & 0xFFFFu : 0);
    free_slot(slot);
    rep.status = why_not == link::JoinRefusal::no_partition ? CopErrNoPartition
                 : why_not == link::JoinRefusal::no_parent  ? CopErrLinkDown
                                                            : CopErrNotPermitted;
    std::snprintf(rep.detail, sizeof rep.detail, "copd refused job '%s' of uid %d: %s", job.c_str(), int(uid),
                  why_not == link::JoinRefusal::other_user     ? "it is another user's job"
                  : why_not == link::JoinRefusal::no_partition ? "every partition belongs to another job"
                  : why_not == link::JoinRefusal::no_parent    ? "its level-1 copd could not reach the level 2"
                                                               : "bad job id");
    return 0;
  }
  if (answered) {
    seq = request(FrameType::enrol, uint16_t(slot), token);
    wait_confirmed(seq);
  }
  if (!confirmed(seq)) {
    free_slot(slot);
    rep.status = CopErrLinkDown;
    std::snprintf(rep.detail, sizeof rep.detail, "copd did not confirm the task's enrolment within %d ms",
                  config_.dead_ms);
    return 0;
  }
  return joined;
}

void Driver::accept_task() {
  const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  RegisterRequest req;
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 2000) <= 0 || ::recv(fd, &req, sizeof req, 0) != ssize_t(sizeof req) ||
      req.op != Op::register_) {
    log_(link::LogLevel::warn, "a task connected but sent no registration: closed");
    ::close(fd);
    return;
  }
  RegisterReply rep;
  std::string why;
  // Who the task is, as the kernel says (not the request): only the job's user enrols.
  ucred cred{};
  socklen_t cred_len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) < 0 || !admitted(cred.uid)) {
    rep.status = CopErrNotPermitted;
    std::snprintf(rep.detail, sizeof rep.detail, "copdrv of channel %d admits only uid %d (and root); the task runs as uid %d",
                  config_.channel, config_.allow_uid >= 0 ? config_.allow_uid : int(::geteuid()), int(cred.uid));
    refuse_task(fd, rep, fmt::format("task pid {}", int(cred.pid)));
    return;
  }
  req.job[sizeof req.job - 1] = '\0';
  const std::string job = req.job[0] ? std::string(req.job) : fmt::format("uid:{}", cred.uid);
  const int slot = window_->csr_rdy.load() ? assign_slot(req, why) : -1;
  if (!window_->csr_rdy.load()) why = "the channel is not registered with copd (link down)";
  if (slot < 0) {
    rep.status = window_->csr_rdy.load() ? CopErrMapping : CopErrLinkDown;
    std::snprintf(rep.detail, sizeof rep.detail, "%s", why.c_str());
    refuse_task(fd, rep, fmt::format("task pid {} tid {:#x}", req.pid, req.tid));
    return;
  }
  // The task's enrolment nonce, enrolled with copd before the task may send:
  // copd and the task have the same key from it (cop/link.h "Keys").
  const uint64_t token = link::random_nonce();
  {
    std::lock_guard lock(requests_mu_);
    tokens_[slot] = token;
  }
  const uint32_t joined = enrol_task(slot, token, job, cred.uid, rep);
  if (joined == 0) {
    refuse_task(fd, rep, fmt::format("task pid {} tid {:#x}", req.pid, req.tid));
    return;
  }
  rep.enrol_nonce = token;
  const link::Key task_key = link::task_key(config_.key, uint16_t(config_.channel), uint16_t(slot), token);
  std::memcpy(rep.task_key, task_key.data(), sizeof rep.task_key);
  std::memcpy(rep.down_key, down_base_.data(), sizeof rep.down_key);
  rep.chno = static_cast<uint16_t>(config_.channel);
  rep.tkno = static_cast<uint16_t>(slot);
  rep.ppn = uint16_t(joined - 1);
  {
    std::lock_guard lock(requests_mu_);
    jobs_[slot].ppn = joined;
  }
  rep.channels = window_->channels;
  rep.tasks_per_channel = window_->tasks_per_channel;
  rep.tas_words = window_->tas_words;
  rep.gas_words = window_->gas_words;
  const int fds[2] = {memfd_, udp_.fd()};
  if (!send_with_fds(fd, &rep, sizeof rep, fds, req.direct ? 2 : 1)) {
    free_slot(slot);
    ::close(fd);
    return;
  }
  if (req.direct) {
    direct_clients_.push_back(Client{fd, slot});
  } else {
    normal_threads_.emplace_back(&Driver::serve_normal, this, fd, slot, req.link);
  }
}

}  // namespace cop::driver
