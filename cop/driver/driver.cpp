// copdrv's channel work (driver.h): registration with copd, requests and heartbeats,
// the drain and the normal-access thread; the Pid table is in pid_table.cpp.
#include "driver/driver.h"

#include <poll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <cop/cop.h>
#include "link/auth.h"
#include <fmt/format.h>

namespace cop::driver {

using link::Frame;
using link::FrameType;
using wire::Error;

namespace {

constexpr uint16_t kDriverTkno = wire::kMaxTkno;  // never a task's: tasks_per_channel <= 512
constexpr int kDrainPeriodMs = 5;

}  // namespace

Driver::Driver(DriverConfig config, Log log) : config_(std::move(config)), log_(std::move(log)), udp_(config_.local) {
  udp_.connect(config_.controller);
  // A task waiting on the channel blocks in recv for at most one slice.
  const timeval slice{0, kSliceMs * 1000};
  ::setsockopt(udp_.fd(), SOL_SOCKET, SO_RCVTIMEO, &slice, sizeof slice);
  memfd_ = ::memfd_create("cop-channel-window", MFD_CLOEXEC);
  if (memfd_ < 0 || ::ftruncate(memfd_, sizeof(Window)) < 0)
    throw std::runtime_error(fmt::format("channel window: {}", std::strerror(errno)));
  void* mem = ::mmap(nullptr, sizeof(Window), PROT_READ | PROT_WRITE, MAP_SHARED, memfd_, 0);
  if (mem == MAP_FAILED) throw std::runtime_error(fmt::format("mapping the channel window: {}", std::strerror(errno)));
  window_ = static_cast<Window*>(mem);
  init_window(window_, ::getpid(), static_cast<uint16_t>(config_.channel));
  LinkOptions drain_opts;
  drain_opts.dead_ms = config_.dead_ms;
  nc_ = link::random_nonce();
  window_->register_nc.store(nc_);
  down_base_ = link::channel_down_key(config_.key, uint16_t(config_.channel));
  drain_ = std::make_unique<ChannelClient>(window_, udp_.fd(), kDriverTkno, link::Key{}, down_base_, drain_opts);
}

Driver::~Driver() {
  for (auto& t : normal_threads_)
    if (t.joinable()) t.detach();
  if (listener_ >= 0) ::close(listener_);
  for (const Client& c : direct_clients_) ::close(c.fd);
  if (window_) ::munmap(window_, sizeof(Window));
  if (memfd_ >= 0) ::close(memfd_);
}

void Driver::update_keys() {
  const uint32_t session = window_->rx_session.load();
  if (session == key_session_) return;
  key_session_ = session;
  driver_key_ = link::driver_key(config_.key, uint16_t(config_.channel), session, nc_);
  drain_->set_driver_key(driver_key_, session);
}

void Driver::send_frame(FrameType type, uint32_t seq, uint16_t tkno, uint64_t nonce,
                        const std::function<void(link::Frame&)>& more) {
  Frame f;
  f.type = type;
  f.channel = static_cast<uint16_t>(config_.channel);
  f.seq = seq;
  f.tkno = tkno;
  f.nonce = type == FrameType::register_ ? nc_ : nonce;
  f.session = window_->rx_session.load();
  f.ack = window_->rx_next.load() - 1;
  if (more) more(f);
  if (type != FrameType::register_) window_->ack_sent.store(f.ack);
  update_keys();
  std::vector<uint8_t> bytes;
  // REGISTER has no key yet (copd answers it with a challenge, prove()).
  link::encode(f, bytes, type == FrameType::register_ ? nullptr : &driver_key_);
  udp_.send(bytes);
}

void Driver::prove() {
  const uint32_t seen = window_->challenge_seq.load(std::memory_order_acquire);
  if (seen == challenge_seen_) return;
  challenge_seen_ = seen;
  link::Challenge ns;
  for (size_t i = 0; i < 4; ++i) ns[i] = window_->challenge_ns[i].load(std::memory_order_relaxed);
  Frame f;
  f.type = FrameType::prove;
  f.channel = static_cast<uint16_t>(config_.channel);
  f.nonce = nc_;
  std::copy(ns.begin(), ns.end(), f.info.begin());
  const link::Key k = link::register_key(config_.key, f.channel, nc_, ns);
  std::vector<uint8_t> bytes;
  link::encode(f, bytes, &k);
  udp_.send(bytes);
}

bool Driver::register_with_copd(int timeout_ms, std::string& why) {
  const uint64_t deadline = monotonic_ns() + uint64_t(timeout_ms) * 1000000ull;
  std::vector<uint8_t> buf;
  bool said_waiting = false;
  bool send_register = true;
  while (monotonic_ns() < deadline) {
    // REGISTER -> CHALLENGE -> PROVE -> REGISTERED (cop/link.h "Keys").
    if (send_register) send_frame(FrameType::register_, 0);
    send_register = true;
    const long n = udp_.receive(buf, 200);
    if (n < 0) {  // ECONNREFUSED: copd is not there (yet)
      if (!said_waiting) {
        log_(link::LogLevel::info, fmt::format("waiting for copd at {}", link::to_string(config_.controller)));
        said_waiting = true;
      }
      ::usleep(200000);
      continue;
    }
    if (n == 0) continue;
    const std::span<const uint8_t> bytes(buf.data(), size_t(n));
    auto decoded = link::decode(bytes);
    if (!std::holds_alternative<Frame>(decoded)) continue;
    const Frame& f = std::get<Frame>(decoded);
    if (f.type == FrameType::refused) {
      // Only copd's (the channel's refusal key) to this registration (our nonce Nc) ends it.
      if (f.nonce != nc_ || !link::verify(bytes, link::refusal_key(down_base_))) {
        window_->refused_ignored.fetch_add(1);
        continue;
      }
      why = fmt::format("copd refused channel {}: {} ({})", config_.channel,
                        link::refusal_name(static_cast<link::Refusal>(f.info[0])), f.text);
      return false;
    }
    if (f.type == FrameType::challenge && f.nonce == nc_) {
      for (size_t i = 0; i < 4; ++i) window_->challenge_ns[i].store(f.info[i]);
      window_->challenge_seq.fetch_add(1);
      prove();
      send_register = false;  // wait for REGISTERED
      continue;
    }
    if (f.type != FrameType::registered || f.nonce != nc_ ||
        !link::verify(bytes, link::session_key(down_base_, f.session)))
      continue;
    window_->copd_epoch.store(f.ack);
    copd_epoch_ = f.ack;
    window_->rx_session.store(f.session);
    window_->rx_next.store(1);
    window_->ack_sent.store(0);
    window_->sup_acked.store(0);
    request_session_ = f.session;
    update_keys();
    window_->ppn = f.tkno;
    window_->channels = f.info[0];
    window_->tasks_per_channel = std::min<uint32_t>(f.info[1], kMaxLocalTasks);
    window_->tas_words = f.info[2];
    window_->gas_words = f.info[3];
    window_->last_heard_ns.store(monotonic_ns());
    csr_channel_up(*window_);
    return true;
  }
  why = fmt::format("no answer from copd at {} within {} ms", link::to_string(config_.controller), timeout_ms);
  return false;
}

void Driver::start(const std::atomic<bool>& stop) {
  (void)stop;
  std::filesystem::create_directories(config_.dir);
  socket_path_ = config_.dir + "/" + kSocketName;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path_.size() >= sizeof addr.sun_path)
    throw std::runtime_error(fmt::format("socket path too long: {}", socket_path_));
  std::strcpy(addr.sun_path, socket_path_.c_str());
  // A socket file left by a driver that died is reused; a live one is not.
  const int probe = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (::connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    ::close(probe);
    throw std::runtime_error(fmt::format("another copdrv serves {}", socket_path_));
  }
  ::close(probe);
  // Only then the channel: a copdrv restarted on this node takes it back from
  // its dead predecessor (copd allows that from the same address).
  std::string why;
  if (!register_with_copd(config_.register_timeout_ms, why)) throw std::runtime_error(why);
  ::unlink(socket_path_.c_str());
  // Bound under a temporary name and renamed once listening: whoever sees the
  // socket file (tasks, scripts/cop-stack) can connect at once.
  const std::string tmp = socket_path_ + ".new";
  sockaddr_un tmp_addr{};
  tmp_addr.sun_family = AF_UNIX;
  if (tmp.size() >= sizeof tmp_addr.sun_path) throw std::runtime_error(fmt::format("socket path too long: {}", tmp));
  std::strcpy(tmp_addr.sun_path, tmp.c_str());
  ::unlink(tmp.c_str());
  listener_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  // Only the job's user may connect (issue 25: a socket open to every local user let
  // any of them enrol a task beside the job's): mode 0600, owned by that user when a
  // root-run copdrv serves another (--allow-uid). accept_task checks SO_PEERCRED too.
  const bool give = config_.allow_uid >= 0 && uid_t(config_.allow_uid) != ::geteuid();
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&tmp_addr), sizeof tmp_addr) < 0 || ::listen(listener_, 64) < 0 ||
      ::chmod(tmp.c_str(), 0600) < 0 || (give && ::chown(tmp.c_str(), uid_t(config_.allow_uid), gid_t(-1)) < 0) ||
      ::rename(tmp.c_str(), socket_path_.c_str()) < 0)
    throw std::runtime_error(fmt::format("{}: {}", socket_path_, std::strerror(errno)));
  log_(link::LogLevel::info, fmt::format("channel {} registered with copd at {} (partition {}, {} task address spaces); tasks use "
                   "COP_DRIVER={}",
                   config_.channel, link::to_string(config_.controller), window_->ppn, window_->tasks_per_channel,
                   config_.dir));
}

