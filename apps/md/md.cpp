// md: a molecular-dynamics mini-application shaped like EGO (seed 000, ch. VI,
// "Effect of Global Operation Speedup on Overall Execution Time"): a control task (rank 0)
// and N slave tasks (ranks 1..N; with one node the control task is its own slave).
//
//   init   control multicasts task management data, sends every slave its atoms
//          (point-to-point), multicasts the global data;
//   step   slaves do a velocity-Verlet step of Lennard-Jones atoms; coordinates travel
//          around the logical ring of slaves (and to the control task); every slave
//          computes the forces its atoms exert on all atoms and the forces are exchanged
//          by all-to-all multicasts between barriers; the energy is reduced to the control
//          task and multicast back; the control task multicasts the 'running' flag.
//
// Reported: Table V (fraction of time in multicast, reduction, barrier, point-to-point
// and computation, averaged over tasks), each part's time summed over tasks and its calls
// by size (from which the report projects the COP speedup of each part and of the whole
// run, Table V's way: suite/report/cop_projection.h), the energy drift. The final
// positions and energies are checked against a serial run of the same physics.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "apps/common.h"
#include "apps/md/physics.h"

namespace copbench::apps {
namespace {

template <class T>
std::span<std::byte> bytes_of(std::span<T> s) {
  return std::as_writable_bytes(s);
}

struct Settings {
  int atoms = 66;
  int steps = 256;
  double dt = 0.002;
  double drift = 1e-3;  // largest relative change of the total energy accepted
};

struct Outcome {             // the control task's view of a run
  std::vector<double> pos;   // final positions
  std::vector<double> energy;
};

constexpr Part kTableV[] = {Part::multicast, Part::reduction, Part::barrier, Part::point_to_point};

class MdRun {
 public:
  MdRun(Backend& b, const Settings& s, Breakdown& bd)
      : b_(b), s_(s), bd_(bd), me_(b.rank()), nodes_(b.ranks()), alone_(nodes_ == 1),
        nslaves_(alone_ ? 1 : nodes_ - 1), use_multicast_(b.offers(Op::multicast)) {
    for (int r = alone_ ? 0 : 1; r < nodes_; ++r) slaves_.push_back(r);
    is_slave_ = alone_ || me_ > 0;
    k_ = alone_ ? 0 : me_ - 1;
    std::tie(first_, last_) = md::block_range(s_.atoms, nslaves_, k_);
    if (!is_slave_) first_ = last_ = 0;
  }

  // One whole run; returns this task's seconds. The control task's results land in out.
  double run(Outcome& out, const RunStart& start) {
    const std::size_t n3 = 3 * static_cast<std::size_t>(s_.atoms);
    pos_.assign(n3, 0.0);
    vel_.assign(n3, 0.0);
    force_.assign(n3, 0.0);
    partial_.assign(n3, 0.0);
    incoming_.assign(n3, 0.0);
    out = Outcome{};
    const double t0 = start();  // every rank at one instant (apps/common.h repeat_runs)

    // Initialisation: task management data, loading information, global data.
    std::vector<double> info{static_cast<double>(nslaves_), static_cast<double>(s_.atoms),
                             static_cast<double>(s_.steps), s_.dt};
    mcast(bytes_of(std::span(info)), 0, control_members());
    if (me_ == 0) md::initial_state(s_.atoms, pos_, vel_);
    for (int r : slaves_) {
      if (r == 0) continue;
      auto [a0, a1] = md::block_range(s_.atoms, nslaves_, r - 1);
      const auto count = static_cast<std::size_t>(3 * (a1 - a0));
      std::vector<double> load;
      if (me_ == 0) {
        load.assign(pos_.begin() + 3 * a0, pos_.begin() + 3 * a1);
        load.insert(load.end(), vel_.begin() + 3 * a0, vel_.begin() + 3 * a1);
      } else if (me_ == r) {
        load.resize(2 * count);
      }
      const std::size_t bytes = 2 * count * sizeof(double);
      exchange(b_, bd_, [r](int x) { return x == 0 ? r : -1; }, [bytes](int x) { return x == 0 ? bytes : 0; },
               std::as_bytes(std::span(load)), me_ == r ? 0 : -1, bytes_of(std::span(load)));
      if (me_ == 0 || me_ == r) bd_.call(Part::point_to_point, bytes);
      if (me_ == r) {
        std::copy(load.begin(), load.begin() + static_cast<long>(count), pos_.begin() + 3 * first_);
        std::copy(load.begin() + static_cast<long>(count), load.end(), vel_.begin() + 3 * first_);
      }
    }
    std::vector<double> global{1.0, 1.0, s_.dt};  // epsilon, sigma, time step
    mcast(bytes_of(std::span(global)), 0, control_members());

    double potential = force_phase();
    energy_exchange(potential, out);
    int step = 0;
    int running = s_.steps > 0;
    while (running) {
      for (int i = 3 * first_; i < 3 * last_; ++i) {
        vel_[i] += 0.5 * s_.dt * force_[i];
        pos_[i] += s_.dt * vel_[i];
      }
      potential = force_phase();
      for (int i = 3 * first_; i < 3 * last_; ++i) vel_[i] += 0.5 * s_.dt * force_[i];
      energy_exchange(potential, out);
      ++step;
      if (me_ == 0) running = step < s_.steps && std::isfinite(out.energy.back());
      mcast(bytes_of(std::span(&running, 1)), 0, control_members());
    }
    const double seconds = now_seconds() - t0;
    if (me_ == 0) out.pos = pos_;
    return seconds;
  }

