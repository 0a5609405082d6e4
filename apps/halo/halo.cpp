// halo: the Sobel edge detector of the NCUBE Vertex paper (seed 002, Table 3). The
// image is cut into a Pr x Pc grid of subimages; for every frame each node needs the
// border pixels of its 8 neighbours (N, S, E, W and the corners) before it can convolve
// the 3x3 window with its own border pixels, while its interior needs nothing from them.
//
// Overlap: for each of the 8 directions a node sends its edge to that neighbour, computes
// one eighth of its interior, then receives the opposite neighbour's edge; the border
// pixels follow once all 8 have arrived. Because every node sends in the same direction
// at once on a non-periodic grid, blocking sends cannot wait on each other in a circle.
// With --param overlap=0 the 8 exchanges come first and all computation after.
//
// Reported like Table 3: the fraction of time spent calculating (averaged over nodes) and
// the speedup over the single-node algorithm (a plain serial Sobel of the whole image on
// rank 0, best of 3). Pixels outside the image are 0. Checked: every node's checksum over
// all frames and its last frame, pixel by pixel, against the serial run on rank 0.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "apps/common.h"

namespace copbench::apps {
namespace {

using Range = std::pair<int, int>;
Range block_of(int n, int parts, int k) {
  return {static_cast<int>(static_cast<long>(n) * k / parts), static_cast<int>(static_cast<long>(n) * (k + 1) / parts)};
}

std::pair<int, int> square_grid(int nodes) {
  int pc = 1;
  for (int c = 1; c * c <= nodes; ++c)
    if (nodes % c == 0) pc = c;
  return {nodes / pc, pc};
}

std::uint8_t pixel(int i, int j, int frame) {
  return static_cast<std::uint8_t>((i * 37 + j * 91 + frame * 53 + (i * j) % 17) & 0xff);
}

// |Gx| + |Gy| of the 3x3 Sobel window centred on (i, j) of a padded image `p` of row
// length `stride` (so (i, j) is at p[(i + 1) * stride + j + 1]).
inline int sobel_at(const std::uint8_t* p, int stride, int i, int j) {
  const std::uint8_t* up = p + static_cast<long>(i) * stride + j;
  const std::uint8_t* mid = up + stride;
  const std::uint8_t* down = mid + stride;
  const int gx = (up[2] + 2 * mid[2] + down[2]) - (up[0] + 2 * mid[0] + down[0]);
  const int gy = (down[0] + 2 * down[1] + down[2]) - (up[0] + 2 * up[1] + up[2]);
  return std::abs(gx) + std::abs(gy);
}

// The single-node algorithm: every frame of the whole image; returns the checksum and
// leaves the last frame in `last`.
std::int64_t serial_sobel(int n, int frames, std::vector<int>& last) {
  const int stride = n + 2;
  std::vector<std::uint8_t> img(static_cast<std::size_t>(stride) * stride, 0);
  last.assign(static_cast<std::size_t>(n) * n, 0);
  std::int64_t sum = 0;
  for (int f = 0; f < frames; ++f) {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) img[static_cast<std::size_t>(i + 1) * stride + j + 1] = pixel(i, j, f);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const int v = sobel_at(img.data(), stride, i, j);
        last[static_cast<std::size_t>(i) * n + j] = v;
        sum += v;
      }
  }
  return sum;
}

struct Dir {
  int dr, dc;
};
constexpr Dir kDirs[8] = {{-1, 0}, {1, 0}, {0, 1}, {0, -1}, {-1, 1}, {-1, -1}, {1, 1}, {1, -1}};

class Halo {
 public:
  Halo(Backend& b, int n, int frames, bool overlap, Breakdown& bd) : b_(b), n_(n), frames_(frames), overlap_(overlap), bd_(bd) {
    std::tie(pr_, pc_) = square_grid(b.ranks());
    ri_ = b.rank() / pc_;
    cj_ = b.rank() % pc_;
    rows_ = block_of(n, pr_, ri_);
    cols_ = block_of(n, pc_, cj_);
    h_ = rows_.second - rows_.first;
    w_ = cols_.second - cols_.first;
    stride_ = w_ + 2;
    img_.assign(static_cast<std::size_t>(h_ + 2) * stride_, 0);
    out_.assign(static_cast<std::size_t>(h_) * w_, 0);
  }

  std::string grid() const { return fmt::format("{}x{}", pr_, pc_); }
  std::string subimage() const { return fmt::format("{}x{}", h_, w_); }
  std::int64_t checksum() const { return checksum_; }
  const std::vector<int>& last() const { return out_; }
  Range rows() const { return rows_; }
  Range cols() const { return cols_; }

