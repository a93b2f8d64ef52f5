// The backends this build and this machine can run: the reference in float and double, the
// optimized CPU backend once per compiled SIMD target, CUDA when built and a device is present.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/backend.h"

namespace trepro {

struct BackendInfo {
  std::string name;         // Backend::name() of what `create` returns
  DType dtype;              // its floating dtype
  std::string description;  // one line for `trepro backends`
  std::function<std::unique_ptr<Backend>()> create;
};

std::vector<BackendInfo> available_backends();
// Why a backend this project has is not available here ("cuda": built without CUDA, or no usable
// GPU on this machine, and why); empty for one that is, or a name the project does not have.
std::string unavailable_reason(const std::string& name);
// The name `make_fastest_backend(DType::f32)` gives: what the commands that train and decode use.
std::string default_backend_name();
// Throws std::invalid_argument listing the available names when `name` is not one of them (and,
// for a backend of the project that is not available here, why not).
// "cpu" names the optimized CPU backend of the best compiled target (or TREPRO_CPU_TARGET's).
std::unique_ptr<Backend> make_backend(const std::string& name);
// The reference backend for a dtype: the ground truth in tests and `trepro forward`'s default.
std::unique_ptr<Backend> make_reference_backend(DType dtype);
// The fastest backend of a dtype on this machine, the default of the commands that train and
// decode: float32 is `cuda` when a device is present, else the best `cpu-<target>`; float64 has
// only the reference.
std::unique_ptr<Backend> make_fastest_backend(DType dtype);
// The host threads a CPU backend made here computes with: TREPRO_THREADS, else the cores. A sweep
// that runs cells side by side divides them among its children.
int default_host_threads();

}  // namespace trepro
