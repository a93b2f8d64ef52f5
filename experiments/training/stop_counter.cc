#include "experiments/training/stop_counter.h"

#include <atomic>
#include <csignal>

namespace trepro {

namespace {

// A signal handler reaches nothing but static storage, so the count is the one process-wide
// variable: a lock-free atomic is safe to touch from the handler.
std::atomic<std::uint64_t> continues_seen{0};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

extern "C" void count_continue(int) { continues_seen.fetch_add(1, std::memory_order_relaxed); }

bool install_handler() {
  struct sigaction current {};
  if (sigaction(SIGCONT, nullptr, &current) != 0) return false;
  if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) return false;
  struct sigaction counting {};
  counting.sa_handler = count_continue;
  sigemptyset(&counting.sa_mask);
  counting.sa_flags = SA_RESTART;  // a read or write the stop interrupted goes on
  return sigaction(SIGCONT, &counting, nullptr) == 0;
}

}  // namespace

StopCounter::StopCounter() {
  // A function-local static is initialised once, thread-safely: the handler is installed by the
  // first counter alone.
  static const bool installed = install_handler();
  counting_ = installed;
}

std::uint64_t StopCounter::continues() const { return continues_seen.load(std::memory_order_relaxed); }

}  // namespace trepro
