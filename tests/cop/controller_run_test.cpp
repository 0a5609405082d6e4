// cop/controller: a frame's commands handed to the core in one call.
#include "controller_harness.h"

// mismatch, which ends the operation; a tag with no mask: no_mask).
namespace {

using cop::commands::Burst;

std::vector<uint32_t> words_of(const Message& m, Direction dir) {
  Words w{};
  const int n = encode(m, dir, w);
  return std::vector<uint32_t>(w.begin(), w.begin() + n);
}

void expect_same(const std::vector<Delivery>& a, const std::vector<Delivery>& b, const std::string& where) {
  ASSERT_EQ(a.size(), b.size()) << where;
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(where + " delivery " + std::to_string(i));
    EXPECT_EQ(a[i].channels, b[i].channels);
    EXPECT_EQ(to_string(a[i].msg), to_string(b[i].msg));
    EXPECT_EQ(words_of(a[i].msg, Direction::to_node), words_of(b[i].msg, Direction::to_node));
    EXPECT_EQ(a[i].at_cycle, b[i].at_cycle);
    EXPECT_EQ(a[i].link_level, b[i].link_level);
    EXPECT_EQ(a[i].to_parent, b[i].to_parent);
    EXPECT_EQ(a[i].ends_operation, b[i].ends_operation);
    EXPECT_EQ(a[i].hop.kind, b[i].hop.kind);
    EXPECT_EQ(a[i].hop.origin.tkno, b[i].hop.origin.tkno);
    EXPECT_EQ(a[i].hop.origin.supervisor, b[i].hop.origin.supervisor);
  }
}

}  // namespace

TEST(ControllerRun, FrameInOneCallMatchesElementByElement) {
  constexpr int kChannels = 4;
  controller::Config cfg;
  cfg.channels = kChannels;
  cfg.gas_words = 4096;
  const uint64_t all = (uint64_t{1} << kChannels) - 1;
  std::set<Error> nack_kinds;
  for (uint32_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    auto pick = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
    // Each channel's frames (task 0 of the channel sends them), as its task's libcop would.
    std::vector<std::vector<Burst>> frames(kChannels);
    uint32_t tag = pick(0, 100);
    int nacks_planted = 0;
    for (int round = 0; round < 3; ++round) {
      const uint32_t n = pick(2, 40);
      const int kind = int(pick(0, 2));
      const int root = int(pick(0, kChannels - 1));
      const Opcode op = kind == 0 ? Opcode::SUMI64 : Opcode::SUMF;
      for (int c = 0; c < kChannels; ++c) {
        const cop::commands::Sender s{0, 0};
        std::vector<uint64_t> words(n);
        for (auto& w : words) w = (uint64_t(pick(0, UINT32_MAX)) << 32) | pick(0, UINT32_MAX);
        if (op == Opcode::SUMF)
          for (auto& w : words) w = std::bit_cast<uint64_t>(double(int32_t(w)) / 8.0);
        Burst b;
        if (kind == 2) {
          if (c == root) b = cop::commands::broadcast(s, Opcode::BCAST64, tag, words, all);
          else b = {cop::commands::command(s, Opcode::LOCK), cop::commands::command(s, Opcode::UNLOCK)};
        } else {
          b = cop::commands::reduction(s, op, tag, words, all, all);
        }
        // An element refused in the middle of the run (its NACK names it).
        if (pick(0, 2) == 0 && b.size() > 4) {
          const size_t at = b.size() - 2 - pick(0, uint32_t(std::min<size_t>(n, b.size() - 3) - 1));
          Message& m = b[at];
          if (is_reduction(m.ins.opcode) || m.ins.opcode == Opcode::BCAST64) {
            switch (pick(0, 2)) {
              case 0: m.ins.tkno = 1; break;                                     // protection
              case 1: if (is_reduction(m.ins.opcode)) m.ins.opcode = Opcode::SUMI64 == m.ins.opcode ? Opcode::MAXI64 : Opcode::SUMI64; break;  // mismatch
              default: m.addr.msgtag = 4000; break;                              // no mask there
            }
            nacks_planted++;
          }
        }
        // Unlocked (COP_NORMAL) element writes to the task's own TAS, between the bursts.
        const uint32_t nw = pick(0, 6);
        for (uint32_t i = 0; i < nw; ++i) {
          Message w = cop::commands::command(s, Opcode::WSRAM64, Space::TAS, Address::tas_tag(0, i));
          set_payload(w, pick(0, 1000));
          b.push_back(w);
        }
        frames[size_t(c)].push_back(b);
      }
      tag += n;
    }
    Controller fast(cfg), slow(cfg);
    std::vector<Delivery> out_fast, out_slow;
    for (int round = 0; round < 3; ++round) {
      // The frames arrive in a random channel order, each before any servicing or after some.
      std::vector<int> order(kChannels);
      std::iota(order.begin(), order.end(), 1);
      std::shuffle(order.begin(), order.end(), rng);
      for (int c : order) {
        const Burst& b = frames[size_t(c - 1)][size_t(round)];
        // copd's path: each command decoded from its words against the core's limits.
        std::vector<Message> decoded;
        for (const Message& m : b) {
          auto d = decode(words_of(m, Direction::to_controller), Direction::to_controller, cfg.limits());
          ASSERT_TRUE(std::holds_alternative<Message>(d)) << to_string(m);
          decoded.push_back(std::get<Message>(d));
        }
        const uint64_t ready = fast.cycles() + 40;
        ASSERT_EQ(fast.cycles(), slow.cycles());
        fast.receive(c, decoded, ready, Sender{false, 0}, out_fast, true);
        for (const Message& m : b) slow.receive(c, m, ready, Sender{false, 0}, out_slow);
        if (pick(0, 1) == 0) {
          fast.run(out_fast);
          while (slow.step(out_slow)) {
          }
        }
      }
      fast.run(out_fast);
      while (slow.step(out_slow)) {
      }
      expect_same(out_fast, out_slow, "round " + std::to_string(round));
      if (::testing::Test::HasFailure()) return;
      EXPECT_EQ(fast.cycles(), slow.cycles());
      EXPECT_EQ(fast.poll_counter(), slow.poll_counter());
      EXPECT_EQ(fast.stats().serviced, slow.stats().serviced);
      EXPECT_EQ(fast.stats().nacks, slow.stats().nacks);
      EXPECT_EQ(fast.stats().broadcasts, slow.stats().broadcasts);
    }
    for (uint32_t w = 0; w < cfg.gas_words; ++w) ASSERT_EQ(fast.ram().gas(0, w), slow.ram().gas(0, w)) << w;
    // The runs were serviced, refused where planted, and results went out.
    EXPECT_GT(fast.stats().serviced, 0u);
    if (nacks_planted > 0) {
      EXPECT_GT(fast.stats().nacks, 0u);
    }
    for (const Delivery& d : out_fast)
      if (d.msg.ins.opcode == Opcode::NACK) nack_kinds.insert(nack_error(d.msg.data1));
    EXPECT_GT(std::count_if(out_fast.begin(), out_fast.end(), [](const Delivery& d) { return !d.link_level; }), 0);
  }
  // The seeds plant each kind of refusal at least once.
  EXPECT_TRUE(nack_kinds.count(Error::protection));
  EXPECT_TRUE(nack_kinds.count(Error::mismatch));
  EXPECT_TRUE(nack_kinds.count(Error::no_mask));
}