 private:
  std::vector<int> control_members() const { return alone_ ? std::vector<int>{} : slaves_; }

  // Multicast where the backend has one; otherwise (armci) its broadcast, which also
  // reaches the non-members, who ignore it. Every task calls it (SPMD).
  void mcast(std::span<std::byte> buf, int root, const std::vector<int>& members) {
    if (members.empty()) return;
    bd_.time(Part::multicast, [&] {
      if (use_multicast_)
        b_.multicast(buf, root, members);
      else
        b_.broadcast(buf, root);
    });
    bd_.call(Part::multicast, buf.size());
  }

  std::span<double> block(int k) {
    auto [a0, a1] = md::block_range(s_.atoms, nslaves_, k);
    return std::span(pos_).subspan(3 * static_cast<std::size_t>(a0), 3 * static_cast<std::size_t>(a1 - a0));
  }

  // Coordinates around the ring, forces all-to-all; returns this slave's potential share.
  double force_phase() {
    if (nslaves_ > 1) {
      // Slave k (rank k + 1) sends to the slave below and receives from the one above.
      auto slave_index = [](int r) { return r - 1; };
      const int above = is_slave_ ? slaves_[(k_ + 1) % nslaves_] : -1;
      for (int shift = 1; shift < nslaves_; ++shift) {
        auto target = [&](int r) { return r == 0 ? -1 : slaves_[(slave_index(r) + nslaves_ - 1) % nslaves_]; };
        auto bytes = [&](int r) { return r == 0 ? std::size_t{0} : block((slave_index(r) + shift - 1) % nslaves_).size_bytes(); };
        std::span<double> out, in;
        if (is_slave_) {
          out = block((k_ + shift - 1) % nslaves_);
          in = block((k_ + shift) % nslaves_);
        }
        // Even slaves send first, odd ones receive first: no cycle of blocked sends.
        exchange(b_, bd_, target, bytes, std::as_bytes(out), above, bytes_of(in), k_ % 2 == 0);
        if (is_slave_) {
          bd_.call(Part::point_to_point, out.size_bytes());
          bd_.call(Part::point_to_point, in.size_bytes());
        }
      }
    }
    // The control task receives the travelling coordinates, slave by slave.
    if (!alone_) {
      for (int k = 0; k < nslaves_; ++k) {
        const int sender = slaves_[k];
        const std::size_t bytes = block(k).size_bytes();
        std::span<double> buf;
        if (me_ == 0 || me_ == sender) buf = block(k);
        exchange(b_, bd_, [sender](int r) { return r == sender ? 0 : -1; },
                 [sender, bytes](int r) { return r == sender ? bytes : 0; }, std::as_bytes(buf), me_ == 0 ? sender : -1,
                 bytes_of(buf));
        if (me_ == 0 || me_ == sender) bd_.call(Part::point_to_point, bytes);
      }
    }
    double potential = 0;
    if (is_slave_) {
      potential = md::partial_forces(pos_, first_, last_, partial_);
      std::fill(force_.begin(), force_.end(), 0.0);
    }
    // All-to-all: each slave in turn multicasts its partial forces to the other slaves;
    // every slave sums them for its own atoms in slave order (the serial run's order).
    for (int k = 0; k < nslaves_; ++k) {
      bd_.time(Part::barrier, [&] { b_.barrier(); });
      bd_.call(Part::barrier, 0);
      const int root = slaves_[k];
      std::vector<int> members;
      for (int r : slaves_)
        if (r != root) members.push_back(r);
      std::vector<double>& buf = me_ == root ? partial_ : incoming_;
      mcast(bytes_of(std::span(buf)), root, members);
      if (is_slave_)
        for (int i = 3 * first_; i < 3 * last_; ++i) force_[i] += buf[i];
    }
    return potential;
  }

