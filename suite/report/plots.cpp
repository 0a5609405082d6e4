// Plots: which curves each family of points gets (time vs message size per node count,
// time vs nodes per size, like the thesis's figures in ch. VI), their gnuplot data and
// script, and gnuplot drawing them as PNG and SVG.
#include <algorithm>

#include <fmt/format.h>

#include "copbench/bench.h"
#include "copbench/process.h"
#include "copbench/results.h"
#include "report/report_parts.h"

namespace copbench::report {
namespace fs = std::filesystem;

namespace {

std::string size_text(double bytes) { return format_size(static_cast<std::size_t>(bytes)); }

std::string sanitize(std::string s) {
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-') ch = '-';
  return s;
}

void add_point(PlotSpec& p, const std::string& label, double x, double y) {
  if (!p.curves.count(label)) p.curve_order.push_back(label);
  p.curves[label].emplace_back(x, y);
}

// A curve's name. In a plot where some point ran with several tasks per node every
// curve says its placement and T ("mpi on-host T=2", "mpi inter-host T=1"), so points
// with T > 1 are never drawn on a curve of T = 1 points; other plots are as they were.
std::string curve_label(const CampaignResults& results, const PointMedian& m, bool tagged) {
  std::string s = results.label(m.mode);
  if (!tagged) return s;
  if (!m.placement.empty()) s += " " + m.placement;
  return s + " T=" + std::to_string(m.tasks);
}

bool any_tasks(const std::vector<const PointMedian*>& ms) {
  return std::any_of(ms.begin(), ms.end(), [](const PointMedian* m) { return m->tasks > 1; });
}

auto curve_key(const PointMedian* m) { return std::make_tuple(m->mode, m->tasks, placement_rank(m->placement)); }

// Where `nodes` emulated hosts outnumber the machine's cores, the title says how many
// share each core and the note why that matters.
void say_hosts_per_core(const CampaignResults& results, PlotSpec& p, int nodes) {
  if (!results.machine.crowded(nodes)) return;
  p.title += " — " + results.machine.text(nodes);
  p.note += (p.note.empty() ? "" : "; ") + std::string(HostsOnCores::kNote);
}

// The emulation's floor beside each cop curve that has one (cop_floor_of), drawn dashed:
// what the transport costs, so that the gap to the cop curve is the emulation's own.
void add_floor(const CampaignResults& results, PlotSpec& p, const std::vector<const PointMedian*>& sorted, bool tagged,
               bool vs_size) {
  bool any = false;
  for (auto* m : sorted)
    if (auto f = cop_floor_of(results, *m); f && (!vs_size || *m->bytes > 0)) {
      add_point(p, curve_label(results, *m, tagged) + " floor", vs_size ? *m->bytes : m->nodes, *f);
      any = true;
    }
  if (any)
    p.note += (p.note.empty() ? "" : "; ") +
              std::string("floor: the same operation through a bare controller process (the emulation benchmark)");
}

// Says in the plot's note how its collectives were timed (window, sync, loop) and how
// many window calls were invalid: a figure is never read without its method.
void say_method(PlotSpec& p, const std::vector<const PointMedian*>& sorted) {
  std::set<std::string> methods;
  long invalid = 0, calls = 0;
  for (auto* m : sorted) {
    if (m->method.empty()) continue;
    methods.insert(m->method);
    invalid += m->invalid_calls;
    calls += m->timed_calls;
  }
  if (methods.empty()) return;
  std::string text;
  for (const auto& m : methods) text += (text.empty() ? "" : "/") + m;
  text += " method";
  if (methods.count("window")) text += fmt::format(", {} of {} window calls invalid", invalid, calls);
  p.note += (p.note.empty() ? "" : "; ") + text;
}

// The points of one plot family, and its sizes and node counts.
struct PlotFamily {
  std::string name, campaign, profiles;
  std::vector<const PointMedian*> points;
  std::set<double> sizes;
  std::set<int> nodes;
};

// The traits of the workload whose points make up the family (copbench/bench.h).
ReportTraits traits_of(const PlotFamily& f) { return f.points.empty() ? ReportTraits{} : traits_of(*f.points.front()); }

std::string what_of(const PlotFamily& f) { return f.name + traits_of(f).time_is; }

// Time vs message size at `n` nodes; nullopt when no point has a size there.
std::optional<PlotSpec> size_plot(const CampaignResults& results, const PlotFamily& f, int n) {
  PlotSpec p;
  p.stem = sanitize(f.name) + "-vs-size-n" + std::to_string(n);
  p.title = fmt::format("{} vs message size, {} nodes — campaign {}, profile {}", what_of(f), n, f.campaign, f.profiles);
  p.xlabel = "message size [bytes]";
  p.ylabel = "time per operation [µs]";
  p.log_x = true;
  std::vector<const PointMedian*> sorted;
  for (auto* m : f.points)
    if (m->nodes == n && m->bytes) sorted.push_back(m);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) {
    return std::make_tuple(curve_key(a), *a->bytes) < std::make_tuple(curve_key(b), *b->bytes);
  });
  const bool tagged = any_tasks(sorted);
  bool dropped_zero = false;
  for (auto* m : sorted) {
    if (*m->bytes <= 0) {
      dropped_zero = true;
      continue;
    }
    add_point(p, curve_label(results, *m, tagged), *m->bytes, m->median_us);
  }
  for (auto* m : sorted)
    if (m->modelled_us && *m->bytes > 0)
      add_point(p, curve_label(results, *m, tagged) + " modelled", *m->bytes, *m->modelled_us);
  add_floor(results, p, sorted, tagged, true);
  if (dropped_zero) p.note = "0-byte points are in the tables, not on the logarithmic size axis";
  say_method(p, sorted);
  if (p.curves.empty()) return std::nullopt;
  say_hosts_per_core(results, p, n);
  return p;
}

