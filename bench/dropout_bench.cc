// dropout (inverted, its mask drawn again from Philox in backward) of the optimized CPU backend
// against the reference, same process, same thread count, on [rows, d_model] with the paper's
// 0.1. Counters: x_reference = t_reference / t_cpu, and GB/s of the bytes read and written.
#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/op_shapes.h"
#include "core/random_tensor.h"

namespace trepro::bench {
namespace {

const DropoutSpec kDropout{0.1, PhiloxKey{2017, 1, 7}};

struct Inputs {
  Tensor x, y, dy, dx;
  Inputs(Backend& b, std::int64_t rows)
      : x(random_tensor(b, {rows, kModelWidth}, 1)),
        y(b.empty(x.shape(), b.dtype())),
        dy(random_tensor(b, {rows, kModelWidth}, 2)),
        dx(b.empty(x.shape(), b.dtype())) {}
};

template <class Call>
void run(benchmark::State& state, const char* label, Call&& call) {
  const std::int64_t rows = state.range(0);
  const auto t = time_on_both_backends(
      state, static_cast<int>(state.range(1)), [&](Backend& b) { return Inputs(b, rows); }, call);
  set_bandwidth(state, 2.0 * static_cast<double>(rows * kModelWidth * sizeof(float)), t);
  state.SetLabel(label);
}

void BM_DropoutForward(benchmark::State& state) {
  run(state, "forward", [](Inputs& in, Backend& b) { b.dropout_forward(in.x, kDropout, in.y); });
}
void BM_DropoutBackward(benchmark::State& state) {
  run(state, "backward", [](Inputs& in, Backend& b) { b.dropout_backward(in.dy, kDropout, in.dx); });
}

BENCHMARK(BM_DropoutForward)->Apply(decode_and_train_rows);
BENCHMARK(BM_DropoutBackward)->Apply(decode_and_train_rows);

}  // namespace
}  // namespace trepro::bench
