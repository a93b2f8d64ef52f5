#include "experiments/data/prepared_corpus.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "core/json_input.h"
#include "core/sha256.h"

namespace trepro {

// A read-only memory map of a whole file; pages are read when touched and can be dropped by the
// kernel at any time, so a mapped corpus costs no anonymous memory.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) : path_(path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
    struct stat st{};
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error(path + ": fstat failed: " + std::strerror(err));
    }
    bytes_ = static_cast<std::size_t>(st.st_size);
    if (bytes_ > 0) {
      data_ = ::mmap(nullptr, bytes_, PROT_READ, MAP_SHARED, fd, 0);
      if (data_ == MAP_FAILED) {
        const int err = errno;
        ::close(fd);
        throw std::runtime_error(path + ": mmap failed: " + std::strerror(err));
      }
    }
    ::close(fd);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (data_ != nullptr && data_ != MAP_FAILED) ::munmap(data_, bytes_);
  }
  template <class T>
  const T* as() const {
    return static_cast<const T*>(data_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  std::string path_;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

struct PreparedSplit::Side {
  MappedFile tokens, offsets;
  std::size_t pairs;
};

namespace {

constexpr const char* kFormat = "trepro-prepared-corpus/1";

[[noreturn]] void fail(const std::string& manifest_path, const std::string& what) {
  throw std::runtime_error(manifest_path + ": " + what);
}

// Offsets that run backwards or past the tokens would read outside the map.
void check_offsets(const std::string& stem, const PreparedSplit::Side& side, std::size_t id_bytes) {
  const std::size_t count = side.offsets.bytes() / sizeof(std::uint64_t);
  const auto* offsets = side.offsets.as<std::uint64_t>();
  if (side.offsets.bytes() % sizeof(std::uint64_t) != 0 || count == 0 || offsets[0] != 0) {
    throw std::runtime_error(stem + ".offsets: not uint64 offsets starting at 0");
  }
  for (std::size_t i = 1; i < count; ++i) {
    if (offsets[i] < offsets[i - 1]) {
      throw std::runtime_error(stem + ".offsets: offset " + std::to_string(i) + " runs backwards");
    }
  }
  if (offsets[count - 1] * id_bytes != side.tokens.bytes()) {
    throw std::runtime_error(stem + ".offsets: ends at token " + std::to_string(offsets[count - 1]) + " but " + stem +
                             ".tokens has " + std::to_string(side.tokens.bytes() / id_bytes));
  }
}

}  // namespace

nlohmann::json prepared_settings(const Config& config, const CorpusSpec& spec) {
  const VocabularyConfig& v = config.data.vocabulary;
  return {{"source_language", spec.source_language},
          {"target_language", spec.target_language},
          {"splits", {{"train", spec.train}, {"valid", spec.valid}, {"test", spec.test}}},
          {"max_len", spec.max_len},
          {"filter", spec.filter},
          {"vocabulary", {{"kind", to_string(v.kind)}, {"size", v.size}, {"sample_sentences", v.sample_sentences}}}};
}

PreparedSplit::PreparedSplit(const std::string& dir, const std::string& split, const CorpusSpec& spec, bool wide)
    : wide_(wide) {
  const auto open_side = [&](const std::string& language) {
    const std::string stem = (std::filesystem::path(dir) / (split + "." + language)).string();
    auto side = std::unique_ptr<Side>(new Side{MappedFile(stem + ".tokens"), MappedFile(stem + ".offsets"), 0});
    check_offsets(stem, *side, wide ? sizeof(std::int32_t) : sizeof(std::uint16_t));
    side->pairs = side->offsets.bytes() / sizeof(std::uint64_t) - 1;
    return side;
  };
  source_ = open_side(spec.source_language);
  target_ = open_side(spec.target_language);
}

PreparedSplit::~PreparedSplit() = default;

std::size_t PreparedSplit::size() const { return source_->pairs; }

std::vector<std::int32_t> PreparedSplit::padded_lengths() const {
  const auto* s = source_->offsets.as<std::uint64_t>();
  const auto* t = target_->offsets.as<std::uint64_t>();
  std::vector<std::int32_t> lengths(size());
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    lengths[i] = static_cast<std::int32_t>(std::max(s[i + 1] - s[i], t[i + 1] - t[i]) + 1);
  }
  return lengths;
}

std::vector<int> PreparedSplit::tokens(const Side& side, std::size_t index) const {
  const auto* offsets = side.offsets.as<std::uint64_t>();
  const std::uint64_t begin = offsets[index], end = offsets[index + 1];
  if (wide_) {
    const auto* ids = side.tokens.as<std::int32_t>();
    return {ids + begin, ids + end};
  }
  const auto* ids = side.tokens.as<std::uint16_t>();
  return {ids + begin, ids + end};
}

TokenPair PreparedSplit::pair(std::size_t index) const { return {tokens(*source_, index), tokens(*target_, index)}; }

PreparedCorpus PreparedCorpus::open(const std::string& dir, const Config& config) {
  const std::string manifest_path = (std::filesystem::path(dir) / "manifest.json").string();
  try {
    return open_checked(dir, manifest_path, config);
  } catch (const nlohmann::json::exception& e) {
    fail(manifest_path, std::string("malformed manifest: ") + e.what());
  }
}

PreparedCorpus PreparedCorpus::open_checked(const std::string& dir, const std::string& manifest_path,
                                            const Config& config) {
  if (!std::filesystem::is_regular_file(manifest_path)) {
    fail(manifest_path, "not found: " + dir + " is not a folder `trepro prepare` wrote");
  }
  PreparedCorpus corpus;
  corpus.dir_ = dir;
  corpus.manifest_ = read_json_file(manifest_path);
  const nlohmann::json& m = corpus.manifest_;
  if (m.value("format", "") != kFormat) fail(manifest_path, std::string("format is not ") + kFormat);
  const CorpusSpec layout = corpus_layout(config);
  const nlohmann::json wanted = prepared_settings(config, layout);
  if (m.at("settings") != wanted) {
    fail(manifest_path, "prepared with the settings " + m.at("settings").dump() + ", but the config asks for " +
                            wanted.dump() + ": prepare another folder");
  }
  for (const auto& [name, file] : m.at("files").items()) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    std::error_code error;
    const auto bytes = std::filesystem::file_size(path, error);
    if (error || bytes != file.at("bytes").get<std::uintmax_t>()) {
      fail(manifest_path, name + " has " + (error ? "no size (" + error.message() + ")" : std::to_string(bytes)) +
                              " bytes, the manifest says " + file.at("bytes").dump());
    }
    if (sha256_file_hex(path) != file.at("sha256").get<std::string>()) {
      fail(manifest_path, name + ": sha256 differs from the manifest's (the file changed since prepare)");
    }
  }
  const bool wide = m.at("token_type").get<std::string>() == "int32";
  std::vector<std::string> names = {layout.train, layout.valid};
  names.insert(names.end(), layout.test.begin(), layout.test.end());
  for (const std::string& name : names) {
    corpus.splits_[name] = std::make_shared<const PreparedSplit>(dir, name, layout, wide);
  }
  return corpus;
}

std::shared_ptr<const PreparedSplit> PreparedCorpus::split(const std::string& name) const { return splits_.at(name); }

std::string PreparedCorpus::vocabulary_path() const { return (std::filesystem::path(dir_) / kPreparedVocabularyFile).string(); }

}  // namespace trepro
