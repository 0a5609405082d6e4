// The report's builders on fixed data: the summary table of a fixed set of points, a
// seed table's pairing on a fixed seed table, the gnuplot data and script of a fixed
// plot, and read_csv (libcsv) on good and bad files. Expected cells are worked out by
// hand from the fixed medians (e.g. pvm 400 µs ÷ cop modelled 5 µs = 80.0x).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

#include "copbench/csv.h"
#include "report/report_parts.h"
#include "report/validation.h"

namespace copbench::report {
namespace {
namespace fs = std::filesystem;
using Row = std::vector<std::string>;

// A temporary directory removed at the end of each test.
class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("copbench-report-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  // The message read_csv throws on `text`.
  std::string csv_error(const std::string& text) {
    fs::path p = write("bad.csv", text);
    try {
      read_csv(p);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "no error";
  }
  fs::path dir_;
};

PointMedian point(const std::string& bench, const std::string& run_name, BackendMode mode, int nodes, double median,
                  std::optional<double> bytes = std::nullopt) {
  PointMedian m;
  m.benchmark = bench;
  m.run_name = run_name;
  m.family = m.plot_family = run_name.substr(0, run_name.rfind('/'));
  m.mode = std::move(mode);
  m.nodes = nodes;
  m.median_us = median;
  m.bytes = bytes;
  return m;
}

const BackendMode kCop{"cop", "direct", "", "native"}, kPvm{"pvm", "direct", "", "native"}, kMpi{"mpi", "", "", "native"};

// barrier on cop (modelled 5 µs), pvm and mpi at 4 nodes, mpi also at 2 (pvm failed
// there); echo on mpi at 2 nodes, 8 B and 1 KiB.
CampaignResults fixed_results() {
  CampaignResults r;
  r.medians.push_back(point("barrier", "barrier/nodes:4", kCop, 4, 50));
  r.medians.back().modelled_us = 5;
  r.medians.push_back(point("barrier", "barrier/nodes:4", kPvm, 4, 400));
  r.medians.push_back(point("barrier", "barrier/nodes:4", kMpi, 4, 20));
  r.medians.back().ci_met = false;
  r.medians.push_back(point("barrier", "barrier/nodes:2", kMpi, 2, 10));
  r.medians.push_back(point("echo", "echo/size:8", kMpi, 2, 5, 8));
  r.medians.push_back(point("echo", "echo/size:1024", kMpi, 2, 12.5, 1024));
  PointStatus failed;
  failed.point = "barrier.pvm-direct.n2.native";
  failed.benchmark = "barrier";
  failed.status = "failed";
  failed.mode = kPvm;
  failed.nodes = 2;
  r.statuses.push_back(failed);
  r.index_modes();
  return r;
}

TEST_F(ReportTest, SummaryTableOfFixedPoints) {
  ReportTable t = summary_table(fixed_results(), "fixed");
  EXPECT_EQ(t.header, (Row{"benchmark", "point", "nodes", "cop/direct µs", "pvm/direct µs", "mpi µs", "cop modelled µs",
                           "pvm ÷ cop", "mpi ÷ cop", "armci ÷ cop"}));
  ASSERT_EQ(t.rows.size(), 4u);
  // echo before barrier (the workloads' declared order, copbench/bench.h), small sizes and
  // node counts first; a status names a missing cell; `!` where the CI target was missed.
  EXPECT_EQ(t.rows[0], (Row{"echo", "echo/size:8", "2", "—", "—", "5.00", "—", "—", "—", "—"}));
  EXPECT_EQ(t.rows[1], (Row{"echo", "echo/size:1024", "2", "—", "—", "12.50", "—", "—", "—", "—"}));
  EXPECT_EQ(t.rows[2], (Row{"barrier", "barrier/nodes:2", "2", "—", "failed", "10.00", "—", "—", "—", "—"}));
  EXPECT_EQ(t.rows[3], (Row{"barrier", "barrier/nodes:4", "4", "50.00", "400.0", "20.00 !", "5.00", "80.0x", "4.00x", "—"}));
  EXPECT_NE(t.description.find("campaign fixed"), std::string::npos);
  EXPECT_FALSE(md_table_v(fixed_results()).has_value());  // no md point, no Table V
}

TEST_F(ReportTest, TableMarkdownAndCsvText) {
  ReportTable t;
  t.title = "T";
  t.header = {"a", "b|c"};
  t.rows = {{"x,y", "say \"hi\""}};
  t.notes = {"n"};
  EXPECT_EQ(t.markdown(), "## T\n\n| a | b\\|c |\n| --- | --: |\n| x,y | say \"hi\" |\n\n- n\n");
  EXPECT_EQ(t.csv(), "a,b|c\n\"x,y\",\"say \"\"hi\"\"\"\n");
}

TEST_F(ReportTest, SeedTablePairingOnFixedSeedTable) {
  fs::path csv = write("t.csv",
                       "source,table,row,column,value,unit,benchmark,point,nodes,metric,backend\n"
                       "# a comment line\n"
                       "seed test,t,Barrier,libpvm µs,300,us,barrier,barrier/nodes:{nodes},5,median,pvm\n"
                       "seed test,t,Barrier,libcop µs,4,us,barrier,barrier/nodes:{nodes},5,median,cop\n"
                       "\n"
                       "seed test,t,\"Echo 1K ÷ 8, mpi\",factor,2.5,x,echo,echo/size:1024,2,ratio:echo/size:8,mpi\n");
  std::vector<SeedCell> cells = load_seed_cells(csv);
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_EQ(cells[2].row, "Echo 1K ÷ 8, mpi");
  EXPECT_DOUBLE_EQ(cells[2].value, 2.5);
  EXPECT_EQ(cells[0].nodes, 5);

  ReportTable t = seed_table(fixed_results(), "t", cells);
  EXPECT_EQ(t.source, "seed test");
  EXPECT_EQ(t.header, (Row{"row", "published libpvm µs", "published libcop µs", "published factor", "ours cop/direct",
                           "ours pvm/direct", "ours mpi", "cop modelled µs", "pvm ÷ cop", "mpi ÷ cop", "armci ÷ cop",
                           "pvm ÷ published libpvm µs", "cop ÷ published libcop µs", "mpi ÷ published factor", "unit",
                           "note"}));
  ASSERT_EQ(t.rows.size(), 2u);
  // The seed's 5 nodes were not measured: ours at the nearest, 4. cop ÷ published uses
  // cop's modelled time (5 ÷ 4); pvm's measured one (400 ÷ 300).
  EXPECT_EQ(t.rows[0], (Row{"Barrier", "300.0", "4.00", "", "50.00", "400.0", "20.00", "5.00", "80.0x", "4.00x", "—",
                            "1.33x", "1.25x", "—", "us", "ours at 4 nodes (seed: 5)"}));
  // A ratio row divides two points of one backend at one node count: 12.5 ÷ 5 on mpi; cop
  // offers echo (cop_write & cop_read) but the results have no cop echo point, nor pvm.
  EXPECT_EQ(t.rows[1], (Row{"Echo 1K ÷ 8, mpi", "", "", "2.50", "—", "—", "2.50", "—", "—", "—", "—", "—", "—", "1.00x",
                            "x", ""}));
  ASSERT_EQ(t.pairing.size(), 6u);
  EXPECT_EQ(t.pairing[0], (Row{"Barrier", "native", "cop/direct", "4", "median", "barrier/nodes:4", "", "50.00"}));
  EXPECT_EQ(t.pairing[1], (Row{"Barrier", "native", "pvm/direct", "4", "median", "barrier/nodes:4", "", "400.0"}));
  EXPECT_EQ(t.pairing[2], (Row{"Barrier", "native", "mpi", "4", "median", "barrier/nodes:4", "", "20.00"}));
  EXPECT_EQ(t.pairing[3],
            (Row{"Echo 1K ÷ 8, mpi", "native", "cop/direct", "2", "ratio:echo/size:8", "echo/size:1024", "echo/size:8",
                 "—"}));
  EXPECT_EQ(t.pairing[5],
            (Row{"Echo 1K ÷ 8, mpi", "native", "mpi", "2", "ratio:echo/size:8", "echo/size:1024", "echo/size:8", "2.50"}));
}

TEST_F(ReportTest, SeedCellErrorsNameFileAndLine) {
  const std::string head = "source,table,row,column,value,unit,benchmark,point,nodes,metric,backend,tolerance\n";
  auto error_of = [&](const std::string& line) {
    try {
      load_seed_cells(write("s.csv", head + "s,t,r,c,1,us,barrier,barrier/nodes:2,2,median,mpi,\n" + line));
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string at = (dir_ / "s.csv").string() + ":3: ";
  EXPECT_EQ(error_of("s,t,r,c,abc,us,barrier,p,2,median,mpi,\n"), at + "value 'abc' is not a number");
  EXPECT_EQ(error_of("s,t,r,c,1,us,nope,p,2,median,mpi,\n"), at + "unknown benchmark 'nope'");
  EXPECT_EQ(error_of("s,t,r,c,1,us,barrier,p,2,median,mpi,10%\n").rfind(at + "tolerance '10%' is a percentage", 0), 0u);
  EXPECT_EQ(error_of("s,t,r,c,1,us,barrier,p,2,median,mpi\n"), at + "11 fields, the header has 12");
  EXPECT_EQ(error_of(""), "no error");
}

TEST_F(ReportTest, SpreadAndVerdict) {
  std::string why;
  EXPECT_EQ(parse_spread("3", why), std::make_pair(3.0, 3.0));
  EXPECT_EQ(parse_spread("-1+2.5", why), std::make_pair(1.0, 2.5));
  EXPECT_FALSE(parse_spread("+2", why).has_value());
  EXPECT_NE(why.find("neither X"), std::string::npos);
  SeedCell pub;
  pub.value = 100;
  pub.spread = std::make_pair(10.0, 20.0);
  EXPECT_EQ(spread_verdict(90, pub), "within the seed's spread");
  EXPECT_EQ(spread_verdict(120, pub), "within the seed's spread");
  EXPECT_EQ(spread_verdict(125, pub), "outside (ours 1.25x the seed)");
  EXPECT_EQ(spread_verdict(89, pub), "outside (ours 0.89x the seed)");
}

TEST_F(ReportTest, PlansOfFixedPoints) {
  std::vector<PlotSpec> plots = plan_plots(fixed_results(), "fixed");
  ASSERT_EQ(plots.size(), 2u);
  EXPECT_EQ(plots[0].stem, "barrier-vs-nodes");
  EXPECT_EQ(plots[0].title, "barrier vs nodes — campaign fixed, profile native");
  EXPECT_EQ(plots[0].curve_order, (Row{"cop/direct", "pvm/direct", "mpi", "cop/direct modelled"}));
  EXPECT_EQ(plots[0].curves.at("mpi"), (std::vector<std::pair<double, double>>{{2, 10}, {4, 20}}));
  EXPECT_EQ(plots[0].curves.at("cop/direct modelled"), (std::vector<std::pair<double, double>>{{4, 5}}));
  EXPECT_EQ(plots[1].stem, "echo-vs-size-n2");
  EXPECT_TRUE(plots[1].log_x);
  EXPECT_EQ(plots[1].curves.at("mpi"), (std::vector<std::pair<double, double>>{{8, 5}, {1024, 12.5}}));
}

// A workload the report has never heard of, declaring how it is shown (copbench/bench.h
// ReportTraits): its plot's title and axis come from that declaration, not its name.
class SpinWait final : public Benchmark {
 public:
  std::string_view name() const override { return "spin-wait"; }
  std::string_view description() const override { return "a test's workload"; }
  std::vector<Op> needs() const override { return {}; }
  ReportTraits report_traits() const override {
    ReportTraits t;
    t.time_is = " (one wait)";
    t.nodes_axis = "waiting nodes";
    return t;
  }
  void run(Backend&, const RunParams&, Reporter&) const override {}
};

TEST_F(ReportTest, PlotsSayWhatTheWorkloadDeclares) {
  static const SpinWait spin;
  if (!find_benchmark(spin.name())) register_workload(spin, WorkloadKind::benchmark, 999);
  CampaignResults r;
  r.profiles = {"native"};
  for (int n : {2, 4}) {
    r.medians.push_back(point("spin-wait", "spin/nodes:" + std::to_string(n), BackendMode{"mpi", "", "", "native"}, n, n));
    r.medians.push_back(point("", "unknown/nodes:" + std::to_string(n), BackendMode{"mpi", "", "", "native"}, n, n));
  }
  r.index_modes();
  std::vector<PlotSpec> plots = plan_plots(r, "traits");
  ASSERT_EQ(plots.size(), 2u);
  EXPECT_EQ(plots[0].title, "spin (one wait) vs waiting nodes — campaign traits, profile native");
  EXPECT_EQ(plots[0].xlabel, "waiting nodes");
  EXPECT_EQ(plots[1].title, "unknown vs nodes — campaign traits, profile native");  // no workload: no traits
  EXPECT_EQ(plots[1].xlabel, "nodes");
}

// barrier on mpi at 2, 4 and 64 nodes of an emulated cluster on a 2-core machine: 4 and
// 64 hosts outnumber the cores (2 and 32 per core), 2 do not.
CampaignResults crowded_results(bool emulated) {
  CampaignResults r;
  r.machine.cpus = 2;
  r.machine.emulated = emulated;
  for (int n : {2, 4, 64}) r.medians.push_back(point("barrier", "barrier/nodes:" + std::to_string(n), kMpi, n, 10.0 * n));
  r.index_modes();
  return r;
}

TEST_F(ReportTest, HostsPerCoreOfAnEmulatedCluster) {
  const std::string note = HostsOnCores::kNote;
  ReportTable t = summary_table(crowded_results(true), "scale");
  EXPECT_EQ(t.header, (Row{"benchmark", "point", "nodes", "emulated hosts per core", "mpi µs", "cop modelled µs",
                           "pvm ÷ cop", "mpi ÷ cop", "armci ÷ cop"}));
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[0], (Row{"barrier", "barrier/nodes:2", "2", "—", "20.00", "—", "—", "—", "—"}));
  EXPECT_EQ(t.rows[1], (Row{"barrier", "barrier/nodes:4", "4", "2", "40.00", "—", "—", "—", "—"}));
  EXPECT_EQ(t.rows[2], (Row{"barrier", "barrier/nodes:64", "64", "32", "640.0", "—", "—", "—", "—"}));
  ASSERT_FALSE(t.notes.empty());
  EXPECT_NE(t.notes.back().find("64 emulated hosts on 2 cores: 32 per core"), std::string::npos) << t.notes.back();
  EXPECT_NE(t.notes.back().find(note), std::string::npos);

  std::vector<PlotSpec> plots = plan_plots(crowded_results(true), "scale");
  ASSERT_EQ(plots.size(), 1u);
  EXPECT_EQ(plots[0].title, "barrier vs nodes — campaign scale, profile native — 64 emulated hosts on 2 cores: 32 per core");
  EXPECT_EQ(plots[0].note, note);

  // Real hosts (not emulated): no column, no annotation, whatever the head node's cores.
  ReportTable real = summary_table(crowded_results(false), "scale");
  EXPECT_EQ(real.header[3], "mpi µs");
  EXPECT_EQ(real.rows[2][3], "640.0");
  std::vector<PlotSpec> real_plots = plan_plots(crowded_results(false), "scale");
  ASSERT_EQ(real_plots.size(), 1u);
  EXPECT_EQ(real_plots[0].title, "barrier vs nodes — campaign scale, profile native");
  EXPECT_EQ(real_plots[0].note, "");
}

TEST_F(ReportTest, HostsPerCoreFromTheManifest) {
  HostsOnCores h = hosts_on_cores(nlohmann::json::parse(
      R"({"machine": {"cpus": 2}, "cluster": {"name": "inventory.yml", "size": 64, "emulated": true}})"));
  EXPECT_EQ(h.cpus, 2);
  EXPECT_TRUE(h.emulated);
  EXPECT_FALSE(h.crowded(2));
  EXPECT_EQ(h.text(2), "");
  EXPECT_EQ(h.per_core(5), "2.5");
  EXPECT_EQ(h.text(16), "16 emulated hosts on 2 cores: 8 per core");
  // A manifest from before the field, or of real hosts: nothing to say.
  EXPECT_FALSE(hosts_on_cores(nlohmann::json::parse(R"({"machine": {"cpus": 2}, "cluster": {"size": 64}})")).crowded(64));
  EXPECT_FALSE(hosts_on_cores(nlohmann::json::parse(R"({"cluster": {"emulated": true}})")).crowded(64));
  // Every profile simulated (the what-if campaign on the local cluster): no host was
  // emulated; one live profile beside them and the hosts were.
  const auto with_profiles = [](const char* profiles) {
    return hosts_on_cores(nlohmann::json::parse(
        std::string(R"({"machine": {"cpus": 2}, "cluster": {"size": 8, "emulated": true}, "profiles": )") + profiles + "}"));
  };
  EXPECT_FALSE(with_profiles(R"(["simulated:present", "simulated:thesis"])").crowded(4096));
  EXPECT_TRUE(with_profiles(R"(["simulated:present", "native"])").crowded(8));
}

TEST_F(ReportTest, GnuplotDataAndScriptOfFixedPlot) {
  PlotSpec p;
  p.stem = "echo-vs-size-n2";
  p.title = "echo \"latency\"";
  p.xlabel = "message size [bytes]";
  p.ylabel = "time per operation [µs]";
  p.log_x = true;
  p.curve_order = {"mpi", "mpi modelled"};
  p.curves["mpi"] = {{8, 5}, {1024, 12.5}};
  p.curves["mpi modelled"] = {{8, 1}, {1024, 2}};
  EXPECT_EQ(gnuplot_data(p), "# mpi\n8 5\n1024 12.5\n\n\n# mpi modelled\n8 1\n1024 2\n\n\n");
  // y from 1 to 12.5 (< 20x): a linear y axis from 0.
  EXPECT_EQ(gnuplot_script(p),
            "# echo \"latency\" (generated by copbench report)\n"
            "set encoding utf8\n"
            "set title \"echo \\\"latency\\\"\" noenhanced\n"
            "set xlabel \"message size [bytes]\" noenhanced\n"
            "set ylabel \"time per operation [µs]\" noenhanced\n"
            "set grid\nset key outside right top noenhanced\n"
            "set logscale x 2\nset format x \"%.0b %BB\"\n"
            "set yrange [0:*]\n"
            "set terminal pngcairo size 1000,600 font \"DejaVu Sans,10\"\n"
            "set output 'echo-vs-size-n2.png'\n"
            "plot 'echo-vs-size-n2.dat' index 0 using 1:2 with linespoints lw 2 pt 1 title \"mpi\", \\\n"
            "     'echo-vs-size-n2.dat' index 1 using 1:2 with linespoints lw 2 pt 2 dt 2 title \"mpi modelled\"\n"
            "set terminal svg size 1000,600 font \"DejaVu Sans,10\"\n"
            "set output 'echo-vs-size-n2.svg'\nreplot\nunset output\n");
  // Over 20x between the smallest and the largest time: a logarithmic y axis.
  p.curves["mpi"] = {{8, 1}, {1024, 100}};
  EXPECT_NE(gnuplot_script(p).find("set logscale y 10\n"), std::string::npos);
}

// ------------------------------------------------------------------ read_csv

TEST_F(ReportTest, CsvGoodFile) {
  fs::path p = write("good.csv",
                     "a,b,c\n"
                     "# a comment, with \"a quote\n"
                     "1, two ,\"th,ree\"\n"
                     "\n"
                     "\"x\"\"y\",\"multi\nline\",\r\n"
                     "last,,row");
  CsvFile f = read_csv(p);
  EXPECT_EQ(f.header, (Row{"a", "b", "c"}));
  ASSERT_EQ(f.records.size(), 3u);
  EXPECT_EQ(f.records[0].line, 3);
  EXPECT_EQ(f.records[0].fields, (Row{"1", " two ", "th,ree"}));  // spaces kept: a field is what the file holds
  EXPECT_EQ(f.records[1].line, 5);
  EXPECT_EQ(f.records[1].fields, (Row{"x\"y", "multi\nline", ""}));
  EXPECT_EQ(f.records[2].line, 7);
  EXPECT_EQ(f.records[2].fields, (Row{"last", "", "row"}));
}

TEST_F(ReportTest, CsvBadFilesNameFileAndLine) {
  const std::string at = (dir_ / "bad.csv").string();
  EXPECT_EQ(csv_error("a,b\n1,2\n3,\"open\n4,5\n"), at + ":3: unterminated quoted field");
  EXPECT_EQ(csv_error("a,b\n1,2\n3\n"), at + ":3: 1 fields, the header has 2");
  EXPECT_EQ(csv_error("a,b\n1,2,3\n"), at + ":2: 3 fields, the header has 2");
  EXPECT_EQ(csv_error("a,b\n1,x\"y\n"),
            at + ":2: malformed CSV (a quote inside an unquoted field, or text after a closing quote)");
  EXPECT_EQ(csv_error("a,b\n\"1\"2,3\n"),
            at + ":2: malformed CSV (a quote inside an unquoted field, or text after a closing quote)");
  // A quote left open on line 2 runs into line 3, where the next quote closes it.
  EXPECT_EQ(csv_error("a,b\n\"1,2\n\"3\",4\n"),
            at + ":2: malformed CSV: a quoted field opened on this line is still open on line 3");
  EXPECT_EQ(csv_error("# only a comment\n\n"), at + ": no header line");
  try {
    read_csv(dir_ / "missing.csv", "seed table");
    ADD_FAILURE() << "no error on a missing file";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read seed table " + (dir_ / "missing.csv").string());
  }
}

}  // namespace
}  // namespace copbench::report

namespace copbench::report {
namespace {

// A sim-cop point of the simulation table (profile simulated:thesis).
PointMedian simcop_point(const std::string& family, const std::string& run_name, int nodes, double us, bool loop = false) {
  PointMedian m;
  m.plot_family = family;
  m.run_name = run_name;
  m.mode.backend = "sim-cop";
  m.mode.profile = "simulated:thesis";
  m.nodes = nodes;
  m.median_us = us;
  m.loop = loop;
  return m;
}

// sim-cop beside the libcop-call model, ch. VI's expression beside it; a point more than
// 1 % off gets a note saying why; loop-method points are left out and said so.
TEST(ValidationTable, SimCopAgainstTheLibcopCallModel) {
  CampaignResults r;
  r.medians = {simcop_point("barrier", "barrier/nodes:2", 2, 0.95),        // = the model's 95 cycles
               simcop_point("barrier", "barrier/nodes:128", 128, 11.0),    // two levels, 5.8 % above 10.40
               simcop_point("barrier", "barrier/method:loop/nodes:2", 2, 0.84, true)};
  const auto t = validation_table(r, r);
  ASSERT_TRUE(t.has_value());
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[0], (std::vector<std::string>{"sim-cop vs libcop-call model", "barrier/nodes:2", "thesis", "2", "0.95",
                                                  "0.95", "modelled (libcop call)", "+0.0 %", "0.58", ""}));
  EXPECT_EQ(t->rows[1][5], "10.40");
  EXPECT_EQ(t->rows[1][8], "10.25");  // ch. VI's two-level expression
  EXPECT_EQ(t->rows[1][9], "[1]");
  const std::string notes = [&] {
    std::string s;
    for (const auto& n : t->notes) s += n + "\n";
    return s;
  }();
  EXPECT_NE(notes.find("libcop-call model (cop/model/libcop_call.h)"), std::string::npos) << notes;
  EXPECT_NE(notes.find("loop-method points are not compared"), std::string::npos) << notes;
  EXPECT_NE(notes.find("[1] barrier/nodes:128 at 128 nodes: two levels:"), std::string::npos) << notes;
  EXPECT_DOUBLE_EQ(cop_model_us(r.medians[0]).value(), 0.58);
  EXPECT_DOUBLE_EQ(cop_libcop_call_us(r.medians[0]).value(), 0.95);
}

// A sim-cop point simulated the COP of its platform (cop:* props): it is drawn on that
// platform's plot only, beside the libcop-call model of that COP computed from the point's
// context (present: 1 ns clock, a 500-cycle flight; worked by the model: 1.04 us at 2
// nodes, the thesis's 0.95), and smpi's on its own.
TEST(ValidationPlots, EachSimulatedPointOnItsPlatformsPlot) {
  CampaignResults r;
  PointMedian smpi = simcop_point("barrier", "barrier/nodes:2", 2, 40.0);
  smpi.mode.backend = "smpi";
  smpi.mode.profile = "simulated:present";
  PointMedian present = simcop_point("barrier", "barrier/nodes:2", 2, 1.04);
  present.mode.profile = "simulated:present";
  present.settings = {{"cop_clock_ns", "1"},   {"cop_link_bytes_per_s", "1.25e+10"}, {"cop_flight_cycles", "500"},
                      {"cop_t_cn_cop", "2"},   {"cop_t_cop_cn", "2"},                {"cop_t_op_int", "3"},
                      {"cop_t_op_fp", "7"},    {"cop_full_duplex", "true"}};
  r.medians = {simcop_point("barrier", "barrier/nodes:2", 2, 0.95), smpi, present};
  const std::vector<PlotSpec> plots = validation_plots(r, CampaignResults{}, "c");
  ASSERT_EQ(plots.size(), 2u);  // thesis and present
  for (const PlotSpec& p : plots) {
    const bool on_present = p.stem.find("present") != std::string::npos;
    const std::string platform = on_present ? "present" : "thesis";
    EXPECT_EQ(p.curves.count("sim-cop simulated (" + platform + ")"), 1u) << p.stem;
    EXPECT_EQ(p.curves.count("smpi simulated (present)"), on_present ? 1u : 0u) << p.stem;
    EXPECT_EQ(p.curves.count("cop modelled (libcop call, " + platform + "'s COP)"), 1u) << p.stem;
  }
  EXPECT_DOUBLE_EQ(cop_libcop_call_us(r.medians[0]).value(), 0.95);
  EXPECT_NEAR(cop_libcop_call_us(present).value(), 1.04, 0.005);
}

// The emulation's floor (the emulation benchmark): its table row from the point's counters
// and context, copd's CPU "—" where it was not read, and the floor put beside cop's barrier
// in the summary and the nodes plot (worked by hand: 150 ÷ 100 = 1.50x), never beside mpi.
TEST(EmulationFloor, TableSummaryAndPlotCarryTheFloor) {
  CampaignResults r;
  for (int n : {2, 4}) {
    PointMedian e = point("emulation", "emulation/barrier/nodes:" + std::to_string(n), kCop, n, 60.0 * n);
    e.counters = {{"floor_us", 40.0 * n}, {"cop_over_floor", 1.5}, {"floor_cpu_us_per_channel", 8}};
    if (n == 2) e.counters["copd_cpu_us_per_channel"] = 12, e.counters["copd_cpu_over_floor"] = 1.5;
    // The window method's figures (a run that timed by it): 90 ÷ 30 = 3.00x at 2 nodes.
    if (n == 2) e.counters["window_us"] = 90, e.counters["floor_window_us"] = 30, e.counters["cop_over_floor_window"] = 3;
    e.settings = {{"copd_io_threads", "4"}, {"copd_poll", "default"}, {"cop_poll_us", "100"}};
    r.medians.push_back(e);
  }
  r.medians.push_back(point("barrier", "barrier/nodes:4", kCop, 4, 150));
  r.medians.push_back(point("barrier", "barrier/nodes:4", kMpi, 4, 20));
  r.index_modes();

  auto t = emulation_table(r);
  ASSERT_TRUE(t.has_value());
  ASSERT_EQ(t->rows.size(), 2u);
  const auto col = [&](const std::string& h) {
    return static_cast<std::size_t>(std::find(t->header.begin(), t->header.end(), h) - t->header.begin());
  };
  EXPECT_EQ(t->rows[0][col("operation")], "barrier");
  EXPECT_EQ(t->rows[0][col("floor µs")], "80.00");
  EXPECT_EQ(t->rows[0][col("cop ÷ floor")], "1.50x");
  EXPECT_EQ(t->rows[0][col("copd CPU µs/op/channel")], "12.00");
  EXPECT_EQ(t->rows[1][col("copd CPU µs/op/channel")], "—");
  EXPECT_EQ(t->rows[0][col("cop µs (window)")], "90.00");
  EXPECT_EQ(t->rows[0][col("floor µs (window)")], "30.00");
  EXPECT_EQ(t->rows[0][col("cop ÷ floor (window)")], "3.00x");
  EXPECT_EQ(t->rows[1][col("cop ÷ floor (window)")], "—");  // not timed by window: no figure, not 0
  EXPECT_EQ(t->rows[1][col("copd I/O threads")], "4");
  EXPECT_EQ(t->rows[1][col("COP_POLL_US")], "100");

  EXPECT_DOUBLE_EQ(cop_floor_of(r, r.medians[2]).value(), 160.0);
  EXPECT_FALSE(cop_floor_of(r, r.medians[3]).has_value());  // mpi has no floor
  const ReportTable s = summary_table(r, "c");
  const auto floor_col = std::find(s.header.begin(), s.header.end(), "cop floor µs") - s.header.begin();
  ASSERT_LT(static_cast<std::size_t>(floor_col), s.header.size());
  bool seen = false;
  for (const auto& row : s.rows)
    if (row[1] == "barrier/nodes:4") {
      EXPECT_EQ(row[static_cast<std::size_t>(floor_col)], "160.0");
      EXPECT_EQ(row[static_cast<std::size_t>(floor_col) + 1], "0.938x");
      seen = true;
    }
  EXPECT_TRUE(seen);

  bool floor_curve = false;
  for (const PlotSpec& p : plan_plots(r, "c"))
    if (p.stem == "emulation-barrier-vs-nodes") floor_curve = p.curves.count("cop/direct floor") == 1;
  EXPECT_TRUE(floor_curve);
  const auto plots = emulation_plots(r, "c");
  ASSERT_EQ(plots.size(), 1u);
  EXPECT_EQ(plots[0].curves.at("barrier time").size(), 2u);
  EXPECT_EQ(plots[0].curves.at("barrier time (window)").size(), 1u);
}

}  // namespace
}  // namespace copbench::report
