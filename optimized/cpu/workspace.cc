#include "optimized/cpu/workspace.h"

#include <cstdlib>
#include <new>

namespace trepro::cpu {

Workspace::Workspace(int workers) : buffers_(static_cast<std::size_t>(workers) * static_cast<int>(Slot::count)) {}

float* Workspace::floats(int worker, Slot slot, std::size_t count) {
  Buffer& buffer = buffers_.at(static_cast<std::size_t>(worker) * static_cast<int>(Slot::count) + static_cast<int>(slot));
  if (buffer.capacity < count) {
    // Round up to whole cache lines; aligned_alloc needs a multiple of the alignment.
    std::size_t bytes = ((count * sizeof(float) + 63) / 64) * 64;
    auto* p = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (p == nullptr) throw std::bad_alloc();
    buffer.data = {p, [](float* q) { std::free(q); }};
    buffer.capacity = bytes / sizeof(float);
  }
  return buffer.data.get();
}

}  // namespace trepro::cpu
