#include "controller/server.h"

#include <fmt/format.h>

#include <poll.h>
#include <sched.h>
#include <sys/socket.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

namespace cop::controller {

using link::Entry;
using link::EntryKind;
using link::Frame;
using link::FrameType;
using wire::Direction;
using wire::Opcode;

Server::Server(const ServerConfig& config, Log log)
    : config_(config),
      log_(std::move(log)),
      socket_(config.listen),
      controller_(config.controller),
      channels_(size_t(config.controller.channels)) {}

int Server::registered_channels() const {
  return static_cast<int>(std::count_if(channels_.begin(), channels_.end(), [](const Channel& c) { return c.registered; }));
}

void Server::run(const std::atomic<bool>& stop) {
  while (!stop.load()) {
    // Take every datagram that is there, then answer them all: answers to one
    // channel from one round go out in one frame.
    pollfd p{socket_.fd(), POLLIN, 0};
    bool ready = false;
    if (config_.poll_us > 0) {
      const auto until = last_rx_ + std::chrono::microseconds(config_.poll_us);
      while (!(ready = ::poll(&p, 1, 0) > 0) && std::chrono::steady_clock::now() < until) sched_yield();
    }
    if (ready || ::poll(&p, 1, next_timeout_ms()) > 0) {
      last_rx_ = std::chrono::steady_clock::now();
      // Up to kBatch datagrams in one system call.
      if (rx_.size() < size_t(kBatch)) {
        rx_.assign(size_t(kBatch), std::vector<uint8_t>(link::kMaxFrameBytes + 64));
        rx_from_.resize(size_t(kBatch));
        rx_iov_.resize(size_t(kBatch));
        rx_msgs_.resize(size_t(kBatch));
      }
      for (size_t i = 0; i < size_t(kBatch); ++i) {
        rx_iov_[i] = iovec{rx_[i].data(), rx_[i].size()};
        rx_msgs_[i].msg_hdr = msghdr{};
        rx_msgs_[i].msg_hdr.msg_name = &rx_from_[i];
        rx_msgs_[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
        rx_msgs_[i].msg_hdr.msg_iov = &rx_iov_[i];
        rx_msgs_[i].msg_hdr.msg_iovlen = 1;
      }
      const int got = ::recvmmsg(socket_.fd(), rx_msgs_.data(), unsigned(kBatch), MSG_DONTWAIT, nullptr);
      for (int i = 0; i < got; ++i)
        handle(std::span<const uint8_t>(rx_[size_t(i)].data(), rx_msgs_[size_t(i)].msg_len), rx_from_[size_t(i)]);
    }
    controller_.run(deliveries_);
    route(deliveries_);
    flush();
    check_leases();
  }
}

void Server::send_frame(const Frame& f, const sockaddr_in& to) {
  link::encode(f, out_buf_);
  if (!socket_.send_to(out_buf_, to) && config_.verbose)
    log_(fmt::format("send to {} failed: {}", link::to_string(to), std::strerror(errno)));
}

void Server::refuse(const sockaddr_in& to, link::Refusal why, uint16_t channel, const std::string& text) {
  Frame f;
  f.type = FrameType::refused;
  f.channel = channel;
  f.info[0] = static_cast<uint32_t>(why);
  f.text = text;
  send_frame(f, to);
}

void Server::handle(std::span<const uint8_t> bytes, const sockaddr_in& from) {
  auto decoded = link::decode(bytes);
  if (auto* err = std::get_if<link::LinkError>(&decoded)) {
    log_(fmt::format("malformed frame from {} ({} bytes): {}", link::to_string(from), bytes.size(), err->detail));
    Frame nack;
    nack.type = FrameType::frame_nack;
    // The sequence number is where it should be if the header made it.
    if (bytes.size() >= 16) std::memcpy(&nack.seq, bytes.data() + 12, 4);
    nack.info[0] = static_cast<uint32_t>(err->code);
    nack.text = err->detail;
    send_frame(nack, from);
    return;
  }
  const Frame& f = std::get<Frame>(decoded);
  if (f.type == FrameType::register_) {
    handle_register(f, from);
    return;
  }
  auto it = by_address_.find(link::endpoint_key(from));
  if (it == by_address_.end()) {
    log_(fmt::format("{} frame from {}, which holds no channel: refused", link::frame_type_name(f.type),
                     link::to_string(from)));
    refuse(from, link::Refusal::not_registered, f.channel, "this address has registered no channel");
    return;
  }
  const int c = it->second;
  Channel& ch = chan(c);
  ch.last_heard = Clock::now();
  switch (f.type) {
    case FrameType::command:
      handle_command(c, f);
      break;
    case FrameType::heartbeat: {
      Frame ack;
      ack.type = FrameType::heartbeat_ack;
      ack.channel = static_cast<uint16_t>(c);
      ack.seq = f.seq;
      ack.cycles = controller_.cycles();
      send_frame(ack, from);
      break;
    }
    case FrameType::bye:
      drop_channel(c, "its driver left");
      break;
    default:
      log_(fmt::format("channel {}: unexpected {} frame ignored", c, link::frame_type_name(f.type)));
  }
}

void Server::handle_register(const Frame& f, const sockaddr_in& from) {
  const int c = f.channel;
  if (c < 1 || c > config_.controller.channels) {
    log_(fmt::format("registration of channel {} from {} refused: copd has channels 1..{}", c,
                     link::to_string(from), config_.controller.channels));
    refuse(from, link::Refusal::unknown_channel, f.channel,
           fmt::format("copd has channels 1..{}", config_.controller.channels));
    return;
  }
  const uint64_t key = link::endpoint_key(from);
  Channel& ch = chan(c);
  if (ch.registered && link::endpoint_key(ch.addr) != key) {
    log_(fmt::format("registration of channel {} from {} refused: held by {}", c, link::to_string(from),
                     link::to_string(ch.addr)));
    refuse(from, link::Refusal::already_registered, f.channel,
           fmt::format("channel {} is held by {}", c, link::to_string(ch.addr)));
    return;
  }
  if (auto it = by_address_.find(key); it != by_address_.end() && it->second != c) {
    refuse(from, link::Refusal::already_registered, f.channel,
           fmt::format("this address holds channel {}", it->second));
    return;
  }
  if (!ch.registered) {
    log_(fmt::format("channel {} registered by {}", c, link::to_string(from)));
    controller_.reset_channel(c);
    ch = Channel{};
    ch.registered = true;
    ch.addr = from;
    by_address_[key] = c;
  }
  ch.last_heard = Clock::now();
  Frame ok;
  ok.type = FrameType::registered;
  ok.channel = static_cast<uint16_t>(c);
  ok.tkno = controller_.channel_partition(c);
  ok.cycles = controller_.cycles();
  ok.info = {uint32_t(config_.controller.channels), config_.controller.tasks_per_channel,
             config_.controller.tas_words, config_.controller.gas_words};
  send_frame(ok, from);
}

void Server::handle_command(int c, const Frame& f) {
  Channel& ch = chan(c);
  TaskCache& cache = ch.cache[f.tkno];
  if (cache.valid && cache.seq == f.seq) {
    // A resend (XMIT): the answers we gave, not a second execution.
    if (config_.verbose) log_(fmt::format("channel {} tkno {}: resend of frame {}", c, f.tkno, f.seq));
    ch.out.insert(ch.out.end(), cache.answers.begin(), cache.answers.end());
    return;
  }
  cache.seq = f.seq;
  cache.valid = true;
  cache.answers.clear();
  const wire::Limits limits = config_.controller.limits();
  // Does the task wait for a result after this frame (its answers may be held for it)?
  bool waits = false;
  for (const Entry& e : f.entries) {
    const auto op = static_cast<Opcode>((e.words[0] >> 23) & 0x7F);
    waits |= op == Opcode::BENTRY || (wire::is_opcode(uint32_t(op)) && wire::is_reduction(op));
  }
  for (size_t i = 0; i < f.entries.size(); ++i) {
    const Entry& e = f.entries[i];
    const auto index = static_cast<uint16_t>(i);
    auto decoded = wire::decode(e.span(), Direction::to_controller, limits);
    if (auto* m = std::get_if<wire::Message>(&decoded)) {
      const Opcode op = m->ins.opcode;
      // The link itself acknowledges and resends (a frame sent again is the XMIT).
      if (op == Opcode::ACK || op == Opcode::NACK || op == Opcode::XMIT)
        decoded = wire::DecodeError{wire::Error::unknown_opcode,
                                    fmt::format("{} is link-level: the frame is resent instead", wire::opcode_name(op))};
    }
    if (e.kind != EntryKind::command || std::holds_alternative<wire::DecodeError>(decoded)) {
      const wire::DecodeError err = e.kind != EntryKind::command
                                        ? wire::DecodeError{wire::Error::word_count, "entry is not a command"}
                                        : std::get<wire::DecodeError>(decoded);
      log_(fmt::format("channel {} tkno {} frame {} command {}: malformed ({}: {}), NACK", c, f.tkno, f.seq, i,
                       wire::error_name(err.code), err.detail));
      wire::Message nack = wire::make(Opcode::NACK, f.tkno);
      nack.data1 = static_cast<uint32_t>(err.code) | (((e.words[0] >> 23) & 0x7F) << 8);
      Entry a = link::make_entry(nack, Direction::to_node, EntryKind::answer, f.seq, index, controller_.cycles());
      cache.answers.push_back(a);
      ch.out.push_back(a);
      continue;
    }
    const wire::Message& m = std::get<wire::Message>(decoded);
    ch.fifo.push_back(Origin{f.tkno, f.seq, index, m.ins.opcode, m.addr.msgtag, m.ins.ppn, waits});
    controller_.receive(c, m, deliveries_);
  }
}

void Server::route(std::vector<Delivery>& deliveries) {
  for (const Delivery& d : deliveries) {
    const Opcode op = d.msg.ins.opcode;
    const bool ack = d.link_level && (op == Opcode::ACK || op == Opcode::NACK) && std::has_single_bit(d.channels);
    if (ack || (!d.link_level && wire::has_answer_data(op) && std::has_single_bit(d.channels))) {
      const int c = std::countr_zero(d.channels) + 1;
      Channel& ch = chan(c);
      if (ack) {
        if (ch.fifo.empty()) {  // cannot happen: every serviced command was queued by us
          log_(fmt::format("channel {}: answer with no command waiting for it: dropped", c));
          continue;
        }
        ch.last_answered = ch.fifo.front();
        ch.fifo.pop_front();
      }
      const Origin& o = ch.last_answered;
      if (!o.frame_waits) {
        ch.urgent = true;
      } else if (ack && op == Opcode::ACK && will_receive_result(c, o) && ch.hold_until == Clock::time_point{}) {
        ch.hold_until = Clock::now() + kHoldAck;
      }
      // Answers carry the asking task's TKNO (the Pid register reads it); the
      // command's own TKNO field is a count for SETTC/SETBM.
      wire::Message m = d.msg;
      m.ins.tkno = o.tkno;
      Entry e = link::make_entry(m, Direction::to_node, EntryKind::answer, o.seq, o.index, d.at_cycle);
      TaskCache& cache = ch.cache[o.tkno];
      if (cache.valid && cache.seq == o.seq) cache.answers.push_back(e);
      if (ch.registered) ch.out.push_back(e);
      continue;
    }
    const Entry e = link::make_entry(d.msg, Direction::to_node, EntryKind::broadcast, 0, 0, d.at_cycle);
    for (int c = 1; c <= config_.controller.channels; ++c)
      if (d.to(c) && chan(c).registered) {
        chan(c).out.push_back(e);
        chan(c).urgent = true;
      }
  }
  deliveries.clear();
}

bool Server::will_receive_result(int c, const Origin& o) const {
  if (o.op != Opcode::BENTRY && !wire::is_reduction(o.op)) return false;
  if (o.tag >= config_.controller.gas_words || o.ppn >= controller_.ram().partitions()) return false;
  const TcEntry& tc = controller_.ram().tc(o.ppn, o.tag);
  const BmEntry& bm = controller_.ram().bm(o.ppn, o.tag);
  const uint64_t to = bm.accessed ? bm.mask : (o.op == Opcode::BENTRY ? tc.mask : 0);
  return tc.accessed && (to & channel_bit(c));
}

void Server::flush() {
  const auto now = Clock::now();
  size_t n = 0;
  std::vector<sockaddr_in> to;
  for (int c = 1; c <= config_.controller.channels; ++c) {
    Channel& ch = chan(c);
    if (ch.out.empty()) continue;
    if (!ch.urgent && ch.hold_until != Clock::time_point{} && now < ch.hold_until) continue;
    Frame f;
    f.type = FrameType::reply;
    f.channel = static_cast<uint16_t>(c);
    f.cycles = controller_.cycles();
    // At most kMaxEntries entries a frame.
    for (size_t at = 0; at < ch.out.size(); at += link::kMaxEntries) {
      const size_t end = std::min(ch.out.size(), at + link::kMaxEntries);
      f.entries.assign(ch.out.begin() + long(at), ch.out.begin() + long(end));
      if (batch_.size() <= n) batch_.emplace_back();
      link::encode(f, batch_[n++]);
      to.push_back(ch.addr);
    }
    ch.out.clear();
    ch.urgent = false;
    ch.hold_until = Clock::time_point{};
  }
  if (n == 0) return;
  // One system call for the whole round.
  std::vector<mmsghdr> msgs(n);
  std::vector<iovec> iov(n);
  for (size_t i = 0; i < n; ++i) {
    iov[i] = iovec{batch_[i].data(), batch_[i].size()};
    msgs[i].msg_hdr = msghdr{};
    msgs[i].msg_hdr.msg_name = &to[i];
    msgs[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  for (size_t sent = 0; sent < n;) {
    const int r = ::sendmmsg(socket_.fd(), msgs.data() + sent, unsigned(n - sent), MSG_NOSIGNAL);
    if (r <= 0) {
      if (config_.verbose) log_(fmt::format("sendmmsg failed: {}", std::strerror(errno)));
      sent++;  // skip the datagram that failed; the node's timer resends
      continue;
    }
    sent += size_t(r);
  }
}

int Server::next_timeout_ms() const {
  auto until = Clock::now() + std::chrono::milliseconds(50);
  for (const Channel& ch : channels_)
    if (!ch.out.empty() && ch.hold_until != Clock::time_point{}) until = std::min(until, ch.hold_until);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
  return int(std::clamp<long long>(ms + 1, 0, 50));
}

void Server::check_leases() {
  const auto now = Clock::now();
  if (now - last_lease_check_ < std::chrono::milliseconds(50)) return;
  last_lease_check_ = now;
  for (int c = 1; c <= config_.controller.channels; ++c) {
    Channel& ch = chan(c);
    if (!ch.registered) continue;
    const auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(now - ch.last_heard).count();
    if (silent > config_.lease_ms) drop_channel(c, fmt::format("no frame for {} ms", silent));
  }
}

void Server::drop_channel(int c, const std::string& why) {
  Channel& ch = chan(c);
  by_address_.erase(link::endpoint_key(ch.addr));
  ch = Channel{};
  const int failed = controller_.fail_channel(c, deliveries_);
  log_(fmt::format("channel {} down ({}); {} global operation(s) waiting for it failed with link_down", c, why,
                   failed));
  // fail_channel's NACKs are for everyone taking part: broadcasts by tag.
  for (const Delivery& d : deliveries_) {
    const Entry e = link::make_entry(d.msg, Direction::to_node, EntryKind::broadcast, 0, 0, d.at_cycle);
    for (int k = 1; k <= config_.controller.channels; ++k)
      if (d.to(k) && chan(k).registered) chan(k).out.push_back(e);
  }
  deliveries_.clear();
  flush();
}

}  // namespace cop::controller
