// matmul: distributed dense C = A B by SUMMA (van de Geijn & Watts; the algorithm of
// PBLAS's pdgemm that ParaStation2 measured, seed 001 Table 4) on a Pr x Pc process
// grid, local products by OpenBLAS dgemm on one thread.
//
// Rank (I, J) = I*Pc + J holds block (I, J) of A, B and C. For every panel of the inner
// dimension the owner of A's panel multicasts it along its process row and the owner of
// B's panel along its process column; every rank then adds the panel product to its C.
// A one-row or one-column grid needs only broadcast; a square-ish grid needs multicast,
// so on a backend without it (armci) the grid is nodes x 1 (the label says which).
//
// Reported like Table 4: MFLOP of the parallel run, the uniprocessor MFLOP of a plain
// dgemm on rank 0, and the efficiency MFLOP / (nodes x uniprocessor MFLOP). The matrices
// hold small integers, so C is exact and rank 0 compares every block with its dgemm.
#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include <cblas.h>
#include <fmt/format.h>

#include "apps/common.h"

extern "C" void openblas_set_num_threads(int);

namespace copbench::apps {
namespace {

using Range = std::pair<int, int>;
Range block_of(int n, int parts, int k) {
  return {static_cast<int>(static_cast<long>(n) * k / parts), static_cast<int>(static_cast<long>(n) * (k + 1) / parts)};
}

double a_elem(int i, int j) { return static_cast<double>((i * 7 + j * 3) % 11) - 5.0; }
double b_elem(int i, int j) { return static_cast<double>((i * 5 + j * 13) % 9) - 4.0; }

// Most nearly square Pr x Pc = nodes with Pr >= Pc.
std::pair<int, int> square_grid(int nodes) {
  int pc = 1;
  for (int c = 1; c * c <= nodes; ++c)
    if (nodes % c == 0) pc = c;
  return {nodes / pc, pc};
}

class Summa {
 public:
  Summa(Backend& b, int n, int panel, Breakdown& bd) : b_(b), n_(n), panel_(panel), bd_(bd) {
    std::tie(pr_, pc_) = square_grid(b.ranks());
    if (pr_ > 1 && pc_ > 1 && !b.offers(Op::multicast)) std::tie(pr_, pc_) = std::pair{b.ranks(), 1};
    ri_ = b.rank() / pc_;
    cj_ = b.rank() % pc_;
    rows_ = block_of(n, pr_, ri_);
    cols_ = block_of(n, pc_, cj_);
    // Panel breakpoints: every boundary of A's column blocks and of B's row blocks.
    std::vector<int> cuts{0, n};
    for (int k = 1; k < pc_; ++k) cuts.push_back(block_of(n, pc_, k).first);
    for (int k = 1; k < pr_; ++k) cuts.push_back(block_of(n, pr_, k).first);
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i)
      for (int k = cuts[i]; k < cuts[i + 1]; k += panel_) panels_.push_back({k, std::min(k + panel_, cuts[i + 1])});
    // Local blocks: A(rows, A's columns of this process column), B(B's rows of this process row, cols).
    const int mr = height(), mc = width();
    const Range acols = block_of(n, pc_, cj_), brows = block_of(n, pr_, ri_);
    a_.resize(static_cast<std::size_t>(mr) * (acols.second - acols.first));
    for (int i = 0; i < mr; ++i)
      for (int j = acols.first; j < acols.second; ++j)
        a_[static_cast<std::size_t>(i) * (acols.second - acols.first) + (j - acols.first)] = a_elem(rows_.first + i, j);
    b_local_.resize(static_cast<std::size_t>(brows.second - brows.first) * mc);
    for (int i = brows.first; i < brows.second; ++i)
      for (int j = 0; j < mc; ++j) b_local_[static_cast<std::size_t>(i - brows.first) * mc + j] = b_elem(i, cols_.first + j);
    c_.assign(static_cast<std::size_t>(mr) * mc, 0.0);
  }

  std::string grid() const { return fmt::format("{}x{}", pr_, pc_); }
  int height() const { return rows_.second - rows_.first; }
  int width() const { return cols_.second - cols_.first; }
  Range rows() const { return rows_; }
  Range cols() const { return cols_; }
  const std::vector<double>& c() const { return c_; }

