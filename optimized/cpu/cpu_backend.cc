#include "optimized/cpu/cpu_backend.h"

#include <cstdlib>
#include <stdexcept>

#include "optimized/cpu/dispatch.h"

namespace trepro::cpu {

CpuBackend::CpuBackend(std::int64_t target, int threads)
    : target_(target), pool_(threads), workspace_(threads),
      context_{target, pool_, workspace_,
               std::make_shared<CachingAllocator>(
                   "cpu backend: host memory",
                   // Every allocation bin is a multiple of kHostAlignment, as aligned_alloc requires.
                   [](std::size_t bytes) { return std::aligned_alloc(kHostAlignment, bytes); },
                   [](void* block) { std::free(block); })} {}

std::string CpuBackend::name() const { return "cpu-" + target_name(target_); }

std::vector<CpuTarget> cpu_backend_targets() {
  std::vector<CpuTarget> targets;
  for (std::int64_t target : compiled_targets()) targets.push_back({"cpu-" + target_name(target), target});
  return targets;
}

std::string default_cpu_backend_name() {
  if (const char* forced = std::getenv("TREPRO_CPU_TARGET")) {
    try {
      return "cpu-" + target_name(target_from_name(forced));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("TREPRO_CPU_TARGET: ") + e.what());
    }
  }
  return cpu_backend_targets().front().backend_name;
}

std::unique_ptr<Backend> make_cpu_backend(std::int64_t target) { return make_cpu_backend(target, default_thread_count()); }

std::unique_ptr<Backend> make_cpu_backend(std::int64_t target, int threads) {
  return std::make_unique<CpuBackend>(target, threads);
}

}  // namespace trepro::cpu