  double run(const RunStart& start) {
    checksum_ = 0;
    const double t0 = start();  // every rank at one instant (apps/common.h repeat_runs)
    for (int f = 0; f < frames_; ++f) frame(f);
    return now_seconds() - t0;
  }

 private:
  int neighbour(Dir d) const { return neighbour_of(b_.rank(), d); }
  int neighbour_of(int rank, Dir d) const {
    const int r = rank / pc_ + d.dr, c = rank % pc_ + d.dc;
    if (r < 0 || r >= pr_ || c < 0 || c >= pc_) return -1;
    return r * pc_ + c;
  }
  // Bytes of rank's edge towards d, 0 without a neighbour there.
  std::size_t edge_bytes_of(int rank, Dir d) const {
    if (neighbour_of(rank, d) < 0) return 0;
    const Range rows = block_of(n_, pr_, rank / pc_), cols = block_of(n_, pc_, rank % pc_);
    const int h = d.dr != 0 ? 1 : rows.second - rows.first, w = d.dc != 0 ? 1 : cols.second - cols.first;
    return static_cast<std::size_t>(h) * static_cast<std::size_t>(w);
  }
  std::uint8_t& at(int i, int j) { return img_[static_cast<std::size_t>(i + 1) * stride_ + j + 1]; }  // i, j in -1..h, -1..w

  // The strip of own pixels a neighbour in direction d needs, or the halo strip filled
  // from the neighbour in direction d: row i0..i1 x col j0..j1 (inclusive), own or halo.
  struct Strip {
    int i0, i1, j0, j1;
  };
  Strip edge(Dir d) const {  // own pixels next to direction d
    return {d.dr < 0 ? 0 : d.dr > 0 ? h_ - 1 : 0, d.dr < 0 ? 0 : d.dr > 0 ? h_ - 1 : h_ - 1,
            d.dc < 0 ? 0 : d.dc > 0 ? w_ - 1 : 0, d.dc < 0 ? 0 : d.dc > 0 ? w_ - 1 : w_ - 1};
  }
  Strip halo(Dir d) const {  // halo cells on the side of direction d
    return {d.dr < 0 ? -1 : d.dr > 0 ? h_ : 0, d.dr < 0 ? -1 : d.dr > 0 ? h_ : h_ - 1,
            d.dc < 0 ? -1 : d.dc > 0 ? w_ : 0, d.dc < 0 ? -1 : d.dc > 0 ? w_ : w_ - 1};
  }
  void pack(Strip s, std::vector<std::uint8_t>& buf) {
    buf.clear();
    for (int i = s.i0; i <= s.i1; ++i)
      for (int j = s.j0; j <= s.j1; ++j) buf.push_back(at(i, j));
  }
  void unpack(Strip s, const std::vector<std::uint8_t>& buf) {
    std::size_t k = 0;
    for (int i = s.i0; i <= s.i1; ++i)
      for (int j = s.j0; j <= s.j1; ++j) at(i, j) = buf[k++];
  }
  static std::size_t strip_size(Strip s) { return static_cast<std::size_t>(s.i1 - s.i0 + 1) * (s.j1 - s.j0 + 1); }

  // Rows i0..i1-1, columns j0..j1-1 of the output; locals only, so the loop vectorises
  // like the serial one (a member store could alias the image's bounds).
  static std::int64_t sobel_block(const std::uint8_t* img, int stride, int* out, int w, int i0, int i1, int j0, int j1) {
    std::int64_t sum = 0;
    for (int i = i0; i < i1; ++i)
      for (int j = j0; j < j1; ++j) {
        const int v = sobel_at(img, stride, i, j);
        out[static_cast<std::size_t>(i) * w + j] = v;
        sum += v;
      }
    return sum;
  }
  void compute(int i0, int i1, int j0, int j1) {
    if (i0 < i1 && j0 < j1) checksum_ += sobel_block(img_.data(), stride_, out_.data(), w_, i0, i1, j0, j1);
  }
  // Interior rows 1..h-2, cols 1..w-2, in `of` slices of rows.
  void interior_slice(int k, int of) {
    const int rows = std::max(0, h_ - 2);
    compute(1 + rows * k / of, 1 + rows * (k + 1) / of, 1, w_ - 1);
  }
  void border() {
    compute(0, std::min(1, h_), 0, w_);
    if (h_ > 1) compute(h_ - 1, h_, 0, w_);
    compute(1, h_ - 1, 0, std::min(1, w_));
    if (w_ > 1) compute(1, h_ - 1, w_ - 1, w_);
  }