  // The energy reduced to the control task, which multicasts it back.
  void energy_exchange(double potential, Outcome& out) {
    double kinetic = 0;
    for (int i = 3 * first_; i < 3 * last_; ++i) kinetic += 0.5 * vel_[i] * vel_[i];
    std::vector<double> mine{kinetic, potential}, total(2, 0.0);
    bd_.time(Part::reduction, [&] { b_.reduce(mine.data(), total.data(), 2, Elem::f64, ReduceOp::sum, 0); });
    bd_.call(Part::reduction, mine.size() * sizeof(double));
    mcast(bytes_of(std::span(total)), 0, control_members());
    if (me_ == 0) out.energy.push_back(total[0] + total[1]);
  }

  Backend& b_;
  Settings s_;
  Breakdown& bd_;
  int me_, nodes_;
  bool alone_;
  int nslaves_;
  bool use_multicast_;
  std::vector<int> slaves_;
  bool is_slave_ = false;
  int k_ = 0, first_ = 0, last_ = 0;
  std::vector<double> pos_, vel_, force_, partial_, incoming_;
};

// The control task's check: the serial run of the same physics, and the energy drift.
void verify(const Settings& s, int nslaves, const Outcome& out, double& drift) {
  md::SerialRun ref = md::serial_run(s.atoms, s.steps, s.dt, nslaves);
  if (out.energy.size() != ref.energy.size())
    throw std::runtime_error(fmt::format("md: {} energies recorded, expected {}", out.energy.size(), ref.energy.size()));
  double worst_pos = 0;
  for (std::size_t i = 0; i < ref.pos.size(); ++i)
    worst_pos = std::max(worst_pos, std::abs(out.pos[i] - ref.pos[i]) / (1.0 + std::abs(ref.pos[i])));
  double worst_energy = 0;
  for (std::size_t i = 0; i < ref.energy.size(); ++i)
    worst_energy = std::max(worst_energy, std::abs(out.energy[i] - ref.energy[i]) / (1.0 + std::abs(ref.energy[i])));
  if (!(worst_pos <= 1e-9) || !(worst_energy <= 1e-9))
    throw std::runtime_error(fmt::format("md: answer differs from the serial run (positions by {:.3g}, energies by {:.3g})",
                                         worst_pos, worst_energy));
  drift = std::abs(out.energy.back() - out.energy.front()) / std::abs(out.energy.front());
  if (!(drift <= s.drift))
    throw std::runtime_error(fmt::format("md: energy drift {:.3g} exceeds --param drift={:.3g}", drift, s.drift));
}

class Md final : public Benchmark {
 public:
  std::string_view name() const override { return "md"; }
  std::string_view description() const override {
    return "molecular dynamics like EGO (seed 000 Table V): control + slaves; size = atoms";
  }
  // Multicast is used where offered and replaced by broadcast where not; point-to-point
  // is send/recv where offered and one-member multicasts where not (both labelled).
  std::vector<Op> needs() const override { return {Op::barrier, Op::reduce, Op::broadcast}; }
  // Table V's breakdown (frac_* and calls_* counters): the report's Table V table.
  ReportTraits report_traits() const override {
    ReportTraits t;
    t.time_breakdown = true;
    return t;
  }
  std::vector<std::size_t> default_sizes() const override { return {66}; }
  std::vector<ParamSpec> params() const override {
    return {{"steps", 256, 0, 1000000}, {"dt", 0.002, 1e-6, 0.01, false}, {"drift", 1e-3, 0.0, 1.0, false}};
  }
  // The run tests' problem (copbench/bench.h): tiny, still checked against the serial answer.
  std::vector<std::size_t> smoke_sizes() const override { return {12}; }
  std::map<std::string, std::string> smoke_params() const override { return {{"steps", "12"}}; }

