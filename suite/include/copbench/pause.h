// A pause of one rank (verify's late rank in the barrier check) in the run's own time: a
// worker that simulates its nodes in this process (sim-cop, baselines/simcop, whose clock
// is copbench/timing.h's simulated_clock()) installs a pause of simulated time, since
// sleeping would stop the simulator, not the node; otherwise the thread sleeps.
#pragma once

#include <chrono>
#include <thread>

namespace copbench {

using PauseFunction = void (*)(double seconds);
inline PauseFunction& simulated_pause() {
  static PauseFunction pause = nullptr;
  return pause;
}

inline void pause_seconds(double seconds) {
  if (const PauseFunction pause = simulated_pause()) return pause(seconds);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace copbench
