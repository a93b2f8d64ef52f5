#include "experiments/data/vocabulary.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstdlib>
#include <iostream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <streambuf>
#include <unordered_map>

#include "core/atomic_file.h"
#include "experiments/data/rate_progress.h"

namespace trepro {

namespace {

// Feeds sentencepiece's trainer from memory, so no temporary corpus file is written.
class VectorIterator : public sentencepiece::SentenceIterator {
 public:
  explicit VectorIterator(const std::vector<std::string>& sentences) : sentences_(sentences) {}
  bool done() const override { return index_ >= sentences_.size(); }
  void Next() override { ++index_; }
  const std::string& value() const override { return sentences_[index_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>& sentences_;
  std::size_t index_ = 0;
};

// Takes std::cerr's place while sentencepiece trains with its INFO logging on: the BPE trainer's
// "Added: freq=F size=N ..." lines give N to the callback, its warnings and errors (lines
// "...LOG(WARNING)..." and worse) go on to the original stream, and the rest of its INFO output
// (including the multi-line dump of its settings) is dropped.
// Restores std::cerr when destroyed, also when training throws.
class PieceCountReader : public std::streambuf {
 public:
  explicit PieceCountReader(std::function<void(std::int64_t)> on_pieces)
      : on_pieces_(std::move(on_pieces)), original_(std::cerr.rdbuf(this)) {}
  ~PieceCountReader() override {
    if (!line_.empty()) finish_line(line_);
    std::cerr.rdbuf(original_);
  }
  PieceCountReader(const PieceCountReader&) = delete;
  PieceCountReader& operator=(const PieceCountReader&) = delete;

 protected:
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    std::string line;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (ch != '\n') {
        line_.push_back(static_cast<char>(ch));
        return ch;
      }
      line.swap(line_);
    }
    finish_line(line);
    return ch;
  }

 private:
  // Outside the lock, and with std::cerr given back while the callback runs: a callback that
  // prints its progress to std::cerr would otherwise write into this buffer (and wait on its
  // own lock).
  void finish_line(const std::string& line) {
    const bool logged = line.find("LOG(") != std::string::npos;
    const bool info = line.find("LOG(INFO)") != std::string::npos;
    const std::size_t added = line.find("Added: ");
    const std::size_t size = line.find(" size=", added == std::string::npos ? 0 : added);
    if (info && added != std::string::npos && size != std::string::npos) {
      std::cerr.rdbuf(original_);
      on_pieces_(std::strtoll(line.c_str() + size + 6, nullptr, 10));
      std::cerr.rdbuf(this);
    } else if (logged && !info) {
      original_->sputn(line.data(), static_cast<std::streamsize>(line.size()));
      original_->sputc('\n');
    }
  }

