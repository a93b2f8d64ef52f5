// rope (rotary positions rotated into q or k) of the optimized CPU backend against the
// reference, same process, same thread count, on [B, T, heads x head width] with the paper-base
// 8 heads of 64, for a decoding step (beam 4, one position) and a training batch (32 x 128).
// Counters: x_reference = t_reference / t_cpu, and GB/s of the bytes read and written.
#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/op_shapes.h"
#include "core/random_tensor.h"

namespace trepro::bench {
namespace {

struct Inputs {
  Tensor x, y, dy, dx;
  Inputs(Backend& b, std::int64_t batch, std::int64_t time)
      : x(random_tensor(b, {batch, time, kHeadCount * kHeadWidth}, 1)),
        y(b.empty(x.shape(), b.dtype())),
        dy(random_tensor(b, x.shape(), 2)),
        dx(b.empty(x.shape(), b.dtype())) {}
};

template <class Call>
void run(benchmark::State& state, bool backward, Call&& call) {
  const std::int64_t batch = state.range(0), time = state.range(1);
  const auto t = time_on_both_backends(
      state, static_cast<int>(state.range(2)), [&](Backend& b) { return Inputs(b, batch, time); }, call);
  set_bandwidth(state, 2.0 * static_cast<double>(batch * time * kHeadCount * kHeadWidth * sizeof(float)), t);
  state.SetLabel(backward ? "backward" : "forward");
}

void BM_RopeForward(benchmark::State& state) {
  run(state, false, [](Inputs& in, Backend& b) { b.rope_forward(in.x, kHeadCount, 0, in.y); });
}
void BM_RopeBackward(benchmark::State& state) {
  run(state, true, [](Inputs& in, Backend& b) { b.rope_backward(in.dy, kHeadCount, 0, in.dx); });
}

void token_shapes(benchmark::internal::Benchmark* b) {
  at_1_and_2_threads(b, {{kBeams, 1}, {kBatch, kLength}}, {"batch", "time"});
}

BENCHMARK(BM_RopeForward)->Apply(token_shapes);
BENCHMARK(BM_RopeBackward)->Apply(token_shapes);

}  // namespace
}  // namespace trepro::bench
