// Where Multi30K lives (task 1, English-German image descriptions: <data dir>/multi30k/
// <split>.<de|en>.gz, splits train (29,000 pairs), val (1,014) and test_2016_flickr (1,000)); it
// is read as a parallel corpus (experiments/data/parallel_corpus.h).
#pragma once

#include <string>

namespace trepro {

// The data folder (the one holding multi30k/), tried in this order: `explicit_dir` (--data-dir
// or data.dir, when not empty), $TREPRO_DATA_DIR, then the default <source dir>/data, the
// repository's own data/ folder, which ships Multi30K (data/multi30k/README.md, its checksums
// in data/multi30k/SHA256SUMS). A wrong explicit folder or $TREPRO_DATA_DIR is an error, not a
// fall-through. Throws std::runtime_error listing every place tried.
std::string resolve_data_dir(const std::string& explicit_dir);

}  // namespace trepro
