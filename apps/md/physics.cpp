#include "apps/md/physics.h"

#include <cmath>
#include <cstdint>

namespace copbench::apps::md {

void initial_state(int atoms, std::vector<double>& pos, std::vector<double>& vel) {
  int side = 1;
  while (side * side * side < atoms) ++side;
  constexpr double spacing = 1.12;
  pos.assign(3 * static_cast<std::size_t>(atoms), 0.0);
  vel.assign(3 * static_cast<std::size_t>(atoms), 0.0);
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;  // a fixed seed: every run starts alike
  auto uniform = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / 9007199254740992.0 - 0.5;
  };
  double mean[3] = {0, 0, 0};
  for (int a = 0; a < atoms; ++a) {
    const auto i = 3 * static_cast<std::size_t>(a);
    pos[i] = spacing * (a % side);
    pos[i + 1] = spacing * ((a / side) % side);
    pos[i + 2] = spacing * (a / (side * side));
    for (int d = 0; d < 3; ++d) {
      vel[i + d] = 0.5 * uniform();
      mean[d] += vel[i + d] / atoms;
    }
  }
  for (std::size_t i = 0; i < vel.size(); ++i) vel[i] -= mean[i % 3];
}

std::pair<int, int> block_range(int atoms, int blocks, int k) {
  auto at = [&](int b) { return static_cast<int>(static_cast<long>(atoms) * b / blocks); };
  return {at(k), at(k + 1)};
}

double partial_forces(std::span<const double> pos, int j0, int j1, std::span<double> force) {
  const auto atoms = static_cast<int>(pos.size() / 3);
  double energy = 0.0;
  for (int i = 0; i < atoms; ++i) {
    const double* pi = &pos[3 * static_cast<std::size_t>(i)];
    double f[3] = {0, 0, 0};
    for (int j = j0; j < j1; ++j) {
      if (j == i) continue;
      const double* pj = &pos[3 * static_cast<std::size_t>(j)];
      const double d[3] = {pi[0] - pj[0], pi[1] - pj[1], pi[2] - pj[2]};
      const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
      const double inv2 = 1.0 / r2;
      const double inv6 = inv2 * inv2 * inv2;
      const double scale = 24.0 * inv6 * (2.0 * inv6 - 1.0) * inv2;  // F = scale * d
      for (int c = 0; c < 3; ++c) f[c] += scale * d[c];
      energy += 0.5 * 4.0 * inv6 * (inv6 - 1.0);
    }
    for (int c = 0; c < 3; ++c) force[3 * static_cast<std::size_t>(i) + c] = f[c];
  }
  return energy;
}

double kinetic_energy(std::span<const double> vel) {
  double k = 0;
  for (double v : vel) k += 0.5 * v * v;
  return k;
}

SerialRun serial_run(int atoms, int steps, double dt, int blocks) {
  std::vector<double> pos, vel;
  initial_state(atoms, pos, vel);
  const std::size_t n3 = pos.size();
  std::vector<double> force(n3), partial(n3);
  SerialRun run;
  auto compute_forces = [&] {
    double potential = 0;
    std::fill(force.begin(), force.end(), 0.0);
    for (int k = 0; k < blocks; ++k) {
      auto [j0, j1] = block_range(atoms, blocks, k);
      potential += partial_forces(pos, j0, j1, partial);
      for (std::size_t i = 0; i < n3; ++i) force[i] += partial[i];
    }
    return potential;
  };
  double potential = compute_forces();
  run.energy.push_back(kinetic_energy(vel) + potential);
  for (int s = 0; s < steps; ++s) {
    for (std::size_t i = 0; i < n3; ++i) {
      vel[i] += 0.5 * dt * force[i];
      pos[i] += dt * vel[i];
    }
    potential = compute_forces();
    for (std::size_t i = 0; i < n3; ++i) vel[i] += 0.5 * dt * force[i];
    run.energy.push_back(kinetic_energy(vel) + potential);
  }
  run.pos = pos;
  return run;
}

}  // namespace copbench::apps::md
