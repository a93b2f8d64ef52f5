#include "optimized/cuda/device_allocator.h"

#include <new>
#include <stdexcept>
#include <string>

namespace trepro::cuda {

std::size_t allocation_bin_bytes(std::size_t bytes) {
  constexpr std::size_t small = 512, large = 2 << 20, large_threshold = 1 << 20;
  if (bytes < large_threshold) return bytes <= small ? small : (bytes + small - 1) / small * small;
  return (bytes + large - 1) / large * large;
}

CachingAllocator::CachingAllocator(RawAllocate raw_allocate, RawFree raw_free)
    : raw_allocate_(std::move(raw_allocate)), raw_free_(std::move(raw_free)) {}

CachingAllocator::~CachingAllocator() {
  std::lock_guard lock(mutex_);
  empty_cache_locked();
}

void* CachingAllocator::allocate(std::size_t bytes) {
  const std::size_t bin = allocation_bin_bytes(bytes);
  std::lock_guard lock(mutex_);
  void* block = nullptr;
  if (auto it = cached_.find(bin); it != cached_.end()) {
    block = it->second;
    cached_.erase(it);
    stats_.bytes_cached -= bin;
    ++stats_.cache_hits;
  } else {
    block = raw_allocate_(bin);
    if (block == nullptr) {
      empty_cache_locked();
      block = raw_allocate_(bin);
    }
    if (block == nullptr) {
      throw OutOfDeviceMemory("cuda backend: out of device memory allocating " + std::to_string(bin) +
                              " bytes (" + std::to_string(stats_.bytes_in_use) + " bytes in use, cache emptied)");
    }
    ++stats_.raw_allocations;
  }
  in_use_.emplace(block, bin);
  stats_.bytes_in_use += bin;
  return block;
}

void CachingAllocator::release(void* block) {
  std::lock_guard lock(mutex_);
  const auto it = in_use_.find(block);
  if (it == in_use_.end()) throw std::logic_error("CachingAllocator::release: block was not allocated here");
  cached_.emplace(it->second, block);
  stats_.bytes_in_use -= it->second;
  stats_.bytes_cached += it->second;
  in_use_.erase(it);
}

void CachingAllocator::empty_cache() {
  std::lock_guard lock(mutex_);
  empty_cache_locked();
}

void CachingAllocator::empty_cache_locked() {
  for (const auto& [bin, block] : cached_) raw_free_(block);
  cached_.clear();
  stats_.bytes_cached = 0;
}

CachingAllocator::Stats CachingAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace trepro::cuda