  void check_options(const RunParams& p) const override {
    Benchmark::check_options(p);
    check_sizes(p, "md", "atoms", 2, 20000);
  }

  void run(Backend& b, const RunParams& params, Reporter& reporter) const override {
    check_options(params);
    require_p2p(b);
    for (std::size_t atoms : params.sizes.empty() ? default_sizes() : params.sizes) {
      Settings s = settings(params, static_cast<int>(atoms));
      const int nslaves = b.ranks() > 1 ? b.ranks() - 1 : 1;
      if (s.atoms < nslaves)
        throw std::invalid_argument(fmt::format("md: {} atoms cannot be shared by {} slave tasks", s.atoms, nslaves));
      Breakdown bd;
      Outcome out;
      MdRun app(b, s, bd);
      // Table V from the last run: fractions averaged over tasks, and what the report's
      // COP column needs (each part's seconds summed over tasks and its calls by size).
      auto [summary, fractions] = measure_runs(b, params.timing, bd, [&](const RunStart& start) { return app.run(out, start); });
      double drift = 0;
      if (b.rank() == 0) verify(s, nslaves, out, drift);
      std::vector<double> sums(kParts, 0.0);  // measured seconds, summed over tasks
      for (Part part : kTableV) sums[static_cast<std::size_t>(part)] = bd.seconds(part);
      sum_over_ranks(b, sums);
      const std::map<std::string, double> calls = bd.call_counters(b);

      PointResult p;
      p.name = point_name("md", {{"atoms", std::to_string(s.atoms)}, {"steps", std::to_string(s.steps)}});
      p.counters["nodes"] = b.nodes();
      if (b.tasks_per_node() > 1) p.counters["ranks"] = b.ranks();
      p.counters["slaves"] = nslaves;
      p.counters["atoms"] = s.atoms;
      p.counters["steps"] = s.steps;
      p.counters["energy_drift"] = drift;
      double comm = 0;
      for (Part part : kTableV) {
        const auto i = static_cast<std::size_t>(part);
        const std::string key(part_name(part));
        p.counters["frac_" + key] = fractions[i];
        p.counters["seconds_" + key] = sums[i];
        comm += fractions[i];
      }
      p.counters.insert(calls.begin(), calls.end());
      p.counters["frac_communication"] = comm;
      p.counters["frac_computation"] = fractions[static_cast<std::size_t>(Part::computation)];
      p.labels["verified"] = "serial+drift";
      p.labels["multicast_via"] = b.offers(Op::multicast) ? "multicast" : "broadcast";
      p.labels["p2p_via"] = p2p_via(b);
      p.summary = std::move(summary);
      reporter.report(std::move(p));
    }
  }

 private:
  Settings settings(const RunParams& p, int atoms) const {
    Settings s;
    s.atoms = atoms;
    s.steps = static_cast<int>(param_int(p, *this, "steps"));
    s.dt = param_number(p, *this, "dt");
    s.drift = param_number(p, *this, "drift");
    return s;
  }

  // Element-wise sum over ranks from the harness's max: each rank's values in its slot.
  static void sum_over_ranks(Backend& b, std::vector<double>& v) {
    const auto n = static_cast<std::size_t>(b.ranks());
    std::vector<double> all(n * v.size(), 0.0);
    std::copy(v.begin(), v.end(), all.begin() + static_cast<long>(static_cast<std::size_t>(b.rank()) * v.size()));
    b.max_over_ranks(all);
    std::fill(v.begin(), v.end(), 0.0);
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t i = 0; i < v.size(); ++i) v[i] += all[r * v.size() + i];
  }
};

const RegisterWorkload<Md> registered{WorkloadKind::application, 1000};  // copbench/bench.h

}  // namespace

}  // namespace copbench::apps
