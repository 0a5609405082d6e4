// A test fabric for two COP levels (seed 000 ch. IV, Figure 5): level-1
// controller cores under one level-2 core, in process. It moves Deliveries
// between cores over per-link FIFOs (a link keeps its order, as the hardware's
// does) and chooses which core runs and which link moves next by an Order:
// forward, reversed, or a seeded random interleaving. With carry_frames() a link
// moves all it holds at once, as copd sends a level-1's deliveries in one frame
// and the level 2 takes every entry of it before its core runs
// (server_levels.cpp, handle_child_frame).
#pragma once

#include "controller/controller.h"
#include "lib/commands.h"

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

namespace cop::test {

enum class Order { forward, reversed, random };

// SETTC/SETBM of one entry, with X for the level 2's (its mask names CNTNOs).
inline wire::Message mask_cmd(wire::Opcode op, uint32_t tag, uint64_t mask, bool x) {
  wire::Message m = commands::mask_command(commands::Sender{0, 0}, op, tag, mask);
  m.ins.x = x;
  return m;
}

struct Node {
  int cntno;
  int chno;
  bool operator<(const Node& o) const { return std::pair(cntno, chno) < std::pair(o.cntno, o.chno); }
  bool operator==(const Node& o) const = default;
};

class TwoLevelFabric {
 public:
  TwoLevelFabric(int level1s, int channels, Order order = Order::forward, unsigned seed = 1)
      : l2_(config(2, level1s, 0)), order_(order), rng_(seed), up_(size_t(level1s)), down_(size_t(level1s)) {
    for (int k = 0; k < level1s; ++k) l1_.emplace_back(config(1, channels, k));
  }

  static controller::Config config(int level, int channels, int cntno) {
    controller::Config c;
    c.level = level;
    c.has_parent = level == 1;
    c.channels = channels;
    c.cntno = static_cast<uint8_t>(cntno);
    c.gas_words = 64;
    c.sas_words = 70;
    c.partitions = 2;
    c.tasks_per_channel = 4;
    c.tas_words = 16;
    return c;
  }

  void carry_frames() { frames_ = true; }

  controller::Controller& l1(int k) { return l1_[size_t(k)]; }
  controller::Controller& l2() { return l2_; }
  int level1s() const { return int(l1_.size()); }

  // A node's command, as its link authenticated the sender.
  void send(Node n, const wire::Message& m, controller::Sender from) {
    std::vector<controller::Delivery> out;
    l1(n.cntno).receive(n.chno, m, 0, from, out);
    route_from_l1(n.cntno, out);
  }
  void send(Node n, const wire::Message& m) { send(n, m, controller::Controller::in_process_sender(m)); }

  // Runs every core and moves every message until nothing moves.
  void settle() {
    for (int guard = 0; guard < 1000000; ++guard) {
      bool moved = false;
      for (int k : core_order()) {
        std::vector<controller::Delivery> out;
        moved |= l1(k).run(out) > 0;
        route_from_l1(k, out);
      }
      std::vector<controller::Delivery> out;
      moved |= l2_.run(out) > 0;
      route_from_l2(out);
      moved |= move_one();
      if (!moved) {
        // The poll counter's count of entries each channel has joined (data_ram.h) is what
        // the entries say, on every core, whatever the operations did to them.
        for (const auto& c : l1_)
          if (!c.ram().joined_counts_hold() || !c.ram().accessed_bits_hold())
            throw std::runtime_error("a level-1's joined counts or accessed bits are wrong");
        if (!l2_.ram().joined_counts_hold() || !l2_.ram().accessed_bits_hold())
          throw std::runtime_error("the level 2's joined counts or accessed bits are wrong");
        return;
      }
    }
    throw std::runtime_error("the fabric did not settle");
  }

  // The level 2 lost level-1 controller k (its link is gone for good).
  int fail_level1(int k) {
    std::vector<controller::Delivery> out;
    const int n = l2_.fail_channel(k + 1, out);
    up_[size_t(k)].clear();
    route_from_l2(out);
    return n;
  }

  // Everything each node received, in order.
  const std::vector<controller::Delivery>& inbox(Node n) { return inbox_[n]; }
  std::vector<wire::Message> data(Node n) {
    std::vector<wire::Message> r;
    for (const auto& d : inbox_[n])
      if (!d.link_level) r.push_back(d.msg);
    return r;
  }
  std::vector<wire::Message> link(Node n) {
    std::vector<wire::Message> r;
    for (const auto& d : inbox_[n])
      if (d.link_level) r.push_back(d.msg);
    return r;
  }
  void clear_inboxes() { inbox_.clear(); }

 private:
  std::vector<int> core_order() {
    std::vector<int> ks(l1_.size());
    for (size_t i = 0; i < ks.size(); ++i) ks[i] = int(i);
    if (order_ == Order::reversed) std::reverse(ks.begin(), ks.end());
    if (order_ == Order::random) std::shuffle(ks.begin(), ks.end(), rng_);
    return ks;
  }

  void route_from_l1(int k, const std::vector<controller::Delivery>& out) {
    for (const auto& d : out) {
      if (d.to_parent) {
        up_[size_t(k)].push_back(d);
        continue;
      }
      for (int c = 1; c <= wire::kChannels; ++c)
        if (d.to(c)) inbox_[Node{k, c}].push_back(d);
    }
  }
  void route_from_l2(const std::vector<controller::Delivery>& out) {
    for (const auto& d : out)
      for (int k = 0; k < level1s(); ++k)
        if (d.to(k + 1)) down_[size_t(k)].push_back(d);
  }

  // One message over one link (2k: up from level-1 k, 2k+1: down to it).
  bool move_one() {
    std::vector<int> links;
    for (int k = 0; k < level1s(); ++k) {
      if (!up_[size_t(k)].empty()) links.push_back(2 * k);
      if (!down_[size_t(k)].empty()) links.push_back(2 * k + 1);
    }
    if (links.empty()) return false;
    int pick = links.front();
    if (order_ == Order::reversed) pick = links.back();
    if (order_ == Order::random) pick = links[std::uniform_int_distribution<size_t>(0, links.size() - 1)(rng_)];
    const int k = pick / 2;
    auto& from = pick % 2 == 0 ? up_[size_t(k)] : down_[size_t(k)];
    for (size_t n = frames_ ? from.size() : 1; n > 0; --n) {
      std::vector<controller::Delivery> out;
      const controller::Delivery d = from.front();
      from.pop_front();
      if (pick % 2 == 0) {
        l2_.receive_from_child(k + 1, d, out);
        route_from_l2(out);
      } else {
        l1(k).receive_from_parent(d, out);
        route_from_l1(k, out);
      }
    }
    return true;
  }

  controller::Controller l2_;
  std::vector<controller::Controller> l1_;
  Order order_;
  bool frames_ = false;
  std::mt19937 rng_;
  std::vector<std::deque<controller::Delivery>> up_, down_;
  std::map<Node, std::vector<controller::Delivery>> inbox_;
};

}  // namespace cop::test
