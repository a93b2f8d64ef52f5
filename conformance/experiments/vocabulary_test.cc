// The joint sentencepiece vocabulary (experiments/data/vocabulary.h): fixed special ids, the
// requested size, encode/decode round trips, determinism, and errors naming the model file.
#include "experiments/data/vocabulary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/atomic_file.h"

namespace trepro {
namespace {

namespace fs = std::filesystem;

std::string model_path(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "vocabulary_test";
  fs::create_directories(dir);
  return (dir / name).string();
}

// A small bilingual corpus with enough distinct words for a few hundred pieces.
std::vector<std::string> corpus() {
  const std::vector<std::string> subjects = {"Ein Hund", "Eine Frau", "Zwei Männer", "A dog", "A woman", "Two men"};
  const std::vector<std::string> verbs = {"läuft", "spielt", "sitzt", "runs", "plays", "sits"};
  const std::vector<std::string> places = {"im Park.", "am Strand.", "auf der Straße.", "in the park.",
                                           "on the beach.", "on the street."};
  std::vector<std::string> sentences;
  for (const auto& s : subjects) {
    for (const auto& v : verbs) {
      for (const auto& p : places) sentences.push_back(s + " " + v + " " + p);
    }
  }
  return sentences;
}

class VocabularyKinds : public ::testing::TestWithParam<VocabularyKind> {};

TEST_P(VocabularyKinds, HasTheSpecialIdsAndTheRequestedSize) {
  // 48 pieces: the unigram trainer can reach at most 60 on this corpus.
  const Vocabulary v = Vocabulary::train(corpus(), {GetParam(), 48, 1}, model_path(to_string(GetParam()) + ".model"));
  EXPECT_EQ(v.size(), 48);
  // The ids of the special pieces are the contract (model.pad_id = 0, BOS 1, EOS 2).
  EXPECT_EQ(Vocabulary::kPad, 0);
  EXPECT_EQ(Vocabulary::kBos, 1);
  EXPECT_EQ(Vocabulary::kEos, 2);
  EXPECT_EQ(Vocabulary::kUnk, 3);
  for (int id : v.encode("Ein Hund spielt am Strand.")) {
    EXPECT_GT(id, Vocabulary::kEos) << "text encodes to a special id";
    EXPECT_LT(id, 48);
  }
}

TEST_P(VocabularyKinds, DecodeInvertsEncodeAndSkipsPadBosEos) {
  const std::string path = model_path(to_string(GetParam()) + "_round.model");
  Vocabulary::train(corpus(), {GetParam(), 48, 1}, path);
  const Vocabulary v = Vocabulary::load(path);
  const std::string text = "Zwei Männer sitzen auf der Straße.";
  std::vector<int> ids = v.encode(text);
  EXPECT_EQ(v.decode(ids), text);
  ids.insert(ids.begin(), Vocabulary::kBos);
  ids.push_back(Vocabulary::kEos);
  ids.push_back(Vocabulary::kPad);
  EXPECT_EQ(v.decode(ids), text);
}

INSTANTIATE_TEST_SUITE_P(BpeAndUnigram, VocabularyKinds,
                         ::testing::Values(VocabularyKind::bpe, VocabularyKind::unigram),
                         [](const auto& info) { return to_string(info.param); });

TEST(Vocabulary, TrainingTwiceGivesTheSameModel) {
  // A resumed run reuses the saved model; a rerun from scratch must rebuild the same one.
  Vocabulary::train(corpus(), {VocabularyKind::bpe, 80, 2}, model_path("first.model"));
  Vocabulary::train(corpus(), {VocabularyKind::bpe, 80, 2}, model_path("second.model"));
  EXPECT_EQ(read_file(model_path("first.model")), read_file(model_path("second.model")));
}

TEST(Vocabulary, UnknownCharactersMapToUnk) {
  const Vocabulary v = Vocabulary::train(corpus(), {VocabularyKind::bpe, 80, 1}, model_path("unk.model"));
  const std::vector<int> ids = v.encode("火");
  EXPECT_NE(std::find(ids.begin(), ids.end(), Vocabulary::kUnk), ids.end());
}

TEST(Vocabulary, AnIdOutsideTheTableIsAnErrorNamingTheModel) {
  const std::string path = model_path("range.model");
  const Vocabulary v = Vocabulary::train(corpus(), {VocabularyKind::bpe, 80, 1}, path);
  try {
    v.decode({5, 80});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), path + ": id 80 is outside [0, 80)");
  }
}

