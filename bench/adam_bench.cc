// adam (the optimizer update of one parameter) of the optimized CPU backend against the
// reference, same process, same thread count, on paper-base parameter sizes: a bias or norm gain
// (d_model), an FFN weight (d_ff x d_model) and the shared embedding (vocab x d_model), the
// largest. Counters: x_reference = t_reference / t_cpu, and GB/s of the bytes read (param, grad,
// m, v) and written (param, m, v). No backward: the optimizer has none.
#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/op_shapes.h"
#include "core/random_tensor.h"

namespace trepro::bench {
namespace {

struct Inputs {
  Tensor param, grad, m, v;
  Inputs(Backend& b, std::int64_t elements)
      : param(random_tensor(b, {elements}, 1)),
        grad(random_tensor(b, {elements}, 2)),
        m(random_tensor(b, {elements}, 3, -0.1, 0.1)),
        v(random_tensor(b, {elements}, 4, 0.0, 0.01)) {}  // a second moment is never negative
};

void BM_Adam(benchmark::State& state) {
  const std::int64_t elements = state.range(0);
  const auto t = time_on_both_backends(
      state, static_cast<int>(state.range(1)), [&](Backend& b) { return Inputs(b, elements); },
      [](Inputs& in, Backend& b) { b.adam_update(in.param, in.grad, in.m, in.v, 1e-4, 0.9, 0.98, 1e-9, 10); });
  set_bandwidth(state, 7.0 * static_cast<double>(elements * sizeof(float)), t);
  state.SetLabel("update");
}

void parameter_sizes(benchmark::internal::Benchmark* b) {
  at_1_and_2_threads(b, {{kModelWidth}, {kFfnWidth * kModelWidth}, {kVocab * kModelWidth}}, {"elements"});
}

BENCHMARK(BM_Adam)->Apply(parameter_sizes);

}  // namespace
}  // namespace trepro::bench
