// What every benchmark here shares: backends by thread count, timing a peer in the same process,
// and the machine description written into the output's context (random inputs: core/random_tensor.h).
// The per-op benchmarks (bench/<op>_bench.cc) build their inputs on both backends and time them
// with time_on_both_backends.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include "core/backend.h"

namespace trepro::bench {

// The optimized CPU backend of the best compiled target (or TREPRO_CPU_TARGET's) with `threads`.
std::unique_ptr<Backend> cpu_backend(int threads);

// The float reference backend, its Eigen (OpenMP) threads set to `threads`: else its GEMMs and
// reductions would use every core in the 1-thread rows and the ratio would compare unlike things.
std::unique_ptr<Backend> reference_backend(int threads);

// int32 values uniform in [0, bound) (token ids, labels, beam indices), the same for every backend.
Tensor random_indices(Backend& backend, const Shape& shape, std::int64_t bound, std::uint64_t seed);

// Mean seconds per call of f, calling it until at least min_seconds have passed (and at least
// twice, after one warm-up call).
template <class F>
double seconds_per_call(F&& f, double min_seconds = 0.5) {
  f();
  const auto start = std::chrono::steady_clock::now();
  int calls = 0;
  double elapsed = 0.0;
  while (calls < 2 || elapsed < min_seconds) {
    f();
    ++calls;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return elapsed / calls;
}

struct SecondsPerCall {
  double ours = 0.0, reference = 0.0;
};

// Times `ours` in the benchmark loop, then `reference` for at least as long as that loop ran (so
// --benchmark_min_time scales both), and sets x_reference = t_reference / t_ours (> 1: ours is
// faster). The warm-up call comes first because the CPU backend sizes its workspace on it.
template <class Ours, class Reference>
SecondsPerCall time_against_reference(benchmark::State& state, Ours&& ours, Reference&& reference) {
  ours();
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) ours();
  const double loop_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const SecondsPerCall t{loop_seconds / static_cast<double>(state.iterations()),
                         seconds_per_call(reference, loop_seconds)};
  state.counters["x_reference"] = t.reference / t.ours;
  return t;
}

// Builds the inputs with make(backend) on the optimized CPU backend and on the reference, both
// with `threads`, and times call(inputs, backend) on each (time_against_reference). Inputs are
// built apart so that neither backend reads the other's memory.
template <class Make, class Call>
SecondsPerCall time_on_both_backends(benchmark::State& state, int threads, Make&& make, Call&& call) {
  auto ours = cpu_backend(threads);
  auto reference = reference_backend(threads);
  auto mine = make(*ours);
  auto theirs = make(*reference);
  return time_against_reference(state, [&] { call(mine, *ours); }, [&] { call(theirs, *reference); });
}

// GB_per_s and reference_GB_per_s from the bytes one call reads plus the bytes it writes.
void set_bandwidth(benchmark::State& state, double bytes, const SecondsPerCall& t);

// Adds the machine, the CPU target and the compiler to the benchmark output's context.
void add_machine_context();

}  // namespace trepro::bench
