// copd's channels' life (server.h): heartbeats and leases, registration and the
// driver's proof of the cluster key, the driver's join, enrol and task_end requests
// (a job's partition, seed 000 ch. V), and a channel dropped when its lease runs out.
#include "controller/server.h"
#include "link/auth.h"

#include <fmt/format.h>

#include <sys/random.h>

#include <algorithm>
#include <cstring>

namespace cop::controller {

using link::Frame;
using link::FrameType;

void Server::answer_heartbeat(int c, const Frame& f, const sockaddr_in& from) {
  Frame ack;
  ack.type = FrameType::heartbeat_ack;
  ack.channel = static_cast<uint16_t>(c);
  ack.seq = f.seq;
  ack.session = chan(c).session;
  ack.cycles = controller_.cycles();
  send_frame(ack, from, &chan(c).down_key);
}

void Server::handle_register(const Frame& f, const sockaddr_in& from) {
  const int c = f.channel;
  if (c < 1 || c > config_.controller.channels) {
    log_limited(fmt::format("registration of channel {} from {} refused: copd has channels 1..{}", c,
                            link::to_string(from), config_.controller.channels));
    refuse(from, link::Refusal::unknown_channel, f,
           fmt::format("copd has channels 1..{}", config_.controller.channels));
    return;
  }
  const Channel& ch = chan(c);
  if (ch.registered && ch.addr.sin_addr.s_addr != from.sin_addr.s_addr) {
    log_limited(fmt::format("registration of channel {} from {} refused: held by {}", c, link::to_string(from),
                            link::to_string(ch.addr)));
    refuse(from, link::Refusal::already_registered, f,
           fmt::format("channel {} is held by {}", c, link::to_string(ch.addr)));
    return;
  }
  // Prove the cluster key: a fresh challenge, answered once (handle_prove).
  const auto now = Clock::now();
  while (!pending_.empty() && (pending_.front().expires < now || pending_.size() >= kMaxPending)) pending_.pop_front();
  Pending p{uint16_t(c), link::endpoint_key(from), f.nonce, link::random_challenge(),
            now + std::chrono::milliseconds(kChallengeMs)};
  pending_.push_back(p);
  Frame ch_frame;
  ch_frame.type = FrameType::challenge;
  ch_frame.channel = uint16_t(c);
  ch_frame.nonce = f.nonce;
  std::copy(p.ns.begin(), p.ns.end(), ch_frame.info.begin());
  send_frame(ch_frame, from);
}

void Server::handle_prove(const Frame& f, std::span<const uint8_t> bytes, const sockaddr_in& from) {
  const int c = f.channel;
  const uint64_t key = link::endpoint_key(from);
  link::Challenge ns;
  std::copy(f.info.begin(), f.info.end(), ns.begin());
  const auto now = Clock::now();
  // A wrong proof is refused; a right one for no open challenge (a duplicate or
  // a late copy of one taken already, or a replay) changes nothing and is not
  // answered: a refusal would take the channel down at its holder.
  if (!link::verify(bytes, link::register_key(config_.key, uint16_t(c), f.nonce, ns))) {
    stats_.bad_proofs++;
    log_limited(fmt::format("registration of channel {} from {} refused: wrong proof of the cluster key ({} so far)", c,
                            link::to_string(from), stats_.bad_proofs));
    refuse(from, link::Refusal::bad_secret, f, "no valid proof of the cluster key for a challenge of copd");
    return;
  }
  auto it = std::find_if(pending_.begin(), pending_.end(), [&](const Pending& p) {
    return p.channel == c && p.from == key && p.nc == f.nonce && p.ns == ns && p.expires >= now;
  });
  if (it == pending_.end()) {
    stats_.stale++;
    if (config_.verbose)
      log_(link::LogLevel::info, fmt::format("channel {}: proof from {} for no open challenge (a copy): ignored", c,
                                             link::to_string(from)));
    return;
  }
  pending_.erase(it);  // a challenge is answered once
  Channel& ch = chan(c);
  if (ch.registered && link::endpoint_key(ch.addr) != key) {
    if (ch.addr.sin_addr.s_addr != from.sin_addr.s_addr) {
      refuse(from, link::Refusal::already_registered, f,
             fmt::format("channel {} is held by {}", c, link::to_string(ch.addr)));
      return;
    }
    // The same node with a new driver holding the key (restarted within its
    // lease): it takes its channel back, and what the old one left waiting fails.
    drop_channel(c, fmt::format("taken over by a new driver at {}", link::to_string(from)));
  }
  if (auto at = by_address_.find(key); at != by_address_.end() && at->second != c) {
    refuse(from, link::Refusal::already_registered, f,
           fmt::format("this address holds channel {}", at->second));
    return;
  }
  if (!ch.registered) {
    controller_.reset_channel(c);
    ch = Channel{};
    ch.registered = true;
    ch.addr = from;
    ch.session = next_session_++;
    if (ch.session == 0) ch.session = next_session_++;
    ch.down_key = link::session_key(link::channel_down_key(config_.key, uint16_t(c)), ch.session);
    ch.tasks.resize(config_.controller.tasks_per_channel);
    ch.rto_ms = kRtoMs;
    by_address_[key] = c;
    log_(link::LogLevel::info, fmt::format("channel {} registered by {} (session {})", c, link::to_string(from), ch.session));
  }
  // The holder proving again (it took the channel for down) keeps its session
  // and tasks; its driver's key is the one of this proof.
  ch.driver_key = link::driver_key(config_.key, uint16_t(c), ch.session, f.nonce);
  ch.last_heard = Clock::now();
  Frame ok;
  ok.type = FrameType::registered;
  ok.channel = static_cast<uint16_t>(c);
  ok.tkno = controller_.channel_partition(c);
  ok.session = ch.session;
  ok.nonce = f.nonce;
  ok.ack = epoch_;  // copd's epoch (cop/link.h): another value is another life of copd
  ok.seq = ch.sup_seq;  // the last driver request done in this session (cop/link.h)
  ok.cycles = controller_.cycles();
  ok.info = {uint32_t(config_.controller.channels), config_.controller.tasks_per_channel,
             config_.controller.tas_words, config_.controller.gas_words};
  publish_keys(c);
  send_frame(ok, from, &ch.down_key);
}

void Server::handle_driver_request(int c, const Frame& f) {
  Channel& ch = chan(c);
  if (f.session != ch.session) return;  // a request of the previous registration
  // In order only (the driver resends the oldest unconfirmed one): a JOIN is done
  // before the ENROL after it, even when the two are sent together and arrive swapped.
  const uint32_t next = ch.sup_seq + 1 == 0 ? 1 : ch.sup_seq + 1;
  if (link::seq_after(f.seq, ch.sup_seq) && f.seq != next) return;
  if (link::seq_after(f.seq, ch.sup_seq)) {
    if (f.tkno >= ch.tasks.size()) {
      log_limited(fmt::format("channel {}: {} of TKNO {} beyond the channel's {} tasks ignored", c,
                              link::frame_type_name(f.type), f.tkno, ch.tasks.size()));
    } else if (f.type == FrameType::join) {
      const auto answer = join_job(c, f);
      if (!answer) return;  // asked of the level 2: done (and answered) when its answer comes
      ch.sup_answer = *answer;
    } else if (config_.controller.level == 2) {
      leave_slot(c, f.tkno);  // a level-1's TASK_END: its job's last task there ended
    } else {
      ch.sup_answer = {};
      // The task's job, when its JOIN came first (copdrv sends it before the ENROL, so
      // the task's first command already acts in its job's partition).
      const auto joined = ch.joined.find(f.tkno);
      const bool has_job = f.type == FrameType::enrol && joined != ch.joined.end();
      // Enrolling a number ends whoever held it before.
      if (ch.tasks[f.tkno].enrolled || f.type == FrameType::task_end) end_task(c, f.tkno, !has_job);
      if (f.type == FrameType::enrol) {
        Task& t = ch.tasks[f.tkno];
        t.enrolled = true;
        t.lost = ch.lost_joins.count(f.tkno) > 0;
        t.key = link::session_key(link::task_key(config_.key, uint16_t(c), f.tkno, f.nonce), ch.session);
        if (has_job) controller_.set_task_partition(c, f.tkno, joined->second);
        controller_.set_vacant(c, false);
      } else if (std::none_of(ch.tasks.begin(), ch.tasks.end(), [](const Task& t) { return t.enrolled; })) {
        // Its last task ended: operations waiting for the channel are voided unless one enrols in time.
        controller_.set_vacant(c, true);
      }
      ch.joined.erase(f.tkno);
      ch.lost_joins.erase(f.tkno);
      if (config_.verbose)
        log_(link::LogLevel::info, fmt::format("channel {}: task {} {}", c, f.tkno, f.type == FrameType::enrol ? "enrolled" : "ended"));
    }
    ch.sup_seq = f.seq;
    publish_keys(c);
  }
  if (link::seq_after(f.seq, ch.sup_seq)) return;
  Frame ack;
  ack.type = FrameType::sup_ack;
  ack.channel = static_cast<uint16_t>(c);
  ack.tkno = f.tkno;
  ack.seq = f.seq;
  ack.ack = ch.sup_seq;
  ack.session = ch.session;
  ack.info[3] = link::kRequestAck;
  if (f.seq == ch.sup_seq) {
    ack.info[0] = ch.sup_answer[0];
    ack.info[1] = ch.sup_answer[1];
    ack.info[2] = ch.sup_answer[2];
  }
  send_frame(ack, ch.addr, &ch.down_key);
}

std::optional<std::array<uint32_t, 3>> Server::join_job(int c, const Frame& f) {
  // With one partition (--partitions 1) every job shares the channels' own. Its
  // epoch is copd's: it is lost only with copd.
  if (config_.controller.partitions < 2) {
    if (f.info[3] != 0 && f.info[1] != epoch_) return lost_join(c, f, "copd restarted since it joined");
    return std::array<uint32_t, 3>{1u + controller_.channel_partition(c), 0, epoch_};
  }
  // A level-1 under a level 2 holds the partitions its level 2 gives (jobs.h "Two levels").
  if (config_.controller.level == 1 && config_.controller.has_parent) return join_through_parent(c, f);
  const auto answer = join_here(c, f);
  // A level 2's member is a level-1 controller's job: that channel acts in its partition now.
  if (config_.controller.level == 2)
    controller_.set_task_partition(c, f.tkno, answer[0] != 0 ? uint8_t(answer[0] - 1) : Controller::kChannelPartition);
  return answer;
}

std::array<uint32_t, 3> Server::join_here(int c, const Frame& f) {
  Channel& ch = chan(c);
  const std::string job = f.text;
  const uint32_t uid = f.info[2];
  // A re-join (info[3] = 1 + the PPN it had) names the partition's epoch it had (info[1]).
  const bool again = f.info[3] != 0;
  uint8_t ppn = 0;
  uint32_t epoch = 0;
  // The number's task back after its channel's lease ran out, re-joined by its
  // driver with the PPN it had: it keeps its place (and its job the partition's words).
  // A level-1 controller joins its jobs again at every new registration, gone or not.
  if ((away_.erase({c, f.tkno}) > 0 || config_.controller.level == 2) && again)
    if (const auto kept = jobs_.member_of(c, f.tkno, job, uid);
        kept && *kept + 1u == f.info[3] && jobs_.epoch_of(job) == f.info[1]) {
      ch.joined[f.tkno] = *kept;
      return {1u + *kept, 0, f.info[1]};
    }
  leave_job(c, f.tkno);  // whatever job the number's last task was in
  ch.joined.erase(f.tkno);
  if (again && f.info[1] == 0) return lost_join(c, f, "it names no epoch");
  const link::JoinRefusal why =
      jobs_.join(c, f.tkno, job, uid, again ? int(f.info[3]) - 1 : -1, again ? f.info[1] : 0, ppn, epoch);
  if (why == link::JoinRefusal::epoch_lost)
    return lost_join(c, f, fmt::format("partition {} of epoch {:#x} was freed since", f.info[3] - 1, f.info[1]));
  if (why != link::JoinRefusal::none) {
    log_limited(fmt::format("channel {}: task {} of uid {} refused job '{}' ({})", c, f.tkno, uid, job,
                            why == link::JoinRefusal::other_user     ? "another user's job"
                            : why == link::JoinRefusal::no_partition ? "no partition free"
                                                                     : "bad request"));
    return {0, uint32_t(why), 0};
  }
  ch.joined[f.tkno] = ppn;  // for its ENROL, which follows
  if (config_.verbose)
    log_(link::LogLevel::info, fmt::format("channel {}: task {} joined job '{}' (uid {}) in partition {}", c, f.tkno, job, uid, ppn));
  return {1u + ppn, 0, epoch};
}

std::array<uint32_t, 3> Server::lost_join(int c, const Frame& f, const std::string& why) {
  // Enrolled all the same (its ENROL follows), but every command of it is refused with
  // epoch_lost (handle_command) until the task enrols again: its partition's words are
  // gone, and a cleared partition must not pass for them.
  chan(c).lost_joins.insert(f.tkno);
  log_(link::LogLevel::warn, fmt::format("channel {}: task {} of job '{}' back, but its partition is gone ({}): its "
                                         "commands get epoch_lost until it enrols again", c, f.tkno, f.text, why));
  return {0, uint32_t(link::JoinRefusal::epoch_lost), 0};
}

void Server::leave_job(int c, uint16_t tkno) {
  if (const auto freed = jobs_.leave(c, tkno)) {
    if (!jobs_.in_use(freed->ppn)) controller_.clear_partition(freed->ppn);
    give_back_slot(*freed);
    // Said always: a task of the job that comes back after this gets epoch_lost.
    log_(link::LogLevel::info, fmt::format("partition {} free (its job's last task left); its epoch ends", freed->ppn));
  }
}

void Server::end_task(int c, uint16_t tkno, bool leave) {
  Channel& ch = chan(c);
  // Results still queued for routing go first: they are not the ended task's.
  route_deliveries(deliveries_);
  // The controller drops the task's queued commands unanswered (controller.h,
  // end_task): so do their places in the answer order, which is what is left
  // in the fifo (everything answered has been routed just now).
  std::erase_if(ch.fifo, [&](const Origin& o) { return !o.supervisor && o.tkno == tkno; });
  std::erase_if(ch.forwarded, [&](const Origin& o) { return !o.supervisor && o.tkno == tkno; });
  const int failed = controller_.end_task(c, tkno, deliveries_);
  if (failed > 0 || config_.verbose)
    log_(failed > 0 ? link::LogLevel::warn : link::LogLevel::info,
         fmt::format("channel {}: task {} ended; {} global operation(s) it took part in failed", c, tkno, failed));
  ch.tasks[tkno] = Task{};
  publish_keys(c);
  if (leave) leave_job(c, tkno);
  route_failures();
}

void Server::check_leases() {
  const auto now = Clock::now();
  if (now - last_lease_check_ < std::chrono::milliseconds(50)) return;
  last_lease_check_ = now;
  for (int c = 1; c <= config_.controller.channels; ++c) {
    Channel& ch = chan(c);
    if (!ch.registered) continue;
    const auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(now - ch.last_heard).count();
    if (silent > config_.lease_ms) drop_channel(c, fmt::format("no frame for {} ms", silent), true);
  }
  for (auto it = away_.begin(); it != away_.end();) {  // not back within another lease: they leave
    if (it->second > now) {
      ++it;
      continue;
    }
    leave_job(it->first.first, it->first.second);
    it = away_.erase(it);
  }
}

void Server::drop_channel(int c, const std::string& why, bool may_return) {
  Channel& ch = chan(c);
  by_address_.erase(link::endpoint_key(ch.addr));
  route_deliveries(deliveries_);
  ch = Channel{};
  publish_keys(c);
  const int failed = controller_.fail_channel(c, deliveries_);
  for (uint32_t t = 0; t < config_.controller.tasks_per_channel; ++t) {
    away_.erase({c, uint16_t(t)});
    if (!may_return) leave_job(c, uint16_t(t));
    else if (jobs_.member(c, uint16_t(t))) away_[{c, uint16_t(t)}] = Clock::now() + std::chrono::milliseconds(config_.lease_ms);
  }
  log_(link::LogLevel::warn, fmt::format("channel {} down ({}); {} global operation(s) waiting for it failed with link_down", c, why,
                   failed));
  route_failures();
  send_replies();
}
}  // namespace cop::controller
