#include "bench/bench_support.h"

#include <fstream>
#include <map>
#include <string>

#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"

namespace trepro::bench {

std::unique_ptr<Backend> cpu_backend(int threads) {
  const std::string name = cpu::default_cpu_backend_name();
  return cpu::make_cpu_backend(cpu::target_from_name(name.substr(4)), threads);
}

// A cloud VM's model name can be a bare "AMD EPYC" for Zen 2, 3 and 4 alike: the family, model
// and stepping numbers tell them apart.
std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::map<std::string, std::string> fields;
  for (std::string line; std::getline(cpuinfo, line) && !line.empty();) {  // the first processor
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    fields[key] = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
  }
  return fields["model name"] + " (family " + fields["cpu family"] + ", model " + fields["model"] + ", stepping " +
         fields["stepping"] + ")";
}

void add_machine_context() {
  benchmark::AddCustomContext("cpu_model", cpu_model());
  benchmark::AddCustomContext("cpu_backend", cpu::default_cpu_backend_name());
  benchmark::AddCustomContext("compiler", "GCC " __VERSION__);
}

}  // namespace trepro::bench
