// copd's channel interfaces in parallel (server.h, ServerConfig::io_threads):
// I/O threads, each with its own socket of the listen port's SO_REUSEPORT
// group and the channels the kernel steers to it by the frame's channel field
// (link::steer_by_channel: channel c to socket (c-1) mod N). An I/O thread
// receives its channels' datagrams (recvmmsg), decodes them (the CRC) and
// checks their MAC with the keys the core published, and puts them, in the
// order they came, in the core's inbox; it sends what the core queued for its
// channels (sendmmsg), in the order queued. The seed's channel interfaces work
// so beside the one controller (seed 000 ch. V).
//
// The controller core stays one: its rounds (the inbox in order, then the
// timers, Controller::run by the poll counter, the replies) run one at a time
// under a lock, on whichever I/O thread has datagrams for it (the others leave
// theirs in the inbox to the holder, which looks again before it lets go) or on
// thread 0 when a timer is due. No thread waits for the core and no wake-up
// hands a frame to it: that hop cost more CPU than the core's work (perf, 8
// channels on 2 cores). Every protocol decision (exactly-once, acknowledgments,
// leases, registration) is the core's, with the same state as with one thread.
#include "controller/server.h"
#include "link/udp.h"

#include <fmt/format.h>

#include <poll.h>
#include <sched.h>
#include <sodium.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

namespace cop::controller {

int default_io_threads(int channels) {
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cores = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                                   : int(std::thread::hardware_concurrency());
  return std::clamp(std::min({channels, cores - 1, 8}), 1, 8);
}

namespace {

// An eventfd that wakes a sleeping thread (written only when it sleeps).
struct Wake {
  int fd = -1;
  std::atomic<bool> sleeping{false};
  Wake() {
    fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
  }
  ~Wake() { ::close(fd); }
  void wake() {
    if (sleeping.exchange(false)) {
      const uint64_t one = 1;
      [[maybe_unused]] const ssize_t n = ::write(fd, &one, sizeof one);
    }
  }
  void drain() {
    uint64_t v;
    [[maybe_unused]] const ssize_t n = ::read(fd, &v, sizeof v);
  }
};

struct Out {
  std::vector<uint8_t> bytes;
  sockaddr_in to{};
};

}  // namespace

class Server::Io {
 public:
  Io(Server& s, int n)
      : server_(s), n_(unsigned(n)), keep_runs_(s.keep_runs()), keys_(size_t(s.config_.controller.channels)) {
    // sodium_init before two threads may first use libsodium (it picks BLAKE2b's implementation).
    if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialise");
    for (auto& k : keys_) k = std::make_unique<Keys>();
    const sockaddr_in at = s.socket_.local();
    for (unsigned i = 0; i < n_; ++i) {
      auto w = std::make_unique<Worker>();
      if (i > 0) w->own = link::UdpSocket(at, link::UdpSocket::Group::join);
      w->fd = i == 0 ? s.socket_.fd() : w->own.fd();
      workers_.push_back(std::move(w));
    }
    if (!link::steer_by_channel(s.socket_.fd(), n_))
      throw std::system_error(errno, std::generic_category(), "SO_ATTACH_REUSEPORT_CBPF");
  }
  ~Io() { stop(); }

  // The calling thread is I/O thread 0 (and the timers'); the others run beside it until `stop`.
  void run(const std::atomic<bool>& stop) {
    stopping_ = false;
    for (unsigned i = 1; i < n_; ++i) workers_[i]->thread = std::thread([this, i] { guarded(i, nullptr); });
    guarded(0, &stop);
    this->stop();
    if (failure_) std::rethrow_exception(failure_);  // as the core thread's own would leave run()
  }

  // The core (its lock held): a frame for channel c's I/O thread, handed over at the end of the round.
  void queue(int channel, std::span<const uint8_t> bytes, const sockaddr_in& to) {
    Worker& w = *workers_[link::channel_socket(unsigned(channel), n_)];
    // Into the storage of a frame the thread sent before where there is one (no
    // allocation per frame: a burst's reply frame is tens of KB).
    std::vector<uint8_t> b;
    if (!w.staged_spare.empty()) {
      b = std::move(w.staged_spare.back());
      w.staged_spare.pop_back();
    }
    b.assign(bytes.begin(), bytes.end());
    w.staged.push_back(Out{std::move(b), to});
  }

