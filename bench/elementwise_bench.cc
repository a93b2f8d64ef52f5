// The elementwise helpers (fill, add_inplace, scale_inplace, sum_squares, all_finite: gradient
// accumulation, clipping and the NaN check of training) of the optimized CPU backend against the
// reference, same process, same thread count, on [rows, d_model]. Counters: x_reference =
// t_reference / t_cpu, and GB/s of the bytes read and written. They have no backward.
#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/op_shapes.h"
#include "core/random_tensor.h"

namespace trepro::bench {
namespace {

struct Inputs {
  Tensor acc, x;
  Inputs(Backend& b, std::int64_t rows)
      : acc(random_tensor(b, {rows, kModelWidth}, 1)), x(random_tensor(b, {rows, kModelWidth}, 2)) {}
};

// `tensors`: how many [rows, d_model] tensors one call reads or writes.
template <class Call>
void run(benchmark::State& state, double tensors, Call&& call) {
  const std::int64_t rows = state.range(0);
  const auto t = time_on_both_backends(
      state, static_cast<int>(state.range(1)), [&](Backend& b) { return Inputs(b, rows); }, call);
  set_bandwidth(state, tensors * static_cast<double>(rows * kModelWidth * sizeof(float)), t);
}

void BM_Fill(benchmark::State& state) {
  run(state, 1, [](Inputs& in, Backend& b) { b.fill(in.acc, 0.5); });
}
void BM_AddInplace(benchmark::State& state) {
  run(state, 3, [](Inputs& in, Backend& b) { b.add_inplace(in.acc, in.x); });
}
void BM_ScaleInplace(benchmark::State& state) {
  // -1 keeps the values bounded however many calls the loop makes (no overflow, no denormals).
  run(state, 2, [](Inputs& in, Backend& b) { b.scale_inplace(in.acc, -1.0); });
}
void BM_SumSquares(benchmark::State& state) {
  run(state, 1, [](Inputs& in, Backend& b) { benchmark::DoNotOptimize(b.sum_squares(in.x)); });
}
void BM_AllFinite(benchmark::State& state) {
  run(state, 1, [](Inputs& in, Backend& b) { benchmark::DoNotOptimize(b.all_finite(in.x)); });
}

BENCHMARK(BM_Fill)->Apply(decode_and_train_rows);
BENCHMARK(BM_AddInplace)->Apply(decode_and_train_rows);
BENCHMARK(BM_ScaleInplace)->Apply(decode_and_train_rows);
BENCHMARK(BM_SumSquares)->Apply(decode_and_train_rows);
BENCHMARK(BM_AllFinite)->Apply(decode_and_train_rows);

}  // namespace
}  // namespace trepro::bench
