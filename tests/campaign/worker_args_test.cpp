// WorkerArgs: the worker's command line written by to_argv() and read back by
// parse_worker_args gives the same fields, and every caller's default max repetitions
// is the one default_max_reps.
#include <gtest/gtest.h>

#include <algorithm>

#include "copbench/campaign.h"
#include "copbench/worker.h"

namespace copbench {
namespace {

WorkerArgs every_field_set() {
  WorkerArgs a;
  a.benchmark = "allreduce";
  a.verify = true;
  a.params.sizes = {0, 8, 1024, 65536};
  a.params.options = {{"steps", "256"}, {"grid", "a=b"}};
  a.params.timing.warmup = 3;
  a.params.timing.iterations = 17;
  a.params.timing.min_reps = 5;
  a.params.timing.max_reps = 11;
  a.params.timing.methods = {"window", "loop"};
  a.route = "direct";
  a.encoding = "raw";
  a.nodes = 4;
  a.tasks_per_node = 2;
  a.timeout_s = 90;
  a.result_path = "/tmp/x/result.json";
  a.error_path = "/tmp/x/error.txt";
  a.context.link_profile = "ethernet10";
  a.context.commit = "0123456789ab-dirty";
  return a;
}

TEST(worker_args, round_trip_keeps_every_field) {
  const WorkerArgs a = every_field_set();
  const std::vector<std::string> argv = a.to_argv();
  const WorkerArgs b = parse_worker_args(argv);
  EXPECT_EQ(b.benchmark, a.benchmark);
  EXPECT_EQ(b.verify, a.verify);
  EXPECT_EQ(b.params.sizes, a.params.sizes);
  EXPECT_EQ(b.params.options, a.params.options);
  EXPECT_EQ(b.params.timing.warmup, a.params.timing.warmup);
  EXPECT_EQ(b.params.timing.iterations, a.params.timing.iterations);
  EXPECT_EQ(b.params.timing.min_reps, a.params.timing.min_reps);
  EXPECT_EQ(b.params.timing.max_reps, a.params.timing.max_reps);
  EXPECT_EQ(b.params.timing.methods, a.params.timing.methods);
  EXPECT_EQ(b.context.settings.at("methods"), "window,loop");
  EXPECT_EQ(b.route, a.route);
  EXPECT_EQ(b.encoding, a.encoding);
  EXPECT_EQ(b.nodes, a.nodes);
  EXPECT_EQ(b.tasks_per_node, a.tasks_per_node);
  EXPECT_EQ(b.timeout_s, a.timeout_s);
  EXPECT_EQ(b.result_path, a.result_path);
  EXPECT_EQ(b.error_path, a.error_path);
  EXPECT_EQ(b.context.link_profile, a.context.link_profile);
  EXPECT_EQ(b.context.commit, a.context.commit);
  EXPECT_EQ(b.raw, argv);
  EXPECT_EQ(b.to_argv(), argv);  // and written again, the same line
}

TEST(worker_args, argc_argv_form_skips_the_program_name) {
  std::vector<std::string> argv = every_field_set().to_argv();
  argv.insert(argv.begin(), "copbench-worker-mpi");
  std::vector<char*> c;
  for (auto& s : argv) c.push_back(s.data());
  const WorkerArgs b = parse_worker_args(static_cast<int>(c.size()), c.data());
  EXPECT_EQ(b.to_argv(), every_field_set().to_argv());
}

TEST(worker_args, no_max_reps_means_the_one_default) {
  for (int reps : {1, 3, 10}) {
    WorkerArgs a;
    a.benchmark = "echo";
    a.params.timing.min_reps = reps;
    a.params.timing.max_reps = 0;  // what `copbench run` and a campaign pass when none is given
    EXPECT_EQ(parse_worker_args(a.to_argv()).params.timing.max_reps, default_max_reps(reps));
  }
  EXPECT_EQ(default_max_reps(10), 40);  // `copbench run`'s documented default: 4 x reps
  WorkerArgs bare = parse_worker_args(std::vector<std::string>{"--bench", "echo", "--reps", "7"});
  EXPECT_EQ(bare.params.timing.max_reps, default_max_reps(7));
}

TEST(worker_args, campaign_point_without_max_reps_gets_the_same_default) {
  campaign::Point p;
  p.benchmark = "echo";
  p.backend = "mpi";
  p.nodes = 2;
  p.profile = "native";
  p.timing.reps = 3;
  p.sizes = "8,1K";
  p.params = {{"k", "v"}};
  const WorkerArgs w = parse_worker_args(campaign::point_worker_args(p).to_argv());
  EXPECT_EQ(w.params.timing.max_reps, default_max_reps(3));
  EXPECT_EQ(w.params.sizes, (std::vector<std::size_t>{8, 1024}));
  EXPECT_EQ(w.params.options.at("k"), "v");
  EXPECT_EQ(w.context.link_profile, "native");
}

// The timing methods (`copbench run --methods`, a campaign's `methods:`): the default,
// all three, writes nothing (a worker line and a result as before); a campaign point's
// reach its worker; a bad list is refused by the worker too.
TEST(worker_args, methods_default_to_all_and_reach_the_worker) {
  WorkerArgs a;
  a.benchmark = "barrier";
  const std::vector<std::string> argv = a.to_argv();
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "--methods"), argv.end());
  const WorkerArgs b = parse_worker_args(argv);
  EXPECT_EQ(b.params.timing.methods, (std::vector<std::string>{"window", "sync", "loop"}));
  EXPECT_EQ(b.context.settings.count("methods"), 0u);