  // The core: channel c's keys now (registration, enrolment, end of a task, channel down).
  void publish(int c, const Channel& ch) {
    Keys& k = *keys_[size_t(c - 1)];
    std::lock_guard lock(k.mu);
    k.registered = ch.registered;
    k.driver = ch.driver_key;
    k.tasks.resize(ch.tasks.size());
    for (size_t t = 0; t < ch.tasks.size(); ++t) k.tasks[t] = {ch.tasks[t].enrolled, ch.tasks[t].key};
  }

 private:
  struct Worker {
    link::UdpSocket own;  // the group's first socket is the server's
    int fd = -1;
    Wake wake;
    std::mutex mu;
    std::vector<Out> outbox;  // mu; sent by this thread only, in order
    std::atomic<bool> has_out{false};
    std::vector<Out> staged;  // the core's (its lock)
    // Sent frames' storage for the next: this thread's (mu), then the core's (its lock).
    std::vector<std::vector<uint8_t>> spare;
    std::vector<std::vector<uint8_t>> staged_spare;
    std::thread thread;
  };
  struct Keys {
    std::mutex mu;
    bool registered = false;
    link::Key driver{};
    std::vector<std::pair<bool, link::Key>> tasks;
  };

  void stop() {
    stopping_ = true;
    for (auto& w : workers_) {
      w->wake.wake();
      if (w->thread.joinable()) w->thread.join();
    }
  }

  static int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  }

  // The MAC checked as the core would (handle_channel_frame), with the keys published.
  void pre_verify(Inbound& in) {
    const auto* f = in.whole_runs ? &in.runs.frame : std::get_if<link::Frame>(&in.decoded);
    if (!f || f->type == link::FrameType::register_ || f->type == link::FrameType::prove || f->channel < 1 ||
        f->channel > keys_.size())
      return;
    Keys& k = *keys_[f->channel - 1u];
    const bool task_frame = f->type == link::FrameType::command || f->type == link::FrameType::ack;
    bool has_task = false;
    {
      std::lock_guard lock(k.mu);
      if (!k.registered) return;
      in.pre.driver_key = k.driver;
      if (task_frame && f->tkno < k.tasks.size() && k.tasks[f->tkno].first) {
        has_task = true;
        in.pre.task_key = k.tasks[f->tkno].second;
      }
    }
    if (has_task) {
      in.pre.task_tried = true;
      in.pre.task_ok = link::verify(in.bytes, in.pre.task_key);
    }
    if (!in.pre.task_ok) {
      in.pre.driver_tried = true;
      in.pre.driver_ok = link::verify(in.bytes, in.pre.driver_key);
    }
  }

  // `n` Inbound records appended to `to` (empty), their storage that of datagrams handled
  // before where the spares have them.
  void take_spares(size_t n, std::vector<Inbound>& to) {
    {
      std::lock_guard lock(spare_mu_);
      const size_t k = std::min(n, spares_.size());
      std::move(spares_.end() - long(k), spares_.end(), std::back_inserter(to));
      spares_.resize(spares_.size() - k);
    }
    to.resize(n);
  }

  // The handled datagrams' records kept for the next ones (at most kSpares), `done` emptied.
  void keep_spares(std::vector<Inbound>& done) {
    {
      std::lock_guard lock(spare_mu_);
      const size_t k = std::min(done.size(), kSpares - std::min(kSpares, spares_.size()));
      std::move(done.begin(), done.begin() + long(k), std::back_inserter(spares_));
    }
    done.clear();
  }

  // What the core queued for this thread's channels, sent in the order queued.
  bool send_own(Worker& w, std::vector<Out>& sending, std::vector<link::OutDatagram>& batch) {
    if (!w.has_out.load()) return false;
    {
      std::lock_guard lock(w.mu);
      sending.swap(w.outbox);
      w.has_out.store(false);
    }
    batch.clear();
    for (const Out& o : sending) batch.push_back(link::OutDatagram{o.bytes, &o.to});
    // A failed send is the link's to repair (the node resends, copd's stream resends).
    link::send_datagrams(w.fd, batch);
    {
      std::lock_guard lock(w.mu);
      for (Out& o : sending)
        if (w.spare.size() < kSpareFrames) w.spare.push_back(std::move(o.bytes));
    }
    sending.clear();
    return true;
  }

