// cop/controller protection (seed 000 ch. V): the U/S bit, the Pid register, the
// task address spaces, every field range-checked.
#include "controller_harness.h"

// ---- Protection (ch. V: U/S bit, Pid register, task address space protection) ----

TEST(ControllerProtection, ATaskCannotSetTheSupervisorBit) {
  Harness h;
  // A user task trying to move its channel to another partition.
  EXPECT_EQ(Harness::error_of(h.call_as(3, supervisor_sas_write(3, 1), user(1))), Error::protection);
  EXPECT_EQ(h.ctl.channel_partition(3), 0);
  // ... or to reach another partition's global memory with U/S.
  h.call_as(5, supervisor_sas_write(5, 1), kSupervisor);
  Message w = value(Opcode::WSRAM64, 12, 0xBAD);
  w.ins.ppn = 1;
  w.ins.supervisor = true;
  EXPECT_EQ(Harness::error_of(h.call_as(1, w, user(1))), Error::protection);
  EXPECT_EQ(h.ctl.ram().gas(1, 12), 0u);
  Message own = value(Opcode::WSRAM64, 12, 77);
  own.ins.ppn = 1;
  own.ins.tkno = 2;
  EXPECT_EQ(Harness::error_of(h.call_as(5, own, user(2))), Error::none);
  Message r = gas(Opcode::RSRAM64, 12);
  r.ins.ppn = 1;
  r.ins.supervisor = true;
  auto d = h.call_as(1, r, user(1));
  EXPECT_EQ(Harness::error_of(d), Error::protection);
  EXPECT_TRUE(Harness::data(d).empty());
  // The channel's driver (supervisor) may.
  d = Harness::data(h.call_as(1, r, kSupervisor));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data64(), 77u);
}

TEST(ControllerProtection, APartitionNumberBeyondThePartitionsIsRefusedEvenFromTheSupervisor) {
  Harness h;  // 4 partitions
  for (uint8_t ppn : {uint8_t(4), uint8_t(15)}) {
    Message w = value(Opcode::WSRAM64, 65535, 1);
    w.ins.ppn = ppn;
    w.ins.supervisor = true;
    EXPECT_EQ(Harness::error_of(h.call_as(1, w, kSupervisor)), Error::partition);
    Message t = make(Opcode::WSRAM64, 0, Space::TAS, Address::tas_tag(15, 255));
    t.ins.ppn = ppn;
    t.ins.supervisor = true;
    t.ins.z = true;
    t.addr.chno = 64;
    EXPECT_EQ(Harness::error_of(h.call_as(1, t, kSupervisor)), Error::partition);
    Message s = settc(65535, channel_bit(1));
    s.ins.ppn = ppn;
    s.ins.supervisor = true;
    EXPECT_EQ(Harness::error_of(h.call_as(1, s, kSupervisor)), Error::partition);
    Message b = gas(Opcode::BENTRY, 3);
    b.ins.ppn = ppn;
    EXPECT_EQ(Harness::error_of(h.call_as(1, b, user(1))), Error::partition);
  }
  EXPECT_EQ(h.ctl.stats().serviced, 8u);
}

TEST(ControllerProtection, ATaskActsOnlyAsItsOwnTaskNumber) {
  Harness h;
  // Task 3 of channel 5 names task 4 in TKNO and TTKNO: refused, nothing written.
  Message w = make(Opcode::WSRAM64, 4, Space::TAS, Address::tas_tag(4, 0));
  w.set_data64(99);
  auto d = h.call_as(5, w, user(3));
  EXPECT_EQ(Harness::error_of(d), Error::protection);
  EXPECT_EQ(h.ctl.ram().tas(0, 5, 4, 0), 0u);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.ins.tkno, 3);  // the NACK goes to the sender, by its own number
  // Its own number in TKNO but another task's space: refused (owner only).
  Message w2 = make(Opcode::WSRAM64, 3, Space::TAS, Address::tas_tag(4, 0));
  EXPECT_EQ(Harness::error_of(h.call_as(5, w2, user(3))), Error::protection);
  // Its own: fine.
  Message w3 = make(Opcode::WSRAM64, 3, Space::TAS, Address::tas_tag(3, 0));
  w3.set_data64(5);
  EXPECT_EQ(Harness::error_of(h.call_as(5, w3, user(3))), Error::none);
  EXPECT_EQ(h.ctl.ram().tas(0, 5, 3, 0), 5u);
  // Any command with another task's number is refused, reads included.
  EXPECT_EQ(Harness::error_of(h.call_as(5, make(Opcode::PROBE, 4), user(3))), Error::protection);
  Message rmw = make(Opcode::RMW64, 4, Space::TAS, Address::tas_tag(3, 0));
  rmw.set_data64(1);
  EXPECT_EQ(Harness::error_of(h.call_as(5, rmw, user(3))), Error::protection);
  EXPECT_EQ(h.ctl.ram().tas(0, 5, 3, 0), 5u);
  // SETTC/SETBM carry a count in that field: not a task number, and the
  // answer carries the sender's number, not the count.
  d = h.call_as(5, settc(8, channel_bit(5), 3), user(3));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.ins.opcode, Opcode::ACK);
  EXPECT_EQ(d[0].msg.ins.tkno, 3);
}