uint32_t Driver::request(FrameType type, uint16_t tkno, uint64_t nonce, const std::string& job, uint32_t uid,
                         uint32_t had_ppn) {
  std::lock_guard lock(requests_mu_);
  if (++request_seq_ == 0) request_seq_ = 1;
  requests_.push_back(DriverRequest{type, tkno, nonce, request_seq_, 0, job, uid, had_ppn});
  return request_seq_;
}

bool Driver::confirmed(uint32_t seq) const {
  return window_->rx_session.load() == request_session_ && !link::seq_after(seq, window_->sup_acked.load());
}

void Driver::send_pending_request() {
  std::lock_guard lock(requests_mu_);
  if (const uint32_t session = window_->rx_session.load(); session != request_session_) {
    // copd restarted and knows no task: enrol every local one again, in a new sequence.
    request_session_ = session;
    requests_.clear();
    request_seq_ = 0;
    for (int t = 0; t < kMaxLocalTasks; ++t)
      if (tokens_[t]) {
        // Its job again first, asking for the partition it has (every node asks the same).
        // With the epoch of that partition: copd keeps the task's place only in the same
        // partition's life, else it answers every command of the task epoch_lost.
        if (!jobs_[t].job.empty())
          requests_.push_back(DriverRequest{FrameType::join, uint16_t(t), 0, ++request_seq_, 0, jobs_[t].job,
                                            jobs_[t].uid, jobs_[t].ppn, jobs_[t].epoch});
        requests_.push_back(DriverRequest{FrameType::enrol, uint16_t(t), tokens_[t], ++request_seq_, 0});
      }
  }
  const uint32_t acked = window_->sup_acked.load();
  while (!requests_.empty() && !link::seq_after(requests_.front().seq, acked)) requests_.pop_front();
  if (requests_.empty() || !window_->csr_rdy.load()) return;
  DriverRequest& r = requests_.front();
  const uint64_t now = monotonic_ns();
  if (r.sent_ns != 0 && now - r.sent_ns < 30000000ull) return;  // its resend timer: 30 ms
  r.sent_ns = now;
  if (r.type == FrameType::join) {
    send_frame(r.type, r.seq, r.tkno, 0, [&](Frame& f) {
      f.info[1] = r.had_epoch;
      f.info[2] = r.uid;
      f.info[3] = r.had_ppn;
      f.text = r.job;
    });
    // A task enrolled again (copd restarted) waits for both: its ENROL goes at once
    // behind its JOIN (copd takes requests in order), one round trip as before.
    if (requests_.size() > 1 && requests_[1].type == FrameType::enrol && requests_[1].tkno == r.tkno) {
      DriverRequest& e = requests_[1];
      e.sent_ns = now;
      send_frame(e.type, e.seq, e.tkno, e.nonce);
    }
    return;
  }
  send_frame(r.type, r.seq, r.tkno, r.nonce);
}

