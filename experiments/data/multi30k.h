// Multi30K task 1 (English-German image descriptions): gzip files, one sentence a line, line N
// of X.en.gz translating line N of X.de.gz. Splits: train (29,000 pairs), val (1,014),
// test_2016_flickr (1,000).
#pragma once

#include <string>
#include <vector>

namespace trepro {

struct ParallelText {
  std::vector<std::string> source, target;  // same length; source[i] translates into target[i]
};

// The lines of a gzip file (without their '\n'). Throws std::runtime_error naming `path`.
std::vector<std::string> read_gzip_lines(const std::string& path);

// The data folder (the one holding multi30k/), tried in this order: `explicit_dir` (--data-dir
// or data.dir, when not empty), $TREPRO_DATA_DIR, <source dir>/../shared/data,
// /work/shared/data. Throws std::runtime_error listing every place tried.
std::string resolve_data_dir(const std::string& explicit_dir);

// Reads <data_dir>/multi30k/<split>.<lang>.gz for both languages; throws when the line counts
// differ.
ParallelText read_multi30k(const std::string& data_dir, const std::string& split, const std::string& source_language,
                           const std::string& target_language);

}  // namespace trepro
