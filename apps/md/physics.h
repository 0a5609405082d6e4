// Lennard-Jones atoms in reduced units (epsilon = sigma = mass = 1), integrated with the
// velocity Verlet algorithm: the physics of apps/md, shared by the distributed run and
// the serial reference it is checked against.
#pragma once

#include <span>
#include <utility>
#include <vector>

namespace copbench::apps::md {

// Atoms on a simple cubic lattice near the pair-potential minimum (spacing 1.12), with
// small reproducible velocities of zero total momentum. pos and vel hold x, y, z per atom.
void initial_state(int atoms, std::vector<double>& pos, std::vector<double>& vel);

// Atom range [first, last) of block k when `atoms` are split into `blocks` contiguous blocks.
std::pair<int, int> block_range(int atoms, int blocks, int k);

// Forces exerted by atoms [j0, j1) on every atom (into force, 3 per atom, overwritten),
// in j order; returns half the pair energies of those pairs, so the blocks' returns sum to
// the potential energy.
double partial_forces(std::span<const double> pos, int j0, int j1, std::span<double> force);

double kinetic_energy(std::span<const double> vel);

struct SerialRun {
  std::vector<double> pos;     // final positions
  std::vector<double> energy;  // total energy after initialisation and after every step
};
// The same computation on one task: forces summed block by block in block order, exactly
// as the slaves sum the partial forces they receive.
SerialRun serial_run(int atoms, int steps, double dt, int blocks);

}  // namespace copbench::apps::md
