// The backends' caching allocator. A training step allocates the same sizes every step, and a
// fresh allocation is expensive on every device: cudaMalloc synchronizes the GPU, and a large
// host malloc is a fresh mmap whose pages the kernel faults in and zeroes again (6% of the CPU
// backend's training step, measured with perf). Freed blocks are kept per size bin and handed
// out again, so the steady state of a step allocates nothing. A request takes the smallest
// cached block of its bin or up to a quarter larger: decoding's sizes drift from step to step
// (each self-attention cache grows by a position, the batch shrinks as sentences end): with
// exact bins alone most of its requests missed, and the kernel's share of beam-4 decoding at
// batch 32 (page faults, mostly) was 11%, against 4% now (perf, model loading included). A
// small request still never ties up a much larger block.
//
// Bound: the cache never holds more free bytes than were ever in use at once (a process holds
// at most twice its peak), evicting the least recently released blocks first; on exhaustion the
// cache is emptied and the allocation retried once. The raw allocator is injected: the CPU
// backend gives it aligned host memory, the CUDA backend cudaMalloc, and the host tests
// (conformance/core/caching_allocator_test.cc) a counting malloc.
//
// Stream safety (CUDA): the backend runs everything on one stream, so a block released while a
// kernel still reads it can only be reused by work queued after that kernel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/tensor.h"

namespace trepro {

// Bytes actually allocated for a request: at least 512, a multiple of 512 below 1 MiB and of
// 2 MiB from there on (coarser bins for large blocks keep the cache from fragmenting). Every
// bin is a multiple of kHostAlignment.
std::size_t allocation_bin_bytes(std::size_t bytes);

// std::bad_alloc with a message: the request and what the cache held when it failed.
class OutOfMemory : public std::bad_alloc {
 public:
  explicit OutOfMemory(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

class CachingAllocator {
 public:
  // raw_allocate returns nullptr when memory is exhausted (and throws on any other error).
  using RawAllocate = std::function<void*(std::size_t)>;
  using RawFree = std::function<void(void*)>;

  // `memory` names what is allocated in error messages, e.g. "cuda backend: device memory".
  CachingAllocator(std::string memory, RawAllocate raw_allocate, RawFree raw_free);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least `bytes`; on exhaustion the cache is freed and the allocation retried
  // once; throws OutOfMemory if that fails too.
  void* allocate(std::size_t bytes);
  // Returns a block from allocate() to the cache.
  void release(void* block);
  // Frees every cached block.
  void empty_cache();

  struct Stats {
    std::size_t raw_allocations = 0, cache_hits = 0, evictions = 0;
    std::size_t bytes_in_use = 0, peak_bytes_in_use = 0, bytes_cached = 0;
  };
  Stats stats() const;

 private:
  struct CachedBlock {
    void* block;
    std::uint64_t released_at;  // release order: the smallest is evicted first
  };
  using Cache = std::multimap<std::size_t, CachedBlock>;  // bin bytes -> free block

  std::string memory_;
  RawAllocate raw_allocate_;
  RawFree raw_free_;
  mutable std::mutex mutex_;
  std::unordered_map<void*, std::size_t> in_use_;  // block -> bin bytes
  Cache cached_;
  std::map<std::uint64_t, Cache::iterator> release_order_;  // released_at -> its entry in cached_
  std::uint64_t releases_ = 0;
  Stats stats_;

  void take_cached_locked(Cache::iterator it);
  void evict_least_recent_locked();
  void empty_cache_locked();
};

// A tensor whose storage comes from `allocator` and goes back to it when the last tensor
// sharing the storage is gone; the storage keeps the allocator alive (a tensor may outlive its
// backend).
Tensor allocate_tensor(const std::shared_ptr<CachingAllocator>& allocator, const Shape& shape, DType dtype,
                       Device device);

}  // namespace trepro
