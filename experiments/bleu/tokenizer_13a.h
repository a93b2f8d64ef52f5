// sacreBLEU's default tokenizer "13a" (the tokenization of mteval-v13a.pl, used by WMT), byte
// for byte as sacreBLEU 2.4.3's Tokenizer13a + TokenizerRegexp on UTF-8 text:
//   1. drop "<skipped>", join "-\n", newlines to spaces; unescape &quot; &amp; &lt; &gt; (in
//      that order, each over the whole line);
//   2. pad with a space on each side, then four regex substitutions, each one left-to-right
//      pass over the line:
//        ([\{-\~\[-\` -\&\(-\+\:-\@\/])  ->  " \1 "   (ASCII punctuation and symbols)
//        ([^0-9])([\.,])                 ->  "\1 \2 " (period, comma unless after a digit)
//        ([\.,])([^0-9])                 ->  " \1 \2" (period, comma unless before a digit)
//        ([0-9])(-)                      ->  "\1 \2 " (dash after a digit)
//   3. split on whitespace (Python's str.split: Unicode whitespace) and join with one space.
// The patterns only name ASCII characters, so they run on UTF-8 bytes unchanged: a multi-byte
// character is never a digit, a period or a comma, and its bytes stay in order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trepro::bleu {

std::string tokenize_13a(std::string_view line);

// Python's str.split() with no argument: runs of Unicode whitespace separate fields.
std::vector<std::string_view> split_whitespace(std::string_view text);
// Python's str.rstrip() with no argument.
std::string_view rstrip_whitespace(std::string_view text);

// Python's str.lower() on UTF-8 text (simple case mapping of the C.UTF-8 locale's towlower;
// the special cases of Python's full mapping, U+0130 and the final sigma, are not applied).
std::string lowercase_utf8(std::string_view text);

// Throws std::invalid_argument "<what>: invalid UTF-8 at byte N" (sacreBLEU reads files as
// UTF-8 and fails on them too).
void check_utf8(std::string_view text, const std::string& what);

}  // namespace trepro::bleu
