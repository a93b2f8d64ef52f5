// Fused (flash-style) attention of the optimized CPU backend against the reference's unfused
// path (reference-f32: one [T, T] score matrix per head, Eigen), same process, same thread
// count, causal self-attention with the paper-base head shape (8 heads x 64). Counters: the
// speed ratio x_reference = t_reference / t_cpu, and the peak extra memory of one call of each
// (peak_MiB, reference_peak_MiB): the heap high-water mark of one call over what was live before
// it (alloc_tracker.h), the CPU backend's measured on a fresh backend so that its workspace
// (allocated once, reused by later calls) counts.
#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/alloc_tracker.h"
#include "bench/bench_support.h"
#include "core/random_tensor.h"

namespace trepro::bench {
namespace {

constexpr int kHeads = 8;
constexpr std::int64_t kHeadWidth = 64;

struct Inputs {
  Tensor q, k, v, out, lse, dout, dq, dk, dv;
  Inputs(Backend& b, std::int64_t batch, std::int64_t t)
      : q(random_tensor(b, {batch, t, kHeads * kHeadWidth}, 1)),
        k(random_tensor(b, {batch, t, kHeads * kHeadWidth}, 2)),
        v(random_tensor(b, {batch, t, kHeads * kHeadWidth}, 3)),
        out(b.empty({batch, t, kHeads * kHeadWidth}, b.dtype())),
        lse(b.empty({batch, kHeads, t}, b.dtype())),
        dout(random_tensor(b, {batch, t, kHeads * kHeadWidth}, 4)),
        dq(b.empty(q.shape(), b.dtype())),
        dk(b.empty(k.shape(), b.dtype())),
        dv(b.empty(v.shape(), b.dtype())) {}
  void forward(Backend& b) {
    b.attention_forward(q, k, v, kHeads, nullptr, true, 0.125, {}, out, lse);
  }
  void backward(Backend& b) {
    b.attention_backward(q, k, v, kHeads, nullptr, true, 0.125, {}, out, lse, dout, dq, dk, dv);
  }
};

template <class Call>
void run_against_reference(benchmark::State& state, bool backward, Call&& call) {
  const std::int64_t t = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  // Batch rows so that every length processes at least 4096 query positions in total.
  const std::int64_t batch = t >= 4096 ? 1 : 4096 / t;
  auto ours = cpu_backend(threads);
  auto peer = reference_backend(threads);
  Inputs mine(*ours, batch, t), theirs(*peer, batch, t);
  mine.forward(*ours);  // backward reads the forward's out and lse
  theirs.forward(*peer);
  time_against_reference(state, [&] { call(mine, *ours); }, [&] { call(theirs, *peer); });
  state.counters["peak_MiB"] = peak_extra_mib([&] {
    auto fresh = cpu_backend(threads);
    call(mine, *fresh);
  });
  state.counters["reference_peak_MiB"] = peak_extra_mib([&] { call(theirs, *peer); });
  state.counters["batch"] = static_cast<double>(batch);
  state.SetLabel(backward ? "backward" : "forward");
}

void BM_AttentionForward(benchmark::State& state) {
  run_against_reference(state, false, [](Inputs& in, Backend& b) { in.forward(b); });
}
void BM_AttentionBackward(benchmark::State& state) {
  run_against_reference(state, true, [](Inputs& in, Backend& b) { in.backward(b); });
}

void lengths(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    for (std::int64_t t : {32, 128, 512, 1024, 2048, 4096}) b->Args({t, threads});
  }
  b->ArgNames({"T", "threads"});
  b->Unit(benchmark::kMillisecond);
  b->UseRealTime();
  b->MinTime(0.2);
}

BENCHMARK(BM_AttentionForward)->Apply(lengths);
BENCHMARK(BM_AttentionBackward)->Apply(lengths);

}  // namespace
}  // namespace trepro::bench
