// One pool of threads shared by every op of a CpuBackend.
//
// The partition of work is static: parallel_for splits [begin, end) into the same contiguous
// chunks for a given thread count, and a chunk's result never depends on which thread ran it,
// so results are bit-identical run to run for a given thread count. The calling thread runs
// chunk 0 itself; the pool has threads - 1 workers. No OpenMP: the reference backend's Eigen
// uses OpenMP, and two runtimes spinning on 2 cores oversubscribe them.
//
// Waiting spins for at most kSpin before it sleeps on a condition variable. A decoder step is
// about 40 ops of tens of microseconds each; waking a sleeping thread through the kernel costs
// as much as such an op, so without the spin a second thread made decoding slower, not faster.
// The bound keeps an idle pool (between training steps, or beside another process) from
// holding a core.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace trepro::cpu {

class ThreadPool {
 public:
  // threads >= 1 (the caller counts as one).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return threads_; }

  // Runs fn(task) for task in [0, tasks), task t on worker t % threads(), and returns when all
  // are done. A call made from inside a running task runs its tasks inline (no nesting).
  void run(int tasks, const std::function<void(int task)>& fn);

  // Calls fn(chunk_begin, chunk_end) over a static partition of [begin, end) into at most
  // threads() contiguous chunks of at least `grain` elements (except a shorter range).
  void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain,
                    const std::function<void(std::int64_t, std::int64_t)>& fn);

 private:
  static constexpr std::chrono::microseconds kSpin{200};

  void worker_loop(int worker);
  void run_share(int worker);
  // Returns once ready() holds: spins up to kSpin, then sleeps on `signal` (notified under mutex_).
  template <class Ready>
  void await(std::condition_variable& signal, const Ready& ready);

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  // The job being run: valid while pending_ > 0; written before generation_ is advanced.
  const std::function<void(int)>* job_ = nullptr;
  int job_tasks_ = 0;
  std::atomic<std::uint64_t> generation_{0};  // advanced under mutex_
  std::atomic<int> pending_{0};  // workers that have not finished the current generation
  bool running_ = false;  // under mutex_
  std::atomic<bool> stop_{false};  // set under mutex_
};

// The thread count a backend uses by default: TREPRO_THREADS when set (a positive integer),
// else std::thread::hardware_concurrency().
int default_thread_count();

}  // namespace trepro::cpu
