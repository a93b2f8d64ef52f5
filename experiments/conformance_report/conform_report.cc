#include "experiments/conformance_report/conform_report.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/sha256.h"
#include "experiments/run_info.h"

namespace trepro::conform {

std::vector<Expectation> read_expectations(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("expectations file " + path + ": cannot be read");
  std::vector<Expectation> out;
  std::string raw;
  for (int number = 1; std::getline(in, raw); ++number) {
    const auto first = raw.find_first_not_of(" \t\r");
    if (first == std::string::npos || raw[first] == '#') continue;
    const std::string line = raw.substr(first, raw.find_last_not_of(" \t\r") + 1 - first);
    const auto hash = line.find('#');
    auto trim = [](std::string s) {
      const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
      return b == std::string::npos ? std::string() : s.substr(b, e + 1 - b);
    };
    const std::string pattern = trim(line.substr(0, hash)), reason = hash == std::string::npos ? "" : trim(line.substr(hash + 1));
    const std::string where = path + ":" + std::to_string(number) + ": `" + line + "`: ";
    if (reason.empty()) throw std::invalid_argument(where + "an expectation needs a reason after '#'");
    if (pattern.empty() || pattern.find_first_of(" \t") != std::string::npos) {
      throw std::invalid_argument(where + "one pattern (no spaces) before '#'");
    }
    out.push_back({pattern, reason, number, 0});
  }
  return out;
}

std::vector<TestOutcome> read_gtest_report(const nlohmann::json& report, const std::string& binary) {
  std::vector<TestOutcome> out;
  for (const nlohmann::json& suite : report.at("testsuites")) {
    for (const nlohmann::json& t : suite.at("testsuite")) {
      TestOutcome o;
      const std::string name = t.at("name").get<std::string>();
      o.id = binary + ":" + t.at("classname").get<std::string>() + "." + name.substr(0, name.rfind('/'));
      o.result = t.contains("failures") ? "fail" : t.at("result") == "SKIPPED" ? "skip" : "pass";
      std::stringstream ops(t.value("ops", ""));
      for (std::string op; std::getline(ops, op, ',');) o.ops.push_back(op);
      o.not_provided = t.value("not_provided", "");
      if (t.contains("worst_ratio")) {
        o.worst_ratio = std::stod(t.at("worst_ratio").get<std::string>());
        o.atol = std::stod(t.at("worst_atol").get<std::string>());
        o.rtol = std::stod(t.at("worst_rtol").get<std::string>());
        o.check = t.at("worst_check").get<std::string>();
      }
      out.push_back(std::move(o));
    }
  }
  return out;
}

namespace {

nlohmann::json finite_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); }

nlohmann::json summarize(const nlohmann::json& results) {
  nlohmann::json s = {{"pass", 0}, {"fail", 0}, {"xfail", 0}, {"not_provided", 0}, {"xpass", 0}};
  double worst = -1;
  nlohmann::json worst_id;
  for (const nlohmann::json& r : results) {
    s[r.at("verdict").get<std::string>()] = s[r.at("verdict").get<std::string>()].get<int>() + 1;
    if (r.value("xpass", false)) s["xpass"] = s["xpass"].get<int>() + 1;
    const std::string v = r.at("verdict");
    if ((v == "pass" || v == "fail") && r.at("ratio").is_number() && r.at("ratio").get<double>() > worst) {
      worst = r.at("ratio").get<double>();
      worst_id = r.at("id");
    }
  }
  s["total"] = results.size();
  s["worst_ratio"] = worst < 0 ? nlohmann::json() : nlohmann::json(worst);
  s["worst_id"] = worst_id;
  // fail: any failure; pass: none, and something passed; xfail: nothing passed, every failure
  // expected; not_provided: nothing was judged (python/trepro_verdict/report.py's rule).
  s["verdict"] = s["fail"] > 0 ? "fail" : s["pass"] > 0 ? "pass" : s["xfail"] > 0 ? "xfail" : "not_provided";
  return s;
}

std::string commit_sha(const std::string& commit) {
  const std::string sha = commit.substr(0, commit.find('-'));
  return sha;
}

}  // namespace

