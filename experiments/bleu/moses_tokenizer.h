// The Moses tokenizer as the paper's BLEU ran it (tensor2tensor's get_ende_bleu.sh): mosesdecoder's
// scripts/tokenizer/replace-unicode-punctuation.perl and scripts/tokenizer/tokenizer.perl -l LANG
// (default options: escaping on, no aggressive hyphen splitting, no protected patterns) at commit
// 59bad94 (2017-05-29), for English and German. Later versions split a sentence-final "z.B." or
// "etc." (2018-11) and know "Rs." (2019); sacremoses, the Python port, follows the 2017 rules.
//
// tokenizer.perl on one line, each step a Perl s///g (one left-to-right pass, a match resumes the
// scan behind it) on Unicode code points:
//   1. every run of whitespace (\s: White_Space) to one space, control characters U+0000-001F
//      removed, leading and trailing space trimmed;
//   2. every character that is not alphanumeric (Alphabetic or Nd), whitespace, . ' ` , - gets a
//      space on each side;
//   3. runs of 2+ periods become the marker DOTMULTI.. (restored in 8);
//   4. commas: split unless between digits (\p{N}), and a comma after a digit at the end;
//   5. apostrophes: English splits contractions to the right ("it 's", "don 't"), German pads
//      every apostrophe;
//   6. each space-separated word ending in "." keeps the period when the rest contains a period
//      and a letter ("z.B."), is a non-breaking prefix, the next word starts with a lower-case
//      letter, or is a numeric-only prefix before a digit; otherwise the period is split off;
//   7. spaces collapsed and trimmed; a final .' becomes " . ' ";
//   8. the multi-dot markers restored, then & | < > ' " [ ] escaped as &amp; &#124; &lt; &gt;
//      &apos; &quot; &#91; &#93;.
#pragma once

#include <string>
#include <string_view>
#include <unordered_set>

namespace trepro::bleu {

enum class MosesLanguage { en, de };

// "en" or "de"; throws std::invalid_argument naming `what` for any other.
MosesLanguage moses_language(const std::string& code, const std::string& what);

struct NonbreakingPrefixes {
  std::unordered_set<std::string> always;        // "Dr", "z.B": the period stays
  std::unordered_set<std::string> numeric_only;  // "No": the period stays before a number
};

// Moses' nonbreaking_prefix.<language> of that commit (moses_nonbreaking_prefixes.cc).
const NonbreakingPrefixes& nonbreaking_prefixes(MosesLanguage language);

// replace-unicode-punctuation.perl: CJK and full-width punctuation and digits to ASCII, ” “ to ",
// ’ to ', … to ..., ━ to -, the full-width stops swallowing the spaces after them. (At that
// commit the full-width 1 becomes '"', a slip fixed later; „ and ‘ stay as they are.)
std::string replace_unicode_punctuation(std::string_view line);

// tokenizer.perl on one line of valid UTF-8: the tokens joined by single spaces (a line of only
// whitespace gives "").
std::string moses_tokenize(std::string_view line, MosesLanguage language);

}  // namespace trepro::bleu
