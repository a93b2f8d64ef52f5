// main() of the Google Benchmark suites here (the per-op benchmarks, linear, attention and the
// cuda model's): Google Benchmark's, with the machine description added to the output's context.
#include <benchmark/benchmark.h>

#include "bench/bench_support.h"

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  trepro::bench::add_machine_context();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
