// The config reader (core/config.h): JSON text -> Config, and what a read config must satisfy:
// its canonical JSON reads back to the same config (hash).
#include "core/config.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trepro;
  const std::string path = fuzz::scratch_file("config.json", fuzz::bytes(data, size));
  fuzz::expect_clean_errors(path, [&] {
    const Config config = load_config(path);
    const Config again = config_from_json(config_to_json(config), path);
    if (config_hash(again) != config_hash(config)) fuzz::reject("round trip", "the canonical JSON reads back differently");
  });
  return 0;
}
