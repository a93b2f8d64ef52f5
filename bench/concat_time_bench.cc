// concat_time (appending a decoding step's keys or values to the cache along time) of the
// optimized CPU backend against the reference, same process, same thread count: a [B, T-1,
// d_model] cache and one new step [B, 1, d_model] into [B, T, d_model], at beam 4 with 16
// positions and at 32 rows of 128. Counters: x_reference = t_reference / t_cpu, and GB/s of the
// bytes read and written. No backward: decoding only.
#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/op_shapes.h"
#include "core/random_tensor.h"

namespace trepro::bench {
namespace {

struct Inputs {
  Tensor cache, step, out;
  Inputs(Backend& b, std::int64_t batch, std::int64_t time)
      : cache(random_tensor(b, {batch, time - 1, kModelWidth}, 1)),
        step(random_tensor(b, {batch, 1, kModelWidth}, 2)),
        out(b.empty({batch, time, kModelWidth}, b.dtype())) {}
};

void BM_ConcatTime(benchmark::State& state) {
  const std::int64_t batch = state.range(0), time = state.range(1);
  const auto t = time_on_both_backends(
      state, static_cast<int>(state.range(2)), [&](Backend& b) { return Inputs(b, batch, time); },
      [](Inputs& in, Backend& b) { b.concat_time(in.cache, in.step, in.out); });
  set_bandwidth(state, 2.0 * static_cast<double>(batch * time * kModelWidth * sizeof(float)), t);
  state.SetLabel("forward");
}

void cache_shapes(benchmark::internal::Benchmark* b) {
  at_1_and_2_threads(b, {{kBeams, 16}, {kBatch, kLength}}, {"batch", "time"});
}

BENCHMARK(BM_ConcatTime)->Apply(cache_shapes);

}  // namespace
}  // namespace trepro::bench
