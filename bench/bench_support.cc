#include "bench/bench_support.h"

#include <fstream>
#include <string>

#include "core/philox.h"
#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"

namespace trepro::bench {

std::unique_ptr<Backend> cpu_backend(int threads) {
  const std::string name = cpu::default_cpu_backend_name();
  return cpu::make_cpu_backend(cpu::target_from_name(name.substr(4)), threads);
}

Tensor random_tensor(Backend& backend, const Shape& shape, std::uint64_t seed) {
  Tensor host = Tensor::empty(shape, DType::f64);
  for (std::int64_t i = 0; i < host.numel(); ++i) host.set(i, 2.0 * philox_uniform({seed, 0, 0}, i) - 1.0);
  return backend.upload(host);
}

void add_machine_context() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  benchmark::AddCustomContext("cpu_model", model);
  benchmark::AddCustomContext("cpu_backend", cpu::default_cpu_backend_name());
  benchmark::AddCustomContext("compiler", "GCC " __VERSION__);
}

}  // namespace trepro::bench
