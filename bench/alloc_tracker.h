// Heap accounting for benchmarks that report peak memory: alloc_tracker.cc replaces malloc and
// friends (in the benchmark executable only) with glibc's own allocator plus a count of the
// live bytes and their high-water mark.
#pragma once

#include <cstddef>

namespace trepro::bench {

// Live heap bytes now.
std::size_t heap_live_bytes();
// Restarts the high-water mark at the current live bytes.
void heap_reset_peak();
// The high-water mark since the last reset.
std::size_t heap_peak_bytes();

// Peak heap growth during f(), in MiB: what f allocates on top of what was live before it.
template <class F>
double peak_extra_mib(F&& f) {
  const std::size_t before = heap_live_bytes();
  heap_reset_peak();
  f();
  return static_cast<double>(heap_peak_bytes() - before) / (1024.0 * 1024.0);
}

}  // namespace trepro::bench
