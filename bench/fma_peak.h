// The FMA throughput of this machine, measured: the denominator of model_bench's peak_fraction.
#pragma once

namespace trepro::bench {

// GFLOP/s of `threads` threads each running independent chains of fused multiply-adds at the
// widest vector of the best Highway target of this CPU (2 FLOPs per lane per FMA).
double fma_peak_gflops(int threads);

}  // namespace trepro::bench
