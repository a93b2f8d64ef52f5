// Corpus BLEU against sacreBLEU's published test vectors, hand-counted cases (clipping over
// several references, closest reference length, brevity penalty, exp smoothing, lower-casing),
// the signature and score strings of sacreBLEU 2.4.3, torchtext's documented bleu_score
// example, and file errors.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "experiments/bleu/bleu_files.h"

namespace trepro::bleu {
namespace {

// sacreBLEU's test_bleu.py: compute_bleu(correct [9,7,5,3], total [10,8,6,4], 11, 11).
TEST(Bleu, SacrebleuPublishedStatisticsVector) {
  BleuStats stats{{9, 7, 5, 3}, {10, 8, 6, 4}, 11, 11};
  const BleuScore score = compute_bleu(stats, BleuOptions{});
  EXPECT_NEAR(score.score, 83.75922397, 1e-8);
  EXPECT_EQ(verbose_score(score), "90.0/87.5/83.3/75.0 (BP = 1.000 ratio = 1.000 hyp_len = 11 ref_len = 11)");
}

// sacreBLEU's test_sentence_bleu.py: "this is a fest" vs "this is a test", floor smoothing
// 0.01, no tokenization, effective order: (75 * 66.7 * 50 * 1)^(1/4) = sqrt(500).
TEST(Bleu, SacrebleuPublishedSentenceVector) {
  BleuOptions options;
  options.tokenize = Tokenization::none;
  options.smooth = Smoothing::floor;
  options.smooth_value = 0.01;
  options.effective_order = true;
  const BleuScore score = corpus_bleu({"this is a fest"}, {{"this is a test"}}, options);
  EXPECT_NEAR(score.score, 22.3606797749979, 1e-10);
}

TEST(Bleu, ClipsAgainstTheMaximumCountOverReferences) {
  // Hand count: orders 1..4 match 8/8, 4/6, 1/4 and 0/3 (exp smoothing: 100 / (2 * 3)); the
  // closest references have 6 and 2 tokens, as the hypotheses.
  const BleuScore score = corpus_bleu({"the cat is on the mat", "a b"},
                                      {{"the cat sat on the mat", "a b c"}, {"there is a cat on the mat", "a b"}},
                                      BleuOptions{});
  EXPECT_EQ(score.stats.correct, (std::vector<double>{8, 4, 1, 0}));
  EXPECT_EQ(score.stats.total, (std::vector<double>{8, 6, 4, 3}));
  EXPECT_EQ(score.stats.ref_len, 8);
  EXPECT_NEAR(score.score, std::pow(100.0 * (400.0 / 6) * 25.0 * (100.0 / 6), 0.25), 1e-9);
  EXPECT_EQ(signature(BleuOptions{}, 2), "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.4.3");
}

TEST(Bleu, ClipsRepeatedWordsToTheirReferenceCount) {
  // Papineni et al. 2002, section 2.1: "the" seven times against references holding it at most
  // twice has the modified unigram precision 2/7, not 7/7.
  const BleuScore score = corpus_bleu({"the the the the the the the"},
                                      {{"the cat is on the mat"}, {"there is a cat on the mat"}}, BleuOptions{});
  EXPECT_EQ(score.stats.correct[0], 2);
  EXPECT_EQ(score.stats.total[0], 7);
  EXPECT_NEAR(score.precisions[0], 100.0 * 2.0 / 7.0, 1e-12);
}

TEST(Bleu, ClosestReferenceLengthPrefersTheShorterOnATie) {
  EXPECT_EQ(corpus_bleu({"a b c d"}, {{"a b c d e f"}, {"a b"}}, BleuOptions{}).stats.ref_len, 2);
  EXPECT_EQ(corpus_bleu({"a b c d e"}, {{"a b c d e f g"}, {"a b c"}}, BleuOptions{}).stats.ref_len, 3);
}

TEST(Bleu, ClosestReferenceLengthIsNotTheShortest) {
  // 6 hypothesis tokens against references of 2 and 7: the closest is 7 (mteval v13a and
  // sacreBLEU), not the shortest 2 (mteval v11), so the brevity penalty is exp(1 - 7/6).
  const BleuScore score = corpus_bleu({"a b c d e f"}, {{"a b"}, {"a b c d e f g"}}, BleuOptions{});
  EXPECT_EQ(score.stats.ref_len, 7);
  EXPECT_NEAR(score.brevity_penalty, std::exp(1.0 - 7.0 / 6.0), 1e-15);
}

TEST(Bleu, BrevityPenaltyForShortHypotheses) {
  // 5 of 7 reference tokens, every n-gram matching: BP = exp(1 - 7/5).
  const BleuScore score = corpus_bleu({"a b c d e"}, {{"a b c d e f g"}}, BleuOptions{});
  EXPECT_NEAR(score.brevity_penalty, std::exp(1.0 - 7.0 / 5.0), 1e-15);
  EXPECT_NEAR(score.score, 100.0 * std::exp(1.0 - 7.0 / 5.0), 1e-12);
}

TEST(Bleu, CaseSensitiveUnlessLowercased) {
  const std::vector<std::string> hyp = {"The CAT is on the Mat."};
  const std::vector<std::vector<std::string>> ref = {{"the cat is on the mat."}};
  BleuOptions lowercase;
  lowercase.lowercase = true;
  EXPECT_DOUBLE_EQ(corpus_bleu(hyp, ref, lowercase).score, 100.0);
  // Mixed case: "is", "on", "the", "." match: 4 of 7 unigrams, 2/6 bigrams, 1/5 trigrams, 0/4
  // 4-grams, which exp smoothing makes 100 / (2 * 4) = 12.5% (sacreBLEU 2.4.3: 26.27).
  const BleuScore mixed = corpus_bleu(hyp, ref, BleuOptions{});
  EXPECT_EQ(mixed.stats.correct, (std::vector<double>{4, 2, 1, 0}));
  EXPECT_EQ(mixed.stats.total, (std::vector<double>{7, 6, 5, 4}));
  EXPECT_NEAR(mixed.score, 26.27, 0.005);
  EXPECT_EQ(verbose_score(mixed), "57.1/33.3/20.0/12.5 (BP = 1.000 ratio = 1.000 hyp_len = 7 ref_len = 7)");
  EXPECT_EQ(signature(lowercase, 1), "nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:2.4.3");
}

TEST(Bleu, NoMatchScoresZero) {
  EXPECT_EQ(corpus_bleu({"x y z"}, {{"a b c"}}, BleuOptions{}).score, 0.0);
  EXPECT_EQ(corpus_bleu({""}, {{"a b c"}}, BleuOptions{}).score, 0.0);
}

// torchtext.data.metrics.bleu_score's documented example. Clipped counts [4, 3, 2, 1] of
// [6, 4, 2, 1] n-grams and no brevity penalty: (4/6 * 3/4 * 1 * 1)^(1/4) = 2^(-1/4), exactly
// here in double. torchtext documents 0.8408964276313782: the same value computed in float32
// torch tensors, off by 1.5e-8 relative, within a few float32 roundings (2^-24 = 6e-8 each).
TEST(Bleu, TorchtextDocumentedExample) {
  const std::vector<std::vector<std::string>> candidates = {{"My", "full", "pytorch", "test"}, {"Another", "Sentence"}};
  const std::vector<std::vector<std::vector<std::string>>> references = {
      {{"My", "full", "pytorch", "test"}, {"Completely", "Different"}}, {{"No", "Match"}}};
  const double score = torchtext_bleu(candidates, references);
  EXPECT_NEAR(score, 100.0 * std::pow(2.0, -0.25), 1e-12);
  EXPECT_NEAR(score, 84.08964276313782, 84.08964276313782 * 4 * std::ldexp(1.0, -24));
  // A zero precision at any order gives 0 (no smoothing), as in torchtext.
  EXPECT_EQ(torchtext_bleu({{"a", "b", "c"}}, {{{"a", "b", "x"}}}), 0.0);
}

class BleuFilesTest : public ::testing::Test {
 protected:
  std::filesystem::path dir_ = std::filesystem::temp_directory_path() /
                               ("trepro_bleu_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                "_" + std::to_string(reinterpret_cast<std::uintptr_t>(this)));
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
};

TEST_F(BleuFilesTest, LineCountMismatchNamesBothFiles) {
  const std::string hyp = write("hyp.txt", "a b c\nd e f\n");
  const std::string ref = write("ref.txt", "a b c\n");
  try {
    corpus_bleu_files(hyp, {ref}, BleuOptions{});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "bleu: " + ref + " has 1 lines but " + hyp + " has 2");
  }
}

TEST_F(BleuFilesTest, ReadsLinesSplitOnNewlineOnly) {
  // A final line without '\n' counts; '\r' is whitespace that rstrip removes, as in sacreBLEU.
  const std::string hyp = write("hyp.txt", "a b c d\r\ne f g h");
  const std::string ref = write("ref.txt", "a b c d\ne f g h\n");
  EXPECT_EQ(read_text_lines(hyp).size(), 2u);
  EXPECT_DOUBLE_EQ(corpus_bleu_files(hyp, {ref}, BleuOptions{}).score, 100.0);
  EXPECT_THROW(read_text_lines((dir_ / "missing.txt").string()), std::runtime_error);
}

}  // namespace
}  // namespace trepro::bleu
