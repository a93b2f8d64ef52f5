// add_dropout (the residual connection: out = residual + dropout(x), Pre-LN; and fused with the
// norm, Post-LN as in the paper) of the optimized CPU backend against the reference, same process,
// same thread count, on [rows, d_model] with the paper's dropout 0.1 and layer norm. Counters:
// x_reference = t_reference / t_cpu, and GB/s of the [rows, d_model] tensors read and written.
#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/op_shapes.h"
#include "core/random_tensor.h"

namespace trepro::bench {
namespace {

const DropoutSpec kDropout{0.1, PhiloxKey{2017, 1, 7}};
constexpr double kEps = 1e-6;

struct Inputs {
  Tensor residual, x, gamma, beta, out, sum, y, mean, rstd, dy, dresidual, dx, dgamma, dbeta;
  Inputs(Backend& b, std::int64_t rows)
      : residual(random_tensor(b, {rows, kModelWidth}, 1)),
        x(random_tensor(b, {rows, kModelWidth}, 2)),
        gamma(random_tensor(b, {kModelWidth}, 3, 0.5, 1.5)),
        beta(random_tensor(b, {kModelWidth}, 4)),
        out(b.empty(x.shape(), b.dtype())),
        sum(b.empty(x.shape(), b.dtype())),
        y(b.empty(x.shape(), b.dtype())),
        mean(b.empty({rows}, b.dtype())),
        rstd(b.empty({rows}, b.dtype())),
        dy(random_tensor(b, {rows, kModelWidth}, 5)),
        dresidual(b.empty(x.shape(), b.dtype())),
        dx(b.empty(x.shape(), b.dtype())),
        dgamma(b.zeros(gamma.shape(), b.dtype())),
        dbeta(b.zeros(beta.shape(), b.dtype())) {
    norm_forward(b);  // backward reads the forward's sum, mean and rstd
  }
  void norm_forward(Backend& b) {
    b.add_dropout_norm_forward(NormKind::layer, residual, x, kDropout, gamma, &beta, kEps, sum, y, mean, rstd);
  }
  void norm_backward(Backend& b) {
    b.add_dropout_norm_backward(NormKind::layer, sum, gamma, mean, rstd, kDropout, dy, dresidual, dx, dgamma, &dbeta);
  }
};

// `tensors`: how many [rows, d_model] tensors one call reads or writes.
template <class Call>
void run(benchmark::State& state, const char* label, double tensors, Call&& call) {
  const std::int64_t rows = state.range(0);
  const auto t = time_on_both_backends(
      state, static_cast<int>(state.range(1)), [&](Backend& b) { return Inputs(b, rows); }, call);
  set_bandwidth(state, tensors * static_cast<double>(rows * kModelWidth * sizeof(float)), t);
  state.SetLabel(label);
}

void BM_AddDropoutForward(benchmark::State& state) {
  run(state, "forward", 3, [](Inputs& in, Backend& b) { b.add_dropout_forward(in.residual, in.x, kDropout, in.out); });
}
void BM_AddDropoutNormForward(benchmark::State& state) {
  run(state, "forward", 4, [](Inputs& in, Backend& b) { in.norm_forward(b); });
}
void BM_AddDropoutNormBackward(benchmark::State& state) {
  run(state, "backward", 4, [](Inputs& in, Backend& b) { in.norm_backward(b); });
}

BENCHMARK(BM_AddDropoutForward)->Apply(decode_and_train_rows);
BENCHMARK(BM_AddDropoutNormForward)->Apply(decode_and_train_rows);
BENCHMARK(BM_AddDropoutNormBackward)->Apply(decode_and_train_rows);

}  // namespace
}  // namespace trepro::bench
