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
#include <memory>

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

// The paper-base model, initialized, on a cuda backend in the benchmark's precision, and a batch
// of the benchmark's shape; null after a skip naming why there is no device.
struct PaperBaseOnDevice {
  std::unique_ptr<cuda::CudaBackend> backend;
  Config config;
  std::unique_ptr<Transformer> model;
  Batch batch;
};

std::unique_ptr<PaperBaseOnDevice> paper_base_on_device(benchmark::State& state) {
  auto backend = cuda_backend_or_skip(state);
  if (!backend) return nullptr;
  auto setup = std::make_unique<PaperBaseOnDevice>();
  setup->backend = std::move(backend);
  setup->config = paper_base(precision_arg(state));
  setup->backend->set_precision(setup->config.train.precision);
  setup->model = std::make_unique<Transformer>(setup->config.model, *setup->backend);
  setup->model->initialize(setup->config.train.seed);
  setup->batch = random_batch(state.range(0), state.range(1), setup->config.model.vocab_size);
  return setup;
}

double step_flops(const benchmark::State& state, const Config& config) {
  return forward_flops(config.model, state.range(0), state.range(1), state.range(1));
}

void BM_CudaModelForward(benchmark::State& state) {
  const auto on = paper_base_on_device(state);
  if (!on) return;
  const double seconds = time_iterations(state, [&] {
    benchmark::DoNotOptimize(on->model->forward(on->batch));
    on->backend->synchronize("cuda_model_bench forward");
  });
  report(state, step_flops(state, on->config), seconds);
}

void BM_CudaModelTrainStep(benchmark::State& state) {
  const auto on = paper_base_on_device(state);
  if (!on) return;
  Trainer trainer(*on->model, on->config);
  // step() returns the loss and gradient norm on the host, so it ends with the stream drained.
  const double seconds = time_iterations(state, [&] { benchmark::DoNotOptimize(trainer.step(on->batch)); });
  report(state, 3 * step_flops(state, on->config), seconds);
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
