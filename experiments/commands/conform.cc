// `trepro conform [--backend NAME]... --out DIR [--expectations FILE] [--tests BINARY]...`: do the
// backends agree with the reference? Runs the conformance binaries on each backend (every one this
// build lists, plugins included, or those named), prints a backend x op grid and writes per
// backend <DIR>/<backend>.json (reports/conformance_schema.json) and <DIR>/<backend>.md.
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "core/sha256.h"
#include "experiments/commands/commands.h"
#include "experiments/conformance_report/conform_report.h"
#include "experiments/run_info.h"
#include "registry/plugin_backend.h"
#include "registry/registry.h"

namespace trepro::cli {
namespace {

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The tests of `backend` in `binary`, each recording the ops it called (TREPRO_RECORD_OPS=1).
std::vector<conform::TestOutcome> run_tests(const std::string& binary, const std::string& backend,
                                            const std::filesystem::path& scratch) {
  std::string suffix = backend;
  for (char& c : suffix) c = c == '-' ? '_' : c;
  const std::filesystem::path out = scratch / (std::filesystem::path(binary).filename().string() + "." + suffix + ".json");
  const std::string command = "TREPRO_RECORD_OPS=1 " + quoted(binary) + " " + quoted("--gtest_filter=*/" + suffix) +
                              " " + quoted("--gtest_output=json:" + out.string()) + " > /dev/null 2>&1";
  std::system(command.c_str());  // a failing test exits nonzero: the report says which
  if (!std::filesystem::exists(out)) {
    throw std::runtime_error("conform: " + binary + " wrote no gtest report for " + backend + " (" + command + ")");
  }
  return conform::read_gtest_report(nlohmann::json::parse(read_file(out.string())),
                                    std::filesystem::path(binary).filename().string());
}

}  // namespace

void add_conform_command(CLI::App& app) {
  CLI::App* cmd = add_command(app, "conform",
      "Run the conformance suite on backends and plugins: a backend x op grid, JSON and Markdown reports",
      "trepro conform --backend reference-f32 --out conformance");
  auto names = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto expectations = std::make_shared<std::string>();
  auto binaries = std::make_shared<std::vector<std::string>>(std::vector<std::string>{TREPRO_OP_TESTS});
  cmd->add_option("--backend", *names, "A backend to check (repeatable; default: every backend listed, plugins included)");
  cmd->add_option("--out", *out, "Folder of the reports: <backend>.json and <backend>.md")->required();
  cmd->add_option("--expectations", *expectations,
                  "Known failures: a pattern over <backend>/<op>/<direction>/<dtype> and '# reason' a line (xfail)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--tests", *binaries, "Conformance binaries to run (default: this build's op_tests)")
      ->capture_default_str()
      ->check(CLI::ExistingFile);
  cmd->callback([names, out, expectations, binaries] {
    std::vector<std::string> chosen = *names;
    if (chosen.empty()) {
      for (const BackendInfo& info : available_backends()) chosen.push_back(info.name);
    }
    std::vector<std::string> plugin_names;
    for (const std::string& path : plugin_paths()) {
      std::shared_ptr<const Plugin> plugin = Plugin::load(path);
      for (DType dtype : plugin->dtypes()) plugin_names.push_back(plugin_backend_name(*plugin, dtype));
    }
    const std::vector<conform::Expectation> expected =
        expectations->empty() ? std::vector<conform::Expectation>{} : conform::read_expectations(*expectations);
    const std::string golden_dir = std::string(TREPRO_SOURCE_DIR) + "/golden";
    const conform::Suite suite{git_commit(), sha256_file_hex(golden_dir + "/MANIFEST.json"), golden_dir};
    std::filesystem::create_directories(*out);
    const std::filesystem::path scratch = std::filesystem::path(*out) / ".conform-gtest";
    std::filesystem::create_directories(scratch);

    const std::vector<OpDirection> ops = every_op_direction();
    const auto width = [](Op op) { return static_cast<int>(std::max<std::size_t>(std::string(op_name(op)).size(), 10)); };
    std::cout << std::left << std::setw(22) << "backend";
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].direction == Direction::forward) std::cout << " " << std::setw(width(ops[i].op)) << op_name(ops[i].op);
    }
    std::cout << "\n";
    bool failed = false;
    for (const std::string& name : chosen) {
      std::unique_ptr<Backend> backend = make_backend(name);
      std::vector<conform::TestOutcome> tests;
      for (const std::string& binary : *binaries) {
        for (conform::TestOutcome& t : run_tests(binary, backend->name(), scratch)) tests.push_back(std::move(t));
      }
      const bool plugin = std::find(plugin_names.begin(), plugin_names.end(), backend->name()) != plugin_names.end();
      const nlohmann::json report = conform::build_report(*backend, plugin, tests, expected, *expectations, suite);
      write_file_atomically((std::filesystem::path(*out) / (backend->name() + ".json")).string(), report.dump(1) + "\n");
      write_file_atomically((std::filesystem::path(*out) / (backend->name() + ".md")).string(),
                            conform::report_markdown(report));
      // One column per op: forward/backward, or forward alone for an op with one call.
      std::cout << std::setw(22) << backend->name();
      const nlohmann::json& results = report.at("results");
      for (std::size_t i = 0; i < results.size(); ++i) {
        if (ops[i].direction == Direction::backward) continue;
        std::string cell = conform::grid_cell(results[i]);
        if (i + 1 < ops.size() && ops[i + 1].direction == Direction::backward) cell += "/" + conform::grid_cell(results[i + 1]);
        std::cout << " " << std::setw(width(ops[i].op)) << cell;
      }
      const nlohmann::json& s = report.at("summary");
      std::cout << "  " << s.at("pass") << " pass, " << s.at("fail") << " fail, " << s.at("xfail") << " xfail, "
                << s.at("not_provided") << " not provided\n";
      failed = failed || s.at("fail").get<int>() > 0;
    }
    std::filesystem::remove_all(scratch);
    std::cout << "(forward/backward; - not provided; reports in " << *out << ")\n";
    if (failed) throw std::runtime_error("conform: a backend fails conformance tests (FAIL in the grid; the reports say which)");
  });
}

}  // namespace trepro::cli