void Driver::acknowledge() {
  // Tasks acknowledge on their command frames; when none did for a whole
  // drain period, the driver does.
  const uint32_t have = window_->rx_next.load() - 1;
  if (have == window_->ack_sent.load() || window_->rx_session.load() == 0) {
    ack_seen_ = have;
    return;
  }
  if (have != ack_seen_) {
    ack_seen_ = have;
    return;
  }
  send_frame(FrameType::ack, 0, kDriverTkno);
}

void Driver::serve_normal(int fd, int slot, LinkOptions link) {
  uint64_t token = 0;
  {
    std::lock_guard lock(requests_mu_);
    token = tokens_[slot];
  }
  ChannelClient client(window_, udp_.fd(), static_cast<uint16_t>(slot),
                       link::task_key(config_.key, uint16_t(config_.channel), uint16_t(slot), token), down_base_, link);
  {
    std::lock_guard lock(requests_mu_);
    if (jobs_[slot].ppn) client.set_partition(uint8_t(jobs_[slot].ppn - 1));
  }
  // The second copy: requests arrive in the driver's buffers, answers leave them.
  auto req = std::make_unique<ExchangeRequest>();
  auto rep = std::make_unique<ExchangeReply>();
  auto awaited = std::make_unique<AwaitReply>();
  Error send_error = Error::none;
  std::vector<Answer> answers;
  for (;;) {
    const ssize_t n = ::recv(fd, req.get(), sizeof(ExchangeRequest), 0);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      break;
    }
    switch (req->op) {
      case Op::send_only:
        send_error = req->count > uint32_t(kMaxNormalCommands)
                         ? Error::word_count  // more than a request holds: never read past it
                         : client.send_only(std::span<const wire::Message>(req->commands, req->count));
        break;
      case Op::finish: {
        Error e = send_error;
        answers.clear();
        if (e == Error::none) e = client.finish(answers);
        send_error = Error::none;
        rep->error = int32_t(e);
        rep->count = uint32_t(answers.size());
        std::copy(answers.begin(), answers.end(), rep->answers);
        ::send(fd, rep.get(), offsetof(ExchangeReply, answers) + answers.size() * sizeof(Answer), MSG_NOSIGNAL);
        break;
      }
      case Op::await: {
        AwaitRequest a;
        std::memcpy(static_cast<void*>(&a), static_cast<const void*>(req.get()), sizeof a);
        const uint32_t count = std::min(a.wanted.count, kMaxAwait);
        a.wanted.count = count;
        const Error e = client.await(a.wanted, std::span<wire::Message>(awaited->results, count), &awaited->at_cycle);
        awaited->error = int32_t(e);
        awaited->count = count;
        ::send(fd, awaited.get(), offsetof(AwaitReply, results) + count * sizeof(wire::Message), MSG_NOSIGNAL);
        break;
      }
      case Op::options: {
        OptionsRequest o;
        std::memcpy(static_cast<void*>(&o), static_cast<const void*>(req.get()), sizeof o);
        client.set_options(o.link);
        break;
      }
      default:
        break;
    }
  }
  ::close(fd);
  free_slot(slot);
}

