// activation (relu, gelu, gelu_tanh on the FFN's hidden layer [rows, d_ff]: the standalone op,
// for when it is not fused into linear) of the optimized CPU backend against the reference, same
// process, same thread count. Counters: x_reference = t_reference / t_cpu, and GB/s of the bytes
// read and written (x, y forward; x, dy, dx backward).
#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/op_shapes.h"
#include "core/random_tensor.h"

namespace trepro::bench {
namespace {

struct Inputs {
  Tensor x, dy, y, dx;
  Inputs(Backend& b, std::int64_t rows)
      // [-4, 4): both sides of gelu's bend and relu's kink, not only its linear part.
      : x(random_tensor(b, {rows, kFfnWidth}, 1, -4.0, 4.0)),
        dy(random_tensor(b, {rows, kFfnWidth}, 2)),
        y(b.empty(x.shape(), b.dtype())),
        dx(b.empty(x.shape(), b.dtype())) {}
};

void run(benchmark::State& state, Activation act, bool backward) {
  const std::int64_t rows = state.range(0);
  const auto t = time_on_both_backends(
      state, static_cast<int>(state.range(1)), [&](Backend& b) { return Inputs(b, rows); },
      [&](Inputs& in, Backend& b) {
        if (backward) {
          b.activation_backward(act, in.x, in.dy, in.dx);
        } else {
          b.activation_forward(act, in.x, in.y);
        }
      });
  set_bandwidth(state, (backward ? 3.0 : 2.0) * static_cast<double>(rows * kFfnWidth * sizeof(float)), t);
  state.SetLabel(backward ? "backward" : "forward");
}

void BM_ActivationForward(benchmark::State& state, Activation act) { run(state, act, false); }
void BM_ActivationBackward(benchmark::State& state, Activation act) { run(state, act, true); }

BENCHMARK_CAPTURE(BM_ActivationForward, relu, Activation::relu)->Apply(decode_and_train_rows);
BENCHMARK_CAPTURE(BM_ActivationForward, gelu, Activation::gelu)->Apply(decode_and_train_rows);
BENCHMARK_CAPTURE(BM_ActivationForward, gelu_tanh, Activation::gelu_tanh)->Apply(decode_and_train_rows);
BENCHMARK_CAPTURE(BM_ActivationBackward, relu, Activation::relu)->Apply(decode_and_train_rows);
BENCHMARK_CAPTURE(BM_ActivationBackward, gelu, Activation::gelu)->Apply(decode_and_train_rows);
BENCHMARK_CAPTURE(BM_ActivationBackward, gelu_tanh, Activation::gelu_tanh)->Apply(decode_and_train_rows);

}  // namespace
}  // namespace trepro::bench
