// Why Highway and not plain vector code: in ISO C++ mode GCC does not contract a * b + c into an
// FMA, and 16 accumulators of 8 floats plus the two operands spill on a 16-register AVX2 file;
// both halve the measured "peak" (model_bench once reported 55 GFLOP/s for one Zen 3 core whose
// GEMM reaches 88). MulAdd is one FMA instruction, and 12 chains (plus the two operands) fit in
// 16 registers while exceeding FMA latency x throughput (4 cycles x 2 pipes on Zen 3/4 and Intel
// since Skylake: 8 chains; measured here, 8 reach ~90% of 12).
#include "bench/fma_peak.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/fma_peak.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace trepro::bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Runs `steps` rounds of kChains independent FMAs; returns the FLOPs done and stores a value that
// depends on every chain, so that no round can be optimized away. (Vectors in an array are fine
// on the fixed-width x86 targets this project compiles.)
double fma_chains(std::int64_t steps, float* sink) {
  constexpr int kChains = 12;
  const hn::ScalableTag<float> d;
  const auto a = hn::Set(d, 0.999999f), b = hn::Set(d, 1e-7f);
  hn::Vec<decltype(d)> chains[kChains];
  for (int c = 0; c < kChains; ++c) chains[c] = hn::Set(d, 0.1f * static_cast<float>(c + 1));
  for (std::int64_t i = 0; i < steps; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) chains[c] = hn::MulAdd(chains[c], a, b);
  }
  auto sum = chains[0];
  for (int c = 1; c < kChains; ++c) sum = hn::Add(sum, chains[c]);
  *sink = hn::GetLane(sum);
  return 2.0 * kChains * static_cast<double>(hn::Lanes(d)) * static_cast<double>(steps);
}

}  // namespace trepro::bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace trepro::bench {

HWY_EXPORT(fma_chains);

double fma_peak_gflops(int threads) {
  constexpr std::int64_t kSteps = 150'000'000;  // ~0.25 s per thread on a 2.7 GHz AVX2 core
  std::vector<double> flops(static_cast<std::size_t>(threads));
  std::vector<float> sink(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  const auto start = std::chrono::steady_clock::now();
  for (int w = 0; w < threads; ++w) {
    const auto i = static_cast<std::size_t>(w);
    pool.emplace_back([&flops, &sink, i] { flops[i] = HWY_DYNAMIC_DISPATCH(fma_chains)(kSteps, &sink[i]); });
  }
  for (std::thread& t : pool) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double total = 0;
  for (double f : flops) total += f;
  return total / seconds * 1e-9;
}

}  // namespace trepro::bench
#endif  // HWY_ONCE
