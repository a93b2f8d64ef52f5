// The Multi30K reader (experiments/data/multi30k.h): a German and an English file of one split,
// each gzip-compressed or plain bytes as the first input byte says (gzread reads both, and a
// corrupt stream must be an error); the rest of the input is split at its first 0xff byte.
#include <zlib.h>

#include "experiments/data/multi30k.h"
#include "fuzz/fuzz_input.h"

namespace {

void write_file(const std::filesystem::path& path, std::string_view contents, bool compress) {
  if (!compress) {
    trepro::fuzz::scratch_file(std::filesystem::relative(path, trepro::fuzz::scratch_folder()).string(), contents);
    return;
  }
  gzFile file = gzopen(path.c_str(), "wb");
  if (!contents.empty()) gzwrite(file, contents.data(), static_cast<unsigned>(contents.size()));
  gzclose(file);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trepro;
  if (size == 0) return 0;
  const std::string_view text = fuzz::bytes(data + 1, size - 1);
  const std::size_t cut = std::min(text.find('\xff'), text.size());
  const std::filesystem::path folder = fuzz::scratch_folder() / "multi30k";
  std::filesystem::create_directories(folder);
  write_file(folder / "train.de.gz", text.substr(0, cut), data[0] & 1);
  write_file(folder / "train.en.gz", text.substr(std::min(cut + 1, text.size())), data[0] & 2);
  fuzz::expect_clean_errors((folder / "train.").string(), [&] {
    const ParallelText pairs = read_multi30k(fuzz::scratch_folder().string(), "train", "de", "en");
    if (pairs.source.size() != pairs.target.size() || pairs.source.empty()) fuzz::reject("pairs", "unequal or none");
  });
  return 0;
}
