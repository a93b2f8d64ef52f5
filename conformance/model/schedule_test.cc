// The learning-rate schedules (model/schedule.h), moved here with learning_rate from
// conformance/core/config_test.cc.
#include "model/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace trepro::testing {
namespace {

Config with_schedule(ScheduleKind kind, std::int64_t warmup) {
  Config c;
  c.model.vocab_size = 100;
  c.train.schedule.kind = kind;
  c.train.schedule.warmup = warmup;
  return c;
}

TEST(LearningRate, NoamMatchesThePaperFormula) {
  const Config c = with_schedule(ScheduleKind::noam, 4000);
  for (const std::int64_t step : {1, 3999, 4000, 4001, 100000}) {
    const double s = static_cast<double>(step);
    const double paper = std::pow(512.0, -0.5) * std::min(std::pow(s, -0.5), s * std::pow(4000.0, -1.5));
    EXPECT_NEAR(learning_rate(c, step), paper, 1e-15) << "step " << step;
  }
  EXPECT_NEAR(learning_rate(c, 4000), 6.9877e-4, 5e-9);  // the peak quoted for the base model
  EXPECT_NEAR(learning_rate(c, 1), 1.746928107421711e-07, 1e-20);
  EXPECT_NEAR(learning_rate(c, 100000), 1.3975424859373687e-4, 1e-18);
  EXPECT_LT(learning_rate(c, 3999), learning_rate(c, 4000));
  EXPECT_LT(learning_rate(c, 4001), learning_rate(c, 4000));
}

TEST(LearningRate, NoamFactorScalesTheRate) {
  Config c = with_schedule(ScheduleKind::noam, 4000);
  const double base = learning_rate(c, 123);
  c.train.schedule.factor = 2.0;
  EXPECT_DOUBLE_EQ(learning_rate(c, 123), 2.0 * base);
}

TEST(LearningRate, InverseSqrtWarmsUpLinearlyThenDecays) {
  Config c = with_schedule(ScheduleKind::inverse_sqrt, 4000);
  c.train.optimizer.lr = 5e-4;
  EXPECT_DOUBLE_EQ(learning_rate(c, 1), 5e-4 / 4000);
  EXPECT_DOUBLE_EQ(learning_rate(c, 2000), 2.5e-4);
  EXPECT_DOUBLE_EQ(learning_rate(c, 4000), 5e-4);
  EXPECT_DOUBLE_EQ(learning_rate(c, 16000), 2.5e-4);
}

TEST(LearningRate, ConstantIsTheConfiguredRate) {
  Config c = with_schedule(ScheduleKind::constant, 0);
  c.train.optimizer.lr = 3e-4;
  EXPECT_EQ(learning_rate(c, 1), 3e-4);
  EXPECT_EQ(learning_rate(c, 1000000), 3e-4);
}

// A warmup given with the constant schedule is not ignored: the rate rises linearly to lr.
TEST(LearningRate, ConstantWarmsUpLinearlyWhenGivenWarmup) {
  Config c = with_schedule(ScheduleKind::constant, 400);
  c.train.optimizer.lr = 3e-4;
  EXPECT_DOUBLE_EQ(learning_rate(c, 1), 3e-4 / 400);
  EXPECT_DOUBLE_EQ(learning_rate(c, 100), 3e-4 / 4);
  EXPECT_EQ(learning_rate(c, 400), 3e-4);
  EXPECT_EQ(learning_rate(c, 1000000), 3e-4);
}

TEST(LearningRate, StepZeroIsAnError) {
  const Config c = with_schedule(ScheduleKind::noam, 4000);
  try {
    learning_rate(c, 0);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "learning_rate: step is counted from 1, got 0");
  }
}

TEST(LearningRate, PaperBaseConfigPeaksAtTheQuotedRate) {
  Config c;
  c.model.vocab_size = 37000;  // d_model 512, noam, warmup 4000: the defaults are the base model's
  EXPECT_NEAR(learning_rate(c, 4000), 6.9877e-4, 5e-9);
}

}  // namespace
}  // namespace trepro::testing
