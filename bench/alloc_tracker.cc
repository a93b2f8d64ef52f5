#include "bench/alloc_tracker.h"

#include <malloc.h>

#include <atomic>
#include <cerrno>
#include <cstddef>

// glibc's allocator under its internal names: the replacements below forward to them.
extern "C" {
void* __libc_malloc(std::size_t size);
void __libc_free(void* p);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
}

namespace {

std::atomic<std::size_t> live{0};
std::atomic<std::size_t> peak{0};

void* counted(void* p) {
  if (p != nullptr) {
    const std::size_t now = live.fetch_add(malloc_usable_size(p)) + malloc_usable_size(p);
    std::size_t high = peak.load();
    while (now > high && !peak.compare_exchange_weak(high, now)) {
    }
  }
  return p;
}

void uncount(void* p) {
  if (p != nullptr) live.fetch_sub(malloc_usable_size(p));
}

}  // namespace

extern "C" {
void* malloc(std::size_t size) { return counted(__libc_malloc(size)); }
void free(void* p) {
  uncount(p);
  __libc_free(p);
}
void* calloc(std::size_t count, std::size_t size) { return counted(__libc_calloc(count, size)); }
void* realloc(void* p, std::size_t size) {
  uncount(p);
  return counted(__libc_realloc(p, size));
}
void* memalign(std::size_t alignment, std::size_t size) { return counted(__libc_memalign(alignment, size)); }
void* aligned_alloc(std::size_t alignment, std::size_t size) { return counted(__libc_memalign(alignment, size)); }
int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  void* p = counted(__libc_memalign(alignment, size));
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
}

namespace trepro::bench {

std::size_t heap_live_bytes() { return live.load(); }
void heap_reset_peak() { peak.store(live.load()); }
std::size_t heap_peak_bytes() { return peak.load(); }

}  // namespace trepro::bench