  double run(const RunStart& start) {
    std::fill(c_.begin(), c_.end(), 0.0);
    const double t0 = start();  // every rank at one instant (apps/common.h repeat_runs)
    const Range acols = block_of(n_, pc_, cj_), brows = block_of(n_, pr_, ri_);
    std::vector<double> apanel, bpanel;
    for (auto [k0, k1] : panels_) {
      const int w = k1 - k0;
      const int owner_col = owner(pc_, k0), owner_row = owner(pr_, k0);
      apanel.resize(static_cast<std::size_t>(height()) * w);
      bpanel.resize(static_cast<std::size_t>(w) * width());
      if (cj_ == owner_col) {
        const int lda = acols.second - acols.first;
        for (int i = 0; i < height(); ++i)
          std::copy_n(&a_[static_cast<std::size_t>(i) * lda + (k0 - acols.first)], w, &apanel[static_cast<std::size_t>(i) * w]);
      }
      if (ri_ == owner_row)
        std::copy_n(&b_local_[static_cast<std::size_t>(k0 - brows.first) * width()], static_cast<std::size_t>(w) * width(),
                    bpanel.data());
      // A's panel along every process row, B's along every process column.
      if (pc_ > 1)
        for (int r = 0; r < pr_; ++r) along(apanel, r, owner_col, true);
      if (pr_ > 1)
        for (int c = 0; c < pc_; ++c) along(bpanel, owner_row, c, false);
      if (height() > 0 && width() > 0)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, height(), width(), w, 1.0, apanel.data(), w,
                    bpanel.data(), width(), 1.0, c_.data(), width());
    }
    return now_seconds() - t0;
  }

 private:
  // The process row (parts = Pr) or column (parts = Pc) whose block holds index k.
  int owner(int parts, int k) const {
    for (int p = 0; p < parts; ++p)
      if (k < block_of(n_, parts, p).second) return p;
    return parts - 1;
  }

  // Multicast within process row r (row = true) or column c from the grid rank (r, c).
  // Every rank calls it; ranks outside the row/column return at once.
  void along(std::vector<double>& buf, int r, int c, bool row) {
    const int root = r * pc_ + c;
    const bool whole = row ? pr_ == 1 : pc_ == 1;  // the row/column is every rank
    auto bytes = std::as_writable_bytes(std::span(buf));
    if (whole) {
      bd_.time(Part::broadcast, [&] { b_.broadcast(bytes, root); });
      return;
    }
    std::vector<int> members;
    if (row) {
      for (int j = 0; j < pc_; ++j)
        if (j != c) members.push_back(r * pc_ + j);
    } else {
      for (int i = 0; i < pr_; ++i)
        if (i != r) members.push_back(i * pc_ + c);
    }
    bd_.time(Part::multicast, [&] { b_.multicast(bytes, root, members); });
  }

  Backend& b_;
  int n_, panel_;
  Breakdown& bd_;
  int pr_ = 1, pc_ = 1, ri_ = 0, cj_ = 0;
  Range rows_, cols_;
  std::vector<Range> panels_;
  std::vector<double> a_, b_local_, c_;
};

// Rank 0's uniprocessor reference: the whole product by one dgemm, best of `runs`.
double uniprocessor(int n, std::vector<double>& c, int runs) {
  std::vector<double> a(static_cast<std::size_t>(n) * n), bm(a.size());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      a[static_cast<std::size_t>(i) * n + j] = a_elem(i, j);
      bm[static_cast<std::size_t>(i) * n + j] = b_elem(i, j);
    }
  c.assign(a.size(), 0.0);
  double best = 0;
  for (int r = 0; r < runs; ++r) {
    const double t0 = now_seconds();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n, bm.data(), n, 0.0, c.data(), n);
    const double t = now_seconds() - t0;
    if (r == 0 || t < best) best = t;
  }
  return best;
}

class Matmul final : public Benchmark {
 public:
  std::string_view name() const override { return "matmul"; }
  std::string_view description() const override {
    return "SUMMA dense matrix multiply, OpenBLAS dgemm per node (seed 001 Table 4); size = n";
  }
  // Blocks come back to rank 0 for the check by point-to-point, or by gather where there
  // is none (cop).
  std::vector<Op> needs() const override { return {Op::broadcast}; }
  std::vector<std::size_t> default_sizes() const override { return {500, 1000, 2000}; }
  std::vector<ParamSpec> params() const override { return {{"panel", 256, 1, 100000}, {"reference_runs", 3, 1, 100}}; }
  // The run tests' problem (copbench/bench.h): tiny, still checked against the serial answer.
  std::vector<std::size_t> smoke_sizes() const override { return {24}; }
  std::map<std::string, std::string> smoke_params() const override { return {{"panel", "5"}, {"reference_runs", "1"}}; }

  void check_options(const RunParams& p) const override {
    Benchmark::check_options(p);
    check_sizes(p, "matmul", "n", 1, 8000);
  }

