// The one wait of the C++ tests (the shell tests' is tests/lib/wait.sh): poll a condition
// until it holds or a bound has passed. A test waits for a condition, never for a time; the
// bound only turns a hang into a failure. Stack (stack.h) builds its waits on it (a child's
// exit, a socket, a log line), and so do the libcop checks and the campaign tests.
#pragma once

#include <chrono>
#include <thread>

namespace cop::testing {

// Polls `done` every `every` until it returns true (then true) or `bound` has passed since
// the call (then false, after one last look). `done` may have side effects (keep what it saw).
template <class Done>
bool wait_until(Done done, std::chrono::milliseconds bound,
                std::chrono::milliseconds every = std::chrono::milliseconds(10)) {
  for (const auto until = std::chrono::steady_clock::now() + bound;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(every);
  }
}

}  // namespace cop::testing
