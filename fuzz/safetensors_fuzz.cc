// The safetensors reader (core/safetensors.h), header and data: every tensor it returns holds
// exactly the bytes its dtype and shape say.
#include "core/safetensors.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trepro;
  const std::string path = fuzz::scratch_file("weights.safetensors", fuzz::bytes(data, size));
  fuzz::expect_clean_errors(path, [&] {
    const SafetensorsFile file = read_safetensors(path);
    std::size_t bytes = 0;
    for (const auto& [name, tensor] : file.tensors) {
      bytes += tensor.nbytes();
      for (std::int64_t i = 0; i < tensor.numel(); ++i) (void)tensor.at(i);  // every element readable
    }
    if (bytes > size) fuzz::reject("sizes", "the tensors hold more bytes than the file");
  });
  return 0;
}
