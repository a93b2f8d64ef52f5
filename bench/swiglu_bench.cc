// swiglu (the SwiGLU gate of the FFN variant, [rows, d_ff]) of the optimized CPU backend against
// the reference, same process, same thread count. Counters: x_reference = t_reference / t_cpu,
// and GB/s of the [rows, d_ff] tensors read and written (gate, up, y forward; gate, up, dy,
// dgate, dup backward).
#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/op_shapes.h"
#include "core/random_tensor.h"

namespace trepro::bench {
namespace {

struct Inputs {
  Tensor gate, up, y, dy, dgate, dup;
  Inputs(Backend& b, std::int64_t rows)
      : gate(random_tensor(b, {rows, kFfnWidth}, 1, -4.0, 4.0)),
        up(random_tensor(b, {rows, kFfnWidth}, 2)),
        y(b.empty(gate.shape(), b.dtype())),
        dy(random_tensor(b, {rows, kFfnWidth}, 3)),
        dgate(b.empty(gate.shape(), b.dtype())),
        dup(b.empty(gate.shape(), b.dtype())) {}
};

template <class Call>
void run(benchmark::State& state, bool backward, Call&& call) {
  const std::int64_t rows = state.range(0);
  const auto t = time_on_both_backends(
      state, static_cast<int>(state.range(1)), [&](Backend& b) { return Inputs(b, rows); }, call);
  set_bandwidth(state, (backward ? 5.0 : 3.0) * static_cast<double>(rows * kFfnWidth * sizeof(float)), t);
  state.SetLabel(backward ? "backward" : "forward");
}

void BM_SwigluForward(benchmark::State& state) {
  run(state, false, [](Inputs& in, Backend& b) { b.swiglu_forward(in.gate, in.up, in.y); });
}
void BM_SwigluBackward(benchmark::State& state) {
  run(state, true, [](Inputs& in, Backend& b) { b.swiglu_backward(in.gate, in.up, in.dy, in.dgate, in.dup); });
}

BENCHMARK(BM_SwigluForward)->Apply(decode_and_train_rows);
BENCHMARK(BM_SwigluBackward)->Apply(decode_and_train_rows);

}  // namespace
}  // namespace trepro::bench
