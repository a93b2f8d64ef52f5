// norm (layer norm, the paper's, and RMS norm) of the optimized CPU backend against the
// reference, same process, same thread count, on [rows, d_model]. Counters: x_reference =
// t_reference / t_cpu, and GB/s of the [rows, d_model] tensors read and written (x, y forward;
// x, dy, dx backward).
#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/op_shapes.h"
#include "core/random_tensor.h"

namespace trepro::bench {
namespace {

constexpr double kEps = 1e-6;

struct Inputs {
  NormKind kind;
  Tensor x, gamma, beta, y, mean, rstd, dy, dx, dgamma, dbeta;
  Inputs(Backend& b, NormKind kind, std::int64_t rows)
      : kind(kind),
        x(random_tensor(b, {rows, kModelWidth}, 1)),
        gamma(random_tensor(b, {kModelWidth}, 2, 0.5, 1.5)),
        beta(random_tensor(b, {kModelWidth}, 3)),
        y(b.empty(x.shape(), b.dtype())),
        mean(b.empty({rows}, b.dtype())),
        rstd(b.empty({rows}, b.dtype())),
        dy(random_tensor(b, {rows, kModelWidth}, 4)),
        dx(b.empty(x.shape(), b.dtype())),
        dgamma(b.zeros(gamma.shape(), b.dtype())),
        dbeta(b.zeros(beta.shape(), b.dtype())) {
    forward(b);  // backward reads the forward's mean and rstd
  }
  // beta and dbeta: RMS norm has no shift.
  Tensor* layer_only(Tensor& t) const { return kind == NormKind::layer ? &t : nullptr; }
  void forward(Backend& b) { b.norm_forward(kind, x, gamma, layer_only(beta), kEps, y, mean, rstd); }
  void backward(Backend& b) { b.norm_backward(kind, x, gamma, mean, rstd, dy, dx, dgamma, layer_only(dbeta)); }
};

void run(benchmark::State& state, NormKind kind, bool backward) {
  const std::int64_t rows = state.range(0);
  const auto t = time_on_both_backends(
      state, static_cast<int>(state.range(1)), [&](Backend& b) { return Inputs(b, kind, rows); },
      [&](Inputs& in, Backend& b) {
        if (backward) {
          in.backward(b);
        } else {
          in.forward(b);
        }
      });
  set_bandwidth(state, (backward ? 3.0 : 2.0) * static_cast<double>(rows * kModelWidth * sizeof(float)), t);
  state.SetLabel(backward ? "backward" : "forward");
}

void BM_NormForward(benchmark::State& state, NormKind kind) { run(state, kind, false); }
void BM_NormBackward(benchmark::State& state, NormKind kind) { run(state, kind, true); }

BENCHMARK_CAPTURE(BM_NormForward, layer, NormKind::layer)->Apply(decode_and_train_rows);
BENCHMARK_CAPTURE(BM_NormForward, rms, NormKind::rms)->Apply(decode_and_train_rows);
BENCHMARK_CAPTURE(BM_NormBackward, layer, NormKind::layer)->Apply(decode_and_train_rows);
BENCHMARK_CAPTURE(BM_NormBackward, rms, NormKind::rms)->Apply(decode_and_train_rows);

}  // namespace
}  // namespace trepro::bench
