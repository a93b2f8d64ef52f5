// The whole Transformer on the cuda backend, paper-base shape (experiments/configs/paper_base.json):
// inference forward and a full training step (forward with dropout, label-smoothed loss,
// backward, Adam) at about 4k and 16k target tokens (32 x 128 and 64 x 256), in train.precision
// float32 (cuBLAS in pedantic float32, no TF32) and bf16 (the linear layers' GEMM operands in
// bfloat16, float32 accumulation). Its peer is PyTorch eager on the same device, timed by
// bench/cuda_torch_peer.py in the same gpu-check run (scripts/gpu_check_report.py pairs them).
// Counters: target tokens/s, TFLOP/s (bench/model_shapes.h's count, training = 3x forward) and the
// fraction of the datasheet's dense peak for the precision.
#include <chrono>
#include <cstdint>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "bench/cuda_bench_support.cuh"
#include "bench/model_shapes.h"
#include "core/config.h"
#include "model/trainer.h"
#include "model/transformer.h"

namespace trepro::bench {
namespace {

// H100 SXM datasheet, dense: float32 on the CUDA cores, bf16 on the tensor cores. The H200 has
// the same compute units.
constexpr double kFloat32PeakTflops = 67.0, kBf16PeakTflops = 989.0;

Config paper_base(Precision precision) {
  Config config = load_config(TREPRO_SOURCE_DIR "/experiments/configs/paper_base.json");
  config.train.precision = precision;
  return config;
}

Precision precision_arg(const benchmark::State& state) {
  return state.range(2) == 0 ? Precision::float32 : Precision::bf16;
}

void report(benchmark::State& state, double flops, double seconds) {
  const double tflops = flops / seconds * 1e-12;
  state.counters["TFLOPs"] = tflops;
  state.counters["peak_fraction"] =
      tflops / (precision_arg(state) == Precision::float32 ? kFloat32PeakTflops : kBf16PeakTflops);
  state.counters["tokens_per_s"] = static_cast<double>(state.range(0) * state.range(1)) / seconds;
  state.counters["ms"] = seconds * 1e3;
}

// Wall time per iteration of f after a warm-up call (the caching allocator's first allocations,
// cuBLASLt's heuristics); f ends with the stream drained.
template <class F>
double time_iterations(benchmark::State& state, F&& f) {
  f();
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
         static_cast<double>(state.iterations());
}

void BM_CudaModelForward(benchmark::State& state) {
  auto backend = cuda_backend_or_skip(state);
  if (!backend) return;
  const std::int64_t batch = state.range(0), length = state.range(1);
  const Config config = paper_base(precision_arg(state));
  backend->set_precision(config.train.precision);
  Transformer model(config.model, *backend);
  model.initialize(config.train.seed);
  const Batch b = random_batch(batch, length, config.model.vocab_size);
  const double seconds = time_iterations(state, [&] {
    benchmark::DoNotOptimize(model.forward(b));
    backend->synchronize("cuda_model_bench forward");
  });
  report(state, forward_flops(config.model, batch, length, length), seconds);
}

void BM_CudaModelTrainStep(benchmark::State& state) {
  auto backend = cuda_backend_or_skip(state);
  if (!backend) return;
  const std::int64_t batch = state.range(0), length = state.range(1);
  const Config config = paper_base(precision_arg(state));
  backend->set_precision(config.train.precision);
  Transformer model(config.model, *backend);
  model.initialize(config.train.seed);
  Trainer trainer(model, config);
  const Batch b = random_batch(batch, length, config.model.vocab_size);
  // step() returns the loss and gradient norm on the host, so it ends with the stream drained.
  const double seconds = time_iterations(state, [&] { benchmark::DoNotOptimize(trainer.step(b)); });
  report(state, 3 * forward_flops(config.model, batch, length, length), seconds);
}

void shapes(benchmark::internal::Benchmark* b) {
  for (int precision : {0, 1}) {
    b->Args({32, 128, precision});  // ~4k target tokens
    b->Args({64, 256, precision});  // ~16k target tokens
  }
  b->ArgNames({"batch", "length", "bf16"});
  b->Unit(benchmark::kMillisecond);
  b->UseRealTime();
}

BENCHMARK(BM_CudaModelForward)->Apply(shapes);
BENCHMARK(BM_CudaModelTrainStep)->Apply(shapes);

}  // namespace
}  // namespace trepro::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  trepro::bench::add_machine_context();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
