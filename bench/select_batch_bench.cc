// select_batch (beam search reordering a key/value cache by the surviving beams) of the
// optimized CPU backend against the reference, same process, same thread count, on [B, T,
// d_model] at beam 4 with 16 positions and at 32 rows of 128. Counters: x_reference =
// t_reference / t_cpu, and GB/s of the bytes read and written. No backward: decoding only.
#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/op_shapes.h"
#include "core/random_tensor.h"

namespace trepro::bench {
namespace {

struct Inputs {
  Tensor cache, beams, out;
  Inputs(Backend& b, std::int64_t batch, std::int64_t time)
      : cache(random_tensor(b, {batch, time, kModelWidth}, 1)),
        beams(random_indices(b, {batch}, batch, 2)),
        out(b.empty(cache.shape(), b.dtype())) {}
};

void BM_SelectBatch(benchmark::State& state) {
  const std::int64_t batch = state.range(0), time = state.range(1);
  const auto t = time_on_both_backends(
      state, static_cast<int>(state.range(2)), [&](Backend& b) { return Inputs(b, batch, time); },
      [](Inputs& in, Backend& b) { b.select_batch(in.cache, in.beams, in.out); });
  set_bandwidth(state, 2.0 * static_cast<double>(batch * time * kModelWidth * sizeof(float)), t);
  state.SetLabel("forward");
}

void cache_shapes(benchmark::internal::Benchmark* b) {
  at_1_and_2_threads(b, {{kBeams, 16}, {kBatch, kLength}}, {"batch", "time"});
}

BENCHMARK(BM_SelectBatch)->Apply(cache_shapes);

}  // namespace
}  // namespace trepro::bench
