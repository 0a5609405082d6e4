// Google Benchmark of the controller core alone: commands serviced per second
// for a 64-channel barrier and a 64-channel reduction (no transport).
//   build/bin/cop_controller_bench [--benchmark_format=json]
#include <benchmark/benchmark.h>

#include <bit>
#include <vector>

#include "controller/controller.h"
#include "lib/commands.h"

namespace {

using namespace cop;
using wire::Message;
using wire::Opcode;
using wire::Space;

constexpr commands::Sender kTask{1, 0};

Message command(Opcode op, uint32_t tag) { return commands::command(kTask, op, Space::GAS, tag); }

Message mask(Opcode op, uint32_t tag, uint64_t bits) { return commands::mask_command(kTask, op, tag, bits, 1); }

// One master-slave round: channel 1 sets both masks, all 64 channels send the
// operation, the controller broadcasts the result.
void round(controller::Controller& ctl, std::vector<controller::Delivery>& out, Opcode op, uint32_t tag) {
  ctl.receive(1, mask(Opcode::SETTC, tag, ~0ull), out);
  ctl.receive(1, mask(Opcode::SETBM, tag, ~0ull), out);
  ctl.run(out);
  Message m = command(op, tag);
  m.set_data64(std::bit_cast<uint64_t>(1.0));
  for (int c = 1; c <= 64; ++c) ctl.receive(c, m, out);
  ctl.run(out);
}

void run(benchmark::State& state, Opcode op) {
  controller::Controller ctl;
  std::vector<controller::Delivery> out;
  out.reserve(256);
  uint64_t serviced = 0;
  for (auto _ : state) {
    out.clear();
    round(ctl, out, op, 7);
    serviced += 66;
    benchmark::DoNotOptimize(out.data());
  }
  if (ctl.stats().nacks != 0) state.SkipWithError("controller refused a command");
  state.SetItemsProcessed(int64_t(serviced));
  state.counters["rounds_per_s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_Barrier64(benchmark::State& state) { run(state, Opcode::BENTRY); }
void BM_ReduceSumF64(benchmark::State& state) { run(state, Opcode::SUMF); }
void BM_ReduceSumI64(benchmark::State& state) { run(state, Opcode::SUMI64); }

BENCHMARK(BM_Barrier64);
BENCHMARK(BM_ReduceSumF64);
BENCHMARK(BM_ReduceSumI64);

}  // namespace

BENCHMARK_MAIN();
