// A parallel corpus in the layout of fairseq's and Marian's WMT recipes: <dir>/<split>.<language>
// (or .gz), plain text, one sentence a line, line N of the source file translating line N of the
// target file. Multi30K is the preset <data dir>/multi30k with splits train, val and
// test_2016_flickr, filtered at model.max_len.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config.h"
#include "experiments/data/text_lines.h"
#include "experiments/data/token_batches.h"

namespace trepro {

struct CorpusSpec {
  std::string dir;  // the folder of the split files
  std::string source_language, target_language;
  std::string train, valid;
  std::vector<std::string> test;
  // Pairs longer than max_len tokens with EOS (or empty) are dropped when `filter` is set, and
  // are an error naming the file and line when it is not.
  std::int64_t max_len = 0;
  bool filter = false;
};

// The corpus a multi30k or parallel config reads. `data_dir` (--data-dir) overrides data.dir;
// multi30k resolves it with resolve_data_dir.
CorpusSpec corpus_spec(const Config& config, const std::string& data_dir);
// The same without a folder (dir empty): what a prepared folder needs, which has no text files.
CorpusSpec corpus_layout(const Config& config);

// <dir>/<split>.<language>, or that with .gz: the one that exists. Throws naming both
// candidates when neither or both exist.
std::string split_file(const CorpusSpec& spec, const std::string& split, const std::string& language);

// Where a pair comes from, for errors.
struct PairLocation {
  std::string source_path, target_path;
  std::int64_t line = 0;
};

// Streams the aligned pairs of one split. Throws std::runtime_error naming the file and line for
// an empty file, a file that ends before the other, and whatever TextLines rejects.
class PairReader {
 public:
  PairReader(const CorpusSpec& spec, const std::string& split);
  bool next(std::string& source, std::string& target);
  std::int64_t line_number() const { return source_.line_number(); }
  double fraction_read() const { return source_.fraction_read(); }
  // The pair `next` returned last.
  PairLocation location() const { return {source_.path(), target_.path(), line_number()}; }

 private:
  TextLines source_, target_;
};

// Whole splits in memory, for the sample-free small corpora (Multi30K) and for references.
struct ParallelText {
  std::vector<std::string> source, target;  // same length; source[i] translates into target[i]
};
ParallelText read_split(const CorpusSpec& spec, const std::string& split);

// What the length filter dropped.
struct FilterCounts {
  std::int64_t empty = 0, too_long = 0;
};

// Whether `pair` (ids without BOS/EOS) is kept: true when neither side is empty and each fits in
// spec.max_len with its EOS/BOS. Otherwise counts it in `counts` when spec.filter is set, and
// throws naming the file and line when it is not.
bool keep_pair(const TokenPair& pair, const CorpusSpec& spec, const PairLocation& where, FilterCounts& counts);

}  // namespace trepro