// Time vs nodes at one size (or of an unsized family); nullopt when no point is there.
std::optional<PlotSpec> nodes_plot(const CampaignResults& results, const PlotFamily& f, std::optional<double> s) {
  const std::string nodes_axis = traits_of(f).nodes_axis;
  PlotSpec p;
  p.stem = sanitize(f.name) + "-vs-nodes" + (s ? "-" + sanitize(size_text(*s)) : "");
  p.title = fmt::format("{} vs {}{} — campaign {}, profile {}", what_of(f), nodes_axis,
                        s ? ", " + size_text(*s) + "B" : "", f.campaign, f.profiles);
  p.xlabel = nodes_axis;
  p.ylabel = "time per operation [µs]";
  std::vector<const PointMedian*> sorted;
  for (auto* m : f.points)
    if (!s || (m->bytes && *m->bytes == *s)) sorted.push_back(m);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) {
    return std::make_tuple(curve_key(a), a->nodes) < std::make_tuple(curve_key(b), b->nodes);
  });
  const bool tagged = any_tasks(sorted);
  for (auto* m : sorted) add_point(p, curve_label(results, *m, tagged), m->nodes, m->median_us);
  for (auto* m : sorted)
    if (m->modelled_us) add_point(p, curve_label(results, *m, tagged) + " modelled", m->nodes, *m->modelled_us);
  add_floor(results, p, sorted, tagged, false);
  say_method(p, sorted);
  if (p.curves.empty()) return std::nullopt;
  int most = 0;
  for (auto* m : sorted) most = std::max(most, m->nodes);
  say_hosts_per_core(results, p, most);
  return p;
}

std::string gp_quote(const std::string& s) {
  std::string e;
  for (char ch : s) e += ch == '"' || ch == '\\' ? std::string("\\") + ch : std::string(1, ch);
  return "\"" + e + "\"";
}

// Runs a program in `cwd` with stdout and stderr into `output`: its exit code (127 when
// it cannot start, 128 + N when signal N ended it).
int run_program(const std::vector<std::string>& argv, const fs::path& cwd, const fs::path& output) {
  ProcessOptions o;
  o.working_dir = cwd;
  o.output_file = output;
  return run_process(argv, o).status();
}

}  // namespace

std::vector<PlotSpec> plan_plots(const CampaignResults& results, const std::string& campaign_name) {
  std::vector<PlotSpec> plots;
  std::set<std::string> families;
  for (const auto& m : results.medians) families.insert(m.plot_family);
  for (const auto& fam : families) {
    PlotFamily f{fam, campaign_name, results.profile_text(), {}, {}, {}};
    for (const auto& m : results.medians)
      if (m.plot_family == fam) f.points.push_back(&m);
    for (auto* m : f.points) {
      if (m->bytes) f.sizes.insert(*m->bytes);
      f.nodes.insert(m->nodes);
    }
    // vs size, one plot per node count.
    if (f.sizes.size() > 1)
      for (int n : f.nodes)
        if (auto p = size_plot(results, f, n)) plots.push_back(std::move(*p));
    // vs nodes, one plot per size (the smallest and the largest when there are many).
    if (f.nodes.size() > 1) {
      std::vector<std::optional<double>> at;
      if (f.sizes.empty()) at.push_back(std::nullopt);
      else {
        at.push_back(*f.sizes.begin());
        if (f.sizes.size() > 1) at.push_back(*f.sizes.rbegin());
      }
      for (const auto& s : at)
        if (auto p = nodes_plot(results, f, s)) plots.push_back(std::move(*p));
    }
  }
  return plots;
}

