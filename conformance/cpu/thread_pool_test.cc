// The CPU backend's thread pool: every index visited exactly once, a static partition (the same
// chunks every call for a given thread count), nested calls run inline, and exceptions-free
// reuse across many calls.
#include "optimized/cpu/thread_pool.h"

#include <atomic>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace trepro::cpu {
namespace {

std::set<std::pair<std::int64_t, std::int64_t>> chunks_of(ThreadPool& pool, std::int64_t begin, std::int64_t end,
                                                          std::int64_t grain) {
  std::mutex mutex;
  std::set<std::pair<std::int64_t, std::int64_t>> chunks;
  pool.parallel_for(begin, end, grain, [&](std::int64_t lo, std::int64_t hi) {
    std::lock_guard lock(mutex);
    chunks.insert({lo, hi});
  });
  return chunks;
}

TEST(ThreadPool, VisitsEveryIndexOnce) {
  for (int threads : {1, 2, 3, 7}) {
    ThreadPool pool(threads);
    for (std::int64_t n : {0, 1, 5, 1000, 1001}) {
      std::vector<std::atomic<int>> visits(static_cast<std::size_t>(n));
      pool.parallel_for(0, n, 1, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t i = lo; i < hi; ++i) visits[static_cast<std::size_t>(i)]++;
      });
      for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(visits[static_cast<std::size_t>(i)].load(), 1) << threads << " " << n;
    }
  }
}

TEST(ThreadPool, PartitionIsStaticAndRespectsGrain) {
  ThreadPool pool(3);
  auto first = chunks_of(pool, 10, 110, 1);
  EXPECT_EQ(first.size(), 3u);
  for (int repeat = 0; repeat < 20; ++repeat) EXPECT_EQ(chunks_of(pool, 10, 110, 1), first);
  // 100 elements with a grain of 60: one chunk.
  EXPECT_EQ(chunks_of(pool, 10, 110, 60).size(), 1u);
}

TEST(ThreadPool, NestedCallsRunInline) {
  ThreadPool pool(2);
  std::atomic<int> inner{0};
  pool.run(2, [&](int) { pool.run(4, [&](int) { inner++; }); });
  EXPECT_EQ(inner.load(), 8);
}

TEST(ThreadPool, RejectsZeroThreads) { EXPECT_THROW(ThreadPool(0), std::invalid_argument); }

}  // namespace
}  // namespace trepro::cpu
