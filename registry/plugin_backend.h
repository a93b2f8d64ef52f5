// Backend plugins (core/plugin_abi.h): shared libraries loaded with dlopen, each listed by the
// registry as "<name>-f32" and/or "<name>-f64" beside the project's backends.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/plugin_abi.h"

namespace trepro {

// A loaded, checked plugin library; closed when the last backend made from it is gone.
class Plugin {
 public:
  // Throws std::invalid_argument naming `path` and what was expected: a file dlopen cannot load,
  // no TREPRO_PLUGIN_ENTRY symbol, another ABI version, a bad name, no function at all.
  static std::shared_ptr<const Plugin> load(const std::string& path);
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const std::string& path() const { return path_; }
  const trepro_plugin& table() const { return *table_; }
  // The dtypes it has at least one function for.
  std::vector<DType> dtypes() const;

 private:
  Plugin(std::string path, void* handle, const trepro_plugin* table) : path_(std::move(path)), handle_(handle), table_(table) {}
  std::string path_;
  void* handle_;
  const trepro_plugin* table_;
};

// The paths of TREPRO_BACKEND_PLUGINS (colon-separated; empty entries skipped).
std::vector<std::string> plugin_paths();
// Appends `path` to this process's TREPRO_BACKEND_PLUGINS (the CLI's --plugin): the environment,
// so that the test binaries `trepro conform` runs see the plugin too.
void add_plugin_path(const std::string& path);
// "<plugin name>-f32" / "-f64".
std::string plugin_backend_name(const Plugin& plugin, DType dtype);
// The plugin's functions of `dtype` as a Backend: it provides the ops with a function; the others
// (and memory and the elementwise helpers) are the reference backend's of that dtype, so that a
// model still runs on it.
std::unique_ptr<Backend> make_plugin_backend(std::shared_ptr<const Plugin> plugin, DType dtype);

}  // namespace trepro