  void frame(int f) {
    std::uint8_t* img = img_.data();
    const int stride = stride_, h = h_, w = w_, i0 = rows_.first, j0 = cols_.first;
    for (int i = 0; i < h; ++i)
      for (int j = 0; j < w; ++j) img[static_cast<std::size_t>(i + 1) * stride + j + 1] = pixel(i0 + i, j0 + j, f);
    std::vector<std::uint8_t> sendbuf, recvbuf;
    if (p2p_by_multicast(b_)) {  // no send/recv (cop): each exchange is collective, so no overlap
      for (int k = 0; k < 8; ++k) {
        const Dir d = kDirs[k];
        const Dir opposite{-d.dr, -d.dc};
        const int from = neighbour(opposite);
        if (neighbour(d) >= 0) pack(edge(d), sendbuf);
        recvbuf.resize(from >= 0 ? strip_size(halo(opposite)) : 0);
        exchange(b_, bd_, [&](int r) { return neighbour_of(r, d); }, [&](int r) { return edge_bytes_of(r, d); },
                 std::as_bytes(std::span(sendbuf)), from, std::as_writable_bytes(std::span(recvbuf)));
        if (from >= 0) unpack(halo(opposite), recvbuf);
      }
      interior_slice(0, 1);
      border();
      return;
    }
    for (int k = 0; k < 8; ++k) {
      const Dir d = kDirs[k];
      const Dir opposite{-d.dr, -d.dc};
      const int to = neighbour(d), from = neighbour(opposite);
      if (to >= 0) {
        pack(edge(d), sendbuf);
        bd_.time(Part::point_to_point, [&] { b_.send(to, std::as_bytes(std::span(sendbuf))); });
      }
      if (overlap_) interior_slice(k, 8);
      if (from >= 0) {
        const Strip s = halo(opposite);
        recvbuf.resize(strip_size(s));
        bd_.time(Part::point_to_point, [&] { b_.recv(from, std::as_writable_bytes(std::span(recvbuf))); });
        unpack(s, recvbuf);
      }
    }
    if (!overlap_) interior_slice(0, 1);
    border();
  }

  Backend& b_;
  int n_, frames_;
  bool overlap_;
  Breakdown& bd_;
  int pr_ = 1, pc_ = 1, ri_ = 0, cj_ = 0;
  Range rows_, cols_;
  int h_ = 0, w_ = 0, stride_ = 0;
  std::vector<std::uint8_t> img_;
  std::vector<int> out_;
  std::int64_t checksum_ = 0;
};

class HaloApp final : public Benchmark {
 public:
  std::string_view name() const override { return "halo"; }
  std::string_view description() const override {
    return "2-D Sobel halo exchange, 8 neighbours, overlapped (seed 002 Table 3); size = image side";
  }
  // send/recv where offered, else one-member multicasts (label p2p_via).
  std::vector<Op> needs() const override { return {}; }
  std::vector<std::size_t> default_sizes() const override { return {32, 64, 128}; }
  std::vector<ParamSpec> params() const override { return {{"frames", 100, 1, 1000000}, {"overlap", 1, 0, 1}}; }
  // The run tests' problem (copbench/bench.h): tiny, still checked against the serial answer.
  std::vector<std::size_t> smoke_sizes() const override { return {9}; }
  std::map<std::string, std::string> smoke_params() const override { return {{"frames", "3"}}; }

  void check_options(const RunParams& p) const override {
    Benchmark::check_options(p);
    check_sizes(p, "halo", "the image side", 1, 16384);
  }

