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
#include <optional>
#include <stdexcept>
#include <thread>

#include "core/atomic_file.h"
#include "core/file_lock.h"
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

std::vector<std::string> split_names(const CorpusSpec& spec) {
  std::vector<std::string> names = {spec.train, spec.valid};
  names.insert(names.end(), spec.test.begin(), spec.test.end());
  return names;
}

// The text files a folder is prepared from, by name (train.de, newstest2014.en.gz), with their
// sizes and sha256: a folder is reused only for the same text. Resolving every file first also
// finds a missing split before the vocabulary's minutes of training.
nlohmann::json input_files(const CorpusSpec& spec) {
  nlohmann::json files = nlohmann::json::object();
  for (const std::string& split : split_names(spec)) {
    for (const std::string& language : {spec.source_language, spec.target_language}) {
      const fs::path path = split_file(spec, split, language);
      files[path.filename().string()] = {{"bytes", fs::file_size(path)}, {"sha256", sha256_file_hex(path.string())}};
    }
  }
  return files;
}

// The training split's lines, hashed, to count exact repeats of them in the held-out splits:
// WMT's test sets share a few sentences with the crawled training text, and a held-out split
// that shares many was cut from it and measures memory.
class TrainingLines {
 public:
  struct Overlap {
    std::int64_t sources = 0, pairs = 0;
  };

  void add(const std::string& source, const std::string& target) {
    sources_.push_back(hash(source));
    pairs_.push_back(hash(source + '\n' + target));
  }
  void seal() {
    std::sort(sources_.begin(), sources_.end());
    std::sort(pairs_.begin(), pairs_.end());
  }
  void count(const std::string& source, const std::string& target, Overlap& overlap) const {
    overlap.sources += std::binary_search(sources_.begin(), sources_.end(), hash(source));
    overlap.pairs += std::binary_search(pairs_.begin(), pairs_.end(), hash(source + '\n' + target));
  }

 private:
  // 64-bit hashes: a held-out line matches one of WMT's 4.5M training lines by chance with
  // probability about 4.5e6 / 2^64, 2.4e-13.
  static std::uint64_t hash(const std::string& line) { return std::hash<std::string>{}(line); }

  std::vector<std::uint64_t> sources_, pairs_;
};

nlohmann::json binarize_split(const CorpusSpec& spec, const std::string& split, const Vocabulary& vocabulary,
                              bool wide, const fs::path& dir, TrainingLines& training_lines,
                              const RateProgress::Note& note) {
  const bool is_train = split == spec.train;
  TrainingLines::Overlap overlap;
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
    for (std::size_t i = 0; i < text.size(); i += 2) {
      if (is_train) {
        training_lines.add(text[i], text[i + 1]);
      } else {
        training_lines.count(text[i], text[i + 1], overlap);
      }
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
  nlohmann::json counts = {
      {"lines", reader.line_number()},
      {"pairs", pairs},
      {"dropped", {{"empty", dropped.empty}, {"too_long", dropped.too_long}}},
      {"tokens", {{spec.source_language, source.count()}, {spec.target_language, target.count()}}}};
  if (is_train) {
    training_lines.seal();
  } else {
    counts["in_train"] = {{"sources", overlap.sources}, {"pairs", overlap.pairs}};
    note(split + ": " + std::to_string(overlap.sources) + " of " + std::to_string(reader.line_number()) +
         " source lines (" + std::to_string(overlap.pairs) + " pairs) are also lines of " + spec.train);
  }
  return counts;
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
  nlohmann::json inputs = input_files(spec);
  const std::string vocabulary_path = (dir / kPreparedVocabularyFile).string();
  const Vocabulary vocabulary = make_vocabulary(config, spec, given_vocabulary, vocabulary_path, note);
  if (vocabulary.size() != config.model.vocab_size) {
    throw std::runtime_error(vocabulary_path + ": has " + std::to_string(vocabulary.size()) +
                             " pieces, but model.vocab_size is " + std::to_string(config.model.vocab_size));
  }
  const bool wide = vocabulary.size() > 65536;
  nlohmann::json splits = nlohmann::json::object();
  TrainingLines training_lines;
  for (const std::string& name : split_names(spec)) {  // train first: the others are counted against it
    splits[name] = binarize_split(spec, name, vocabulary, wide, dir, training_lines, note);
  }
  nlohmann::json files = nlohmann::json::object();
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    files[entry.path().filename().string()] = {{"bytes", entry.file_size()},
                                               {"sha256", sha256_file_hex(entry.path().string())}};
  }
  const nlohmann::json manifest = {{"format", "trepro-prepared-corpus/1"},
                                   {"settings", prepared_settings(config, spec)},
                                   {"inputs", std::move(inputs)},
                                   {"vocabulary", {{"file", kPreparedVocabularyFile},
                                                   {"sha256", files[kPreparedVocabularyFile]["sha256"]},
                                                   {"pieces", vocabulary.size()}}},
                                   {"token_type", wide ? "int32" : "uint16"},
                                   {"splits", splits},
                                   {"files", files}};
  write_file_atomically((dir / "manifest.json").string(), manifest.dump(2) + "\n");
  return manifest;
}

