// One pool of threads shared by every op of a CpuBackend.
//
// The partition of work is static: parallel_for splits [begin, end) into the same contiguous
// chunks for a given thread count, and a chunk's result never depends on which thread ran it,
// so results are bit-identical run to run for a given thread count. The calling thread runs
// chunk 0 itself; the pool has threads - 1 workers. No OpenMP: the reference backend's Eigen
// uses OpenMP, and two runtimes spinning on 2 cores oversubscribe them.
#pragma once

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
  void worker_loop(int worker);
  void run_share(int worker);

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  // The job being run: valid while pending_ > 0.
  const std::function<void(int)>* job_ = nullptr;
  int job_tasks_ = 0;
  std::uint64_t generation_ = 0;
  int pending_ = 0;  // workers that have not finished the current generation
  bool running_ = false;
  bool stop_ = false;
};

// The thread count a backend uses by default: TREPRO_THREADS when set (a positive integer),
// else std::thread::hardware_concurrency().
int default_thread_count();

}  // namespace trepro::cpu