  void run(Backend& b, const RunParams& params, Reporter& reporter) const override {
    check_options(params);
    require_p2p(b);
    const int frames = static_cast<int>(param_int(params, *this, "frames"));
    const bool overlap = param_int(params, *this, "overlap") == 1;
    for (std::size_t size : params.sizes.empty() ? default_sizes() : params.sizes) {
      const int n = static_cast<int>(size);
      auto [pr, pc] = square_grid(b.ranks());
      if (n < pr)
        throw std::invalid_argument(fmt::format("halo: a {}x{} image cannot be cut into a {}x{} grid", n, n, pr, pc));
      Breakdown bd;
      Halo halo(b, n, frames, overlap, bd);
      auto [summary, fractions] = measure_runs(b, params.timing, bd, [&](const RunStart& start) { return halo.run(start); });

      b.sync();
      double serial_seconds = 0;
      std::vector<int> reference;
      std::int64_t reference_sum = 0;
      if (b.rank() == 0)
        for (int r = 0; r < 3; ++r) {
          const double t0 = now_seconds();
          reference_sum = serial_sobel(n, frames, reference);
          const double t = now_seconds() - t0;
          if (r == 0 || t < serial_seconds) serial_seconds = t;
        }
      verify(b, halo, n, reference, reference_sum);
      std::vector<double> serial{serial_seconds};
      b.max_over_ranks(serial);

      PointResult p;
      p.name = point_name("halo", {{"image", std::to_string(n)}, {"frames", std::to_string(frames)}});
      p.counters["nodes"] = b.nodes();
      if (b.tasks_per_node() > 1) p.counters["ranks"] = b.ranks();
      p.counters["image"] = n;
      p.counters["frames"] = frames;
      p.counters["frac_computation"] = fractions[static_cast<std::size_t>(Part::computation)];
      p.counters["frac_point_to_point"] = fractions[static_cast<std::size_t>(Part::point_to_point)];
      p.counters["serial_us"] = serial[0] * 1e6;
      p.counters["speedup"] = summary.median > 0 ? serial[0] / summary.median : 0.0;
      p.labels["grid"] = halo.grid();
      p.labels["subimage"] = halo.subimage();
      p.labels["overlap"] = overlap && !p2p_by_multicast(b) ? "yes" : "no";
      p.labels["p2p_via"] = p2p_via(b);
      p.labels["verified"] = "serial-sobel";
      p.summary = std::move(summary);
      reporter.report(std::move(p));
    }
  }

 private:
  // Every node's checksum and last frame go to rank 0 (point-to-point or multicast).
  static void verify(Backend& b, const Halo& halo, int n, const std::vector<int>& reference, std::int64_t reference_sum) {
    auto [pr, pc] = square_grid(b.ranks());
    auto block_bytes = [&, pr = pr, pc = pc](int r) {
      Range rows = block_of(n, pr, r / pc), cols = block_of(n, pc, r % pc);
      return sizeof(std::int64_t) + sizeof(int) * static_cast<std::size_t>(rows.second - rows.first) * (cols.second - cols.first);
    };
    Breakdown unused;
    std::int64_t total = 0;
    long bad = 0;
    for (int r = 0; r < b.ranks(); ++r) {
      // The message: the checksum, then the last frame's block.
      std::vector<std::byte> msg;
      if (b.rank() == r) {
        std::int64_t sum = halo.checksum();
        msg.resize(block_bytes(r));
        std::memcpy(msg.data(), &sum, sizeof sum);
        if (!halo.last().empty()) std::memcpy(msg.data() + sizeof sum, halo.last().data(), msg.size() - sizeof sum);
      } else if (b.rank() == 0) {
        msg.resize(block_bytes(r));
      }
      if (r != 0)
        exchange(b, unused, [r](int x) { return x == r ? 0 : -1; }, [&, r](int x) { return x == r ? block_bytes(r) : 0; },
                 std::as_bytes(std::span(msg)), b.rank() == 0 ? r : -1, std::as_writable_bytes(std::span(msg)));
      if (b.rank() != 0) continue;
      std::int64_t sum = 0;
      std::memcpy(&sum, msg.data(), sizeof sum);
      total += sum;
      Range rows = block_of(n, pr, r / pc), cols = block_of(n, pc, r % pc);
      std::vector<int> block(static_cast<std::size_t>(rows.second - rows.first) * (cols.second - cols.first));
      if (!block.empty()) std::memcpy(block.data(), msg.data() + sizeof sum, block.size() * sizeof(int));
      const int w = cols.second - cols.first;
      for (int i = rows.first; i < rows.second; ++i)
        for (int j = cols.first; j < cols.second; ++j)
          if (block[static_cast<std::size_t>(i - rows.first) * w + (j - cols.first)] != reference[static_cast<std::size_t>(i) * n + j])
            ++bad;
    }
    if (b.rank() != 0) return;
    if (bad > 0 || total != reference_sum)
      throw std::runtime_error(fmt::format("halo: {} pixels of the last frame differ from the serial Sobel, checksum {} vs {}",
                                           bad, total, reference_sum));
  }
};

const RegisterWorkload<HaloApp> registered{WorkloadKind::application, 1030};  // copbench/bench.h

}  // namespace

}  // namespace copbench::apps
