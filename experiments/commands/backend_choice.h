// --backend NAME / --dtype float32|float64, shared by the commands that run a model.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "core/backend.h"

namespace trepro::cli {

struct BackendChoice {
  std::string name;   // empty: the default backend of `dtype` (see `default_is_fastest`)
  // The training and decoding commands run on the fastest backend unless told otherwise;
  // `trepro forward` stays on the reference, the ground truth other tools compare against.
  bool default_is_fastest = true;
  std::string dtype = "float32";
  CLI::Option* dtype_option = nullptr;  // to tell an explicit --dtype from the default

  void add_options(CLI::App& cmd);
  // Throws std::invalid_argument when --backend and --dtype disagree or name nothing available.
  std::unique_ptr<Backend> make() const;
};

}  // namespace trepro::cli
