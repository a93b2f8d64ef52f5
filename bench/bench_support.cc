#include "bench/bench_support.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/philox.h"
#include "experiments/run_info.h"
#include "optimized/cpu/cpu_backend.h"
#include "reference/reference_backend.h"

namespace trepro::bench {

std::unique_ptr<Backend> cpu_backend(int threads) {
  const std::string name = cpu::default_cpu_backend_name();
  for (const cpu::CpuTarget& compiled : cpu::cpu_backend_targets()) {
    if (compiled.backend_name == name) return cpu::make_cpu_backend(compiled.target, threads);
  }
  throw std::logic_error("bench: the default CPU backend " + name + " is not a compiled target");
}

std::unique_ptr<Backend> reference_backend(int threads) {
  Eigen::setNbThreads(threads);
  return std::make_unique<reference::ReferenceBackend<float>>();
}

Tensor random_indices(Backend& backend, const Shape& shape, std::int64_t bound, std::uint64_t seed) {
  const PhiloxKey key{seed, 0, 0x1d5};  // not random_tensor's site: its own stream of values
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto drawn = static_cast<std::int64_t>(philox_uniform(key, i) * static_cast<double>(bound));
    values[i] = static_cast<double>(std::min(drawn, bound - 1));  // u * bound rounds up to bound near u = 1
  }
  return backend.upload(Tensor::from_values(shape, DType::i32, values));
}

void set_bandwidth(benchmark::State& state, double bytes, const SecondsPerCall& t) {
  state.counters["GB_per_s"] = bytes / t.ours * 1e-9;
  state.counters["reference_GB_per_s"] = bytes / t.reference * 1e-9;
}

void add_machine_context() {
  benchmark::AddCustomContext("cpu_model", cpu_model());
  benchmark::AddCustomContext("cpu_backend", cpu::default_cpu_backend_name());
  benchmark::AddCustomContext("compiler", "GCC " __VERSION__);
}

}  // namespace trepro::bench
