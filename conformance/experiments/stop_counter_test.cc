// StopCounter (experiments/training/stop_counter.h): each SIGCONT the process gets is counted, and
// a program's own SIGCONT handler is left in place. A real stop and continue of a training is
// cli_stopped_steps_stay_out_of_the_timings.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

#include "experiments/training/stop_counter.h"

namespace trepro {
namespace {

TEST(StopCounter, CountsEachContinue) {
  const StopCounter stops;
  ASSERT_TRUE(stops.counting()) << "SIGCONT had a handler before the counter was made";
  const std::uint64_t before = stops.continues();
  ASSERT_EQ(std::raise(SIGCONT), 0);
  EXPECT_EQ(stops.continues(), before + 1);
  ASSERT_EQ(std::raise(SIGCONT), 0);
  EXPECT_EQ(stops.continues(), before + 2);
  // A second counter shares the process's handler and count.
  const StopCounter again;
  EXPECT_TRUE(again.counting());
  EXPECT_EQ(again.continues(), before + 2);
}

volatile std::sig_atomic_t own_handler_calls = 0;
extern "C" void own_handler(int) { own_handler_calls = own_handler_calls + 1; }

// In a fresh process ("threadsafe" death tests re-run the binary), where nothing installed the
// counter before: the program's handler keeps SIGCONT, and the counter says it sees no stop.
TEST(StopCounterDeathTest, LeavesAProgramsOwnHandlerInPlace) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::signal(SIGCONT, own_handler);
        const StopCounter stops;
        std::raise(SIGCONT);
        std::exit(!stops.counting() && stops.continues() == 0 && own_handler_calls == 1 ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace trepro
