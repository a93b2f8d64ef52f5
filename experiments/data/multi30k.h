// Where Multi30K lives (task 1, English-German image descriptions: <data dir>/multi30k/
// <split>.<de|en>.gz, splits train (29,000 pairs), val (1,014) and test_2016_flickr (1,000)); it
// is read as a parallel corpus (experiments/data/parallel_corpus.h).
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace trepro {

// Multi30K's test sets, the one every config tests on first: test_2016_flickr (1,000 pairs), then
// test_2017_flickr (1,000) and test_2017_mscoco (461, out of domain), which sweeps decode too.
inline constexpr std::array<std::string_view, 3> kMulti30kTestSets = {"test_2016_flickr", "test_2017_flickr",
                                                                      "test_2017_mscoco"};

// The data folder (the one holding multi30k/), tried in this order: `explicit_dir` (--data-dir
// or data.dir, when not empty), $TREPRO_DATA_DIR, then the default <source dir>/data, the
// repository's own data/ folder, which ships Multi30K (data/multi30k/README.md, its checksums
// in data/multi30k/SHA256SUMS). A wrong explicit folder or $TREPRO_DATA_DIR is an error, not a
// fall-through. Throws std::runtime_error listing every place tried.
std::string resolve_data_dir(const std::string& explicit_dir);

}  // namespace trepro
