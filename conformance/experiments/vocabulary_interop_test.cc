// sentencepiece models of another writer (interop/sentencepiece_check.py): our Vocabulary loads
// python_unigram.model, trained by the Python `sentencepiece` package with another model type
// and normalization than ours, and encodes and decodes as the package does (python_ids.json);
// and our training still writes trepro_bpe.model, which the package reads and encodes as we do
// (trepro_ids.json).
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/json_input.h"
#include "experiments/data/vocabulary.h"

namespace trepro {
namespace {

const std::filesystem::path kInterop = std::filesystem::path(TREPRO_SOURCE_DIR) / "conformance/experiments/interop";

std::string in_interop(const std::string& name) { return (kInterop / name).string(); }

std::vector<std::string> corpus() {
  std::vector<std::string> lines;
  std::string text = read_file(in_interop("corpus.txt")), line;
  for (char c : text) {
    if (c != '\n') {
      line += c;
    } else {
      lines.push_back(line);
      line.clear();
    }
  }
  return lines;
}

// Each sentence of `ids_file` encodes to its ids and they decode to its decoding.
void expect_encodings(const Vocabulary& vocabulary, const std::string& ids_file) {
  const nlohmann::json expected = read_json_file(in_interop(ids_file));
  const auto& sentences = expected.at("sentences");
  ASSERT_FALSE(sentences.empty());
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    const std::string sentence = sentences[i].get<std::string>();
    const std::vector<int> ids = expected.at("ids")[i].get<std::vector<int>>();
    EXPECT_EQ(vocabulary.encode(sentence), ids) << sentence;
    EXPECT_EQ(vocabulary.decode(ids), expected.at("decoded")[i].get<std::string>()) << sentence;
  }
}

TEST(VocabularyInterop, LoadsAModelOfThePythonPackage) {
  expect_encodings(Vocabulary::load(in_interop("python_unigram.model")), "python_ids.json");
}

TEST(VocabularyInterop, TrainsTheModelThePythonPackageReads) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) / "vocabulary_interop.model").string();
  const Vocabulary ours = Vocabulary::train(corpus(), {VocabularyKind::bpe, 60, 2}, path);
  EXPECT_EQ(read_file(path), read_file(in_interop("trepro_bpe.model")));
  expect_encodings(ours, "trepro_ids.json");
}

}  // namespace
}  // namespace trepro
