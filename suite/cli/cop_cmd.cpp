// `copbench cop compare`: libcop beside libpvm on this machine (issue 3's check,
// seed 000 Table IV's comparison). It starts a private pvmd and a loopback COP
// stack (copd + one copdrv per node), runs copbench-cop-compare (cop/bench/compare.cpp),
// prints its table and stops both by PID, also when the run fails.
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"

namespace copbench::cli {

namespace {

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string bin_dir() {
  char buf[PATH_MAX] = {};
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::filesystem::path(std::string(buf, size_t(n))).parent_path().string() : ".";
}

}  // namespace

void add_cop_command(CLI::App& app) {
  auto* cop = app.add_subcommand("cop", "The COP stack on this machine");
  cop->require_subcommand(1);
  auto* cmp = cop->add_subcommand(
      "compare", "libcop vs libpvm: barrier and reduce on the same tasks, with the bare transport round trip and "
                 "the modelled COP time; starts and stops a private pvmd and a loopback COP stack");
  struct Opts {
    int nodes = 4, tasks = 1, iters = 2000, reps = 5, poll_us = 0;
    std::string access = "direct", json;
  };
  auto o = std::make_shared<Opts>();
  cmp->add_option("--nodes", o->nodes, "emulated compute nodes (one copdrv and channel each)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmp->add_option("--tasks", o->tasks, "tasks per node")->check(CLI::Range(1, 16))->capture_default_str();
  cmp->add_option("--access", o->access, "libcop access mode")
      ->check(CLI::IsMember({"direct", "normal"}))
      ->capture_default_str();
  cmp->add_option("--iters", o->iters, "operations per repetition (pvm: a tenth, at least 20)")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  cmp->add_option("--reps", o->reps, "repetitions (the median is reported)")->check(CLI::Range(1, 1000))->capture_default_str();
  cmp->add_option("--poll-us", o->poll_us,
                  "tasks and copd poll their socket this long before sleeping (COP_POLL_US; the bare round trip "
                  "waits the same way); 0: sleep at once")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmp->add_option("--json", o->json, "also write the figures as JSON here (atomically)");
  cmp->callback([o] {
    const std::string bin = bin_dir();
    const std::string script = fmt::format(
        R"SH(set -e
work=$(mktemp -d "${{TMPDIR:-/tmp}}/copbench-cop-compare.XXXXXX")
cleanup() {{ {bin}/copbench-cop-stack stop --dir "$work/stack" >/dev/null 2>&1 || true
  {bin}/copbench-pvmd-local stop "$work/pvm" >/dev/null 2>&1 || true; rm -rf "$work"; }}
trap cleanup EXIT
eval "$({bin}/copbench-pvmd-local start "$work/pvm")"
export COP_POLL_US={poll}
{bin}/copbench-cop-stack start --nodes {nodes} --dir "$work/stack" >/dev/null 2>"$work/start.log" || {{ cat "$work/start.log" >&2; exit 1; }}
{bin}/copbench-cop-compare --stack "$work/stack" --nodes {nodes} --tasks {tasks} --access {access} --iters {iters} --reps {reps} {json}
)SH",
        fmt::arg("bin", quote(bin)), fmt::arg("nodes", o->nodes), fmt::arg("tasks", o->tasks),
        fmt::arg("access", o->access), fmt::arg("iters", o->iters), fmt::arg("reps", o->reps), fmt::arg("poll", o->poll_us),
        fmt::arg("json", o->json.empty() ? std::string() : "--json " + quote(std::filesystem::absolute(o->json).string())));
    const int rc = std::system(fmt::format("bash -c {}", quote(script)).c_str());
    if (rc != 0) throw CLI::RuntimeError(1);
  });
}

}  // namespace copbench::cli