// An existing folder is reused only when it was prepared from the same text (and vocabulary,
// when one is given): the settings alone do not say that the corpus files are the same.
nlohmann::json reuse_prepared(const Config& config, const std::string& data_dir, const std::string& vocabulary_model,
                              const std::string& out, const RateProgress::Note& note) {
  nlohmann::json manifest = PreparedCorpus::open(out, config).manifest();
  const std::string where = out + "/manifest.json: ";
  const std::string remedy = ": remove " + out + " or prepare into another folder";
  if (!manifest.contains("inputs")) {
    throw std::runtime_error(where + "records no input files (an older trepro prepared it), so its text cannot be "
                             "checked" + remedy);
  }
  CorpusSpec spec;
  nlohmann::json now;
  try {
    spec = corpus_spec(config, data_dir);
    now = input_files(spec);
  } catch (const std::exception& e) {
    throw std::runtime_error("prepare: " + out + " exists, and reusing it checks the text it was prepared from "
                             "(train --data needs no text): " + e.what());
  }
  const nlohmann::json& then = manifest.at("inputs");
  for (const auto& [name, file] : now.items()) {
    if (!then.contains(name)) {
      throw std::runtime_error(where + "prepared from the files " + std::string(then.dump()) + ", not from " +
                               (fs::path(spec.dir) / name).string() + remedy);
    }
    if (then.at(name) != file) {
      throw std::runtime_error(where + "prepared from " + name + " " + then.at(name).dump() + ", but " +
                               (fs::path(spec.dir) / name).string() + " is now " + file.dump() +
                               ": the text changed since prepare" + remedy);
    }
  }
  if (!vocabulary_model.empty() &&
      sha256_file_hex(vocabulary_model) != manifest.at("vocabulary").at("sha256").get<std::string>()) {
    throw std::runtime_error(where + "prepared with another vocabulary than " + vocabulary_model + remedy);
  }
  note("prepare: reusing " + out + " (settings, input text and every file's sha256 match its manifest)");
  return manifest;
}

// Every OUT.partial.<pid> folder is left by a prepare that was killed (of any version or host):
// the caller holds OUT.lock, so no other prepare of OUT is writing one.
void clear_killed_partials(const fs::path& out, const RateProgress::Note& note) {
  const std::string prefix = out.filename().string() + ".partial.";
  std::vector<fs::path> killed;
  for (const fs::directory_entry& entry : fs::directory_iterator(out.parent_path())) {
    if (entry.path().filename().string().starts_with(prefix)) killed.push_back(entry.path());
  }
  for (const fs::path& folder : killed) {
    fs::remove_all(folder);
    note("prepare: removed " + folder.string() + ", left by a prepare that was killed");
  }
}

// `out` as one folder path: absolute, normalized, without a trailing slash (data/x/ names x).
fs::path folder_path(const std::string& out) {
  fs::path path = fs::absolute(out).lexically_normal();
  if (!path.has_filename()) path = path.parent_path();
  return path;
}

// prepare_corpus's work, with OUT.lock held.
nlohmann::json prepare_locked(const Config& config, const std::string& data_dir, const std::string& vocabulary_model,
                              const fs::path& out_folder, const RateProgress::Note& note) {
  const std::string out = out_folder.string();
  clear_killed_partials(out_folder, note);
  if (fs::exists(out_folder)) return reuse_prepared(config, data_dir, vocabulary_model, out, note);
  const CorpusSpec spec = corpus_spec(config, data_dir);
  const fs::path partial = out + ".partial." + std::to_string(::getpid());
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

}  // namespace

nlohmann::json prepare_corpus(const Config& config, const std::string& data_dir, const std::string& vocabulary_model,
                              const std::string& out_arg, const RateProgress::Note& note) {
  const fs::path out_folder = folder_path(out_arg);
  const std::string out = out_folder.string();
  fs::create_directories(out_folder.parent_path());
  // Held until prepare returns, then removed with it, whether prepare succeeded or failed; the
  // kernel drops it when a prepare is killed (core/file_lock.h).
  std::optional<FileLock> lock = FileLock::try_acquire(out + ".lock");
  if (!lock) throw std::runtime_error(out + ".lock: another trepro prepare is writing " + out + ": wait for it");
  try {
    nlohmann::json manifest = prepare_locked(config, data_dir, vocabulary_model, out_folder, note);
    lock->remove_and_release();
    return manifest;
  } catch (...) {
    lock->remove_and_release();
    throw;
  }
}

}  // namespace trepro
