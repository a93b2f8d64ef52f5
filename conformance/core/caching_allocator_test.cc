// The backends' caching allocator (CPU and CUDA), driven with malloc: size bins, reuse of
// released blocks, the bound on cached bytes, the empty-the-cache-and-retry path on exhaustion,
// tensors that give their storage back, and misuse reported.
#include <cstdlib>
#include <new>
#include <memory>
#include <vector>
#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/caching_allocator.h"
#include "core/tensor.h"

namespace trepro {
namespace {

TEST(CachingAllocator, BinsRoundUp) {
  EXPECT_EQ(allocation_bin_bytes(0), 512u);
  EXPECT_EQ(allocation_bin_bytes(1), 512u);
  EXPECT_EQ(allocation_bin_bytes(512), 512u);
  EXPECT_EQ(allocation_bin_bytes(513), 1024u);
  EXPECT_EQ(allocation_bin_bytes((1u << 20) - 1), 1u << 20);
  EXPECT_EQ(allocation_bin_bytes(1u << 20), 2u << 20);
  EXPECT_EQ(allocation_bin_bytes((2u << 20) + 1), 4u << 20);
  for (std::size_t bytes : {3u, 700u, 5000u, 3000000u}) {
    EXPECT_GE(allocation_bin_bytes(bytes), bytes);
    EXPECT_EQ(allocation_bin_bytes(bytes) % kHostAlignment, 0u);  // what aligned_alloc requires
  }
}

struct Counting {
  int allocations = 0, frees = 0;
  int fail_next = 0;  // this many allocations return nullptr (exhausted device)
};

CachingAllocator make(Counting& c) {
  return CachingAllocator(
      "test memory",
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

TEST(CachingAllocator, ReleasedBlocksAreReusedBySize) {
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

// A request takes the smallest cached block of its bin or up to a quarter larger (decoding's
// sizes drift by a position per step), and keeps that block's bin; a larger block is left alone.
TEST(CachingAllocator, ARequestTakesTheSmallestCachedBlockAtMostAQuarterLarger) {
  Counting c;
  CachingAllocator a = make(c);
  void* exact = a.allocate(4096);
  void* larger = a.allocate(4608);     // 4096 + 512: within a quarter
  void* too_large = a.allocate(5632);  // 4096 + 1536: over a quarter
  for (void* block : {too_large, larger, exact}) a.release(block);
  EXPECT_EQ(a.allocate(4096), exact);  // the smallest that fits first
  EXPECT_EQ(a.allocate(4096), larger);
  void* fresh = a.allocate(4096);      // only the block over a quarter larger is left
  EXPECT_NE(fresh, too_large);
  EXPECT_EQ(c.allocations, 4);
  EXPECT_EQ(a.stats().cache_hits, 2u);
  EXPECT_EQ(a.stats().bytes_in_use, 4096u + 4608u + 4096u);  // each block counts its own bin
  EXPECT_EQ(a.stats().bytes_cached, 5632u);
  a.release(larger);
  EXPECT_EQ(a.allocate(4608), larger);  // cached again under its own bin
  EXPECT_EQ(a.stats().evictions, 0u);
  for (void* block : {exact, larger, fresh}) a.release(block);
}

TEST(CachingAllocator, NeverCachesMoreThanThePeakInUseEvictingTheLeastRecentlyReleased) {
  Counting c;
  CachingAllocator a = make(c);
  void* small = a.allocate(512);
  void* large = a.allocate(2048);
  a.release(small);
  a.release(large);  // peak 2560 in use: both fit in the cache
  EXPECT_EQ(a.stats().bytes_cached, 2560u);
  EXPECT_EQ(a.stats().evictions, 0u);
  // Another size while nothing is in use: the peak stays 2560, so taking the 1024 into the cache
  // evicts the block released first (the 512) and then, still over, the 2048.
  void* other = a.allocate(1024);
  EXPECT_EQ(a.stats().bytes_cached, 2560u);  // a miss leaves the cache as it was
  a.release(other);
  EXPECT_EQ(a.stats().evictions, 2u);
  EXPECT_EQ(a.stats().bytes_cached, 1024u);
  EXPECT_EQ(c.frees, 2);
  void* survivor = a.allocate(1024);
  EXPECT_EQ(survivor, other);  // the survivor is the most recently released
  a.release(survivor);  // the destructor frees cached blocks only, as blocks in use are the caller's
}

TEST(CachingAllocator, ARepeatedStepAllocatesNothingNew) {
  Counting c;
  CachingAllocator a = make(c);
  const std::size_t sizes[] = {600, 70000, 3000000, 600, 12345};
  auto step = [&] {
    std::vector<void*> blocks;
    for (std::size_t bytes : sizes) blocks.push_back(a.allocate(bytes));
    for (void* block : blocks) a.release(block);
  };
  step();
  const int after_first = c.allocations;
  for (int i = 0; i < 3; ++i) step();
  EXPECT_EQ(c.allocations, after_first);
  EXPECT_EQ(a.stats().evictions, 0u);
}

TEST(CachingAllocator, TensorsGiveTheirStorageBackAndKeepTheAllocatorAlive) {
  Counting c;
  auto a = std::make_shared<CachingAllocator>(
      "test memory", [&c](std::size_t bytes) -> void* { ++c.allocations; return std::malloc(bytes); },
      [&c](void* block) { ++c.frees; std::free(block); });
  Tensor t = allocate_tensor(a, {3, 100}, DType::f32, Device::cpu);
  EXPECT_EQ(t.shape(), (Shape{3, 100}));
  EXPECT_EQ(a->stats().bytes_in_use, allocation_bin_bytes(1200));
  Tensor view = t.rows(1, 2);
  t = Tensor();
  EXPECT_EQ(a->stats().bytes_cached, 0u);  // the view still holds the storage
  view = Tensor();
  EXPECT_EQ(a->stats().bytes_cached, allocation_bin_bytes(1200));
  Tensor survivor = allocate_tensor(a, {300}, DType::i32, Device::cpu);  // the same 1536-byte bin
  EXPECT_EQ(c.allocations, 1);  // a cache hit
  a.reset();  // the backend is gone; the tensor still owns a live allocator
  survivor.data<std::int32_t>()[299] = 7;
  survivor = Tensor();
  EXPECT_EQ(c.frees, 1);  // the last owner freed the allocator, and with it the cache
}

TEST(CachingAllocator, ExhaustionEmptiesTheCacheAndRetriesOnce) {
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
              ::testing::ThrowsMessage<std::bad_alloc>(::testing::HasSubstr("test memory exhausted allocating 4096 bytes")));
}

TEST(CachingAllocator, ReleasingAForeignBlockIsAnError) {
  Counting c;
  CachingAllocator a = make(c);
  int local = 0;
  EXPECT_THROW(a.release(&local), std::logic_error);
  void* block = a.allocate(64);
  a.release(block);
  EXPECT_THROW(a.release(block), std::logic_error);  // double release
}

}  // namespace
}  // namespace trepro
