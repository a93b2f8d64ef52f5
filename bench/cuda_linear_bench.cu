// linear_forward / linear_backward of the CUDA backend (cuBLASLt with the bias epilogue; dx, dw,
// db by cuBLAS) against their peer, the bare cublasSgemm calls of the same shapes without bias,
// measured in the same run: the ratio shows what the layer adds around cuBLAS.
// Shapes: the paper's base model, N = 4096 tokens, d_model 512, d_ff 2048.
#include "bench/cuda_bench_support.cuh"
#include "optimized/cuda/cuda_call.h"
#include "optimized/cuda/gemm_layout.h"

namespace trepro::bench {
namespace {

void set_flops(benchmark::State& state, double flops_per_iteration) {
  state.counters["FLOP/s"] =
      benchmark::Counter(flops_per_iteration, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void gemm(cuda::CudaBackend& backend, const cuda::GemmCall& g, const float* a, const float* b, float beta, float* c) {
  const float one = 1.0f;
  cuda::check_cublas(cublasSgemm(backend.cublas(), g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                                 g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.m, g.n, g.k, &one, a, g.lda, b, g.ldb,
                                 &beta, c, g.ldc),
                     "cublasSgemm", "cuda_linear_bench");
}

// args: N, K, M
void BM_linear_forward(benchmark::State& state) {
  auto backend = cuda_backend_or_skip(state);
  if (!backend) return;
  const std::int64_t n = state.range(0), k = state.range(1), m = state.range(2);
  Tensor x = random_device_tensor(*backend, {n, k}, 1), w = random_device_tensor(*backend, {m, k}, 2);
  Tensor b = random_device_tensor(*backend, {m}, 3), y = backend->empty({n, m}, DType::f32);
  for (auto _ : state) {
    backend->linear_forward(x, w, &b, Activation::none, y, nullptr);
    backend->synchronize("cuda_linear_bench");
  }
  set_flops(state, 2.0 * n * k * m);
}

void BM_cublas_sgemm_forward(benchmark::State& state) {
  auto backend = cuda_backend_or_skip(state);
  if (!backend) return;
  const std::int64_t n = state.range(0), k = state.range(1), m = state.range(2);
  Tensor x = random_device_tensor(*backend, {n, k}, 1), w = random_device_tensor(*backend, {m, k}, 2);
  Tensor y = backend->empty({n, m}, DType::f32);
  const cuda::GemmCall g = cuda::linear_forward_gemm("bench", n, k, m);
  for (auto _ : state) {
    gemm(*backend, g, w.data<float>(), x.data<float>(), 0.0f, y.data<float>());
    backend->synchronize("cuda_linear_bench");
  }
  set_flops(state, 2.0 * n * k * m);
}

void BM_linear_backward(benchmark::State& state) {
  auto backend = cuda_backend_or_skip(state);
  if (!backend) return;
  const std::int64_t n = state.range(0), k = state.range(1), m = state.range(2);
  Tensor x = random_device_tensor(*backend, {n, k}, 1), w = random_device_tensor(*backend, {m, k}, 2);
  Tensor dy = random_device_tensor(*backend, {n, m}, 3), dx = backend->empty({n, k}, DType::f32);
  Tensor dw = backend->zeros({m, k}, DType::f32), db = backend->zeros({m}, DType::f32);
  for (auto _ : state) {
    backend->linear_backward(x, w, nullptr, Activation::none, dy, &dx, dw, &db);
    backend->synchronize("cuda_linear_bench");
  }
  set_flops(state, 4.0 * n * k * m);
}

void BM_cublas_sgemm_backward(benchmark::State& state) {
  auto backend = cuda_backend_or_skip(state);
  if (!backend) return;
  const std::int64_t n = state.range(0), k = state.range(1), m = state.range(2);
  Tensor x = random_device_tensor(*backend, {n, k}, 1), w = random_device_tensor(*backend, {m, k}, 2);
  Tensor dy = random_device_tensor(*backend, {n, m}, 3), dx = backend->empty({n, k}, DType::f32);
  Tensor dw = backend->zeros({m, k}, DType::f32);
  const cuda::GemmCall input = cuda::linear_input_gradient_gemm("bench", n, k, m);
  const cuda::GemmCall weight = cuda::linear_weight_gradient_gemm("bench", n, k, m);
  for (auto _ : state) {
    gemm(*backend, input, w.data<float>(), dy.data<float>(), 0.0f, dx.data<float>());
    gemm(*backend, weight, x.data<float>(), dy.data<float>(), 1.0f, dw.data<float>());
    backend->synchronize("cuda_linear_bench");
  }
  set_flops(state, 4.0 * n * k * m);
}

void shapes(benchmark::internal::Benchmark* b) {
  b->Args({4096, 512, 512})->Args({4096, 512, 2048})->Args({4096, 2048, 512})->UseRealTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_linear_forward)->Apply(shapes);
BENCHMARK(BM_cublas_sgemm_forward)->Apply(shapes);
BENCHMARK(BM_linear_backward)->Apply(shapes);
BENCHMARK(BM_cublas_sgemm_backward)->Apply(shapes);

}  // namespace
}  // namespace trepro::bench

BENCHMARK_MAIN();
