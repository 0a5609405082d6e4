// Jobs on one controller (seed 000 ch. V, partitions): which partition (PPN)
// each job's tasks act in. copd keeps the table; copdrv asks for its task's
// job at enrolment (link JOIN), so every task of a job, on every channel of
// the controller, gets the same PPN, and tasks of other jobs (on the same
// channels too) get others: the controller refuses their commands in it
// (controller.h, set_task_partition).
//
// PPN 0 stays the channels' own (SAS word [c]): what a task that joined no
// job acts in. A job holds its PPN from its first task's join to its last
// task's end (a task whose channel's lease ran out stays a member for one more
// lease, for its copdrv to re-join it: Server::away_); it belongs to the user of that first task (another user's task
// naming the job is refused).
//
// Epochs (cop.h "Epochs"): a job's partition gets a random epoch when it is taken.
// copdrv re-joins a task (its channel's lease ran out, or copd restarted) naming the
// PPN and the epoch it had; only the same partition in the same life takes it back.
// Else the partition was freed (and cleared) meanwhile, or this is another copd: the
// re-join is refused with epoch_lost and the task is told on its next command, never
// given the cleared partition as if it were its own.
//
// Two levels (seed 000 ch. IV, Figure 5; ch. V: the PPN travels with every command
// through both levels): the level 2 keeps the table of the whole two-level system,
// its members being its level-1 controllers' jobs. A level-1 copd with a parent asks
// its level 2 for a job it does not hold yet (a JOIN of its own on its parent link,
// TKNO = the job's slot on this level-1), holds it with the PPN and epoch the level 2
// gave (adopt), and gives it back (TASK_END of the slot) when its last task here
// ends. So a job has one PPN on every level-1 and at the level 2, and two jobs never
// share one: the level 2 lets a level-1 act only in the partitions its jobs hold.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include <cop/link.h>

namespace cop::controller {

class Jobs {
 public:
  explicit Jobs(int partitions) : partitions_(partitions) {}

  // Task (channel, tkno), which is in no job (leave() first), joins job `id` of
  // user `uid`. had_epoch 0: a first join (a new job takes the lowest free PPN). Else a
  // re-join: only into the job's partition `wanted` of epoch had_epoch (else epoch_lost).
  // Sets `ppn` and `epoch` (the partition's).
  link::JoinRefusal join(int channel, uint16_t tkno, const std::string& id, uint32_t uid, int wanted,
                         uint32_t had_epoch, uint8_t& ppn, uint32_t& epoch);
  // A job given back: its PPN, and its slot (two levels: the level 2's TKNO for it).
  struct Freed {
    uint8_t ppn;
    uint16_t slot;
  };
  // The task ended: the job's PPN when it was the job's last task (free again).
  std::optional<Freed> leave(int channel, uint16_t tkno);
  // Two levels: job `id` of user `uid`, which the level 2 gave partition `ppn` of epoch
  // `epoch`, held here under `slot` (no task yet: the JOINs waiting for it follow).
  void adopt(const std::string& id, uint32_t uid, uint8_t ppn, uint32_t epoch, uint16_t slot);
  // A job held with no task (its JOINs never came): given back.
  std::optional<Freed> release_if_empty(const std::string& id);
  // The job is gone at the level 2 (its epoch lost): forgotten here; its members.
  std::vector<std::pair<int, uint16_t>> drop(const std::string& id);
  struct Held {
    std::string id;
    uint32_t uid;
    uint8_t ppn;
    uint32_t epoch;
    uint16_t slot;
  };
  std::vector<Held> held() const;
  // The PPN of job `id` of user `uid` when task (channel, tkno) is its member.
  std::optional<uint8_t> member_of(int channel, uint16_t tkno, const std::string& id, uint32_t uid) const;
  // The epoch of job `id`'s partition (0: no such job).
  uint32_t epoch_of(const std::string& id) const;
  bool member(int channel, uint16_t tkno) const { return members_.count({channel, tkno}) > 0; }
  // Whether a job holds PPN `ppn` (two levels under one shared partition: several may).
  bool in_use(int ppn) const;
  size_t jobs() const { return jobs_.size(); }

 private:
  struct Job {
    uint8_t ppn;
    uint32_t uid;
    int tasks;
    uint32_t epoch;  // random, nonzero: this life of the partition
    uint16_t slot;   // two levels: the level 2's TKNO for this job of the level-1
  };
  int partitions_;
  std::map<std::string, Job> jobs_;
  std::map<std::pair<int, uint16_t>, std::string> members_;
};

}  // namespace cop::controller
