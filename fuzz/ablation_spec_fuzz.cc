// The ablation-spec reader (experiments/ablation/ablation_spec.h), with a valid base config
// (base.json, the copy task) beside the spec for "base" to name, and every cell's config.
#include "experiments/ablation/ablation_spec.h"
#include "fuzz/fuzz_input.h"

namespace {

constexpr std::string_view kBase = R"({"model": {"vocab_size": 16, "d_model": 8, "heads": 2, "encoder_layers": 1,
  "decoder_layers": 1, "d_ff": 16}, "train": {"seed": 3}, "data": {"dataset": "copy"}})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trepro;
  fuzz::scratch_file("base.json", kBase);
  const std::string path = fuzz::scratch_file("spec.json", fuzz::bytes(data, size));
  fuzz::expect_clean_errors(path, [&] {
    const AblationSpec spec = load_ablation_spec(path);
    for (const AblationVariant& variant : spec.variants) {
      for (std::uint64_t seed : spec.seeds) validate(cell_config(variant, seed), path);
    }
  });
  return 0;
}
