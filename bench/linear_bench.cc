// linear (the GEMM) of the optimized CPU backend against OpenBLAS cblas_sgemm and Eigen, same
// process, same shapes, same thread count. Counters: GFLOP/s of each and the speed ratios
// x_openblas = t_openblas / t_cpu and x_eigen = t_eigen / t_cpu (> 1: the CPU backend is faster).
//
// Shapes are the Transformer's: rows = tokens, (K, M) = (d_model, d_model) for the attention
// projections, (512, 2048) and (2048, 512) for the FFN, (512, 37000) for the vocabulary.
#include <cblas.h>

#include <chrono>
#include <cstdint>

#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "core/random_tensor.h"

namespace trepro::bench {
namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void set_peer_threads(int threads) {
  openblas_set_num_threads(threads);
  Eigen::setNbThreads(threads);
}

// Times `ours` in the benchmark loop, then the peers, and sets the counters.
template <class Ours, class Blas, class EigenPeer>
void run_with_peers(benchmark::State& state, double flops, Ours&& ours, Blas&& blas, EigenPeer&& eigen) {
  ours();
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) ours();
  const double t_ours =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / static_cast<double>(state.iterations());
  const double t_blas = seconds_per_call(blas), t_eigen = seconds_per_call(eigen);
  state.counters["GFLOPs"] = flops / t_ours * 1e-9;
  state.counters["openblas_GFLOPs"] = flops / t_blas * 1e-9;
  state.counters["eigen_GFLOPs"] = flops / t_eigen * 1e-9;
  state.counters["x_openblas"] = t_blas / t_ours;
  state.counters["x_eigen"] = t_eigen / t_ours;
}

// y [N, M] = x [N, K] w^T, w [M, K]
void BM_LinearForward(benchmark::State& state) {
  const std::int64_t n = state.range(0), k = state.range(1), m = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  set_peer_threads(threads);
  auto backend = cpu_backend(threads);
  Tensor x = random_tensor(*backend, {n, k}, 1), w = random_tensor(*backend, {m, k}, 2);
  Tensor y = backend->empty({n, m}, DType::f32);
  Matrix y_peer(n, m);
  Eigen::Map<const Matrix> X(x.data<float>(), n, k), W(w.data<float>(), m, k);
  run_with_peers(
      state, 2.0 * n * k * m, [&] { backend->linear_forward(x, w, nullptr, Activation::none, y, nullptr); },
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, m, k, 1.0f, x.data<float>(), k, w.data<float>(), k,
                    0.0f, y_peer.data(), m);
      },
      [&] { y_peer.noalias() = X * W.transpose(); });
}

// dx [N, K] = dy w;  dw [M, K] += dy^T x
void BM_LinearBackward(benchmark::State& state) {
  const std::int64_t n = state.range(0), k = state.range(1), m = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  set_peer_threads(threads);
  auto backend = cpu_backend(threads);
  Tensor x = random_tensor(*backend, {n, k}, 1), w = random_tensor(*backend, {m, k}, 2);
  Tensor dy = random_tensor(*backend, {n, m}, 3);
  Tensor dx = backend->empty({n, k}, DType::f32), dw = backend->zeros({m, k}, DType::f32);
  Matrix dx_peer(n, k), dw_peer = Matrix::Zero(m, k);
  Eigen::Map<const Matrix> X(x.data<float>(), n, k), W(w.data<float>(), m, k), DY(dy.data<float>(), n, m);
  run_with_peers(
      state, 4.0 * n * k * m, [&] { backend->linear_backward(x, w, nullptr, Activation::none, dy, &dx, dw, nullptr); },
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, k, m, 1.0f, dy.data<float>(), m, w.data<float>(), k,
                    0.0f, dx_peer.data(), k);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, k, n, 1.0f, dy.data<float>(), m, x.data<float>(), k,
                    1.0f, dw_peer.data(), k);
      },
      [&] {
        dx_peer.noalias() = DY * W;
        dw_peer.noalias() += DY.transpose() * X;
      });
}

void transformer_shapes(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    for (std::int64_t rows : {512, 2048, 8192}) {
      b->Args({rows, 512, 512, threads});
      b->Args({rows, 512, 2048, threads});
      b->Args({rows, 2048, 512, threads});
    }
    b->Args({1024, 1024, 4096, threads});
    b->Args({1024, 512, 37000, threads});
  }
  b->ArgNames({"rows", "K", "M", "threads"});
  b->Unit(benchmark::kMillisecond);
  b->UseRealTime();
  b->MinTime(0.3);
}

BENCHMARK(BM_LinearForward)->Apply(transformer_shapes);
// The decoder step's products at beam 4 (Multi30K model: d 256, vocabulary 8000): 4 rows at
// batch 1, 128 at batch 32; the vocabulary projection is the largest.
void decode_shapes(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    for (std::int64_t rows : {4, 128}) {
      b->Args({rows, 256, 256, threads});
      b->Args({rows, 256, 8000, threads});
    }
  }
  b->ArgNames({"rows", "K", "M", "threads"});
  b->Unit(benchmark::kMicrosecond);
  b->UseRealTime();
}
BENCHMARK(BM_LinearForward)->Name("BM_LinearForwardDecode")->Apply(decode_shapes);
BENCHMARK(BM_LinearBackward)->Apply(transformer_shapes);

}  // namespace
}  // namespace trepro::bench
