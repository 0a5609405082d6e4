// The task address space words the cop backends use (64-bit words of each rank's TAS,
// seed 000 ch. V): the live backend (baselines/cop) and sim-cop (baselines/simcop) alike.
#pragma once

namespace copbench::cop_tas {

inline constexpr int kLockWords = 64;       // rank 0: 2 words per lock (next ticket, now serving)
inline constexpr int kStageFirst = 80, kStageEnd = 256;

}  // namespace copbench::cop_tas
