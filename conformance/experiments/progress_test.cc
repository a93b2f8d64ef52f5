// Progress lines (experiments/training/progress.h): every field a person watching a run needs,
// and durations from seconds to days.
#include "experiments/training/progress.h"

#include <gtest/gtest.h>

#include <limits>

namespace trepro {
namespace {

TEST(FormatDuration, ScalesFromSecondsToDays) {
  EXPECT_EQ(format_duration(12.34), "12.3s");
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(3720), "1h02m");
  EXPECT_EQ(format_duration(4 * 86400 + 7 * 3600 + 59), "4d07h");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "?");
  EXPECT_EQ(format_duration(-1), "?");
}

TEST(FormatStepLine, ShowsStepEpochLossRateNormSpeedElapsedAndEta) {
  ProgressLine line;
  line.result.step = 120;
  line.result.loss = 4.56789;
  line.result.learning_rate = 2.5e-4;
  line.result.grad_norm = 1.25;
  line.epoch = 2;
  line.total_steps = 2500;
  line.elapsed_seconds = 65;
  line.tokens_per_second = 812.4;
  line.eta_seconds = 7200;
  EXPECT_EQ(format_step_line(line),
            "step 120/2500  epoch 2  loss 4.5679  lr 2.50e-04  |g| 1.250  tok/s 812  elapsed 1m05s  eta 2h00m");
}

}  // namespace
}  // namespace trepro
