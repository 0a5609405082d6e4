// copdrv's work (seed 000 ch. V, "The COP Interface Driver"): the node side
// of one channel.
//
//   - registers the channel with copd over the secondary network, renews the
//     lease with heartbeats, registers again when copd comes back after a
//     restart, and puts link_down in the CSR when copd stops answering;
//   - creates the channel window (window.h) and listens on DIR/copdrv.sock;
//   - keeps the Pid table: each task registers (pid, tid) and gets a TKNO and
//     its key, derived from the cluster key and a random enrolment nonce that
//     copdrv enrols with copd before it answers the task (cop/link.h "Keys");
//     when the task's connection closes copdrv tells copd the task ended;
//     direct-mode tasks get the window and the channel socket, normal-mode
//     tasks get a thread here that does the channel work for them;
//   - reads the channel when no task does, filing what arrives (for instance
//     a broadcast before its receiver asks) in the out-of-context buffer.
#pragma once
#include <netinet/in.h>
#include <sys/types.h>

#include <atomic>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "driver/channel.h"
#include "driver/protocol.h"
#include "driver/window.h"
#include "link/daemon.h"
#include "link/udp.h"

namespace cop::driver {

struct DriverConfig {
  int channel = 1;
  sockaddr_in controller{};
  sockaddr_in local{};
  std::string dir;
  int heartbeat_ms = 100;
  int dead_ms = 1500;
  int register_timeout_ms = 30000;
  link::Key key{};  // the cluster key (copdrv --key)
  // The user whose tasks may enrol (SO_PEERCRED; root's always may): -1, the
  // user copdrv runs as. A root-run copdrv serving one job user names it.
  int allow_uid = -1;
};

// A request of the driver to copd (frames MACed with the driver's key),
// sent one at a time, in order, until copd confirms it (sup_ack).
struct DriverRequest {
  link::FrameType type;  // enrol or task_end
  uint16_t tkno;
  uint64_t nonce;  // ENROL: the task's enrolment nonce
  uint32_t seq;
  uint64_t sent_ns;
  // join: the task's job, its user and 1 + the PPN it had (0: none).
  std::string job = {};
  uint32_t uid = 0;
  uint32_t had_ppn = 0;
  uint32_t had_epoch = 0;  // the epoch of that partition (cop.h "Epochs")
};

class Driver {
 public:
  using Log = std::function<void(link::LogLevel, const std::string&)>;
  Driver(DriverConfig config, Log log);
  ~Driver();
  // Registers with copd (retrying until register_timeout_ms) and opens the
  // driver socket; throws std::runtime_error with the reason on failure.
  void start(const std::atomic<bool>& stop);
  void run(const std::atomic<bool>& stop);
  // Tells copd and the local tasks that the channel is going away.
  void shutdown();

 private:
  struct Client {
    int fd;
    int slot;
  };
  bool register_with_copd(int timeout_ms, std::string& why);
  void accept_task();
  void refuse_task(int fd, const RegisterReply& rep, const std::string& who);
  uint32_t enrol_task(int slot, uint64_t token, const std::string& job, uid_t uid, RegisterReply& rep);
  int assign_slot(const RegisterRequest& req, std::string& why);
  void free_slot(int slot);
  void serve_normal(int fd, int slot, LinkOptions link);
  void heartbeat();
  void send_frame(link::FrameType type, uint32_t seq, uint16_t tkno = 0, uint64_t nonce = 0,
                  const std::function<void(link::Frame&)>& more = {});
  // The driver's key for the window's session (again when the session changed).
  void update_keys();
  // Answers copd's last challenge (filed in the window by whoever read it).
  void prove();
  // Queues a request for copd (nonce: ENROL's enrolment nonce); returns its seq.
  uint32_t request(link::FrameType type, uint16_t tkno, uint64_t nonce, const std::string& job = {}, uint32_t uid = 0,
                   uint32_t had_ppn = 0);
  // Sends the oldest unconfirmed request (again, on its timer); after a new
  // registration (copd restarted) enrols every local task again first.
  void send_pending_request();
  bool confirmed(uint32_t seq) const;
  // The periodic acknowledgment of the reply stream when no frame carried it.
  void acknowledge();

  DriverConfig config_;
  Log log_;
  link::UdpSocket udp_;
  int memfd_ = -1;
  Window* window_ = nullptr;
  int listener_ = -1;
  std::string socket_path_;
  std::vector<Client> direct_clients_;
  std::vector<std::thread> normal_threads_;
  std::unique_ptr<ChannelClient> drain_;
  uint32_t heartbeat_seq_ = 0;
  // The registration (cop/link.h "Keys"): our nonce Nc (for this driver's
  // life), the last challenge proved, and the driver's key for key_session_.
  uint64_t nc_ = 0;
  uint32_t challenge_seen_ = 0;
  link::Key driver_key_{};
  uint32_t key_session_ = 0;
  link::Key down_base_{};
  std::mutex requests_mu_;
  std::deque<DriverRequest> requests_;
  uint32_t request_seq_ = 0;
  uint32_t request_session_ = 0;
  uint64_t tokens_[kMaxLocalTasks] = {};  // each local task's enrolment nonce (0: free)
  // Each local task's job, user and 1 + its partition (enrolled again with it after a copd restart).
  struct SlotJob {
    std::string job;
    uint32_t uid = 0;
    uint32_t ppn = 0;
    uint32_t epoch = 0;  // the partition's epoch its JOIN gave
  };
  SlotJob jobs_[kMaxLocalTasks];
  // Whether a task of this user may enrol (DriverConfig::allow_uid, root).
  bool admitted(uid_t uid) const;
  uint32_t ack_seen_ = 0;
  uint32_t copd_epoch_ = 0;  // copd's epoch as last seen (logged when it changes)
  uint64_t last_heartbeat_ns_ = 0;
  uint64_t udp_skip_until_ns_ = 0;  // next periodic drain
  bool reported_silence_ = false;
};

}  // namespace cop::driver
