// The whole Transformer on the optimized CPU backend, paper-base shape (experiments/configs/
// paper_base.json: 6+6 layers, d 512, d_ff 2048, 8 heads, V 37000, Post-LN, dropout 0.1):
// inference forward and a full training step (forward with dropout, label-smoothed loss,
// backward, Adam), at 1 and 2 threads; and the Multi30K model's training step at 1 thread. Counters: GFLOP/s achieved (the model's matmul and
// attention FLOPs, training = 3x forward) and its fraction of the FMA peak of the same threads,
// measured here by bench/fma_peak.h (fma_peak_GFLOPs). When CMake found Torch, the same model in
// libtorch runs on the same tokens in the same process (bench/torch_peer.h) at its fastest thread
// setting within the same cores: x_libtorch = t_libtorch / t_ours (> 1: ours is faster).
#include <chrono>
#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/fma_peak.h"
#include "bench/model_shapes.h"
#include "core/config.h"
#include "model/trainer.h"
#include "model/transformer.h"
#ifdef TREPRO_WITH_TORCH
#include "bench/torch_peer.h"
#endif

namespace trepro::bench {
namespace {

Config paper_base() { return load_config(TREPRO_SOURCE_DIR "/experiments/configs/paper_base.json"); }

void report(benchmark::State& state, double flops, double seconds, int threads) {
  const double achieved = flops / seconds * 1e-9, peak = fma_peak_gflops(threads);
  state.counters["GFLOPs"] = achieved;
  state.counters["fma_peak_GFLOPs"] = peak;
  state.counters["peak_fraction"] = achieved / peak;
  state.counters["tokens_per_s"] = static_cast<double>(state.range(0) * state.range(1)) / seconds;
}

// Times libtorch on the same step and tokens and adds its counters (a build without Torch says so).
void compare_with_libtorch(benchmark::State& state, double seconds, const Config& config, const Batch& batch,
                           int threads, bool training) {
#ifdef TREPRO_WITH_TORCH
  const TorchTiming peer = training ? torch_train_step_seconds(config, batch, threads)
                                    : torch_forward_seconds(config, batch, threads);
  state.counters["libtorch_ms"] = peer.seconds * 1e3;
  state.counters["x_libtorch"] = peer.seconds / seconds;
  state.counters["libtorch_intra_op_threads"] = peer.threads.intra_op;
  state.counters["libtorch_blas_threads"] = peer.threads.blas;
  state.SetLabel("libtorch fastest at " + peer.threads.name());
#else
  (void)seconds, (void)config, (void)batch, (void)threads, (void)training;
  state.SetLabel("no libtorch peer: CMake found no Torch");
#endif
}

void BM_ModelForward(benchmark::State& state) {
  const std::int64_t batch = state.range(0), length = state.range(1);
  const int threads = static_cast<int>(state.range(2));
  const Config config = paper_base();
  auto backend = cpu_backend(threads);
  Transformer model(config.model, *backend);
  model.initialize(config.train.seed);
  const Batch b = random_batch(batch, length, config.model.vocab_size);
  // Timed from the third call, the steady state of repeated forwards: the first allocates every
  // activation afresh, and the second does too wherever the first's saved tensors are still held
  // when it allocates (fresh pages that the kernel zeroes: 4.09 against 3.84 s at 32 x 128, one
  // thread). The peer's seconds_per_call averages calls after its warm-up as well.
  model.forward(b);
  model.forward(b);
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) benchmark::DoNotOptimize(model.forward(b));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                         static_cast<double>(state.iterations());
  report(state, forward_flops(config.model, batch, length, length), seconds, threads);
  compare_with_libtorch(state, seconds, config, b, threads, false);
}

void time_train_step(benchmark::State& state, const Config& config) {
  const std::int64_t batch = state.range(0), length = state.range(1);
  const int threads = static_cast<int>(state.range(2));
  auto backend = cpu_backend(threads);
  Transformer model(config.model, *backend);
  model.initialize(config.train.seed);
  Trainer trainer(model, config);
  const Batch b = random_batch(batch, length, config.model.vocab_size);
  trainer.step(b);
  trainer.step(b);  // timed from the third step, as BM_ModelForward from the third forward
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) benchmark::DoNotOptimize(trainer.step(b));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                         static_cast<double>(state.iterations());
  report(state, 3 * forward_flops(config.model, batch, length, length), seconds, threads);
  compare_with_libtorch(state, seconds, config, b, threads, true);
}

void BM_ModelTrainStep(benchmark::State& state) { time_train_step(state, paper_base()); }

// The Multi30K model (experiments/configs/multi30k_deen.json: 3+3 layers, d 256, V 8000, tied),
// whose training the ablation sweeps run, one cell per single-thread process.
void BM_ModelTrainStepMulti30k(benchmark::State& state) {
  time_train_step(state, load_config(TREPRO_SOURCE_DIR "/experiments/configs/multi30k_deen.json"));
}

void shapes(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    b->Args({8, 32, threads});    // PyTorch 1.13's measured point in the issue
    b->Args({32, 128, threads});  // ~4,000 target tokens, the paper's batch scale
  }
  b->ArgNames({"batch", "length", "threads"});
  b->Unit(benchmark::kMillisecond);
  b->UseRealTime();
  b->MinTime(0.5);
}

BENCHMARK(BM_ModelForward)->Apply(shapes);
BENCHMARK(BM_ModelTrainStep)->Apply(shapes);
// One batch of train.max_tokens = 2048 padded tokens at Multi30K's typical subword length, at the
// sweeps' one thread.
BENCHMARK(BM_ModelTrainStepMulti30k)->Args({128, 16, 1})->ArgNames({"batch", "length", "threads"})
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);

}  // namespace
}  // namespace trepro::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  trepro::bench::add_machine_context();
#ifdef TREPRO_WITH_TORCH
  benchmark::AddCustomContext("libtorch", trepro::bench::torch_version());
#else
  benchmark::AddCustomContext("libtorch", "absent: CMake found no Torch");
#endif
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
