#include "bench/bench_support.h"

#include <fstream>
#include <string>

#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"

namespace trepro::bench {

std::unique_ptr<Backend> cpu_backend(int threads) {
  const std::string name = cpu::default_cpu_backend_name();
  return cpu::make_cpu_backend(cpu::target_from_name(name.substr(4)), threads);
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
