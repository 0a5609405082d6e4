// An invariant that fails aborts with its reason (libFuzzer saves the input as a crash).
#pragma once
#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, ...)                                              \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::fprintf(stderr, "invariant failed at %s:%d: %s: ", __FILE__,    \
                   __LINE__, #cond);                                       \
      std::fprintf(stderr, __VA_ARGS__);                                   \
      std::fputc('\n', stderr);                                            \
      std::abort();                                                        \
    }                                                                      \
  } while (0)
