// A simulated COP controller (controller_actor.h).
#include "simcop/controller_actor.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

namespace copbench::simcop {

namespace sg4 = simgrid::s4u;
using cop::controller::Controller;
using cop::controller::Delivery;
using cop::wire::Message;
using cop::wire::Opcode;

namespace {

cop::controller::Config config_of(const Network& n, int level1) {
  cop::controller::Config c;
  c.level = level1 < 0 ? 2 : 1;
  c.has_parent = level1 >= 0 && n.two_levels();
  // Over two levels every level-1 has its 64 channels, as the live stack's copd (the last
  // one's with nodes on fewer): a command X's CHNO names a channel of another level-1,
  // and the core checks it against its own before it forwards it.
  c.channels = level1 < 0 ? n.level1s : n.two_levels() ? kChannels : n.channels_of(level1);
  c.cntno = static_cast<uint8_t>(std::max(level1, 0));
  c.partitions = 1;  // one partition: the run's nodes
  // The nodes' task TKNO 1 and its space of 256 words (the live backend's layout,
  // baselines/cop/tas_layout.h); TKNO 0 unused.
  c.tasks_per_channel = 2;
  c.tas_words = 256;
  c.sas_words = kChannels + 1;
  return c;
}

// When a delivery starts out on its link: the core's at_cycle is when the receiver has
// it, so the link's own time (t_CN-COP up, t_COP-CN down) comes off it.
uint64_t send_cycle(const Delivery& d, uint64_t link) { return d.at_cycle > link ? d.at_cycle - link : 0; }

}  // namespace

Mailboxes make_mailboxes(const Network& n, const cop::model::Timing& t) {
  Mailboxes m;
  // A channel: one wire (half duplex) or one each way; returns the down one.
  auto channel = [&](std::vector<Wire*>& up) {
    up.push_back(&m.wires.emplace_back());
    return n.full_duplex ? &m.wires.emplace_back() : up.back();
  };
  for (int i = 0; i < n.nodes; ++i) m.nodes.push_back(std::make_unique<DownLink>(n.link, t.t_cop_cn, *channel(m.node_up)));
  for (int k = 0; k < n.level1s; ++k) {
    m.level1s.push_back(std::make_unique<Inbox>());
    if (n.two_levels()) m.level1_down.push_back(channel(m.level1_up));
  }
  if (n.two_levels()) m.level2 = std::make_unique<Inbox>();
  return m;
}

// Up a channel: the receiver has it t_CN-COP + flight after it starts out (links.h).
void send_up(Mailboxes& m, const Network& n, const cop::model::Timing& t, int node, std::unique_ptr<Packet> p,
             uint64_t send) {
  const uint64_t at = m.node_up[size_t(node)]->carry(send + t.t_cn_cop - n.link.wire, 1, n.link.wire) + n.link.flight;
  m.level1s[size_t(n.level1_of(node))]->put(std::move(p), at);
}

ControllerActor::ControllerActor(const Network& n, Mailboxes& m, int level1, const cop::model::Timing& t)
    : net_(n),
      mail_(m),
      level1_(level1),
      timing_(t),
      core_(std::make_unique<Controller>(config_of(n, level1), t)),
      in_(level1 < 0 ? *m.level2 : *m.level1s[size_t(level1)]),
      unanswered_(size_t(kChannels) + 1, 0),
      answers_(size_t(kChannels) + 1) {}

uint64_t ControllerActor::now_cycles() const {
  return uint64_t(std::llround(sg4::Engine::get_clock() * 1e9 / timing_.p_clk_ns));
}

void ControllerActor::sleep_to(uint64_t cycle) const {
  const double at = double(cycle) * timing_.p_clk_ns * 1e-9;
  if (at > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(at);
}

void ControllerActor::operator()() {
  for (;;) {
    // The core's clock passes in the simulation (the t_OP of what it serviced, a result
    // relayed), and everything that has arrived by then is at its channel before the
    // poll counter moves on.
    sleep_to(core_->cycles());
    take_ready();
    hand_arrived();
    std::vector<Delivery> out;
    if (core_->step(out)) {
      dispatch(out);
      continue;
    }
    await_input();  // idle
  }
}

void ControllerActor::hand_arrived() {
  const uint64_t now = now_cycles();
  std::vector<Delivery> out;
  while (!arriving_.empty() && arriving_.top().cycle <= now) {
    const Arrival a = arriving_.top();
    arriving_.pop();
    core_->receive(a.channel, a.msg, a.cycle, out);
  }
  dispatch(out);
}

void ControllerActor::take_ready() {
  const uint64_t now = now_cycles();
  for (uint64_t at = in_.next(); at <= now; at = in_.next()) take(in_.take(now), at);
}

void ControllerActor::await_input() {
  const uint64_t next = std::min(in_.next(), arriving_.empty() ? UINT64_MAX : arriving_.top().cycle);
  const double at = double(next) * timing_.p_clk_ns * 1e-9;
  in_.wait(next == UINT64_MAX ? -1.0 : std::max(0.0, at - sg4::Engine::get_clock()));
}

void ControllerActor::take(std::unique_ptr<Packet> p, uint64_t at) {
  std::vector<Delivery> out;
  if (p->kind == Packet::burst) {
    // The burst's first message arrived at `at`; each further one a wire time later.
    const uint64_t wire = net_.link.wire;
    const size_t n = p->messages.size();
    for (size_t i = 0; i < n; ++i) arriving_.push(Arrival{at + i * wire, arrivals_++, p->channel, p->messages[i]});
    unanswered_[size_t(p->channel)] += n;
    hand_arrived();
    return;
  } else if (p->kind == Packet::up) {
    p->delivery.at_cycle = std::max(p->delivery.at_cycle, at);
    core_->receive_from_child(p->channel, p->delivery, out);
  } else {
    p->delivery.at_cycle = std::max(p->delivery.at_cycle, at);
    core_->receive_from_parent(p->delivery, out);
    // An answer the level 2 sends down for a node is dated by the core when the node
    // has it (t_COP-CN on); the node's link charges that itself.
    for (Delivery& d : out)
      if (d.link_level && !d.to_parent) d.at_cycle -= std::min(d.at_cycle - at, timing_.t_cop_cn);
  }
  dispatch(out);
}

void ControllerActor::dispatch(std::vector<Delivery>& out) {
  auto link_of = [&](const Delivery& d) { return d.to_parent ? timing_.t_cn_cop : d.link_level ? 0 : timing_.t_cop_cn; };
  std::stable_sort(out.begin(), out.end(), [&](const Delivery& a, const Delivery& b) {
    return send_cycle(a, link_of(a)) < send_cycle(b, link_of(b));
  });
  for (const Delivery& d : out) {
    // Each starts out on its link when its sending begins (links.h).
    const uint64_t send = std::max(now_cycles(), send_cycle(d, link_of(d)));
    if (level1_ >= 0 && !d.to_parent) {
      to_nodes(d, send);
    } else if (d.to_parent) {
      auto p = std::make_unique<Packet>();
      p->kind = Packet::up;
      p->channel = level1_ + 1;
      p->delivery = d;
      between_levels(std::move(p), *mail_.level1_up[size_t(level1_)], *mail_.level2, send + timing_.t_cn_cop);
    } else {
      for (int k = 0; k < net_.level1s; ++k) {
        if (!d.to(k + 1)) continue;
        auto p = std::make_unique<Packet>();
        p->kind = Packet::down;
        p->delivery = d;
        between_levels(std::move(p), *mail_.level1_down[size_t(k)], *mail_.level1s[size_t(k)], send + timing_.t_cop_cn);
      }
    }
  }
}

// Between levels: `p` on `wire`, alone off it at `alone`, into `to` a flight later;
// re-dated while the wire's later messages hold it up (Wire::share).
void ControllerActor::between_levels(std::unique_ptr<Packet> p, Wire& wire, Inbox& to, uint64_t alone) const {
  const uint64_t flight = net_.link.flight;
  auto order = std::make_shared<uint64_t>(0);
  const uint64_t off = wire.share(alone - net_.link.wire, 1, net_.link.wire,
                                  [&to, order, flight](uint64_t later) { to.redate(*order, later + flight); });
  *order = to.put(std::move(p), off + flight);
}

void ControllerActor::to_nodes(const Delivery& d, uint64_t send) {
  for (int c = 1; c <= net_.channels_of(level1_); ++c) {
    if (!d.to(c)) continue;
    if (d.link_level)
      answer(c, d.msg, send);
    else
      down(c).put(std::span(&d.msg, 1), send, false);
  }
}

// The answers to a node's burst go back together once its last command is answered
// (copd holds a burst's answers the same way: one datagram back).
void ControllerActor::answer(int channel, const Message& m, uint64_t send) {
  auto& held = answers_[size_t(channel)];
  held.push_back(m);
  size_t& due = unanswered_[size_t(channel)];
  if (due > 0) --due;
  if (due > 0) return;
  down(channel).put(held, send, true);
  held.clear();
}

}  // namespace copbench::simcop
