// The conformance report of `trepro conform` (reports/conformance_schema.json, shared with the
// Python verdict): per op x direction of one backend, pass / fail / xfail / not provided, from
// the gtest JSON output of the conformance binaries run on it with TREPRO_RECORD_OPS=1
// (conformance/support/backend_fixture.h: each test records the ops it called, its worst ratio of
// error to tolerance and, when it was skipped for one, the op the backend does not provide).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend.h"

namespace trepro::conform {

// A known failure: results whose id ("<backend>/<op>/<direction>/<dtype>") matches `pattern` (a
// shell glob) are xfail with `reason` instead of fail; a pass that matches is marked xpass.
struct Expectation {
  std::string pattern, reason;
  int line = 0;
  int matched = 0;
};
// "PATTERN  # REASON" a line; blank lines and lines starting with '#' are comments. The format of
// python/trepro_verdict/expectations.py. Throws std::invalid_argument naming the file and line.
std::vector<Expectation> read_expectations(const std::string& path);

// One test of the backend, as a conformance binary reported it.
struct TestOutcome {
  std::string id;                     // binary:Suite.Name
  std::string result;                 // pass, fail, skip
  std::vector<std::string> ops;       // "norm forward", in the order first called
  std::string not_provided;           // the op it was refused, when skipped for one
  double worst_ratio = -1;            // < 0: no all_close check
  double atol = 0, rtol = 0;          // the tolerance of that check
  std::string check;                  // what it compared ("dx")
};
// The tests of a gtest JSON report (--gtest_output=json) of `binary`.
std::vector<TestOutcome> read_gtest_report(const nlohmann::json& report, const std::string& binary);

struct Suite {
  std::string commit;  // git_commit(): a sha, "-dirty" appended, or "unknown"
  std::string golden_manifest_sha256;
  std::string golden_dir;
};

// The report of `backend` (a test counts for the last op x direction it called: the op it checks
// comes after the ones that set it up). `expectations_file` is empty when there is none.
nlohmann::json build_report(const Backend& backend, bool plugin, const std::vector<TestOutcome>& tests,
                            std::vector<Expectation> expectations, const std::string& expectations_file,
                            const Suite& suite);
// Matching failures become xfail (with the expectation's reason), matching passes are marked
// xpass; "not provided" is never changed. Counts the matches on each expectation.
void apply_expectations(nlohmann::json& results, std::vector<Expectation>& expectations);
// A report around `results` (expectations applied, summary computed), for trepro conform and
// trepro check alike.
nlohmann::json build_envelope(const std::string& tool, const nlohmann::json& subject, const Suite& suite,
                              const std::string& tolerance_table_version, const nlohmann::json& rules,
                              nlohmann::json results, std::vector<Expectation> expectations,
                              const std::string& expectations_file);
// The report as Markdown: the suite, the summary and a row per op x direction.
std::string report_markdown(const nlohmann::json& report);
// "pass", "FAIL", "xfail", "-" (not provided) for a result's verdict, as the grid prints it.
std::string grid_cell(const nlohmann::json& result);

}  // namespace trepro::conform
