// trepro prepare's work: the vocabulary, then every split binarized into DATA_DIR.partial.<pid>,
// then the manifest, then one rename (experiments/data/prepared_corpus.h has the layout).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "core/atomic_file.h"
#include "core/sha256.h"
#include "experiments/data/prepared_corpus.h"
#include "experiments/data/sentence_sample.h"
#include "experiments/data/vocabulary.h"

namespace trepro {

namespace {

namespace fs = std::filesystem;

// A file written front to back and fsynced: the token files are too large for
// write_file_atomically's one string, and the folder rename makes them appear atomically.
class FileSink {
 public:
  explicit FileSink(std::string path) : path_(std::move(path)), file_(std::fopen(path_.c_str(), "wb")) {
    if (file_ == nullptr) throw std::runtime_error(path_ + ": cannot create: " + std::strerror(errno));
  }
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;
  ~FileSink() {
    if (file_ != nullptr) std::fclose(file_);
  }
  void write(const void* data, std::size_t bytes) {
    if (bytes > 0 && std::fwrite(data, 1, bytes, file_) != bytes) fail("write");
  }
  void close() {
    if (std::fflush(file_) != 0) fail("fflush");
    if (::fsync(::fileno(file_)) != 0) fail("fsync");
    const int rc = std::fclose(file_);
    file_ = nullptr;
    if (rc != 0) fail("fclose");
  }

 private:
  [[noreturn]] void fail(const char* call) const {
    throw std::runtime_error(path_ + ": " + call + " failed: " + std::strerror(errno));
  }

  std::string path_;
  std::FILE* file_;
};

// One side's token and offset files.
class SideWriter {
 public:
  SideWriter(const std::string& stem, bool wide) : tokens_(stem + ".tokens"), offsets_(stem + ".offsets"), wide_(wide) {
    offsets_.write(&count_, sizeof count_);
  }
  void append(const std::vector<int>& ids) {
    if (wide_) {
      tokens_.write(ids.data(), ids.size() * sizeof(int));
    } else {
      narrow_.assign(ids.begin(), ids.end());
      tokens_.write(narrow_.data(), narrow_.size() * sizeof(std::uint16_t));
    }
    count_ += ids.size();
    offsets_.write(&count_, sizeof count_);
  }
  std::uint64_t count() const { return count_; }
  void close() {
    tokens_.close();
    offsets_.close();
  }

