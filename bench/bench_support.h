// What every benchmark here shares: backends by thread count, timing a peer in the same process,
// and the machine description written into the output's context (random inputs: core/random_tensor.h).
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

// The first processor's model name with its family, model and stepping from /proc/cpuinfo:
// "AMD EPYC (family 25, model 1, stepping 1)".
std::string cpu_model();

// Adds the machine, the CPU target and the compiler to the benchmark output's context.
void add_machine_context();

}  // namespace trepro::bench
