// run_process (copbench/process.h): exit codes, signals, captured output, output to a
// file, the deadline (a whole process group stopped), cancellation and a program that
// cannot start, each checked against what the program was told to do.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "copbench/files.h"
#include "copbench/process.h"
#include "../cop/wait.h"  // cop::testing::wait_until, the C++ tests' one wait

namespace copbench {
namespace {
namespace fs = std::filesystem;

fs::path temp_dir() {
  std::string tmpl = (fs::temp_directory_path() / "copbench-process-test.XXXXXX").string();
  EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
  return tmpl;
}

TEST(process, exit_code_and_captured_output) {
  ProcessOptions o;
  o.capture = true;
  const ProcessResult r = run_process({"sh", "-c", "echo out; echo err >&2; exit 7"}, o);
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.status(), 7);
  EXPECT_EQ(r.output, "out\nerr\n");
  o.capture_stderr = false;
  EXPECT_EQ(run_process({"sh", "-c", "echo out; echo err >&2"}, o).output, "out\n");
}

// The child's environment is this process's with ProcessOptions::env applied (set and
// removed), and this process's own is left as it was: no setenv on the control side.
TEST(process, environment_is_the_childs_own) {
  ASSERT_EQ(::setenv("COPBENCH_PROCESS_TEST_KEPT", "kept", 1), 0);
  ASSERT_EQ(::setenv("COPBENCH_PROCESS_TEST_GONE", "here", 1), 0);
  ProcessOptions o;
  o.capture = true;
  o.env = {{"COPBENCH_PROCESS_TEST_NEW", "a b=c"}, {"COPBENCH_PROCESS_TEST_GONE", std::nullopt}};
  const std::string shown =
      "echo \"$COPBENCH_PROCESS_TEST_NEW|$COPBENCH_PROCESS_TEST_KEPT|${COPBENCH_PROCESS_TEST_GONE-unset}\"";
  EXPECT_EQ(run_process({"sh", "-c", shown}, o).output, "a b=c|kept|unset\n");
  EXPECT_EQ(std::getenv("COPBENCH_PROCESS_TEST_NEW"), nullptr);
  EXPECT_STREQ(std::getenv("COPBENCH_PROCESS_TEST_GONE"), "here");
  EXPECT_EQ(env_value(o.env, "COPBENCH_PROCESS_TEST_NEW"), "a b=c");
  EXPECT_EQ(env_value(o.env, "COPBENCH_PROCESS_TEST_GONE"), std::nullopt);
  EXPECT_EQ(env_value(o.env, "COPBENCH_PROCESS_TEST_KEPT"), "kept");
  o.env.clear();
  EXPECT_EQ(run_process({"sh", "-c", shown}, o).output, "|kept|here\n");
  ::unsetenv("COPBENCH_PROCESS_TEST_KEPT");
  ::unsetenv("COPBENCH_PROCESS_TEST_GONE");
}

TEST(process, arguments_are_not_a_shell_line) {
  ProcessOptions o;
  o.capture = true;
  EXPECT_EQ(run_process({"printf", "%s|", "a b", "$HOME", "'q'"}, o).output, "a b|$HOME|'q'|");
}

TEST(process, signal_is_reported) {
  const ProcessResult r = run_process({"sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_EQ(r.status(), 128 + SIGTERM);
}

TEST(process, output_file) {
  const fs::path dir = temp_dir();
  ProcessOptions o;
  o.output_file = dir / "log";
  EXPECT_EQ(run_process({"sh", "-c", "echo one; echo two >&2"}, o).status(), 0);
  EXPECT_EQ(read_file(dir / "log"), "one\ntwo\n");
  fs::remove_all(dir);
}

TEST(process, deadline_stops_the_whole_group) {
  const fs::path dir = temp_dir();
  ProcessOptions o;
  o.timeout_s = 1;
  o.own_group = true;
  int pid = 0;
  o.on_start = [&pid](int p) { pid = p; };
  // A child of the program (in its group) writes its pid; both must be gone after.
  const ProcessResult r = run_process({"sh", "-c", "sleep 100 & echo $! >" + (dir / "child").string() + "; wait"}, o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_GT(pid, 0);
  EXPECT_EQ(r.signal, SIGTERM);
  int child = 0;
  std::ifstream(dir / "child") >> child;
  ASSERT_GT(child, 0);
  // The grandchild got the group's SIGTERM; once reaped by init it is gone.
  cop::testing::wait_until([&] { return ::kill(child, 0) != 0; }, std::chrono::seconds(5));
  EXPECT_NE(::kill(child, 0), 0);
  fs::remove_all(dir);
}

TEST(process, cancelled_while_waiting) {
  ProcessOptions o;
  int polls = 0;
  o.cancelled = [&polls] { return ++polls > 3; };
  const ProcessResult r = run_process({"sleep", "100"}, o);
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.status(), 0);
}

TEST(process, program_that_cannot_start) {
  ProcessOptions o;
  o.capture = true;
  const ProcessResult r = run_process({"/nonexistent/copbench-no-such-program"}, o);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.output.find("cannot start /nonexistent/copbench-no-such-program"), std::string::npos);
  EXPECT_TRUE(on_path("sh"));
  EXPECT_FALSE(on_path("copbench-no-such-program"));
}

TEST(files, read_file_whole_or_a_clear_error) {
  const fs::path dir = temp_dir();
  std::ofstream(dir / "f", std::ios::binary) << std::string("a\0b\n", 4);
  EXPECT_EQ(read_file(dir / "f"), std::string("a\0b\n", 4));
  try {
    read_file(dir / "missing");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read " + (dir / "missing").string()), std::string::npos);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace copbench
