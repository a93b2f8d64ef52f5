#include "core/caching_allocator.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace trepro {

std::size_t allocation_bin_bytes(std::size_t bytes) {
  constexpr std::size_t small = 512, large = 2 << 20, large_threshold = 1 << 20;
  if (bytes < large_threshold) return bytes <= small ? small : (bytes + small - 1) / small * small;
  return (bytes + large - 1) / large * large;
}

CachingAllocator::CachingAllocator(std::string memory, RawAllocate raw_allocate, RawFree raw_free)
    : memory_(std::move(memory)), raw_allocate_(std::move(raw_allocate)), raw_free_(std::move(raw_free)) {}

CachingAllocator::~CachingAllocator() {
  std::lock_guard lock(mutex_);
  empty_cache_locked();
}

void* CachingAllocator::allocate(std::size_t bytes) {
  std::size_t bin = allocation_bin_bytes(bytes);
  std::lock_guard lock(mutex_);
  void* block = nullptr;
  if (auto it = cached_.lower_bound(bin); it != cached_.end() && it->first <= bin + bin / 4) {
    block = it->second.block;
    bin = it->first;  // the block's own bin: what it holds, and what it is cached under again
    take_cached_locked(it);
    ++stats_.cache_hits;
  } else {
    block = raw_allocate_(bin);
    if (block == nullptr) {
      empty_cache_locked();
      block = raw_allocate_(bin);
    }
    if (block == nullptr) {
      throw OutOfMemory(memory_ + " exhausted allocating " + std::to_string(bin) + " bytes (" +
                        std::to_string(stats_.bytes_in_use) + " bytes in use, cache emptied)");
    }
    ++stats_.raw_allocations;
  }
  in_use_.emplace(block, bin);
  stats_.bytes_in_use += bin;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return block;
}

void CachingAllocator::release(void* block) {
  std::lock_guard lock(mutex_);
  const auto it = in_use_.find(block);
  if (it == in_use_.end()) throw std::logic_error("CachingAllocator::release: block was not allocated here");
  const std::size_t bin = it->second;
  in_use_.erase(it);
  stats_.bytes_in_use -= bin;
  // bin <= peak_bytes_in_use (the block was in use), so eviction always makes room.
  while (stats_.bytes_cached + bin > stats_.peak_bytes_in_use) evict_least_recent_locked();
  const auto cached = cached_.emplace(bin, CachedBlock{block, releases_});
  release_order_.emplace(releases_++, cached);
  stats_.bytes_cached += bin;
}

void CachingAllocator::empty_cache() {
  std::lock_guard lock(mutex_);
  empty_cache_locked();
}

void CachingAllocator::take_cached_locked(Cache::iterator it) {
  stats_.bytes_cached -= it->first;
  release_order_.erase(it->second.released_at);
  cached_.erase(it);
}

void CachingAllocator::evict_least_recent_locked() {
  const Cache::iterator oldest = release_order_.begin()->second;
  raw_free_(oldest->second.block);
  ++stats_.evictions;
  take_cached_locked(oldest);
}

void CachingAllocator::empty_cache_locked() {
  for (const auto& [bin, cached] : cached_) raw_free_(cached.block);
  cached_.clear();
  release_order_.clear();
  stats_.bytes_cached = 0;
}

CachingAllocator::Stats CachingAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

Tensor allocate_tensor(const std::shared_ptr<CachingAllocator>& allocator, const Shape& shape, DType dtype,
                       Device device) {
  const std::size_t bytes = static_cast<std::size_t>(shape_numel(shape)) * dtype_size(dtype);
  auto* block = static_cast<std::byte*>(allocator->allocate(bytes));
  std::shared_ptr<std::byte> storage(block, [allocator](std::byte* p) { allocator->release(p); });
  return Tensor::from_storage(std::move(storage), shape, dtype, device);
}

}  // namespace trepro