  void run(Backend& b, const RunParams& params, Reporter& reporter) const override {
    check_options(params);
    if (!b.offers(Op::echo) && !b.offers(Op::gather)) throw NotOffered(b.name(), Op::gather);
    openblas_set_num_threads(1);  // one core per node: the parallelism is the ranks'
    const int panel = static_cast<int>(param_int(params, *this, "panel"));
    const int ref_runs = static_cast<int>(param_int(params, *this, "reference_runs"));
    for (std::size_t size : params.sizes.empty() ? default_sizes() : params.sizes) {
      const int n = static_cast<int>(size);
      if (n < b.ranks())
        throw std::invalid_argument(fmt::format("matmul: n = {} is smaller than the {} ranks", n, b.ranks()));
      Breakdown bd;
      Summa summa(b, n, panel, bd);
      auto [summary, fractions] = measure_runs(b, params.timing, bd, [&](const RunStart& start) { return summa.run(start); });

      // The uniprocessor reference (others wait), then every block checked against it.
      b.sync();
      std::vector<double> reference;
      double uni_seconds = b.rank() == 0 ? uniprocessor(n, reference, ref_runs) : 0.0;
      verify(b, summa, n, reference);

      const double flops = 2.0 * n * static_cast<double>(n) * n;
      PointResult p;
      p.name = point_name("matmul", {{"n", std::to_string(n)}});
      p.counters["nodes"] = b.nodes();
      if (b.tasks_per_node() > 1) p.counters["ranks"] = b.ranks();
      p.counters["n"] = n;
      p.counters["mflops"] = summary.median > 0 ? flops / summary.median / 1e6 : 0.0;
      std::vector<double> uni{uni_seconds};
      b.max_over_ranks(uni);
      const double uni_mflops = uni[0] > 0 ? flops / uni[0] / 1e6 : 0.0;
      p.counters["uniprocessor_mflops"] = uni_mflops;
      p.counters["efficiency"] = uni_mflops > 0 ? p.counters["mflops"] / (b.ranks() * uni_mflops) : 0.0;
      p.counters["frac_computation"] = fractions[static_cast<std::size_t>(Part::computation)];
      p.counters["frac_broadcast"] = fractions[static_cast<std::size_t>(Part::broadcast)];
      p.counters["frac_multicast"] = fractions[static_cast<std::size_t>(Part::multicast)];
      p.labels["algorithm"] = "SUMMA";
      p.labels["grid"] = summa.grid();
      p.labels["blas"] = "openblas-1-thread";
      p.labels["verified"] = "dgemm-exact";
      p.summary = std::move(summary);
      reporter.report(std::move(p));
    }
  }

 private:
  // Every rank sends its C block to rank 0, which compares it with the reference.
  // (by point-to-point where offered, else by one gather of blocks padded to the largest)
  static void verify(Backend& b, const Summa& summa, int n, const std::vector<double>& reference) {
    auto [pr, pc] = parse_grid(summa.grid());
    const bool p2p = b.offers(Op::echo);
    std::vector<double> gathered;
    const std::size_t padded = static_cast<std::size_t>((n + pr - 1) / pr) * ((n + pc - 1) / pc);
    if (!p2p) {
      std::vector<double> mine(padded, 0.0);
      std::copy(summa.c().begin(), summa.c().end(), mine.begin());
      if (b.rank() == 0) gathered.resize(padded * static_cast<std::size_t>(b.ranks()));
      b.gather(std::as_bytes(std::span(mine)), std::as_writable_bytes(std::span(gathered)), 0);
    }
    if (b.rank() != 0) {
      std::vector<double> block = summa.c();
      if (p2p && !block.empty()) b.send(0, std::as_bytes(std::span(block)));
      return;
    }
    long bad = 0;
    auto check = [&](Range rows, Range cols, const std::vector<double>& block) {
      const int w = cols.second - cols.first;
      for (int i = rows.first; i < rows.second; ++i)
        for (int j = cols.first; j < cols.second; ++j)
          if (block[static_cast<std::size_t>(i - rows.first) * w + (j - cols.first)] !=
              reference[static_cast<std::size_t>(i) * n + j])
            ++bad;
    };
    check(summa.rows(), summa.cols(), summa.c());
    for (int r = 1; r < b.ranks(); ++r) {
      Range rows = block_of(n, pr, r / pc), cols = block_of(n, pc, r % pc);
      std::vector<double> block(static_cast<std::size_t>(rows.second - rows.first) * (cols.second - cols.first));
      if (!p2p)
        std::copy_n(gathered.begin() + static_cast<long>(padded * static_cast<std::size_t>(r)), block.size(), block.begin());
      else if (!block.empty())
        b.recv(r, std::as_writable_bytes(std::span(block)));
      check(rows, cols, block);
    }
    if (bad > 0)
      throw std::runtime_error(fmt::format("matmul: {} elements of C differ from the uniprocessor dgemm (n = {})", bad, n));
  }

  static std::pair<int, int> parse_grid(const std::string& g) {
    auto x = g.find('x');
    return {std::stoi(g.substr(0, x)), std::stoi(g.substr(x + 1))};
  }
};

const RegisterWorkload<Matmul> registered{WorkloadKind::application, 1010};  // copbench/bench.h

}  // namespace

}  // namespace copbench::apps