  // The datagrams at this thread's socket, checked and put in the core's inbox in the order they came.
  bool receive(Worker& w, std::vector<std::vector<uint8_t>>& rx, std::vector<link::InDatagram>& rx_in,
               std::vector<Inbound>& got_in) {
    const int got = link::recv_datagrams(w.fd, rx_in, MSG_DONTWAIT);
    if (got > 0) take_spares(size_t(got), got_in);
    for (int i = 0; i < got; ++i) {
      const link::InDatagram& d = rx_in[size_t(i)];
      Inbound& in = got_in[size_t(i)];
      in.bytes.assign(rx[size_t(i)].begin(), rx[size_t(i)].begin() + long(d.size));
      in.from = d.from;
      in.pre = PreVerified{};
      // Decoded into the frame storage of a datagram handled before (a 16 KB burst is
      // 2048 entries: no allocation of them and of its bytes per datagram).
      in.whole_runs = Server::decode_datagram(in.bytes, keep_runs_, in.runs, in.decoded);
      pre_verify(in);
    }
    if (got_in.empty()) return false;
    {
      std::lock_guard lock(in_mu_);
      std::move(got_in.begin(), got_in.end(), std::back_inserter(inbox_));
      has_in_.store(true);
    }
    got_in.clear();
    return true;
  }

  // The core's rounds, with its lock held (released here): every datagram in
  // the inbox in its order, then the round's timers, the controller's run and
  // the replies, until no datagram waits. A thread that finds the core taken
  // leaves its datagrams in the inbox to the holder (it looks again before it lets go).
  void run_core(unsigned self) {
    for (;;) {
      {
        std::lock_guard lock(in_mu_);
        core_in_.swap(inbox_);
        has_in_.store(false);
      }
      try {
        for (Inbound& d : core_in_) server_.handle_decoded(d.bytes, d.from, d.decoded, &d.pre, d.whole_runs ? &d.runs : nullptr);
        keep_spares(core_in_);
        server_.finish_round();
      } catch (...) {
        core_mu_.unlock();  // copd ends (guarded): not with its core's lock held
        throw;
      }
      // What the round queued, to each channel's I/O thread.
      for (unsigned i = 0; i < n_; ++i) {
        Worker& w = *workers_[i];
        if (w.staged.empty()) continue;
        {
          std::lock_guard lock(w.mu);
          if (w.outbox.empty())
            w.outbox.swap(w.staged);
          else
            std::move(w.staged.begin(), w.staged.end(), std::back_inserter(w.outbox));
          w.has_out.store(true);
          // The frames it sent since, their storage for the core's next (queue).
          while (!w.spare.empty() && w.staged_spare.size() < kSpareFrames) {
            w.staged_spare.push_back(std::move(w.spare.back()));
            w.spare.pop_back();
          }
        }
        w.staged.clear();
        if (i != self) w.wake.wake();
      }
      // Thread 0 keeps the core's timers: told when they come sooner.
      const int64_t next = now_ns() + int64_t(server_.next_timeout_ms()) * 1000000;
      if (next < deadline_ns_.exchange(next) && self != 0) workers_[0]->wake.wake();
      core_mu_.unlock();
      if (!has_in_.load() || !core_mu_.try_lock()) return;
    }
  }

  // An exception on any thread ends them all (nobody waits on the core's lock: each only tries it).
  void guarded(unsigned i, const std::atomic<bool>* stop) {
    try {
      loop(i, stop);
    } catch (...) {
      std::lock_guard lock(in_mu_);
      if (!failure_) failure_ = std::current_exception();
      stopping_ = true;
    }
  }