 private:
  FileSink tokens_, offsets_;
  bool wide_;
  std::uint64_t count_ = 0;
  std::vector<std::uint16_t> narrow_;
};

// Pairs read and encoded a block at a time: sentencepiece's encoding is most of binarizing's
// time, so the block's pairs are encoded on every core (a processor is safe to share between
// threads) and then written in their order.
constexpr std::size_t kBlockPairs = 8192;

void encode_block(const Vocabulary& vocabulary, const std::vector<std::string>& text, std::vector<std::vector<int>>& ids) {
  const std::size_t threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> workers;
  std::exception_ptr error;
  std::mutex error_mutex;
  for (std::size_t t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      try {
        for (std::size_t i = t; i < text.size(); i += threads) ids[i] = vocabulary.encode(text[i]);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        error = std::current_exception();
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  if (error) std::rethrow_exception(error);
}

nlohmann::json binarize_split(const CorpusSpec& spec, const std::string& split, const Vocabulary& vocabulary,
                              bool wide, const fs::path& dir, const RateProgress::Note& note) {
  PairReader reader(spec, split);
  SideWriter source((dir / (split + "." + spec.source_language)).string(), wide);
  SideWriter target((dir / (split + "." + spec.target_language)).string(), wide);
  RateProgress progress("binarizing " + split, "pairs", note);
  FilterCounts dropped;
  std::int64_t pairs = 0;
  std::vector<std::string> text;  // source, target, source, target, ...
  std::vector<std::vector<int>> ids;
  std::string source_text, target_text;
  for (bool more = true; more;) {
    const std::int64_t first_line = reader.line_number() + 1;
    text.clear();
    while (text.size() < 2 * kBlockPairs && (more = reader.next(source_text, target_text))) {
      text.push_back(std::move(source_text));
      text.push_back(std::move(target_text));
    }
    ids.assign(text.size(), {});
    encode_block(vocabulary, text, ids);
    PairLocation where = reader.location();
    for (std::size_t i = 0; i < text.size(); i += 2) {
      where.line = first_line + static_cast<std::int64_t>(i / 2);
      const TokenPair pair{std::move(ids[i]), std::move(ids[i + 1])};
      if (keep_pair(pair, spec, where, dropped)) {
        source.append(pair.source);
        target.append(pair.target);
        ++pairs;
      }
    }
    progress.update(reader.line_number(), reader.fraction_read());
  }
  progress.finish(reader.line_number());
  source.close();
  target.close();
  return {{"lines", reader.line_number()},
          {"pairs", pairs},
          {"dropped", {{"empty", dropped.empty}, {"too_long", dropped.too_long}}},
          {"tokens", {{spec.source_language, source.count()}, {spec.target_language, target.count()}}}};
}

Vocabulary make_vocabulary(const Config& config, const CorpusSpec& spec, const std::string& given,
                           const std::string& path, const RateProgress::Note& note) {
  if (!given.empty()) {
    write_file_atomically(path, read_file(given));
    note("vocabulary: using " + given);
    return Vocabulary::load(path);
  }
  const VocabularyConfig& v = config.data.vocabulary;
  const std::vector<std::string> sentences = vocabulary_sentences(spec, v.sample_sentences, note);
  return train_vocabulary(sentences, v, path, note);
}

nlohmann::json write_prepared(const Config& config, const CorpusSpec& spec, const std::string& given_vocabulary,
                              const fs::path& dir, const RateProgress::Note& note) {
  const std::string vocabulary_path = (dir / "vocab.model").string();
  const Vocabulary vocabulary = make_vocabulary(config, spec, given_vocabulary, vocabulary_path, note);
  if (vocabulary.size() != config.model.vocab_size) {
    throw std::runtime_error(vocabulary_path + ": has " + std::to_string(vocabulary.size()) +
                             " pieces, but model.vocab_size is " + std::to_string(config.model.vocab_size));
  }
  const bool wide = vocabulary.size() > 65536;
  nlohmann::json splits = nlohmann::json::object();
  std::vector<std::string> names = {spec.train, spec.valid};
  names.insert(names.end(), spec.test.begin(), spec.test.end());
  for (const std::string& name : names) {
    if (!splits.contains(name)) splits[name] = binarize_split(spec, name, vocabulary, wide, dir, note);
  }
  nlohmann::json files = nlohmann::json::object();
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    files[entry.path().filename().string()] = {{"bytes", entry.file_size()},
                                               {"sha256", sha256_file_hex(entry.path().string())}};
  }
  const nlohmann::json manifest = {{"format", "trepro-prepared-corpus/1"},
                                   {"settings", prepared_settings(config, spec)},
                                   {"vocabulary", {{"file", "vocab.model"},
                                                   {"sha256", files["vocab.model"]["sha256"]},
                                                   {"pieces", vocabulary.size()}}},
                                   {"token_type", wide ? "int32" : "uint16"},
                                   {"splits", splits},
                                   {"files", files}};
  write_file_atomically((dir / "manifest.json").string(), manifest.dump(2) + "\n");
  return manifest;
}

}  // namespace

nlohmann::json prepare_corpus(const Config& config, const std::string& data_dir, const std::string& vocabulary_model,
                              const std::string& out, const RateProgress::Note& note) {
  if (fs::exists(out)) {
    nlohmann::json manifest = PreparedCorpus::open(out, config).manifest();
    note("prepare: reusing " + out + " (settings and every file's sha256 match its manifest)");
    return manifest;
  }
  const CorpusSpec spec = corpus_spec(config, data_dir);
  const fs::path partial = out + ".partial." + std::to_string(::getpid());
  fs::remove_all(partial);
  fs::create_directories(partial);
  try {
    nlohmann::json manifest = write_prepared(config, spec, vocabulary_model, partial, note);
    rename_durably(partial.string(), out);
    note("prepare: wrote " + out);
    return manifest;
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(partial, ignored);
    throw;
  }
}

}  // namespace trepro