std::string gnuplot_data(const PlotSpec& p) {
  std::string dat;
  for (const auto& label : p.curve_order) {
    dat += "# " + label + "\n";
    for (const auto& [x, y] : p.curves.at(label)) dat += fmt::format("{} {}\n", x, y);
    dat += "\n\n";
  }
  return dat;
}

// The nodes axis: a tic at each node count measured; when they double up to many
// (2 .. 64), a log2 axis, or the small counts would crowd at its left end.
static std::string node_axis(const PlotSpec& p) {
  std::set<double> xs;
  for (const auto& label : p.curve_order)
    for (const auto& [x, y] : p.curves.at(label)) xs.insert(x);
  std::vector<std::string> tics;
  for (double x : xs) tics.push_back(fmt::format("{:g}", x));
  const std::string at = "set xtics (" + fmt::format("{}", fmt::join(tics, ", ")) + ")\n";
  if (!xs.empty() && *xs.begin() > 0 && *xs.rbegin() / *xs.begin() >= 16)
    return fmt::format("set logscale x 2\nset xrange [{:g}:{:g}]\n", *xs.begin() / 1.25, *xs.rbegin() * 1.25) + at;
  return at + "set offsets 0.2, 0.2, 0, 0\n";
}

std::string gnuplot_script(const PlotSpec& p) {
  double ymin = 1e300, ymax = 0;
  for (const auto& label : p.curve_order)
    for (const auto& [x, y] : p.curves.at(label))
      if (y > 0) ymin = std::min(ymin, y), ymax = std::max(ymax, y);
  std::string gp;
  gp += "# " + p.title + " (generated by copbench report)\n";
  gp += "set encoding utf8\n";
  gp += "set title " + gp_quote(p.title) + " noenhanced\n";
  gp += "set xlabel " + gp_quote(p.xlabel) + " noenhanced\n";
  gp += "set ylabel " + gp_quote(p.ylabel) + " noenhanced\n";
  gp += "set grid\nset key outside right top noenhanced\n";
  if (p.log_x) gp += p.x_bytes ? "set logscale x 2\nset format x \"%.0b %BB\"\n" : "set logscale x 2\nset format x \"%g\"\n";
  else gp += node_axis(p);
  if (ymax > 0 && ymax / ymin > 20) gp += "set logscale y 10\nset format y \"%g\"\n";
  else gp += "set yrange [0:*]\n";
  std::string plot = "plot ";
  for (std::size_t i = 0; i < p.curve_order.size(); ++i) {
    bool modelled = p.curve_order[i].find(" modelled") != std::string::npos ||
                    p.curve_order[i].find(" floor") != std::string::npos;
    plot += fmt::format("{}'{}.dat' index {} using 1:2 with linespoints lw 2 pt {} {}title {}", i ? ", \\\n     " : "",
                        p.stem, i, static_cast<int>(i % 12) + 1, modelled ? "dt 2 " : "", gp_quote(p.curve_order[i]));
  }
  gp += "set terminal pngcairo size 1000,600 font \"DejaVu Sans,10\"\n";
  gp += "set output '" + p.stem + ".png'\n" + plot + "\n";
  gp += "set terminal svg size 1000,600 font \"DejaVu Sans,10\"\n";
  gp += "set output '" + p.stem + ".svg'\nreplot\nunset output\n";
  return gp;
}

std::vector<std::pair<std::string, std::string>> draw_plots(const std::vector<PlotSpec>& plots, const fs::path& out,
                                                            ReportOutput& result) {
  std::vector<std::pair<std::string, std::string>> drawn;
  const fs::path dir = out / "plots";
  fs::create_directories(dir);
  if (run_program({"gnuplot", "--version"}, dir, "/dev/null") != 0) {
    result.plot_problem = "gnuplot not found (install gnuplot-nox): plots not drawn";
    return drawn;
  }
  for (const auto& p : plots) {
    write_file_atomically(dir / (p.stem + ".dat"), gnuplot_data(p));
    write_file_atomically(dir / (p.stem + ".gp"), gnuplot_script(p));
    const fs::path err = dir / (p.stem + ".err");
    if (run_program({"gnuplot", p.stem + ".gp"}, dir, err) != 0) {
      result.plot_problem = fmt::format("gnuplot failed on {} (see {}.err)", (dir / (p.stem + ".gp")).string(), p.stem);
      continue;
    }
    std::error_code ec;
    fs::remove(err, ec);
    result.plots.push_back(dir / (p.stem + ".png"));
    drawn.emplace_back(p.stem, p.title + (p.note.empty() ? "" : " (" + p.note + ")"));
  }
  return drawn;
}

}  // namespace copbench::report
