#include "experiments/training/run_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "core/atomic_file.h"
#include "core/json_input.h"
#include "experiments/run_info.h"

namespace trepro {

namespace {

// The fields of a step entry that training_curve sums, each a finite number (tokens a count), so
// that a damaged history.jsonl or report is named with its line rather than failing inside the
// curve. Throws naming `where`.
void check_step_fields(const nlohmann::json& entry, const std::string& where) {
  for (const char* key : {"epoch", "loss", "learning_rate", "grad_norm", "seconds"}) {
    const auto value = entry.find(key);
    if (value == entry.end() || !value->is_number() || !std::isfinite(value->get<double>()) ||
        std::abs(value->get<double>()) > 1e300) {
      throw std::runtime_error(where + ": " + key + ": expected a number within +-1e300, got " +
                               (value == entry.end() ? std::string("nothing") : value->dump()));
    }
  }
  const auto tokens = entry.find("tokens");
  if (tokens == entry.end() || !tokens->is_number_integer() || tokens->get<std::int64_t>() < 0) {
    throw std::runtime_error(where + ": tokens: expected a count >= 0, got " +
                             (tokens == entry.end() ? std::string("nothing") : tokens->dump()));
  }
  const auto stopped = entry.find("stopped");
  if (stopped != entry.end() && !stopped->is_boolean()) {
    throw std::runtime_error(where + ": stopped: expected true or false, got " + stopped->dump());
  }
}

}  // namespace

RunHistory RunHistory::load(const std::string& path, std::int64_t last_step) {
  RunHistory history;
  if (!std::filesystem::exists(path)) return history;
  std::ifstream in(path);
  std::string line, kept;
  for (std::int64_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(number);
    nlohmann::json entry;
    try {
      entry = parse_json(line, where);
    } catch (const JsonInputError& e) {
      // A kill in the middle of an append cuts the last line short; everything it held is
      // recomputed. A bad line with lines after it is damage of another kind, which dropping
      // those lines would hide.
      if (in.peek() != std::ifstream::traits_type::eof()) {
        throw JsonInputError(std::string(e.what()) + " (not the last line, so not an append a kill cut short)");
      }
      break;
    }
    if (!entry.contains("kind") || !entry.contains("step")) {
      throw std::runtime_error(where + ": expected {\"kind\", \"step\", ...}");
    }
    if (!entry["kind"].is_string()) {
      throw std::runtime_error(where + ": kind: expected a string, got " + entry["kind"].dump());
    }
    if (!entry["step"].is_number_integer()) {
      throw std::runtime_error(where + ": step: expected an integer, got " + entry["step"].dump());
    }
    if (entry["step"].get<std::int64_t>() > last_step) continue;
    const std::string kind = entry["kind"];
    if (kind == "step") check_step_fields(entry, where);
    entry.erase("kind");
    (kind == "step" ? history.steps : history.validation).push_back(entry);
    kept += line + "\n";
  }
  write_file_atomically(path, kept);
  return history;
}

void RunHistory::append(const std::string& path, const std::string& kind, const nlohmann::json& entry) {
  (kind == "step" ? steps : validation).push_back(entry);
  nlohmann::json line = entry;
  line["kind"] = kind;
  std::ofstream out(path, std::ios::app);
  out << line.dump() << "\n";
  if (!out) throw std::runtime_error(path + ": cannot append");
}

std::int64_t RunHistory::validations_after(std::int64_t step) const {
  return std::count_if(validation.begin(), validation.end(),
                       [step](const nlohmann::json& entry) { return entry.at("step").get<std::int64_t>() > step; });
}

nlohmann::json build_facts(const Backend& backend) {
  // The reference backend is plain Eigen (whatever -march the build used); optimized backends
  // name their SIMD target after the last '-' ("cpu-avx2").
  const std::string name = backend.name();
  const auto dash = name.rfind('-');
  const std::string simd = name.starts_with("cpu") && dash != std::string::npos ? name.substr(dash + 1) : "none";
  return {{"git_commit", git_commit()},
          {"backend", name},
          {"simd_target", simd},
          {"threads", backend.threads()},
          {"hardware_threads", std::thread::hardware_concurrency()},
          {"cpu", cpu_model()},
          {"compiler", compiler_version()}};
}

nlohmann::json training_curve(const nlohmann::json& steps) {
  nlohmann::json curve = nlohmann::json::array();
  std::size_t first = 0;
  while (first < steps.size()) {
    const std::int64_t first_step = steps[first].at("step").get<std::int64_t>();
    const std::int64_t window_end = first_step <= kCurveDenseSteps
                                        ? first_step
                                        : (first_step + kCurveWindow - 1) / kCurveWindow * kCurveWindow;
    std::size_t end = first;
    double loss = 0.0, grad_norm = 0.0, grad_norm_max = 0.0, seconds = 0.0;
    std::int64_t tokens = 0;
    for (; end < steps.size() && steps[end].at("step").get<std::int64_t>() <= window_end; ++end) {
      const nlohmann::json& step = steps[end];
      loss += step.at("loss").get<double>();
      grad_norm += step.at("grad_norm").get<double>();
      grad_norm_max = std::max(grad_norm_max, step.at("grad_norm").get<double>());
      seconds += step.at("seconds").get<double>();
      tokens += step.at("tokens").get<std::int64_t>();
    }
    const nlohmann::json& last = steps[end - 1];
    const double count = static_cast<double>(end - first);
    curve.push_back({{"step", last.at("step")},
                     {"steps", end - first},
                     {"epoch", last.at("epoch")},
                     {"learning_rate", last.at("learning_rate")},
                     {"loss", loss / count},
                     {"grad_norm", grad_norm / count},
                     {"grad_norm_max", grad_norm_max},
                     {"tokens", tokens},
                     {"seconds", seconds}});
    first = end;
  }
  return curve;
}

namespace {

// What training_curve assumes of steps from outside: step numbers that increase and that a run
// can reach (its windows round them up to multiples of kCurveWindow, which must not overflow),
// and losses, gradient norms and seconds whose sums stay finite. Throws naming `source` and the
// entry.
void check_history_steps(const nlohmann::json& steps, const std::string& source) {
  constexpr std::int64_t kLargestStep = std::int64_t{1} << 40;
  std::int64_t previous = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::string where = source + ": steps[" + std::to_string(i) + "]";
    const nlohmann::json& step = steps[i].at("step");
    if (!step.is_number_integer() || step.get<std::int64_t>() <= previous || step.get<std::int64_t>() > kLargestStep) {
      throw std::runtime_error(where + ".step: expected an integer above the previous entry's (" +
                               std::to_string(previous) + ") and at most 2^40, got " + step.dump());
    }
    previous = step.get<std::int64_t>();
    check_step_fields(steps[i], where);
  }
}

}  // namespace

