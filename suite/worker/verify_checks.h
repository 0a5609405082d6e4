// The checks of `copbench verify` (verify.cpp runs them): each one runs on every rank,
// compares what the backend did against a local computation, and returns what it found
// wrong in words (empty when all was right).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "copbench/backend.h"

namespace copbench::verify {

// A payload of n bytes that differs with `seed` (verify_collectives.cpp).
std::vector<std::byte> pattern(std::size_t n, int seed);

// Messages and collectives (verify_collectives.cpp).
std::string echo(Backend& b);
std::string barrier(Backend& b);
std::string reduce(Backend& b);
std::string reduce_roots(Backend& b);
std::string broadcast(Backend& b);
std::string multicast(Backend& b);
std::string gather(Backend& b);
std::string scatter(Backend& b);
std::string scan(Backend& b);

// Shared words, locks and fences (verify_shared.cpp).
std::string shared_read_write(Backend& b);
std::string shared_rmw(Backend& b);
std::string shared_cas(Backend& b);
std::string lock(Backend& b);
std::string fence(Backend& b);
std::string fence_window(Backend& b);
std::string fence_barrier(Backend& b);
std::string server_lock(Backend& b);

}  // namespace copbench::verify
