// `trepro check OUTPUTS --out REPORT.json [--golden DIR] [--precision float64|float32]
// [--cases PATTERN]... [--expectations FILE]`: a model's outputs, as files, against the committed
// golden outputs (experiments/conformance_report/golden_check.h), a verdict and a ratio per
// tensor, in the report format of the Python verdict.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "core/sha256.h"
#include "experiments/commands/commands.h"
#include "experiments/conformance_report/conform_report.h"
#include "experiments/conformance_report/golden_check.h"
#include "experiments/run_info.h"

namespace trepro::cli {

void add_check_command(CLI::App& app) {
  CLI::App* cmd = add_command(app, "check",
      "A model's output files (<case>.<dtype>.safetensors, as forward writes them) against the golden outputs (JSON)",
      "trepro check outputs --out check.json");
  auto options = std::make_shared<conform::CheckOptions>();
  auto out = std::make_shared<std::string>();
  auto expectations = std::make_shared<std::string>();
  cmd->add_option("outputs", options->outputs_dir, "Folder of <case>.<float64|float32>.safetensors: logits, loss, grad.<name>")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--out", *out, "The report (reports/conformance_schema.json)")->required();
  cmd->add_option("--golden", options->golden_dir, "The golden folder (default: $TREPRO_GOLDEN_DIR, else this checkout's)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--precision", options->precision,
                  "What the model computed in, float64 or float32 (default: the dtype of each file's logits)");
  cmd->add_option("--cases", options->cases, "Only the cases matching these globs over <case>/<dtype>");
  cmd->add_option("--expectations", *expectations, "Known failures: PATTERN  # REASON a line (xfail)")
      ->check(CLI::ExistingFile);
  cmd->callback([options, out, expectations] {
    if (options->golden_dir.empty()) {
      const char* env = std::getenv("TREPRO_GOLDEN_DIR");
      options->golden_dir = env && *env ? env : std::string(TREPRO_SOURCE_DIR) + "/golden";
    }
    const std::string manifest_path = options->golden_dir + "/MANIFEST.json";
    const nlohmann::json manifest = nlohmann::json::parse(read_file(manifest_path));
    nlohmann::json results = conform::check_outputs(*options);
    const conform::Suite suite{git_commit(), sha256_file_hex(manifest_path), options->golden_dir};
    const nlohmann::json report = conform::build_envelope(
        "trepro check", {{"kind", "model"}, {"name", options->outputs_dir}}, suite,
        conform::manifest_tolerance_version(manifest), {{"manifest", manifest.value("comparison", "")}},
        std::move(results), expectations->empty() ? std::vector<conform::Expectation>{} : conform::read_expectations(*expectations),
        *expectations);
    write_file_atomically(*out, report.dump(1) + "\n");
    // A line per case, and one per tensor that failed or is an expected failure.
    std::string label;
    std::map<std::string, int> counts;
    std::vector<std::string> lines;
    const auto flush = [&] {
      if (label.empty()) return;
      std::cout << label << ": " << counts["pass"] << " pass, " << counts["fail"] << " fail, " << counts["xfail"]
                << " xfail, " << counts["not_provided"] << " not provided\n";
      for (const std::string& line : lines) std::cout << line;
      counts.clear();
      lines.clear();
    };
    for (const nlohmann::json& r : report.at("results")) {
      const std::string case_label = r.at("case").get<std::string>() + "/" + r.at("golden_dtype").get<std::string>();
      if (case_label != label) {
        flush();
        label = case_label;
      }
      const std::string verdict = r.at("verdict");
      ++counts[verdict];
      if (verdict != "fail" && verdict != "xfail") continue;
      char ratio[32] = "ratio inf";
      if (r.at("ratio").is_number()) std::snprintf(ratio, sizeof(ratio), "ratio %.3g", r.at("ratio").get<double>());
      lines.push_back("  " + verdict + " " + r.at("tensor").get<std::string>() + "  " + ratio + "  " +
                      r.value("detail", r.value("reason", std::string())) + "\n");
    }
    flush();
    const nlohmann::json& s = report.at("summary");
    std::cout << s.at("pass") << " pass, " << s.at("fail") << " fail, " << s.at("xfail") << " xfail, "
              << s.at("not_provided") << " not provided\nverdict: " << s.at("verdict").get<std::string>() << "\n";
    if (s.at("fail").get<int>() > 0) throw std::runtime_error("check: outputs fail the golden tolerances (" + *out + ")");
  });
}

}  // namespace trepro::cli