void Driver::heartbeat() {
  const uint64_t now = monotonic_ns();
  if (now - last_heartbeat_ns_ < uint64_t(config_.heartbeat_ms) * 1000000ull) return;
  last_heartbeat_ns_ = now;
  if (const uint32_t epoch = window_->copd_epoch.load(); epoch != copd_epoch_) {
    log_(link::LogLevel::warn, fmt::format("copd has another epoch ({:#x}, was {:#x}): it restarted, and the tasks "
                                           "enrolled before get CopErrEpochLost until they enrol again",
                                           epoch, copd_epoch_));
    copd_epoch_ = epoch;
  }
  // copd forgot the channel (restart, lease): claim it again. A REFUSED of copd's for
  // this session (reprove): prove the registration again (copd keeps the session if it
  // still knows the channel).
  if (!window_->csr_rdy.load() || window_->reprove.exchange(0) != 0) {
    send_frame(FrameType::register_, 0);
  } else {
    send_frame(FrameType::heartbeat, ++heartbeat_seq_);
  }
  // Tasks write last_heard too: it may be newer than `now`.
  const uint64_t heard = window_->last_heard_ns.load();
  const uint64_t silent_ms = heard >= now ? 0 : (now - heard) / 1000000ull;
  if (silent_ms > uint64_t(config_.dead_ms)) {
    if (!reported_silence_) {
      log_(link::LogLevel::warn, fmt::format("copd silent for {} ms: channel {} down (link_down in the CSR)", silent_ms, config_.channel));
      reported_silence_ = true;
    }
    csr_channel_down(*window_);
  } else if (reported_silence_ && window_->csr_rdy.load()) {
    log_(link::LogLevel::info, fmt::format("copd answers again: channel {} up", config_.channel));
    reported_silence_ = false;
  }
}

