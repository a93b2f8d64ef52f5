// The parallel corpus reader (experiments/data/parallel_corpus.h), which also reads Multi30K: a
// source and a target file of one split, each gzip-compressed or plain as the first input byte
// says (the reader must take either, and a corrupt stream must be an error); the rest of the
// input is split at its first 0xff byte.
#include <zlib.h>

#include "experiments/data/parallel_corpus.h"
#include "fuzz/fuzz_input.h"

namespace {

// Writes `<stem>` plainly or `<stem>.gz` compressed, and removes the other: a split present in
// both forms is an error of its own, which the third input bit asks for.
void write_split_file(const std::filesystem::path& stem, std::string_view contents, bool compress, bool both) {
  const std::filesystem::path plain = stem, gz = stem.string() + ".gz";
  std::filesystem::remove(plain);
  std::filesystem::remove(gz);
  if (!compress || both) std::ofstream(plain, std::ios::binary).write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!compress && !both) return;
  gzFile file = gzopen(gz.c_str(), "wb");
  if (!contents.empty()) gzwrite(file, contents.data(), static_cast<unsigned>(contents.size()));
  gzclose(file);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trepro;
  if (size == 0) return 0;
  const std::string_view text = fuzz::bytes(data + 1, size - 1);
  const std::size_t cut = std::min(text.find('\xff'), text.size());
  const std::filesystem::path folder = fuzz::scratch_folder() / "corpus";
  std::filesystem::create_directories(folder);
  const bool both = (data[0] & 4) != 0;
  write_split_file(folder / "train.de", text.substr(0, cut), data[0] & 1, both);
  write_split_file(folder / "train.en", text.substr(std::min(cut + 1, text.size())), data[0] & 2, false);
  CorpusSpec spec;
  spec.dir = folder.string();
  spec.source_language = "de";
  spec.target_language = "en";
  spec.train = "train";
  fuzz::expect_clean_errors((folder / "train.").string(), [&] {
    const ParallelText pairs = read_split(spec, "train");
    if (pairs.source.size() != pairs.target.size() || pairs.source.empty()) fuzz::reject("pairs", "unequal or none");
  });
  return 0;
}
