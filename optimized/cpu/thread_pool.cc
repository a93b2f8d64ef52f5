#include "optimized/cpu/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace trepro::cpu {

namespace {

// Tells the core that this is a spin loop: on x86 it yields the pipeline to the sibling thread.
inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int threads) : threads_(threads) {
  if (threads < 1) throw std::invalid_argument("ThreadPool: threads must be >= 1, got " + std::to_string(threads));
  for (int w = 1; w < threads; ++w) workers_.emplace_back([this, w] { worker_loop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::run_share(int worker) {
  for (int task = worker; task < job_tasks_; task += threads_) (*job_)(task);
}

template <class Ready>
void ThreadPool::await(std::condition_variable& signal, const Ready& ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (unsigned spins = 1; !ready(); ++spins) {
    if (spins % 64 == 0 && std::chrono::steady_clock::now() > deadline) {
      std::unique_lock lock(mutex_);
      signal.wait(lock, ready);
      return;
    }
    relax();
  }
}

void ThreadPool::worker_loop(int worker) {
  std::uint64_t seen = 0;
  for (;;) {
    await(wake_, [&] { return stop_.load() || generation_.load() != seen; });
    if (stop_.load()) return;
    seen = generation_.load();
    run_share(worker);
    if (pending_.fetch_sub(1) == 1) {
      // The caller may have gone to sleep: notify under the mutex it checks pending_ with.
      std::lock_guard lock(mutex_);
      done_.notify_one();
    }
  }
}

void ThreadPool::run(int tasks, const std::function<void(int)>& fn) {
  if (tasks <= 0) return;
  bool inline_only = threads_ == 1 || tasks == 1;
  {
    std::lock_guard lock(mutex_);
    if (running_) inline_only = true;  // nested call from inside a task
    if (!inline_only) {
      running_ = true;
      job_ = &fn;
      job_tasks_ = tasks;
      pending_.store(threads_ - 1);
      generation_.fetch_add(1);
    }
  }
  if (inline_only) {
    for (int task = 0; task < tasks; ++task) fn(task);
    return;
  }
  wake_.notify_all();
  run_share(0);
  await(done_, [&] { return pending_.load() == 0; });
  std::lock_guard lock(mutex_);
  running_ = false;
  job_ = nullptr;
}

void ThreadPool::parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain,
                              const std::function<void(std::int64_t, std::int64_t)>& fn) {
  const std::int64_t n = end - begin;
  if (n <= 0) return;
  grain = std::max<std::int64_t>(grain, 1);
  const std::int64_t chunks = std::clamp<std::int64_t>(n / grain, 1, threads_);
  run(static_cast<int>(chunks), [&](int chunk) {
    // Chunk c covers [n c / chunks, n (c + 1) / chunks): sizes differ by at most one.
    std::int64_t lo = begin + n * chunk / chunks;
    std::int64_t hi = begin + n * (chunk + 1) / chunks;
    fn(lo, hi);
  });
}

int default_thread_count() {
  if (const char* env = std::getenv("TREPRO_THREADS")) {
    char* end = nullptr;
    long value = std::strtol(env, &end, 10);
    if (end == env || *end != '\0' || value < 1 || value > 1024) {
      throw std::invalid_argument(std::string("TREPRO_THREADS: expected a positive integer, got \"") + env + "\"");
    }
    return static_cast<int>(value);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace trepro::cpu
