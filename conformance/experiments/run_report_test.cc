// The training curve of run reports (experiments/training/run_report.h): every step alone up
// to kCurveDenseSteps, then windows of kCurveWindow ending at its multiples and at the last step;
// the upgrade of schema_version 1 reports to it; and RUN/history.jsonl read back.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>

#include "conformance/support/scratch_dir.h"
#include "experiments/training/run_report.h"

namespace trepro {
namespace {

using nlohmann::json;

// Steps 1..count; step s has loss s, grad_norm 2s, learning rate s / 1000, tokens 10, seconds
// 0.5, epoch 1 + s / 100.
json numbered_steps(std::int64_t count) {
  json steps = json::array();
  for (std::int64_t s = 1; s <= count; ++s) {
    steps.push_back({{"step", s},
                     {"epoch", 1 + s / 100},
                     {"loss", static_cast<double>(s)},
                     {"grad_norm", 2.0 * static_cast<double>(s)},
                     {"learning_rate", static_cast<double>(s) / 1000},
                     {"tokens", 10},
                     {"seconds", 0.5}});
  }
  return steps;
}

TEST(TrainingCurve, KeepsTheFirstStepsAloneThenAveragesWindows) {
  const json curve = training_curve(numbered_steps(kCurveDenseSteps + 2 * kCurveWindow + 7));
  ASSERT_EQ(curve.size(), static_cast<std::size_t>(kCurveDenseSteps + 3));
  for (std::int64_t s = 1; s <= kCurveDenseSteps; ++s) {
    const json& point = curve[s - 1];
    EXPECT_EQ(point["step"], s);
    EXPECT_EQ(point["steps"], 1);
    EXPECT_EQ(point["loss"], static_cast<double>(s));
    EXPECT_EQ(point["grad_norm"], 2.0 * static_cast<double>(s));
    EXPECT_EQ(point["grad_norm_max"], 2.0 * static_cast<double>(s));
    EXPECT_EQ(point["learning_rate"], static_cast<double>(s) / 1000);
  }
  // Steps 101..150: the mean of 101..150 is 125.5; the learning rate and epoch are step 150's.
  const json& window = curve[kCurveDenseSteps];
  EXPECT_EQ(window["step"], 150);
  EXPECT_EQ(window["steps"], 50);
  EXPECT_DOUBLE_EQ(window["loss"].get<double>(), 125.5);
  EXPECT_DOUBLE_EQ(window["grad_norm"].get<double>(), 251.0);
  EXPECT_EQ(window["grad_norm_max"], 300.0);
  EXPECT_EQ(window["learning_rate"], 0.15);
  EXPECT_EQ(window["epoch"], 2);
  EXPECT_EQ(window["tokens"], 500);
  EXPECT_DOUBLE_EQ(window["seconds"].get<double>(), 25.0);
  // The last window is cut short by the run's end: steps 201..207.
  const json& last = curve.back();
  EXPECT_EQ(last["step"], 207);
  EXPECT_EQ(last["steps"], 7);
  EXPECT_DOUBLE_EQ(last["loss"].get<double>(), 204.0);
}

TEST(TrainingCurve, WindowsFollowTheStepNumbersNotTheStart) {
  // A history that starts after the dense part (steps 120..260) still cuts at multiples of 50.
  json steps = numbered_steps(260);
  steps.erase(steps.begin(), steps.begin() + 119);
  const json curve = training_curve(steps);
  ASSERT_EQ(curve.size(), 4u);
  EXPECT_EQ(curve[0]["step"], 150);
  EXPECT_EQ(curve[0]["steps"], 31);
  EXPECT_EQ(curve[1]["step"], 200);
  EXPECT_EQ(curve[2]["step"], 250);
  EXPECT_EQ(curve[3]["step"], 260);
  EXPECT_EQ(curve[3]["steps"], 10);
}

TEST(TrainingCurve, OfNoStepsIsEmpty) { EXPECT_EQ(training_curve(json::array()), json::array()); }

TEST(UpgradedRunReport, ReplacesTheStepsByTheirCurve) {
  const json steps = numbered_steps(180);
  const json old_report = {{"schema_version", 1}, {"status", "finished"}, {"steps", steps}};
  const json upgraded = upgraded_run_report(old_report, "old/report.json");
  EXPECT_EQ(upgraded["schema_version"], 2);
  EXPECT_FALSE(upgraded.contains("steps"));
  EXPECT_EQ(upgraded["curve"], training_curve(steps));
  EXPECT_EQ(upgraded["status"], "finished");
  EXPECT_EQ(upgraded_run_report(upgraded, "new/report.json"), upgraded);
}

TEST(UpgradedRunReport, RefusesWhatItCannotUpgradeNamingTheFile) {
  const auto message = [](const json& report) {
    try {
      upgraded_run_report(report, "runs/x/report.json");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(json::array({1, 2})), "runs/x/report.json: expected a run report (a JSON object), got array");
  EXPECT_EQ(message({{"schema_version", 3}}), "runs/x/report.json: schema_version 3, expected 1 or 2");
  EXPECT_EQ(message({{"kind", "train"}}), "runs/x/report.json: schema_version null, expected 1 or 2");
  EXPECT_NE(message({{"schema_version", 1}}).find("runs/x/report.json: schema_version 1 without a \"steps\" array"),
            std::string::npos);
  json missing_field = numbered_steps(3);
  missing_field[1].erase("grad_norm");
  EXPECT_EQ(message({{"schema_version", 1}, {"steps", missing_field}}),
            "runs/x/report.json: steps[1]: grad_norm: expected a number within +-1e300, got nothing");
  json missing_step = numbered_steps(3);
  missing_step[2].erase("step");
  EXPECT_NE(message({{"schema_version", 1}, {"steps", missing_step}}).find("runs/x/report.json: \"steps\" needs"),
            std::string::npos);
  // Step numbers near the largest integer made the window arithmetic overflow and loop forever;
  // sums of huge losses became a null in the curve.
  json huge_step = numbered_steps(2);
  huge_step[1]["step"] = std::numeric_limits<std::int64_t>::max() - 7;
  EXPECT_EQ(message({{"schema_version", 1}, {"steps", huge_step}}),
            "runs/x/report.json: steps[1].step: expected an integer above the previous entry's (1) and at most 2^40, "
            "got 9223372036854775800");
  json repeated_step = numbered_steps(2);
  repeated_step[1]["step"] = 1;
  EXPECT_NE(message({{"schema_version", 1}, {"steps", repeated_step}}).find("steps[1].step: expected an integer above"),
            std::string::npos);
  json huge_loss = numbered_steps(2);
  huge_loss[0]["loss"] = 1e308;
  EXPECT_EQ(message({{"schema_version", 1}, {"steps", huge_loss}}),
            "runs/x/report.json: steps[0]: loss: expected a number within +-1e300, got 1e+308");
}

// RUN/history.jsonl holding `text`, in a folder of its own.
std::string history_file(const std::string& name, const std::string& text) {
  const std::string path = (trepro::testing::fresh_dir("run_report_test", name) / "history.jsonl").string();
  std::ofstream(path) << text;
  return path;
}

std::string contents(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// What RunHistory::load throws, or "(no error)".
std::string load_error(const std::string& path) {
  try {
    RunHistory::load(path, 100);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string kStep1 = R"({"kind":"step","step":1,"epoch":1,"loss":2.5,"learning_rate":1e-4,)"
                           R"("grad_norm":1.5,"tokens":40,"seconds":0.25})";
const std::string kValidation1 = R"({"kind":"validation","step":1,"loss":2.0})";
const std::string kStep2 = R"({"kind":"step","step":2,"epoch":1,"loss":2.25,"learning_rate":2e-4,)"
                           R"("grad_norm":1.25,"tokens":40,"seconds":0.25})";

// A kill in the middle of an append leaves the last line cut short; the resumed run recomputes it.
TEST(RunHistory, ATornLastLineIsDroppedFromTheFile) {
  const std::string path = history_file("torn", kStep1 + "\n" + kValidation1 + "\n" + R"({"kind":"step","st)");
  const RunHistory history = RunHistory::load(path, 100);
  EXPECT_EQ(history.steps.size(), 1u);
  EXPECT_EQ(history.validation.size(), 1u);
  EXPECT_EQ(contents(path), kStep1 + "\n" + kValidation1 + "\n");
}

// A bad line with lines after it was taken for the torn last one, and everything after it was
// dropped from the history and the file.
TEST(RunHistory, ABadLineBeforeTheLastIsAnErrorNamingTheFileAndLine) {
  const std::string text = kStep1 + "\n" + R"({"kind":"step","st)" + "\n" + kValidation1 + "\n" + kStep2 + "\n";
  const std::string path = history_file("bad_line", text);
  const std::string message = load_error(path);
  EXPECT_EQ(message.rfind(path + ":2: ", 0), 0u) << message;
  EXPECT_NE(message.find("not the last line"), std::string::npos) << message;
  EXPECT_EQ(contents(path), text);  // left as it was
}

// nlohmann's type_error, which names no file, stopped the run.
TEST(RunHistory, AnEntryOfTheWrongTypeIsAnErrorNamingTheFileAndLine) {
  const std::string string_step = history_file("string_step", kStep1 + "\n" + R"({"kind":"step","step":"3"})" + "\n");
  EXPECT_EQ(load_error(string_step), string_step + ":2: step: expected an integer, got \"3\"");
  const std::string number_kind = history_file("number_kind", R"({"kind":1,"step":3})" "\n");
  EXPECT_EQ(load_error(number_kind), number_kind + ":1: kind: expected a string, got 1");
}

// A step line without its loss passed the load and failed later inside the training curve, with
// nlohmann's out_of_range that names no file.
TEST(RunHistory, AStepLineMissingAFieldIsAnErrorNamingTheFileAndLine) {
  const std::string no_loss = history_file(
      "no_loss", kStep1 + "\n" + R"({"kind":"step","step":2,"epoch":1,"learning_rate":2e-4,"grad_norm":1.0,)"
                                   R"("tokens":40,"seconds":0.25})" "\n");
  EXPECT_EQ(load_error(no_loss), no_loss + ":2: loss: expected a number within +-1e300, got nothing");
  const std::string float_tokens =
      history_file("float_tokens", R"({"kind":"step","step":1,"epoch":1,"loss":2.5,"learning_rate":1e-4,)"
                                   R"("grad_norm":1.5,"tokens":4.5,"seconds":0.25})" "\n");
  EXPECT_EQ(load_error(float_tokens), float_tokens + ":1: tokens: expected a count >= 0, got 4.5");
}

TEST(RunHistory, AStoppedMarkThatIsNotABooleanIsAnErrorNamingTheFileAndLine) {
  const std::string path = history_file(
      "stopped_string", R"({"kind":"step","step":1,"epoch":1,"loss":2.5,"learning_rate":1e-4,"grad_norm":1.5,)"
                        R"("tokens":40,"seconds":0.25,"stopped":"yes"})" "\n");
  EXPECT_EQ(load_error(path), path + ":1: stopped: expected true or false, got \"yes\"");
}

// Steps 1..4 of numbered_steps (10 tokens, 0.5 s each), step 3 stopped for 60 s: the timings
// count steps 1, 2 and 4 (1.5 s, 30 tokens), and all 40 target tokens.
TEST(RunTimings, LeaveTheStepsAStopFellInOutOfTheSecondsAndTheRate) {
  json steps = numbered_steps(4);
  steps[2]["seconds"] = 60.5;
  steps[2]["stopped"] = true;
  const json timings = run_timings(steps);
  EXPECT_DOUBLE_EQ(timings["train_seconds"].get<double>(), 1.5);
  EXPECT_EQ(timings["target_tokens"], 40);
  EXPECT_DOUBLE_EQ(timings["target_tokens_per_second"].get<double>(), 20.0);
  EXPECT_EQ(timings["stopped_steps"], 1);
  steps[2]["stopped"] = false;
  const json unstopped = run_timings(steps);
  EXPECT_DOUBLE_EQ(unstopped["train_seconds"].get<double>(), 62.0);
  EXPECT_EQ(unstopped["stopped_steps"], 0);
}

TEST(RunTimings, OfOnlyStoppedStepsHaveNoRate) {
  json steps = numbered_steps(1);
  steps[0]["stopped"] = true;
  const json timings = run_timings(steps);
  EXPECT_EQ(timings["train_seconds"], 0.0);
  EXPECT_EQ(timings["target_tokens"], 10);
  EXPECT_EQ(timings["target_tokens_per_second"], 0.0);
}

}  // namespace
}  // namespace trepro