nlohmann::json build_report(const Backend& backend, bool plugin, const std::vector<TestOutcome>& tests,
                            std::vector<Expectation> expectations, const std::string& expectations_file,
                            const Suite& suite) {
  nlohmann::json results = nlohmann::json::array(), tolerances = nlohmann::json::object();
  const std::string dtype(dtype_name(backend.dtype()));
  for (OpDirection op : every_op_direction()) {
    const std::string name = describe(op);
    nlohmann::json r = {{"id", backend.name() + "/" + op_name(op.op) + "/" + direction_name(op.direction) + "/" + dtype},
                        {"backend", backend.name()}, {"op", op_name(op.op)}, {"direction", direction_name(op.direction)},
                        {"dtype", dtype}, {"ratio", nullptr}, {"tolerance", nullptr}};
    if (!backend.provides(op)) {
      r["verdict"] = "not_provided";
      r["precision"] = nullptr;
      r["reason"] = "the backend does not provide " + name;
      results.push_back(r);
      continue;
    }
    r["precision"] = dtype;
    int passed = 0, failed = 0;
    std::vector<std::string> failing, missing;
    const TestOutcome* worst = nullptr;
    for (const TestOutcome& t : tests) {
      if (t.ops.empty() || t.ops.back() != name) continue;
      if (t.result == "pass") ++passed;
      if (t.result == "fail") {
        ++failed;
        failing.push_back(t.id);
      }
      if (t.result == "skip" && !t.not_provided.empty()) missing.push_back(t.not_provided);
      if (t.result != "skip" && t.worst_ratio >= 0 && (!worst || t.worst_ratio > worst->worst_ratio)) worst = &t;
    }
    if (worst) {
      r["ratio"] = finite_or_null(worst->worst_ratio);
      r["tolerance"] = {{"rule", "derived"}, {"atol", worst->atol}, {"rtol", worst->rtol}};
      tolerances[r["id"].get<std::string>()] = r["tolerance"];
      r["detail"] = "worst: " + worst->check + " in " + worst->id;
    }
    if (failed > 0) {
      r["verdict"] = "fail";
      std::string list;
      for (const std::string& f : failing) list += (list.empty() ? "" : ", ") + f;
      r["detail"] = std::to_string(failed) + " of " + std::to_string(failed + passed) + " tests fail: " + list;
    } else if (passed > 0) {
      r["verdict"] = "pass";
      if (!r["ratio"].is_number()) r["ratio"] = 0.0;  // known answers checked exactly
      if (r["tolerance"].is_null()) r["tolerance"] = {{"rule", "derived"}, {"atol", 0.0}, {"rtol", 0.0}};
      r["detail"] = r.value("detail", std::string("exact checks")) + "; " + std::to_string(passed) + " tests pass";
    } else {
      r["verdict"] = "not_provided";
      r["ratio"] = nullptr;
      r["precision"] = nullptr;
      std::sort(missing.begin(), missing.end());
      missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
      std::string list;
      for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
      r["reason"] = missing.empty() ? "no conformance test checks " + name
                                    : "its tests need " + list + ", which the backend does not provide";
    }
    results.push_back(r);
  }
  // Canonical JSON (sorted keys, no whitespace) of every tolerance a verdict used.
  const nlohmann::json rules = {
      {"derived", "conformance/support/tolerances.cc: |actual - expected| <= atol + rtol |expected| against the "
                  "float64 reference; ratio = the worst error / allowed of the op's tests"},
      {"attribution", "a test counts for the last op x direction it called on the backend"}};
  return build_envelope("trepro conform", {{"kind", plugin ? "plugin" : "backend"}, {"name", backend.name()}}, suite,
                        "sha256:" + sha256_hex(tolerances.dump()), rules, std::move(results), std::move(expectations),
                        expectations_file);
}

void apply_expectations(nlohmann::json& results, std::vector<Expectation>& expectations) {
  for (nlohmann::json& r : results) {
    for (Expectation& e : expectations) {
      if (fnmatch(e.pattern.c_str(), r["id"].get<std::string>().c_str(), 0) != 0) continue;
      if (r["verdict"] == "fail") {
        r["verdict"] = "xfail";
        r["reason"] = e.reason;
        ++e.matched;
      } else if (r["verdict"] == "pass") {
        r["xpass"] = true;
        r["reason"] = e.reason;
        ++e.matched;
      }
      break;
    }
  }
}

