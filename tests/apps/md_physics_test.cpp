// The serial physics of apps/md: blocks cover the atoms, block-wise forces add up to the
// whole, Newton's third law, and velocity Verlet keeps the energy.
#include <cmath>

#include <gtest/gtest.h>

#include "apps/md/physics.h"

namespace md = copbench::apps::md;

TEST(MdPhysics, BlocksCoverTheAtomsInOrder) {
  for (int blocks : {1, 2, 3, 7}) {
    int next = 0;
    for (int k = 0; k < blocks; ++k) {
      auto [a, b] = md::block_range(66, blocks, k);
      EXPECT_EQ(a, next);
      EXPECT_LE(a, b);
      next = b;
    }
    EXPECT_EQ(next, 66);
  }
}

TEST(MdPhysics, BlockForcesSumToTheWholeAndObeyNewtonsThirdLaw) {
  std::vector<double> pos, vel;
  md::initial_state(10, pos, vel);
  std::vector<double> whole(pos.size()), part(pos.size()), sum(pos.size(), 0.0);
  double e_whole = md::partial_forces(pos, 0, 10, whole);
  double e_sum = 0;
  for (int k = 0; k < 3; ++k) {
    auto [a, b] = md::block_range(10, 3, k);
    e_sum += md::partial_forces(pos, a, b, part);
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += part[i];
  }
  EXPECT_NEAR(e_sum, e_whole, 1e-12 * std::abs(e_whole));
  double total[3] = {0, 0, 0};
  for (std::size_t i = 0; i < whole.size(); ++i) {
    EXPECT_NEAR(sum[i], whole[i], 1e-9 * (1 + std::abs(whole[i])));
    total[i % 3] += whole[i];
  }
  for (double t : total) EXPECT_NEAR(t, 0.0, 1e-9);
  EXPECT_LT(e_whole, 0.0);  // a bound lattice
}

TEST(MdPhysics, VerletKeepsTheEnergyAndTheRunIsReproducible) {
  md::SerialRun a = md::serial_run(27, 200, 0.002, 1);
  md::SerialRun b = md::serial_run(27, 200, 0.002, 1);
  ASSERT_EQ(a.energy.size(), 201u);
  EXPECT_EQ(a.pos, b.pos);
  EXPECT_LT(std::abs(a.energy.back() - a.energy.front()) / std::abs(a.energy.front()), 1e-3);
}

TEST(MdPhysics, TheBlockSplitChangesOnlyRounding) {
  md::SerialRun one = md::serial_run(20, 50, 0.002, 1);
  md::SerialRun four = md::serial_run(20, 50, 0.002, 4);
  for (std::size_t i = 0; i < one.pos.size(); ++i) EXPECT_NEAR(one.pos[i], four.pos[i], 1e-9);
}
