// A corpus binarized once by `trepro prepare` and memory-mapped by `train --data`: batches of a
// corpus of millions of pairs are made from its offsets alone, and only a batch's own tokens are
// read.
//
// DATA_DIR/
//   manifest.json              the settings it was made with (prepared_settings), the text
//                              files it read ("inputs": name, bytes, sha256), the vocabulary's
//                              sha256 and size, the token type, per split its lines, pairs,
//                              dropped pairs (empty, too_long), tokens and, for held-out splits,
//                              the source lines and pairs also in the training split ("in_train"),
//                              and each file's bytes and sha256
//   vocab.model                the sentencepiece model the ids come from
//   <split>.<language>.tokens  the ids of the split's kept pairs, one after another: uint16 when
//                              the vocabulary has at most 65,536 pieces, else int32 (host order)
//   <split>.<language>.offsets uint64 [pairs + 1]: pair i is tokens [offsets[i], offsets[i + 1])
// The folder appears whole or not at all: it is written as DATA_DIR.partial.<pid> and renamed, by
// a prepare that holds DATA_DIR.lock (flock) meanwhile.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "experiments/data/parallel_corpus.h"
#include "experiments/data/rate_progress.h"
#include "experiments/data/token_batches.h"

namespace trepro {

// What a prepared folder depends on: the languages, the splits, the length filter and the
// vocabulary settings. A folder is reused only for a config with the same settings.
nlohmann::json prepared_settings(const Config& config, const CorpusSpec& spec);

// Binarizes the corpus of `config` (corpus_spec(config, data_dir)) into `out`, training the
// vocabulary on data.vocabulary.sample_sentences sentences unless `vocabulary_model` names a
// model to use. When `out` exists it is checked (PreparedCorpus::open, then the input text's and
// the given vocabulary's sha256 against its manifest) and reused; any difference is an error
// naming the file. `out`'s parent folders are made. A second prepare of the same `out` is refused
// (out.lock), and partial folders left by a killed prepare of `out` are removed. Returns the
// manifest.
nlohmann::json prepare_corpus(const Config& config, const std::string& data_dir, const std::string& vocabulary_model,
                              const std::string& out, const RateProgress::Note& note);

class MappedFile;

// One split of a prepared folder, memory-mapped.
class PreparedSplit : public PairTable {
 public:
  PreparedSplit(const std::string& dir, const std::string& split, const CorpusSpec& spec, bool wide);
  ~PreparedSplit() override;
  std::size_t size() const override;
  std::vector<std::int32_t> padded_lengths() const override;
  TokenPair pair(std::size_t index) const override;

 struct Side;

 private:
  std::vector<int> tokens(const Side& side, std::size_t index) const;

  std::unique_ptr<Side> source_, target_;
  bool wide_;  // int32 ids, else uint16
};

// The prepared folder's sentencepiece model, beside its manifest.
inline constexpr const char* kPreparedVocabularyFile = "vocab.model";

class PreparedCorpus {
 public:
  // Checks `dir` against `config`: throws std::runtime_error naming dir/manifest.json when it was
  // prepared with other settings, or when a file's size or sha256 differs from the manifest.
  static PreparedCorpus open(const std::string& dir, const Config& config);

  std::shared_ptr<const PreparedSplit> split(const std::string& name) const;
  std::string vocabulary_path() const;
  const nlohmann::json& manifest() const { return manifest_; }

 private:
  static PreparedCorpus open_checked(const std::string& dir, const std::string& manifest_path, const Config& config);

  std::string dir_;
  nlohmann::json manifest_;
  std::map<std::string, std::shared_ptr<const PreparedSplit>> splits_;
};

}  // namespace trepro