  void loop(unsigned i, const std::atomic<bool>* stop) {
    Worker& w = *workers_[i];
    // Each thread has 1/n of the channels: a smaller batch of (large) receive buffers.
    const size_t batch_size = size_t(std::max(8, kBatch / int(n_)));
    std::vector<std::vector<uint8_t>> rx(batch_size, std::vector<uint8_t>(link::kMaxFrameBytes + 64));
    std::vector<link::InDatagram> rx_in;  // each slot's buffer, once (a receive writes its size and sender)
    for (auto& b : rx) rx_in.push_back(link::InDatagram{std::span<uint8_t>(b)});
    std::vector<Out> sending;
    std::vector<link::OutDatagram> batch;
    std::vector<Inbound> got_in;
    // --poll spins always; --poll-us a while after the last datagram (as the inline loop).
    const int64_t poll_ns = int64_t(server_.config_.poll_us) * 1000;
    int64_t last_rx = 0;
    while (!stopping_.load()) {
      if (stop && stop->load()) return;
      bool did = send_own(w, sending, batch);
      if (receive(w, rx, rx_in, got_in)) {
        did = true;
        if (poll_ns > 0) last_rx = now_ns();
      }
      const bool due = i == 0 && now_ns() >= deadline_ns_.load();
      if ((has_in_.load() || due) && core_mu_.try_lock()) {
        run_core(i);
        did = true;
      }
      // The fault layer may hold a datagram back: look again within a millisecond.
      const bool holding = link::fault_flush();
      if (server_.config_.poll || (poll_ns > 0 && now_ns() < last_rx + poll_ns)) {
        if (!did) sched_yield();  // a runnable peer on this core goes first
        continue;
      }
      // After work too: poll() answers at once when more came, which costs no more than
      // the non-blocking receive that would find nothing most times (one wake-up, one round).
      w.wake.sleeping.store(true);
      int timeout_ms = holding ? 1 : 50;
      if (i == 0) {  // the core's next timer (read after saying it sleeps: a sooner one wakes it)
        const int64_t left = (deadline_ns_.load() - now_ns()) / 1000000 + 1;
        timeout_ms = int(std::clamp<int64_t>(left, 0, timeout_ms));
      }
      if (!w.has_out.load() && !stopping_.load()) {
        pollfd p[2] = {{w.fd, POLLIN, 0}, {w.wake.fd, POLLIN, 0}};
        ::poll(p, 2, timeout_ms);
      }
      w.wake.sleeping.store(false);
      w.wake.drain();
    }
  }

  Server& server_;
  const unsigned n_;
  const bool keep_runs_;  // Server::keep_runs(), read once: its config does not change
  std::vector<std::unique_ptr<Keys>> keys_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<bool> stopping_{false};
  std::exception_ptr failure_;  // in_mu_
  std::mutex in_mu_;
  std::vector<Inbound> inbox_;  // in_mu_
  std::atomic<bool> has_in_{false};
  // The controller core: one round at a time, on whichever I/O thread holds it.
  std::mutex core_mu_;
  std::vector<Inbound> core_in_;             // core_mu_
  static constexpr size_t kSpares = size_t(kBatch);  // about a round's datagrams' storage kept
  static constexpr size_t kSpareFrames = 32;           // sent frames' storage kept, per thread and by the core
  std::mutex spare_mu_;
  std::vector<Inbound> spares_;  // spare_mu_: handled datagrams' storage, for the next
  std::atomic<int64_t> deadline_ns_{0};      // the core's next timer (steady clock)
};

Server::~Server() = default;
void Server::IoDelete::operator()(Io* io) const { delete io; }

void Server::start_io() {
  if (config_.io_threads > 1) io_.reset(new Io(*this, config_.io_threads));
}

void Server::publish_keys(int c) {
  if (io_) io_->publish(c, chan(c));
}

void Server::transmit(int channel, std::span<const uint8_t> bytes, const sockaddr_in& to) {
  if (io_) {
    io_->queue(channel, bytes, to);
    return;
  }
  if (!socket_.send_to(bytes, to) && config_.verbose)
    log_(link::LogLevel::warn, fmt::format("send to {} failed: {}", link::to_string(to), std::strerror(errno)));
}

void Server::run_threaded(const std::atomic<bool>& stop) { io_->run(stop); }

}  // namespace cop::controller
