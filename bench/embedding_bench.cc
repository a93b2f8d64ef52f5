// embedding (token lookup scaled by sqrt(d_model) plus the sinusoid, and its gradient scattered
// into the table) of the optimized CPU backend against the reference, same process, same thread
// count, with the paper's shared vocabulary [vocab, d_model], for a decoding step (beam 4, one
// position) and a training batch (32 x 128). Counters: x_reference = t_reference / t_cpu, and
// GB/s of the bytes read and written (table rows and out forward; dout and the dtable rows, read
// and written, backward).
#include <cmath>
#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/op_shapes.h"
#include "core/random_tensor.h"

namespace trepro::bench {
namespace {

const double kScale = std::sqrt(static_cast<double>(kModelWidth));

struct Inputs {
  Tensor ids, table, out, dout, dtable;
  Inputs(Backend& b, std::int64_t batch, std::int64_t time)
      : ids(random_indices(b, {batch, time}, kVocab, 1)),
        table(random_tensor(b, {kVocab, kModelWidth}, 2)),
        out(b.empty({batch, time, kModelWidth}, b.dtype())),
        dout(random_tensor(b, {batch, time, kModelWidth}, 3)),
        dtable(b.zeros(table.shape(), b.dtype())) {}
};

template <class Call>
void run(benchmark::State& state, bool backward, Call&& call) {
  const std::int64_t batch = state.range(0), time = state.range(1);
  const auto t = time_on_both_backends(
      state, static_cast<int>(state.range(2)), [&](Backend& b) { return Inputs(b, batch, time); }, call);
  set_bandwidth(state, (backward ? 3.0 : 2.0) * static_cast<double>(batch * time * kModelWidth * sizeof(float)), t);
  state.SetLabel(backward ? "backward" : "forward");
}

void BM_EmbeddingForward(benchmark::State& state) {
  run(state, false, [](Inputs& in, Backend& b) {
    b.embedding_forward(in.ids, in.table, kScale, Positional::sinusoidal, nullptr, 0, in.out);
  });
}
void BM_EmbeddingBackward(benchmark::State& state) {
  run(state, true, [](Inputs& in, Backend& b) {
    b.embedding_backward(in.ids, in.dout, kScale, Positional::sinusoidal, 0, in.dtable, nullptr);
  });
}

void token_shapes(benchmark::internal::Benchmark* b) {
  at_1_and_2_threads(b, {{kBeams, 1}, {kBatch, kLength}}, {"batch", "time"});
}

BENCHMARK(BM_EmbeddingForward)->Apply(token_shapes);
BENCHMARK(BM_EmbeddingBackward)->Apply(token_shapes);

}  // namespace
}  // namespace trepro::bench
