// attention_forward / attention_backward of the CUDA backend (flash-style: the score matrix is
// never stored) against the peer every fused kernel is measured by, naive unfused attention in
// the same run: S = Q K^T by strided-batched cuBLAS, a softmax kernel over the stored
// [B*H, Tq, Tk] scores, O = P V by cuBLAS. Forward only for the peer (its backward would be
// three more GEMMs over the stored P); decode (Tq = 1, a KV cache of Tk) separately.
#include "bench/cuda_bench_support.cuh"
#include "optimized/cuda/cuda_call.h"
#include "optimized/cuda/kernel_support.cuh"

namespace trepro::bench {
namespace {

constexpr std::int64_t kBatch = 8, kHeads = 8, kHeadWidth = 64;

// grid: warp_per_row_launch(rows); block: 256 (8 warps); shared: none. Warp per row of the stored
// scores: p = softmax(scale s) in place, in three passes (max, sum, normalize).
// Invariant: row r is read and written by its warp only.
__global__ void naive_softmax_rows(float* scores, std::int64_t rows, std::int64_t length, float scale) {
  const std::int64_t r = cuda::warp_row(blockIdx.x, threadIdx.x);
  if (r >= rows) return;
  float* row = scores + r * length;
  const int lane = threadIdx.x % cuda::kWarpSize;
  float max = -INFINITY;
  for (std::int64_t j = lane; j < length; j += cuda::kWarpSize) max = fmaxf(max, scale * row[j]);
  max = cuda::warp_max(max);
  float sum = 0;
  for (std::int64_t j = lane; j < length; j += cuda::kWarpSize) sum += row[j] = expf(scale * row[j] - max);
  sum = cuda::warp_sum(sum);
  for (std::int64_t j = lane; j < length; j += cuda::kWarpSize) row[j] /= sum;
}

struct Inputs {
  Tensor q, k, v, out, lse;
};
Inputs make_inputs(cuda::CudaBackend& backend, std::int64_t tq, std::int64_t tk) {
  const std::int64_t width = kHeads * kHeadWidth;
  return {random_device_tensor(backend, {kBatch, tq, width}, 1), random_device_tensor(backend, {kBatch, tk, width}, 2),
          random_device_tensor(backend, {kBatch, tk, width}, 3), backend.empty({kBatch, tq, width}, DType::f32),
          backend.empty({kBatch, kHeads, tq}, DType::f32)};
}

const double kScale = 0.125;  // 1 / sqrt(64)

// args: Tq, Tk
void BM_attention_forward(benchmark::State& state) {
  auto backend = cuda_backend_or_skip(state);
  if (!backend) return;
  Inputs in = make_inputs(*backend, state.range(0), state.range(1));
  for (auto _ : state) {
    backend->attention_forward(in.q, in.k, in.v, kHeads, nullptr, false, kScale, {}, in.out, in.lse);
    backend->synchronize("cuda_attention_bench");
  }
}

void BM_naive_attention_forward(benchmark::State& state) {
  auto backend = cuda_backend_or_skip(state);
  if (!backend) return;
  const std::int64_t tq = state.range(0), tk = state.range(1), width = kHeads * kHeadWidth;
  Inputs in = make_inputs(*backend, tq, tk);
  Tensor scores = backend->empty({kHeads, tq, tk}, DType::f32);  // one batch row at a time
  const cuda::LaunchShape softmax = cuda::warp_per_row_launch(kHeads * tq);
  const float one = 1.0f, zero = 0.0f;
  const char* op = "cuda_attention_bench";
  for (auto _ : state) {
    for (std::int64_t b = 0; b < kBatch; ++b) {
      const float* q = in.q.data<float>() + b * tq * width;
      const float* k = in.k.data<float>() + b * tk * width;
      const float* v = in.v.data<float>() + b * tk * width;
      float* out = in.out.data<float>() + b * tq * width;
      // Column-major: S^T [Tk, Tq] = K_h^T Q_h per head (a head is a column slice, stride 64).
      cuda::check_cublas(cublasSgemmStridedBatched(backend->cublas(), CUBLAS_OP_T, CUBLAS_OP_N, tk, tq, kHeadWidth, &one,
                                                   k, width, kHeadWidth, q, width, kHeadWidth, &zero,
                                                   scores.data<float>(), tk, tq * tk, kHeads),
                         "cublasSgemmStridedBatched(scores)", op);
      naive_softmax_rows<<<cuda::grid_of(softmax.grid_x), softmax.block, 0, backend->stream()>>>(
          scores.data<float>(), kHeads * tq, tk, static_cast<float>(kScale));
      cuda::check_launch("naive_softmax_rows", op);
      // O_h^T [64, Tq] = V_h^T [64, Tk] P^T [Tk, Tq].
      cuda::check_cublas(cublasSgemmStridedBatched(backend->cublas(), CUBLAS_OP_N, CUBLAS_OP_N, kHeadWidth, tq, tk, &one,
                                                   v, width, kHeadWidth, scores.data<float>(), tk, tq * tk, &zero, out,
                                                   width, kHeadWidth, kHeads),
                         "cublasSgemmStridedBatched(output)", op);
    }
    backend->synchronize(op);
  }
}

void BM_attention_backward(benchmark::State& state) {
  auto backend = cuda_backend_or_skip(state);
  if (!backend) return;
  Inputs in = make_inputs(*backend, state.range(0), state.range(1));
  backend->attention_forward(in.q, in.k, in.v, kHeads, nullptr, false, kScale, {}, in.out, in.lse);
  Tensor dout = random_device_tensor(*backend, in.out.shape(), 4);
  Tensor dq = backend->empty(in.q.shape(), DType::f32), dk = backend->empty(in.k.shape(), DType::f32);
  Tensor dv = backend->empty(in.v.shape(), DType::f32);
  for (auto _ : state) {
    backend->attention_backward(in.q, in.k, in.v, kHeads, nullptr, false, kScale, {}, in.out, in.lse, dout, dq, dk, dv);
    backend->synchronize("cuda_attention_bench");
  }
}

// Self-attention at T = 128 .. 8192 (the PyTorch peer, bench/cuda_torch_peer.py, times the same
// shapes), and decoding steps.
void self_attention(benchmark::internal::Benchmark* b) {
  for (std::int64_t t : {128, 512, 2048, 8192}) b->Args({t, t});
  b->Args({1, 512})->Args({1, 2048})->UseRealTime()->Unit(benchmark::kMicrosecond);
}

void self_attention_backward(benchmark::internal::Benchmark* b) {
  for (std::int64_t t : {128, 512, 2048, 8192}) b->Args({t, t});
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_attention_forward)->Apply(self_attention);
BENCHMARK(BM_naive_attention_forward)->Apply(self_attention);
BENCHMARK(BM_attention_backward)->Apply(self_attention_backward);

}  // namespace
}  // namespace trepro::bench

BENCHMARK_MAIN();