TEST(ControllerProtection, ReadModifyWriteOfAnotherTasksSpaceIsAnAddNeverAStore) {
  // ch. V: only RMW from a task writes other tasks' spaces (cop_rmw's shared counters).
  Harness h;
  Message w = make(Opcode::WSRAM64, 2, Space::TAS, Address::tas_tag(2, 1));
  w.set_data64(40);
  h.call_as(8, w, user(2));
  Message rmw = make(Opcode::RMW64, 6, Space::TAS, Address::tas_tag(2, 1));
  rmw.ins.z = true;
  rmw.addr.chno = 8;
  rmw.set_data64(2);
  auto d = Harness::data(h.call_as(3, rmw, user(6)));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data64(), 40u);
  EXPECT_EQ(d[0].msg.ins.tkno, 6);
  EXPECT_EQ(h.ctl.ram().tas(0, 8, 2, 1), 42u);
  Message store = make(Opcode::WSRAM64, 6, Space::TAS, Address::tas_tag(2, 1));
  store.ins.z = true;
  store.addr.chno = 8;
  store.set_data64(7);
  EXPECT_EQ(Harness::error_of(h.call_as(3, store, user(6))), Error::protection);
  EXPECT_EQ(h.ctl.ram().tas(0, 8, 2, 1), 42u);
}

TEST(ControllerProtection, EveryFieldIsRangeCheckedBeforeUse) {
  controller::Config c;
  c.channels = 8;
  c.tasks_per_channel = 4;
  c.tas_words = 16;
  c.gas_words = 64;
  c.sas_words = 16;
  c.partitions = 2;
  Harness h(c);
  auto tas = [](Opcode op, uint32_t ttkno, uint32_t offset, int chno = 0) {
    Message m = make(op, 1, Space::TAS, Address::tas_tag(ttkno, offset));
    if (chno) {
      m.ins.z = true;
      m.addr.chno = uint8_t(chno);
    }
    return m;
  };
  struct Case {
    Message m;
    Error e;
  };
  Message settc_beyond = settc(60, channel_bit(1), 5);
  Message mask_read = gas(Opcode::RSRAM64, 64);
  mask_read.ins.m = true;
  Message sas_read = make(Opcode::RSRAM64, 1, Space::SAS, 16);
  Message z_without_channel = tas(Opcode::RSRAM64, 1, 0);
  z_without_channel.ins.z = true;
  const Case cases[] = {
      {tas(Opcode::WSRAM64, 4, 0), Error::address_range},        // TTKNO beyond the task spaces
      {tas(Opcode::RSRAM64, 1, 16), Error::address_range},       // TAS offset beyond the space
      {tas(Opcode::RMW64, 1, 0, 9), Error::channel_range},       // a channel the controller lacks
      {z_without_channel, Error::channel_range},
      {value(Opcode::WSRAM64, 64, 1), Error::address_range},     // GAS offset
      {value(Opcode::SUMI64, 100, 1), Error::address_range},
      {value(Opcode::BCAST64, 64, 1), Error::address_range},
      {settc_beyond, Error::address_range},                      // count runs past the GAS
      {mask_read, Error::address_range},
      {sas_read, Error::address_range},
  };
  for (const Case& k : cases) {
    h.out.clear();
    auto d = h.call_as(1, k.m, user(1));
    EXPECT_EQ(Harness::error_of(d), k.e) << to_string(k.m);
    EXPECT_TRUE(Harness::data(d).empty()) << to_string(k.m);
  }
  // The supervisor's commands are checked the same way.
  Message s = supervisor_sas_write(16, 1);
  EXPECT_EQ(Harness::error_of(h.call_as(1, s, kSupervisor)), Error::address_range);
  Message t = tas(Opcode::WSRAM64, 4, 0);
  t.ins.supervisor = true;
  EXPECT_EQ(Harness::error_of(h.call_as(1, t, kSupervisor)), Error::address_range);
  for (uint32_t i = 0; i < c.gas_words; ++i) EXPECT_FALSE(h.ctl.ram().tc(0, i).accessed);
}