TEST(Vocabulary, ASizeTheDataCannotReachIsAnErrorNamingTheModel) {
  const std::string path = model_path("too_big.model");
  try {
    Vocabulary::train(corpus(), {VocabularyKind::unigram, 100000, 1}, path);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": sentencepiece training failed"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path)) << "a failed training left a file";
}

// BPE training reports its merged pieces as it goes (sentencepiece's log, read while it trains),
// gives the same model as without the reporting, and leaves std::cerr as it found it.
// The callback may print to std::cerr itself, as trepro prepare's notes do: that reaches the
// stream std::cerr had before, and does not wait on the reader (it hung, before).
TEST(Vocabulary, BpeTrainingReportsItsPiecesAndRestoresCerr) {
  std::vector<std::int64_t> counts;
  std::ostringstream captured;
  std::streambuf* const cerr_before = std::cerr.rdbuf(captured.rdbuf());
  VocabularyOptions options{VocabularyKind::bpe, 200, 1, [&](std::int64_t n) {
                              counts.push_back(n);
                              std::cerr << "pieces " << n << std::endl;
                            }};
  Vocabulary::train(corpus(), options, model_path("reported.model"));
  EXPECT_EQ(std::cerr.rdbuf(), captured.rdbuf());
  std::cerr.rdbuf(cerr_before);
  EXPECT_NE(captured.str().find("pieces " + std::to_string(counts.empty() ? 0 : counts.back()) + "\n"),
            std::string::npos)
      << captured.str();
  EXPECT_EQ(captured.str().find("trainer_spec"), std::string::npos) << "sentencepiece's INFO output leaked";
  ASSERT_GE(counts.size(), 3u) << "sentencepiece's Added lines were not read";
  EXPECT_TRUE(std::is_sorted(counts.begin(), counts.end()));
  EXPECT_GT(counts.front(), 0);
  EXPECT_LT(counts.back(), 200);
  Vocabulary::train(corpus(), {VocabularyKind::bpe, 200, 1}, model_path("silent.model"));
  EXPECT_EQ(read_file(model_path("reported.model")), read_file(model_path("silent.model")));
}

// The notes of train_vocabulary: the start and the end (progress lines come every 5 s, and this
// training takes milliseconds).
TEST(Vocabulary, TrainVocabularyNotesStartProgressAndEnd) {
  std::vector<std::string> notes;
  train_vocabulary(corpus(), VocabularyConfig{VocabularyKind::bpe, 200, 0}, model_path("noted.model"),
                   [&](const std::string& line) { notes.push_back(line); });
  ASSERT_GE(notes.size(), 2u);
  EXPECT_EQ(notes.front(), "vocabulary: training bpe 200 on 216 sentences");
  EXPECT_NE(notes.back().find("vocabulary: training bpe 200: 216 sentences in "), std::string::npos) << notes.back();
}

TEST(Vocabulary, LoadingAMissingOrBrokenFileIsAnErrorNamingIt) {
  const std::string missing = model_path("missing.model");
  fs::remove(missing);
  EXPECT_THROW(Vocabulary::load(missing), std::runtime_error);
  const std::string broken = model_path("broken.model");
  std::ofstream(broken) << "not a sentencepiece model";
  try {
    Vocabulary::load(broken);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(broken + ": cannot load"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trepro
