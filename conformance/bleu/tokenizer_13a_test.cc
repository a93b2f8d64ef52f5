// The 13a tokenizer against outputs of sacreBLEU 2.4.3's Tokenizer13a on the same lines
// (computed with `python3 -c "from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a; ..."`),
// one case per rule.
#include <gtest/gtest.h>

#include "experiments/bleu/tokenizer_13a.h"

namespace trepro::bleu {
namespace {

TEST(Tokenizer13a, SeparatesPunctuationAndSymbols) {
  EXPECT_EQ(tokenize_13a("Hello, world!"), "Hello , world !");
  EXPECT_EQ(tokenize_13a("He said: \"Don't!\" (really?) [x] {y} ~z~ `w` a/b a\\b a|b @home #1 50% a^b a_b"),
            "He said : \" Don't ! \" ( really ? ) [ x ] { y } ~ z ~ ` w ` a / b a \\ b a | b @ home # 1 50 % a ^ b a _ b");
}

TEST(Tokenizer13a, KeepsPeriodsAndCommasBetweenDigits) {
  EXPECT_EQ(tokenize_13a("It costs $3.50, or 3,000 yen."), "It costs $ 3.50 , or 3,000 yen .");
  EXPECT_EQ(tokenize_13a("3.14 1,000.5 .5 5. ,x x, 1-2-3"), "3.14 1,000.5 . 5 5 . , x x , 1 - 2 - 3");
  EXPECT_EQ(tokenize_13a("e.g. the U.S.A."), "e . g . the U . S . A .");
  EXPECT_EQ(tokenize_13a("end."), "end .");
  EXPECT_EQ(tokenize_13a(".start"), ". start");
}

TEST(Tokenizer13a, SplitsDashesOnlyAfterDigits) {
  EXPECT_EQ(tokenize_13a("2010-2011 was -great-"), "2010 - 2011 was -great-");
}

TEST(Tokenizer13a, UnescapesHtmlEntitiesInOrder) {
  // "&amp;quot;" becomes "&quot;" after the &quot; pass, so it stays an ampersand and a word.
  EXPECT_EQ(tokenize_13a("a&amp;b &quot;q&quot; &lt;tag&gt; &amp;quot;"), "a & b \" q \" < tag > & quot ;");
}

TEST(Tokenizer13a, DropsSkippedAndJoinsLineBreaks) {
  EXPECT_EQ(tokenize_13a("x<skipped>y"), "xy");
  EXPECT_EQ(tokenize_13a("line-\nbreak\nnext"), "linebreak next");
}

TEST(Tokenizer13a, HandlesUtf8AndUnicodeWhitespace) {
  EXPECT_EQ(tokenize_13a("Ein Mann in blauem Hemd.Er läuft,schnell."), "Ein Mann in blauem Hemd . Er läuft , schnell .");
  EXPECT_EQ(tokenize_13a("tab\there\u00a0nbsp\u3000ideo"), "tab here nbsp ideo");
  EXPECT_EQ(tokenize_13a(""), "");
}

TEST(Tokenizer13a, WhitespaceHelpersFollowPython) {
  EXPECT_EQ(split_whitespace("  a\u2009b\tc \u00a0"), (std::vector<std::string_view>{"a", "b", "c"}));
  EXPECT_EQ(rstrip_whitespace("Hemd.\u3000 \r"), "Hemd.");
  EXPECT_EQ(rstrip_whitespace("ä"), "ä");
}

TEST(Tokenizer13a, LowercasesUnicodeLetters) {
  EXPECT_EQ(lowercase_utf8("ÄÖÜ Straße ÉCOLE Ωmega ДОМ"), "äöü straße école ωmega дом");
}

TEST(Tokenizer13a, RejectsInvalidUtf8NamingIt) {
  try {
    check_utf8("ok \xC3", "hyp.txt: line 3");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "hyp.txt: line 3: invalid UTF-8 at byte 3");
  }
}

}  // namespace
}  // namespace trepro::bleu
