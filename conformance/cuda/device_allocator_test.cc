// The CUDA backend's caching allocator, driven with malloc: size bins, reuse of released blocks,
// the empty-the-cache-and-retry path on exhaustion, and misuse reported.
#include <cstdlib>
#include <new>
#include <set>
#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "optimized/cuda/device_allocator.h"

namespace trepro::cuda {
namespace {

TEST(DeviceAllocator, BinsRoundUp) {
  EXPECT_EQ(allocation_bin_bytes(0), 512u);
  EXPECT_EQ(allocation_bin_bytes(1), 512u);
  EXPECT_EQ(allocation_bin_bytes(512), 512u);
  EXPECT_EQ(allocation_bin_bytes(513), 1024u);
  EXPECT_EQ(allocation_bin_bytes((1u << 20) - 1), 1u << 20);
  EXPECT_EQ(allocation_bin_bytes(1u << 20), 2u << 20);
  EXPECT_EQ(allocation_bin_bytes((2u << 20) + 1), 4u << 20);
  for (std::size_t bytes : {3u, 700u, 5000u, 3000000u}) EXPECT_GE(allocation_bin_bytes(bytes), bytes);
}

struct Counting {
  int allocations = 0, frees = 0;
  int fail_next = 0;  // this many allocations return nullptr (exhausted device)
};

CachingAllocator make(Counting& c) {
  return CachingAllocator(
      [&c](std::size_t bytes) -> void* {
        if (c.fail_next > 0) {
          --c.fail_next;
          return nullptr;
        }
        ++c.allocations;
        return std::malloc(bytes);
      },
      [&c](void* block) {
        ++c.frees;
        std::free(block);
      });
}

TEST(DeviceAllocator, ReleasedBlocksAreReusedBySize) {
  Counting c;
  {
    CachingAllocator a = make(c);
    void* first = a.allocate(1000);
    a.release(first);
    void* again = a.allocate(900);  // same 1024-byte bin
    EXPECT_EQ(again, first);
    void* other = a.allocate(5000);  // another bin: a new block
    EXPECT_NE(other, first);
    EXPECT_EQ(c.allocations, 2);
    const auto stats = a.stats();
    EXPECT_EQ(stats.cache_hits, 1u);
    EXPECT_EQ(stats.bytes_in_use, 1024u + 5120u);
    a.release(again);
    a.release(other);
    EXPECT_EQ(a.stats().bytes_cached, 1024u + 5120u);
  }
  EXPECT_EQ(c.frees, 2);  // the destructor returns the cache
}

TEST(DeviceAllocator, ExhaustionEmptiesTheCacheAndRetriesOnce) {
  Counting c;
  CachingAllocator a = make(c);
  a.release(a.allocate(512));
  c.fail_next = 1;
  void* block = a.allocate(4096);  // first raw attempt fails, the cache is freed, the retry works
  EXPECT_NE(block, nullptr);
  EXPECT_EQ(c.frees, 1);
  EXPECT_EQ(a.stats().bytes_cached, 0u);
  a.release(block);
  a.empty_cache();
  // Both attempts fail (set inside: the matcher may call the function again to explain a failure).
  EXPECT_THAT(
      [&] {
        c.fail_next = 2;
        a.allocate(4096);
      },
              ::testing::ThrowsMessage<std::bad_alloc>(::testing::HasSubstr("out of device memory allocating 4096 bytes")));
}

TEST(DeviceAllocator, ReleasingAForeignBlockIsAnError) {
  Counting c;
  CachingAllocator a = make(c);
  int local = 0;
  EXPECT_THROW(a.release(&local), std::logic_error);
  void* block = a.allocate(64);
  a.release(block);
  EXPECT_THROW(a.release(block), std::logic_error);  // double release
}

}  // namespace
}  // namespace trepro::cuda
