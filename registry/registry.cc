#include "registry/registry.h"

#include <stdexcept>

#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/thread_pool.h"
#include "reference/reference_backend.h"
#include "registry/plugin_backend.h"
#if defined(TR_WITH_CUDA)
#include "optimized/cuda/cuda_backend.h"
#endif

namespace trepro {

std::vector<BackendInfo> available_backends() {
  std::vector<BackendInfo> backends = {
      {"reference-f32", DType::f32, "Eigen reference, float32",
       [] { return make_reference_backend(DType::f32); }},
      {"reference-f64", DType::f64, "Eigen reference, float64 (the ground truth)",
       [] { return make_reference_backend(DType::f64); }},
  };
  // The optimized CPU backend once per compiled SIMD target, so that the suite tests each.
  for (const cpu::CpuTarget& t : cpu::cpu_backend_targets()) {
    backends.push_back({t.backend_name, DType::f32, "Highway SIMD, float32, target " + t.backend_name.substr(4),
                        [target = t.target] { return cpu::make_cpu_backend(target); }});
  }
#if defined(TR_WITH_CUDA)
  // Built with CUDA, listed only when this machine has a usable device.
  if (cuda_device_status().available) {
    backends.push_back({"cuda", DType::f32, "CUDA kernels + cuBLAS, float32, device 0", [] { return make_cuda_backend(); }});
  }
#endif
  // Plugins (core/plugin_abi.h) from TREPRO_BACKEND_PLUGINS, once per dtype they have functions for.
  for (const std::string& path : plugin_paths()) {
    std::shared_ptr<const Plugin> plugin = Plugin::load(path);
    for (DType dtype : plugin->dtypes()) {
      const std::string name = plugin_backend_name(*plugin, dtype);
      for (const BackendInfo& info : backends) {
        if (info.name == name) throw std::invalid_argument("backend plugin " + path + ": " + name + " is already the name of a backend");
      }
      std::unique_ptr<Backend> made = make_plugin_backend(plugin, dtype);
      std::size_t provided = 0;
      for (OpDirection op : every_op_direction()) provided += made->provides(op) ? 1 : 0;
      backends.push_back({name, dtype,
                          "plugin " + path + ": " + plugin->table().description + "; provides " + std::to_string(provided) +
                              " of " + std::to_string(every_op_direction().size()) +
                              " op x directions (the rest are the reference's in a model, not provided in tests)",
                          [plugin, dtype] { return make_plugin_backend(plugin, dtype); }});
    }
  }
  return backends;
}

std::unique_ptr<Backend> make_backend(const std::string& name) {
  // "cpu": the best compiled target, or the one TREPRO_CPU_TARGET forces.
  if (name == "cpu") return make_backend(cpu::default_cpu_backend_name());
  std::string names;
  for (const BackendInfo& info : available_backends()) {
    if (info.name == name) return info.create();
    names += (names.empty() ? "" : ", ") + info.name;
  }
  const std::string reason = unavailable_reason(name);
  if (!reason.empty()) throw std::invalid_argument("backend \"" + name + "\" is not available: " + reason + "; available are " + names);
  throw std::invalid_argument("unknown backend \"" + name + "\": available are " + names);
}

std::string unavailable_reason(const std::string& name) {
  if (name != "cuda") return "";
#if defined(TR_WITH_CUDA)
  const CudaDeviceStatus status = cuda_device_status();
  return status.available ? "" : "this build has the CUDA backend, but no GPU is usable here (" + status.reason + ")";
#else
  return "this build has no CUDA backend (nvcc was not found, or TR_WITH_CUDA=OFF)";
#endif
}

std::string default_backend_name() {
  for (const BackendInfo& info : available_backends()) {
    if (info.name == "cuda") return info.name;
  }
  return cpu::default_cpu_backend_name();
}

std::unique_ptr<Backend> make_reference_backend(DType dtype) {
  if (dtype == DType::f32) return std::make_unique<reference::ReferenceBackend<float>>();
  if (dtype == DType::f64) return std::make_unique<reference::ReferenceBackend<double>>();
  throw std::invalid_argument("the reference backend is float32 or float64, not " + std::string(dtype_name(dtype)));
}

std::unique_ptr<Backend> make_fastest_backend(DType dtype) {
  if (dtype != DType::f32) return make_reference_backend(dtype);
  return make_backend(default_backend_name());
}

int default_host_threads() { return cpu::default_thread_count(); }

}  // namespace trepro
