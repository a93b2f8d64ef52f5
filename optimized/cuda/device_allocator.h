// The CUDA backend's caching allocator: device memory is expensive to allocate (cudaMalloc
// synchronizes the device), and a training step allocates the same sizes every step, so freed
// blocks are kept per size bin and handed out again. The raw allocator is injected, so the host
// tests (conformance/cuda/device_allocator_test.cc) drive the same code with malloc.
//
// Stream safety: the backend runs everything on one stream, so a block released while a kernel
// still reads it can only be reused by work queued after that kernel.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>

namespace trepro::cuda {

// Bytes actually allocated for a request: at least 512, a multiple of 512 below 1 MiB and of
// 2 MiB from there on (coarser bins for large blocks keep the cache from fragmenting).
std::size_t allocation_bin_bytes(std::size_t bytes);

// std::bad_alloc with a message: the request and what the cache held when it failed.
class OutOfDeviceMemory : public std::bad_alloc {
 public:
  explicit OutOfDeviceMemory(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

class CachingAllocator {
 public:
  // raw_allocate returns nullptr when memory is exhausted (and throws on any other error).
  using RawAllocate = std::function<void*(std::size_t)>;
  using RawFree = std::function<void(void*)>;

  CachingAllocator(RawAllocate raw_allocate, RawFree raw_free);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least `bytes`; on exhaustion the cache is returned to the device and the
  // allocation retried once; throws OutOfDeviceMemory if that fails too.
  void* allocate(std::size_t bytes);
  // Returns a block from allocate() to the cache.
  void release(void* block);
  // Frees every cached block.
  void empty_cache();

  struct Stats {
    std::size_t raw_allocations = 0, cache_hits = 0, bytes_in_use = 0, bytes_cached = 0;
  };
  Stats stats() const;

 private:
  RawAllocate raw_allocate_;
  RawFree raw_free_;
  mutable std::mutex mutex_;
  std::unordered_map<void*, std::size_t> in_use_;  // block -> bin bytes
  std::multimap<std::size_t, void*> cached_;       // bin bytes -> free block
  Stats stats_;

  void empty_cache_locked();
};

}  // namespace trepro::cuda