void Driver::run(const std::atomic<bool>& stop) {
  std::vector<pollfd> fds;
  while (!stop.load()) {
    fds.clear();
    fds.push_back(pollfd{listener_, POLLIN, 0});
    // The driver does not wake for each datagram: a task waiting on the
    // channel reads its own, and what nobody waits for stays in the socket
    // (the interface's buffers) until the periodic drain below files it.
    fds.push_back(pollfd{-1, POLLIN, 0});
    for (const Client& c : direct_clients_) fds.push_back(pollfd{c.fd, POLLIN, 0});
    const int r = ::poll(fds.data(), fds.size(), std::min(config_.heartbeat_ms, kDrainPeriodMs));
    if (r < 0 && errno != EINTR) break;
    if (r > 0) {
      if (fds[0].revents & POLLIN) accept_task();
      for (size_t i = 2; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        // A direct-mode task says nothing after registering: any event is its end.
        char byte;
        if (::recv(fds[i].fd, &byte, 1, MSG_DONTWAIT) > 0) continue;
        const int fd = fds[i].fd;
        auto it = std::find_if(direct_clients_.begin(), direct_clients_.end(), [&](const Client& c) { return c.fd == fd; });
        if (it != direct_clients_.end()) {
          free_slot(it->slot);
          ::close(it->fd);
          direct_clients_.erase(it);
        }
      }
    }
    heartbeat();
    prove();
    // The watermark drain (ch. V): every few ms, when no task holds the channel.
    if (monotonic_ns() >= udp_skip_until_ns_) {
      drain_->drain(0);
      udp_skip_until_ns_ = monotonic_ns() + uint64_t(kDrainPeriodMs) * 1000000ull;
      acknowledge();
    }
    send_pending_request();
  }
}

void Driver::shutdown() {
  log_(link::LogLevel::info, fmt::format("channel {} shutting down: link_down for local tasks, copd told", config_.channel));
  csr_channel_down(*window_);
  futex_wake_all(&window_->event);
  send_frame(FrameType::bye, 0);
  if (listener_ >= 0) {
    ::close(listener_);
    listener_ = -1;
    ::unlink(socket_path_.c_str());
  }
  for (const Client& c : direct_clients_) ::close(c.fd);
  direct_clients_.clear();
}

}  // namespace cop::driver
