// The paper-base shapes (Vaswani et al. 2017, the base model) the per-op benchmarks
// (bench/<op>_bench.cc) share, and their registration: each shape at 1 and 2 threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

namespace trepro::bench {

inline constexpr std::int64_t kModelWidth = 512;
inline constexpr std::int64_t kFfnWidth = 2048;
inline constexpr int kHeadCount = 8;
inline constexpr std::int64_t kHeadWidth = 64;
inline constexpr std::int64_t kVocab = 37000;
// A training batch of 32 sentences x 128 tokens (4096 rows), and a decoding step of beam 4 on
// one sentence (4 rows).
inline constexpr std::int64_t kBatch = 32;
inline constexpr std::int64_t kLength = 128;
inline constexpr std::int64_t kBeams = 4;
inline constexpr std::int64_t kTrainRows = kBatch * kLength;

// Registers each shape (its arguments named `names`) at 1 and then 2 threads, the thread count
// being the last argument. The smallest shape goes first, so "<names of shape 0>/threads:1" is
// the quick smoke test (bench/op_benches_test.sh). Wall-clock time: the CPU backend computes on
// its pool's threads, whose CPU time the calling thread's clock would miss.
inline void at_1_and_2_threads(benchmark::internal::Benchmark* b, const std::vector<std::vector<std::int64_t>>& shapes,
                               std::vector<std::string> names) {
  for (std::int64_t threads : {1, 2}) {
    for (std::vector<std::int64_t> args : shapes) {
      args.push_back(threads);
      b->Args(args);
    }
  }
  names.emplace_back("threads");
  b->ArgNames(names);
  b->Unit(benchmark::kMicrosecond);
  b->UseRealTime();
}

// Rows of a decoding step, then of a training batch: {{kBeams}, {kTrainRows}} as "rows".
inline void decode_and_train_rows(benchmark::internal::Benchmark* b) {
  at_1_and_2_threads(b, {{kBeams}, {kTrainRows}}, {"rows"});
}

}  // namespace trepro::bench
