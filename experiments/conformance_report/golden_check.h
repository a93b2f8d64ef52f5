// `trepro check`: a user's model outputs, as files, against the committed golden outputs of the
// golden model cases (golden/MANIFEST.json), under the manifest's tolerance rule; the results in
// the report format of reports/conformance_schema.json, as the Python verdict
// (python/trepro_verdict) writes them from a callable.
//
// For the case <case> computed in <dtype> (float64 or float32), the outputs are the file
// <folder>/<case>.<dtype>.safetensors in the format of `trepro forward --grads --out`: logits,
// loss and grad.<parameter>, float64 or float32. A case without its file, or a tensor the file
// lacks, is "not provided"; a gradient of a parameter the case does not have fails.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trepro::conform {

struct CheckOptions {
  std::string golden_dir;             // holds MANIFEST.json and data/
  std::string outputs_dir;
  std::string precision;              // float64 or float32; empty: the file's logits' dtype
  std::vector<std::string> cases;     // shell globs over "<case>/<dtype>"; empty: every model case
};

// The results, one per judged golden tensor (and per unexpected gradient), in report order.
// Throws std::invalid_argument naming the file when a golden file differs from its manifest
// sha256, or an output file cannot be read.
nlohmann::json check_outputs(const CheckOptions& options);
// "sha256:" + the sha256 of the canonical JSON of the manifest's tolerances (every case's entry
// and the zero-gradient rule): the numbers these verdicts depend on.
std::string manifest_tolerance_version(const nlohmann::json& manifest);

}  // namespace trepro::conform
