// The paper's BLEU (experiments/bleu/paper_bleu.h): Moses tokenizer cases worked out by hand from
// tokenizer.perl's rules (each also what the Perl script of mosesdecoder 59bad94 prints), the
// ##AT## compound split, and corpus scores computed by hand from multi-bleu.perl's formula.
#include <cmath>

#include <gtest/gtest.h>

#include "experiments/bleu/paper_bleu.h"

namespace trepro::bleu {
namespace {

std::string german(std::string_view line) { return moses_tokenize(replace_unicode_punctuation(line), MosesLanguage::de); }
std::string english(std::string_view line) { return moses_tokenize(line, MosesLanguage::en); }

TEST(MosesTokenizer, AbbreviationsKeepTheirPeriodAndTheLastWordLosesIt) {
  // "Dr" is a German non-breaking prefix, "z.B" holds a period and a letter; "Uhr." ends the line.
  EXPECT_EQ(german("Der Dr. Müller kam z.B. um 3 Uhr."), "Der Dr. Müller kam z.B. um 3 Uhr .");
  // Before a lower-case word the period stays, whatever the word.
  EXPECT_EQ(german("Er kam gestern. aber dann"), "Er kam gestern. aber dann");
}

TEST(MosesTokenizer, NumericOnlyPrefixesKeepThePeriodOnlyBeforeANumber) {
  EXPECT_EQ(english("See No. 5 now."), "See No. 5 now .");
  EXPECT_EQ(english("It was No. One."), "It was No . One .");
}

TEST(MosesTokenizer, PunctuationIsPaddedAndEscaped) {
  EXPECT_EQ(german("Er sagte: \"Das ist gut\", und ging..."), "Er sagte : &quot; Das ist gut &quot; , und ging ...");
  EXPECT_EQ(german("a & b | c < d > e [f]"), "a &amp; b &#124; c &lt; d &gt; e &#91; f &#93;");
}

TEST(MosesTokenizer, CommasStayBetweenDigits) {
  EXPECT_EQ(german("1,5 Mio. Euro, 3,000"), "1,5 Mio. Euro , 3,000");
  EXPECT_EQ(german("Es sind 5,"), "Es sind 5 ,");
}

TEST(MosesTokenizer, RunsOfPeriodsStayTogether) {
  EXPECT_EQ(german("Warte.... ja"), "Warte .... ja");
  EXPECT_EQ(german("a..b"), "a .. b");
}

TEST(MosesTokenizer, ApostrophesByLanguage) {
  EXPECT_EQ(german("Peter's Haus"), "Peter &apos; s Haus");
  EXPECT_EQ(english("It's the 1990's, isn't it? 'Yes.'"),
            "It &apos;s the 1990 &apos;s , isn &apos;t it ? &apos; Yes . &apos;");
}

TEST(MosesTokenizer, HyphensAreLeftToTheCompoundSplit) {
  EXPECT_EQ(german("rich-text format"), "rich-text format");
}

TEST(MosesTokenizer, UnicodePunctuationIsReplacedFirst) {
  // “ to ", … to ..., ’ to '; „ is not in the script's list and is padded as a symbol.
  EXPECT_EQ(german("„Hallo“ sagte er… ’s"), "„ Hallo &quot; sagte er ... &apos; s");
  EXPECT_EQ(replace_unicode_punctuation("Ja。  Nein．x １"), "Ja. Nein. x \"");
}

TEST(MosesTokenizer, WhitespaceAndControlCharacters) {
  EXPECT_EQ(german("  a\tb\u00a0c  "), "a b c");
  EXPECT_EQ(german("a\x01" "b"), "ab");
  EXPECT_EQ(german(" \t "), "");
}

TEST(MosesTokenizer, OnlyEnglishAndGerman) {
  EXPECT_EQ(moses_language("de", "x"), MosesLanguage::de);
  EXPECT_THROW(moses_language("fr", "bleu --language"), std::invalid_argument);
}

TEST(CompoundSplit, AsPerlSubstitutesItOnePassLeftToRight) {
  EXPECT_EQ(split_compounds("rich-text format"), "rich ##AT##-##AT## text format");
  // The first match takes "b", so the second hyphen has no \S before it left: it stays.
  EXPECT_EQ(split_compounds("a-b-c Nord-Süd - x -y"), "a ##AT##-##AT## b-c Nord ##AT##-##AT## Süd - x -y");
}

TEST(PaperBleu, CompoundSplittingAddsMatchingTokens) {
  // Tokens "x ##AT##-##AT## y z w v" against "x ##AT##-##AT## y z w u": 5/6, 4/5, 3/4, 2/3.
  const BleuScore score = paper_wmt14_bleu({"x-y z w v"}, {{"x-y z w u"}}, MosesLanguage::de);
  EXPECT_EQ(score.stats.correct, (std::vector<double>{5, 4, 3, 2}));
  EXPECT_EQ(score.stats.total, (std::vector<double>{6, 5, 4, 3}));
  EXPECT_NEAR(score.score, 100.0 * std::pow(5.0 / 6 * 4.0 / 5 * 3.0 / 4 * 2.0 / 3, 0.25), 1e-12);
  // sacreBLEU's 13a keeps "x-y" whole: 3/4, 2/3, 1/2, 0/1, which only its smoothing lifts above 0.
  EXPECT_LT(corpus_bleu({"x-y z w v"}, {{"x-y z w u"}}, BleuOptions{}).score, score.score);
}

TEST(PaperBleu, NoSmoothing) {
  // 3/4, 2/3, 1/2 and 0/1: multi-bleu.perl's log of 0 makes the score 0.
  EXPECT_EQ(paper_wmt14_bleu({"a b c d"}, {{"a b c e"}}, MosesLanguage::de).score, 0.0);
}

TEST(PaperBleu, BrevityPenaltyAgainstTheClosestReference) {
  // 4 tokens against references of 6 and 9: r = 6, BP = exp(1 - 6/4), every n-gram matches.
  const BleuScore score =
      paper_wmt14_bleu({"a b c d"}, {{"a b c d e f"}, {"a b c d e f g h i"}}, MosesLanguage::de);
  EXPECT_EQ(score.stats.ref_len, 6);
  EXPECT_NEAR(score.brevity_penalty, std::exp(1.0 - 6.0 / 4.0), 1e-15);
  EXPECT_NEAR(score.score, 100.0 * std::exp(1.0 - 6.0 / 4.0), 1e-12);
}

TEST(PaperBleu, TokenizesHypothesesAndReferencesAlike) {
  // "Er kam nach Hause." and "Er kam nach Hause ." are the same five Moses tokens.
  const BleuScore score = paper_wmt14_bleu({"Er kam nach Hause."}, {{"Er kam nach Hause ."}}, MosesLanguage::de);
  EXPECT_EQ(score.stats.hyp_len, 5);
  EXPECT_DOUBLE_EQ(score.score, 100.0);
}

TEST(PaperBleu, NoHypothesisTokensScoreZero) {
  EXPECT_EQ(paper_wmt14_bleu({""}, {{"a b c d"}}, MosesLanguage::de).score, 0.0);
}

TEST(PaperBleu, SignatureAndMultiBleuLine) {
  EXPECT_EQ(paper_wmt14_signature(MosesLanguage::de, 1),
            "paper-wmt14|nrefs:1|case:mixed|tok:moses-de+atat|moses:59bad94|smooth:none|metric:multi-bleu");
  const BleuScore score = paper_wmt14_bleu({"x-y z w v"}, {{"x-y z w u"}}, MosesLanguage::de);
  EXPECT_EQ(format_multi_bleu(score),
            "BLEU = 75.98, 83.3/80.0/75.0/66.7 (BP=1.000, ratio=1.000, hyp_len=6, ref_len=6)");
}

}  // namespace
}  // namespace trepro::bleu