namespace {

// The test fields an earlier report holds (an unreadable one holds none: it is rewritten).
nlohmann::json previous_test_fields(const RunFolder& folder) {
  try {
    const std::optional<nlohmann::json> report = folder.read_report();
    const nlohmann::json test = report ? report->value("test", nlohmann::json::object()) : nlohmann::json::object();
    return test.is_object() ? test : nlohmann::json::object();
  } catch (const JsonInputError&) {  // not JSON, or not an object: rewritten whole
    return nlohmann::json::object();
  }
}

}  // namespace

nlohmann::json upgraded_run_report(nlohmann::json report, const std::string& source) {
  if (!report.is_object()) {
    throw std::runtime_error(source + ": expected a run report (a JSON object), got " + report.type_name());
  }
  const nlohmann::json version = report.value("schema_version", nlohmann::json());
  if (version == 2) return report;
  if (version != 1) throw std::runtime_error(source + ": schema_version " + version.dump() + ", expected 1 or 2");
  if (!report.contains("steps") || !report["steps"].is_array()) {
    throw std::runtime_error(source + ": schema_version 1 without a \"steps\" array");
  }
  try {
    check_history_steps(report["steps"], source);
    report["curve"] = training_curve(report["steps"]);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(source + ": \"steps\" needs step, epoch, loss, learning_rate, grad_norm, tokens and "
                             "seconds in every entry: " + e.what());
  }
  report.erase("steps");
  report["schema_version"] = 2;
  return report;
}

nlohmann::json run_timings(const nlohmann::json& steps) {
  double seconds = 0.0;
  std::int64_t tokens = 0, timed_tokens = 0, stopped = 0;
  for (const nlohmann::json& step : steps) {
    const std::int64_t step_tokens = step.value("tokens", std::int64_t{0});
    tokens += step_tokens;
    if (step.value("stopped", false)) {
      ++stopped;
      continue;
    }
    seconds += step.value("seconds", 0.0);
    timed_tokens += step_tokens;
  }
  return {{"train_seconds", seconds},
          {"target_tokens", tokens},
          {"target_tokens_per_second", seconds > 0 ? static_cast<double>(timed_tokens) / seconds : 0.0},
          {"stopped_steps", stopped}};
}

void write_run_report(const RunFolder& folder, nlohmann::json run, const RunHistory& history, const Backend& backend) {
  nlohmann::json test = previous_test_fields(folder);
  test.update(run.value("test", nlohmann::json::object()));
  nlohmann::json report = {{"schema_version", 2}, {"kind", "train"}, {"created", utc_now()}};
  report.update(run);
  report.update(build_facts(backend));
  report["test"] = test;
  report["curve"] = training_curve(history.steps);
  report["validation"] = history.validation;
  report["timings"] = run_timings(history.steps);
  report["peak_memory_bytes"] = peak_memory_bytes();
  folder.write_report(report);
}

}  // namespace trepro
