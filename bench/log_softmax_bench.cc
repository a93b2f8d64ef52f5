// log_softmax (decoding's scores over the vocabulary) of the optimized CPU backend against the
// reference, same process, same thread count, on [rows, vocab]. Counters: x_reference =
// t_reference / t_cpu, and GB/s of x read and y written. No backward: decoding only.
#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/op_shapes.h"
#include "core/random_tensor.h"

namespace trepro::bench {
namespace {

struct Inputs {
  Tensor x, y;
  Inputs(Backend& b, std::int64_t rows)
      : x(random_tensor(b, {rows, kVocab}, 1, -8.0, 8.0)), y(b.empty(x.shape(), b.dtype())) {}
};

void BM_LogSoftmax(benchmark::State& state) {
  const std::int64_t rows = state.range(0);
  const auto t = time_on_both_backends(
      state, static_cast<int>(state.range(1)), [&](Backend& b) { return Inputs(b, rows); },
      [](Inputs& in, Backend& b) { b.log_softmax_forward(in.x, in.y); });
  set_bandwidth(state, 2.0 * static_cast<double>(rows * kVocab * sizeof(float)), t);
  state.SetLabel("forward");
}

BENCHMARK(BM_LogSoftmax)->Apply(decode_and_train_rows);

}  // namespace
}  // namespace trepro::bench
