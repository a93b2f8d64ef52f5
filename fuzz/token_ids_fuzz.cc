// The id-file reader of `trepro forward --src/--tgt/--labels` (core/token_ids.h).
#include "core/token_ids.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trepro;
  const std::string path = fuzz::scratch_file("ids.safetensors", fuzz::bytes(data, size));
  fuzz::expect_clean_errors(path, [&] {
    const Tensor ids = read_token_ids(path, "src");
    if (ids.rank() != 2 || ids.numel() == 0) fuzz::reject("ids", "not a non-empty matrix: " + shape_string(ids.shape()));
  });
  return 0;
}
