// Scratch memory of the ops reused across calls, so that their packing buffers and tiles are
// allocated once, when an op first sees its largest shape (the buffers only grow). The model's
// activations are tensors the model allocates itself.
//
// A buffer is named by (worker, slot): each pool worker owns its own buffers, so tasks running
// at the same time never share one; `slot` separates buffers one op needs at once (a packed A
// and a packed B panel of the GEMM, linear's dpre beside them). The pointer is valid until the
// next call with the same (worker, slot) asks for more elements.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace trepro::cpu {

enum class Slot : int { gemm_a, gemm_b, linear_dpre, op_scratch, op_scratch2, count };

class Workspace {
 public:
  explicit Workspace(int workers);

  // At least `count` floats, 64-byte aligned, contents unspecified.
  float* floats(int worker, Slot slot, std::size_t count);

 private:
  struct Buffer {
    std::unique_ptr<float[], void (*)(float*)> data{nullptr, nullptr};
    std::size_t capacity = 0;
  };
  std::vector<Buffer> buffers_;  // [worker][slot]
};

}  // namespace trepro::cpu