  campaign::Point p;
  p.benchmark = "barrier";
  p.backend = "mpi";
  p.nodes = 2;
  p.profile = "native";
  p.timing.methods = "sync";
  EXPECT_EQ(parse_worker_args(campaign::point_worker_args(p).to_argv()).params.timing.methods,
            (std::vector<std::string>{"sync"}));
  for (const char* bad : {"fast", "", "sync,sync"})
    EXPECT_THROW(parse_worker_args(std::vector<std::string>{"--bench", "barrier", "--methods", bad}),
                 std::invalid_argument)
        << bad;
}

TEST(worker_args, max_reps_stays_above_reps) {
  WorkerArgs a;
  a.benchmark = "echo";
  a.params.timing.min_reps = 5;
  a.params.timing.max_reps = 2;
  EXPECT_EQ(parse_worker_args(a.to_argv()).params.timing.max_reps, 6);
}

TEST(worker_args, param_is_parsed_in_one_place) {
  EXPECT_EQ(parse_param("steps=256"), (std::pair<std::string, std::string>{"steps", "256"}));
  EXPECT_EQ(parse_param("k="), (std::pair<std::string, std::string>{"k", ""}));
  EXPECT_EQ(parse_param("a=b=c"), (std::pair<std::string, std::string>{"a", "b=c"}));
  EXPECT_THROW(parse_param("steps"), std::invalid_argument);
  EXPECT_THROW(parse_param("=1"), std::invalid_argument);
  try {
    parse_param("steps");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--param 'steps': expected KEY=VALUE");
  }
  EXPECT_THROW(parse_worker_args(std::vector<std::string>{"--bench", "echo", "--param", "x"}), std::invalid_argument);
}

TEST(worker_args, refuses_bad_lines) {
  EXPECT_THROW(parse_worker_args(std::vector<std::string>{}), std::invalid_argument);  // neither --bench nor --verify
  EXPECT_THROW(parse_worker_args(std::vector<std::string>{"--bench", "echo", "--reps", "0"}), std::invalid_argument);
  EXPECT_THROW(parse_worker_args(std::vector<std::string>{"--bench", "echo", "--sizes", "1Q"}), std::invalid_argument);
  EXPECT_THROW(parse_worker_args(std::vector<std::string>{"--bench", "echo", "--bogus"}), std::invalid_argument);
}

// Every numeric option out of range (negative, zero where at least 1, too large for an
// int) is refused with one message naming the option and its bounds, not a 309-digit
// bound or "Could not convert".
TEST(worker_args, numbers_out_of_range_name_their_bounds) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--iters", "-5"}, {"--iters", "0"}, {"--reps", "-1"}, {"--max-reps", "-3"}, {"--warmup", "-1"},
      {"--nodes", "0"}, {"--tasks-per-node", "-2"}, {"--timeout", "-1"}, {"--iters", "99999999999"},
      {"--reps", "1.5"}};
  for (const auto& [option, value] : bad) {
    try {
      parse_worker_args(std::vector<std::string>{"--bench", "echo", option, value});
      ADD_FAILURE() << option << " " << value << " was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(option + ": '" + value + "' is not a whole number from "), std::string::npos) << what;
      EXPECT_LT(what.size(), 120u) << what;
    }
  }
}

}  // namespace
}  // namespace copbench