  std::function<void(std::int64_t)> on_pieces_;
  std::streambuf* original_;
  std::mutex mutex_;
  std::string line_;
};

void check_special_ids(const sentencepiece::SentencePieceProcessor& sp, const std::string& source) {
  const int expected[] = {Vocabulary::kPad, Vocabulary::kBos, Vocabulary::kEos, Vocabulary::kUnk};
  const int actual[] = {sp.pad_id(), sp.bos_id(), sp.eos_id(), sp.unk_id()};
  const char* names[] = {"pad", "bos", "eos", "unk"};
  for (int i = 0; i < 4; ++i) {
    if (actual[i] != expected[i]) {
      throw std::runtime_error(source + ": " + names[i] + " id is " + std::to_string(actual[i]) + ", expected " +
                               std::to_string(expected[i]) + " (pad=0, bos=1, eos=2, unk=3)");
    }
  }
}

}  // namespace

Vocabulary::Vocabulary(std::shared_ptr<const sentencepiece::SentencePieceProcessor> processor, std::string source)
    : processor_(std::move(processor)), source_(std::move(source)) {}

Vocabulary Vocabulary::train(const std::vector<std::string>& sentences, const VocabularyOptions& options,
                             const std::string& model_path) {
  if (sentences.empty()) throw std::invalid_argument("vocabulary: no sentences to train on");
  const bool report_pieces = options.on_pieces && options.kind == VocabularyKind::bpe;
  const std::unordered_map<std::string, std::string> arguments = {
      {"model_type", to_string(options.kind)},
      {"vocab_size", std::to_string(options.size)},
      {"pad_id", "0"}, {"bos_id", "1"}, {"eos_id", "2"}, {"unk_id", "3"},
      // Every character of the corpus gets a piece (Latin script: no reason to drop any).
      {"character_coverage", "1.0"},
      {"num_threads", std::to_string(options.threads)},
      // Multi30K is small enough to use whole; sentencepiece would otherwise sample.
      {"input_sentence_size", std::to_string(sentences.size())},
      {"shuffle_input_sentence", "false"},
      // INFO lines only where PieceCountReader reads them.
      {"minloglevel", report_pieces ? "0" : "2"},
  };
  VectorIterator iterator(sentences);
  std::string serialized;
  sentencepiece::util::Status status;
  {
    std::optional<PieceCountReader> reader;
    if (report_pieces) reader.emplace(options.on_pieces);
    status = sentencepiece::SentencePieceTrainer::Train(arguments, &iterator, &serialized);
  }
  if (!status.ok()) {
    throw std::runtime_error(model_path + ": sentencepiece training failed: " + std::string(status.message()));
  }
  write_file_atomically(model_path, serialized);
  return load(model_path);
}

Vocabulary train_vocabulary(const std::vector<std::string>& sentences, const VocabularyConfig& config,
                            const std::string& model_path, const std::function<void(const std::string&)>& note) {
  const std::string what = "vocabulary: training " + to_string(config.kind) + " " + std::to_string(config.size);
  note(what + " on " + std::to_string(sentences.size()) + " sentences");
  RateProgress done(what, "sentences", note);
  // Timed from the first merge: sentencepiece reads and counts the sentences before it.
  std::optional<RateProgress> merging;
  VocabularyOptions options{config.kind, config.size, 2, [&](std::int64_t pieces) {
                              if (!merging) merging.emplace(what, "pieces", note);
                              merging->update(pieces, static_cast<double>(pieces) / static_cast<double>(config.size));
                            }};
  Vocabulary vocabulary = Vocabulary::train(sentences, options, model_path);
  done.finish(static_cast<std::int64_t>(sentences.size()));
  return vocabulary;
}

Vocabulary Vocabulary::load(const std::string& model_path) {
  auto sp = std::make_shared<sentencepiece::SentencePieceProcessor>();
  const auto status = sp->Load(model_path);
  if (!status.ok()) {
    throw std::runtime_error(model_path + ": cannot load the sentencepiece model: " + std::string(status.message()));
  }
  check_special_ids(*sp, model_path);
  return Vocabulary(std::move(sp), model_path);
}

std::vector<int> Vocabulary::encode(const std::string& text) const {
  std::vector<int> ids;
  const auto status = processor_->Encode(text, &ids);
  if (!status.ok()) throw std::runtime_error(source_ + ": cannot encode: " + std::string(status.message()));
  return ids;
}

std::string Vocabulary::decode(const std::vector<int>& ids) const {
  std::vector<int> pieces;
  for (int id : ids) {
    if (id < 0 || id >= size()) {
      throw std::invalid_argument(source_ + ": id " + std::to_string(id) + " is outside [0, " +
                                  std::to_string(size()) + ")");
    }
    if (id != kPad && id != kBos && id != kEos) pieces.push_back(id);
  }
  std::string text;
  const auto status = processor_->Decode(pieces, &text);
  if (!status.ok()) throw std::runtime_error(source_ + ": cannot decode: " + std::string(status.message()));
  return text;
}

int Vocabulary::size() const { return processor_->GetPieceSize(); }

}  // namespace trepro
