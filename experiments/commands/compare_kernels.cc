// `trepro compare-kernels [--backend NAME] [--precision float32|bf16] --out FILE.json
// [--markdown FILE.md]`: how accurate the fast kernels are, against reference-f64
// (experiments/kernel_accuracy/accuracy_report.h).
#include <iostream>
#include <memory>
#include <string>

#include "core/atomic_file.h"
#include "core/config.h"
#include "experiments/commands/commands.h"
#include "experiments/kernel_accuracy/accuracy_report.h"
#include "registry/registry.h"

namespace trepro::cli {

void add_compare_kernels_command(CLI::App& app) {
  CLI::App* cmd = add_command(app, "compare-kernels", "Error of a backend's kernels against reference-f64 (JSON)",
      "trepro compare-kernels --backend cpu --out compare_kernels.json --markdown compare_kernels.md");
  auto name = std::make_shared<std::string>("cpu");
  auto out = std::make_shared<std::string>();
  auto table = std::make_shared<std::string>();
  auto precision = std::make_shared<std::string>("float32");
  cmd->add_option("--backend", *name, "Backend to measure (default: cpu, the best CPU target)");
  cmd->add_option("--precision", *precision, "The measured backend's precision, as train.precision (bf16: cuda only)")
      ->check(CLI::IsMember({"float32", "bf16"}));
  cmd->add_option("--out", *out, "Output JSON file")->required();
  cmd->add_option("--markdown", *table, "Also write the table as Markdown to this file");
  cmd->callback([name, out, table, precision] {
    std::unique_ptr<Backend> backend = make_backend(*name);
    TrainConfig train;
    train.precision = *precision == "bf16" ? Precision::bf16 : Precision::float32;
    apply_precision(train, *backend);
    const nlohmann::json report = kernel_accuracy::accuracy_report(*backend, *precision);
    const std::string markdown = kernel_accuracy::accuracy_markdown(report);
    write_file_atomically(*out, report.dump(2) + "\n");
    if (!table->empty()) write_file_atomically(*table, markdown);
    std::cout << markdown;
  });
}

}  // namespace trepro::cli
