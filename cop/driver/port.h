// A task's handle on its channel, in either access mode (seed 000 ch. V-VI):
//   direct: the window and the channel socket are mapped into the task and
//           the link protocol runs here (ChannelClient), no copies;
//   normal: every request is written to copdrv, which does the channel work
//           and writes the answers back (the copies the thesis describes).
// libcop and the driver tests use this; nothing above it knows the mode.
#pragma once
#include <cop/wire.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "driver/channel.h"
#include "driver/window.h"

namespace cop::driver {

struct ChannelInfo {
  uint16_t chno = 0, tkno = 0, ppn = 0;
  uint32_t channels = 0, tasks_per_channel = 0, tas_words = 0, gas_words = 0;
};

class Port {
 public:
  virtual ~Port() = default;
  virtual wire::Error exchange(std::span<const wire::Message> commands, std::vector<Answer>& answers) = 0;
  virtual wire::Error send_only(std::span<const wire::Message> commands) = 0;
  virtual wire::Error finish(std::vector<Answer>& answers) = 0;
  virtual wire::Error await(const Wanted& w, std::span<wire::Message> out, uint64_t* at_cycle) = 0;
  virtual void set_link_options(const LinkOptions& o) = 0;
  virtual bool direct() const = 0;
  // copdrv has gone (the task's connection to it closed: it exited or was killed,
  // even while it is an unreaped zombie).
  virtual bool driver_gone() const = 0;
  // Commands one send_only/exchange may carry: a link frame (direct), one
  // request to copdrv (normal).
  virtual size_t max_commands() const = 0;
  const ChannelInfo& info() const { return info_; }
  // The window is mapped in both modes: the host area and the CSR live there.
  Window* window() const { return window_; }

 protected:
  ChannelInfo info_;
  Window* window_ = nullptr;
};

struct OpenResult {
  std::unique_ptr<Port> port;
  int status = 0;  // 0, or a negative libcop error code (cop.h)
  std::string error;
};

// Registers with the driver in `driver_dir` (DIR/copdrv.sock) as task `tid`,
// asking for TKNO `wanted_tkno` (-1: any free one), in job `job` (empty:
// default_job_id(), and when that is empty copdrv names the job after the
// task's user). The port's ChannelInfo::ppn is the job's partition.
OpenResult open_port(const std::string& driver_dir, bool direct, int tid, int wanted_tkno,
                     const LinkOptions& link = {}, const std::string& job = {});

// The job a task belongs to (cop.h "Jobs"): $COP_JOB, else "slurm:" $SLURM_CLUSTER_NAME ":"
// $SLURM_JOB_ID ("-" for a cluster without a name), else empty.
std::string default_job_id();

// The driver directory a task uses: $COP_DRIVER, else $TMPDIR/copbench-cop, else /tmp/copbench-cop.
std::string default_driver_dir();

}  // namespace cop::driver
