// cross_entropy (the label-smoothed loss fused with the softmax over the vocabulary) of the
// optimized CPU backend against the reference, same process, same thread count, on logits
// [rows, vocab] with the paper's smoothing 0.1. Counters: x_reference = t_reference / t_cpu, and
// GB/s of the logits read (forward) and of the logits read and dlogits written (backward).
#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/op_shapes.h"
#include "core/random_tensor.h"

namespace trepro::bench {
namespace {

constexpr int kPadId = 0;
constexpr double kSmoothing = 0.1;

struct Inputs {
  Tensor logits, labels, lse, dlogits;
  Inputs(Backend& b, std::int64_t rows)
      : logits(random_tensor(b, {rows, kVocab}, 1, -8.0, 8.0)),
        labels(random_indices(b, {rows}, kVocab, 2)),
        lse(b.empty({rows}, b.dtype())),
        dlogits(b.empty(logits.shape(), b.dtype())) {
    forward(b);  // backward reads the forward's lse
  }
  void forward(Backend& b) {
    b.cross_entropy_forward(logits, labels, kPadId, kSmoothing, SmoothingForm::uniform, lse, nullptr);
  }
  void backward(Backend& b) {
    b.cross_entropy_backward(logits, labels, lse, kPadId, kSmoothing, SmoothingForm::uniform, 1.0, dlogits);
  }
};

template <class Call>
void run(benchmark::State& state, bool backward, Call&& call) {
  const std::int64_t rows = state.range(0);
  const auto t = time_on_both_backends(
      state, static_cast<int>(state.range(1)), [&](Backend& b) { return Inputs(b, rows); }, call);
  set_bandwidth(state, (backward ? 2.0 : 1.0) * static_cast<double>(rows * kVocab * sizeof(float)), t);
  state.SetLabel(backward ? "backward" : "forward");
}

void BM_CrossEntropyForward(benchmark::State& state) {
  run(state, false, [](Inputs& in, Backend& b) { in.forward(b); });
}
void BM_CrossEntropyBackward(benchmark::State& state) {
  run(state, true, [](Inputs& in, Backend& b) { in.backward(b); });
}

BENCHMARK(BM_CrossEntropyForward)->Apply(decode_and_train_rows);
BENCHMARK(BM_CrossEntropyBackward)->Apply(decode_and_train_rows);

}  // namespace
}  // namespace trepro::bench