nlohmann::json build_envelope(const std::string& tool, const nlohmann::json& subject, const Suite& suite,
                              const std::string& tolerance_table_version, const nlohmann::json& rules,
                              nlohmann::json results, std::vector<Expectation> expectations,
                              const std::string& expectations_file) {
  apply_expectations(results, expectations);
  nlohmann::json entries = nlohmann::json::array();
  for (const Expectation& e : expectations) {
    entries.push_back({{"pattern", e.pattern}, {"reason", e.reason}, {"line", e.line}, {"matched", e.matched}});
  }
  const bool known = suite.commit != "unknown";
  nlohmann::json summary = summarize(results);
  return {
      {"schema_version", 1},
      {"kind", "conformance"},
      {"tool", {{"name", tool}, {"version", suite.commit}}},
      {"created", utc_now()},
      {"subject", subject},
      {"suite",
       {{"commit", known ? nlohmann::json(commit_sha(suite.commit)) : nlohmann::json()},
        {"dirty", known ? nlohmann::json(suite.commit.find("-dirty") != std::string::npos) : nlohmann::json()},
        {"golden_dir", suite.golden_dir},
        {"golden_manifest_sha256", suite.golden_manifest_sha256},
        {"tolerance_table_version", tolerance_table_version}}},
      {"rules", rules},
      {"expectations", {{"file", expectations_file.empty() ? nlohmann::json() : nlohmann::json(expectations_file)},
                        {"entries", entries}}},
      {"results", std::move(results)},
      {"summary", std::move(summary)},
  };
}

std::string grid_cell(const nlohmann::json& result) {
  const std::string v = result.at("verdict");
  if (v == "pass") return "pass";
  if (v == "fail") return "FAIL";
  if (v == "xfail") return "xfail";
  return "-";
}

std::string report_markdown(const nlohmann::json& report) {
  std::ostringstream md;
  const nlohmann::json& s = report.at("summary");
  const nlohmann::json& suite = report.at("suite");
  md << "# Conformance of " << report.at("subject").at("name").get<std::string>() << "\n\n"
     << "`trepro conform` at commit " << (suite.at("commit").is_null() ? "unknown" : suite.at("commit").get<std::string>())
     << (suite.at("dirty") == true ? " (dirty)" : "") << "; golden manifest sha256 "
     << suite.at("golden_manifest_sha256").get<std::string>() << "; tolerance table "
     << suite.at("tolerance_table_version").get<std::string>() << ".\n\n"
     << "**" << s.at("verdict").get<std::string>() << "**: " << s.at("pass") << " pass, " << s.at("fail") << " fail, "
     << s.at("xfail") << " xfail, " << s.at("not_provided") << " not provided.\n\n"
     << "| op | direction | dtype | result | worst ratio | tolerance (atol, rtol) of the worst check | note |\n"
     << "|---|---|---|---|---|---|---|\n";
  for (const nlohmann::json& r : report.at("results")) {
    std::ostringstream ratio, tol;
    ratio.precision(3);
    tol.precision(3);
    if (r.at("ratio").is_number()) ratio << r.at("ratio").get<double>();
    if (r.at("tolerance").is_object()) {
      tol << r.at("tolerance").at("atol").get<double>() << ", " << r.at("tolerance").at("rtol").get<double>();
    }
    std::string verdict = r.at("verdict").get<std::string>();
    std::replace(verdict.begin(), verdict.end(), '_', ' ');
    md << "| " << r.at("op").get<std::string>() << " | " << r.at("direction").get<std::string>() << " | "
       << r.at("dtype").get<std::string>() << " | " << verdict << (r.value("xpass", false) ? " (xpass)" : "") << " | "
       << ratio.str() << " | " << tol.str() << " | " << r.value("reason", "") << " |\n";
  }
  return md.str();
}

}  // namespace trepro::conform
