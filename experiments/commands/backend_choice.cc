#include "experiments/commands/backend_choice.h"

#include <stdexcept>

#include "registry/registry.h"

namespace trepro::cli {

void BackendChoice::add_options(CLI::App& cmd) {
  cmd.add_option("--backend", name, default_is_fastest ? "backend name (see `trepro backends`); default: the fastest of --dtype (cuda, else cpu)"
                                    : "backend name (see `trepro backends`); default: the reference of --dtype");
  dtype_option = cmd.add_option("--dtype", dtype, "float32 or float64 (chooses the default backend when --backend is absent)")
      ->check(CLI::IsMember({"float32", "float64"}));
}

std::unique_ptr<Backend> BackendChoice::make() const {
  const DType wanted = parse_dtype(dtype);
  if (name.empty()) return default_is_fastest ? make_fastest_backend(wanted) : make_reference_backend(wanted);
  std::unique_ptr<Backend> backend = make_backend(name);
  if (dtype_option && dtype_option->count() > 0 && backend->dtype() != wanted) {
    throw std::invalid_argument("--backend " + name + " computes in " + std::string(dtype_name(backend->dtype())) +
                                ", not --dtype " + dtype);
  }
  return backend;
}

}  // namespace trepro::cli
