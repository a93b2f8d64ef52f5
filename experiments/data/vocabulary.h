// A joint subword vocabulary (source and target languages share one table, as in the paper's
// shared BPE), wrapping the sentencepiece C++ library: BPE or unigram, trained on the training
// split of both languages and saved next to the run (RUN/vocab.model), reloaded on resume and
// by the decoding commands.
//
// Special ids are fixed: pad = 0, bos = 1, eos = 2, unk = 3 (model.pad_id = 0; the two
// smallest non-pad ids are BOS and EOS, as in experiments/copy_task.h special_tokens()).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace trepro {

struct VocabularyOptions {
  VocabularyKind kind = VocabularyKind::bpe;
  std::int64_t size = 8000;
  int threads = 2;  // sentencepiece trainer threads
  // BPE only: called with the number of merged pieces as sentencepiece's trainer reports them
  // (every 20 merges), for a progress line; sentencepiece has no callback, so its log lines are
  // read while it trains (warnings and errors still reach std::cerr).
  std::function<void(std::int64_t pieces)> on_pieces;
};

class Vocabulary {
 public:
  static constexpr int kPad = 0, kBos = 1, kEos = 2, kUnk = 3;

  // Trains on `sentences` and writes the model to `model_path` atomically. Throws
  // std::runtime_error with sentencepiece's message (for example a size the data cannot reach).
  static Vocabulary train(const std::vector<std::string>& sentences, const VocabularyOptions& options,
                          const std::string& model_path);
  // Throws std::runtime_error naming `model_path` when it is missing or not a model whose
  // special ids are the ones above.
  static Vocabulary load(const std::string& model_path);

  // Pieces of `text` as ids, without BOS/EOS.
  std::vector<int> encode(const std::string& text) const;
  // Detokenized text; pad, bos and eos ids are skipped.
  std::string decode(const std::vector<int>& ids) const;
  int size() const;

 private:
  Vocabulary(std::shared_ptr<const sentencepiece::SentencePieceProcessor> processor, std::string source);

  std::shared_ptr<const sentencepiece::SentencePieceProcessor> processor_;
  std::string source_;  // the model file, named in errors
};

// Trains config's vocabulary on `sentences` into `model_path` with progress notes: the start, a
// line with the pieces merged, their rate and the ETA every few seconds (BPE), and the end.
Vocabulary train_vocabulary(const std::vector<std::string>& sentences, const VocabularyConfig& config,
                            const std::string& model_path, const std::function<void(const std::string&)>& note);

}  // namespace trepro
