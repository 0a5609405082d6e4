// The controller core driven in process for tests/cop/controller*_test.cpp: a
// Harness that sends commands and services them, and the commands the tests build.
#pragma once
#include "controller/controller.h"
#include "lib/commands.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

using namespace cop;
using namespace cop::wire;
using cop::controller::Controller;
using cop::controller::Delivery;
using cop::controller::Sender;
using cop::controller::channel_bit;

struct Harness {
  Controller ctl;
  std::vector<Delivery> out;

  explicit Harness(controller::Config c = {}) : ctl(c) {}

  void send(int ch, Message m) { ctl.receive(ch, m, out); }
  // As the link authenticated the sender (copd's path).
  void send_as(int ch, Message m, Sender from) { ctl.receive(ch, m, ctl.cycles(), from, out); }
  void run() { ctl.run(out); }
  // Sends one command and services everything; returns what came out.
  std::vector<Delivery> call(int ch, Message m) {
    out.clear();
    send(ch, m);
    run();
    return out;
  }
  std::vector<Delivery> call_as(int ch, Message m, Sender from) {
    out.clear();
    send_as(ch, m, from);
    run();
    return out;
  }
  static Error error_of(const std::vector<Delivery>& d) {
    for (const auto& x : d)
      if (x.msg.ins.opcode == Opcode::NACK) return nack_error(x.msg.data1);
    return Error::none;
  }
  // Data (non-link) deliveries.
  static std::vector<Delivery> data(const std::vector<Delivery>& d) {
    std::vector<Delivery> r;
    for (const auto& x : d)
      if (!x.link_level) r.push_back(x);
    return r;
  }
};

inline Message gas(Opcode op, uint32_t tag, uint16_t tkno = 1) { return make(op, tkno, Space::GAS, tag); }

inline Message settc(uint32_t tag, uint64_t mask, int count = 1, bool bcast_ram = false) {
  return cop::commands::mask_command(cop::commands::Sender{0, 0}, bcast_ram ? Opcode::SETBM : Opcode::SETTC, tag, mask,
                                     count);
}

inline Message value(Opcode op, uint32_t tag, uint64_t v) {
  Message m = gas(op, tag);
  if (is_64bit(op))
    m.set_data64(v);
  else
    m.data1 = static_cast<uint32_t>(v);
  return m;
}

inline uint64_t mask_of(std::initializer_list<int> chans) {
  uint64_t m = 0;
  for (int c : chans) m |= channel_bit(c);
  return m;
}

constexpr Sender kSupervisor{true, 0};
inline Sender user(uint16_t tkno) { return Sender{false, tkno}; }

inline Message supervisor_sas_write(uint32_t offset, uint64_t v) {
  Message m = make(Opcode::WSRAM64, 0, Space::SAS, offset);
  m.ins.supervisor = true;
  m.set_data64(v);
  return m;
}
