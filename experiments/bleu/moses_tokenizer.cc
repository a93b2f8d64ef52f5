#include "experiments/bleu/moses_tokenizer.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "experiments/bleu/regex_pass.h"

namespace trepro::bleu {

namespace {

// Perl's Unicode classes of tokenizer.perl, from ICU's character properties.
bool is_space(char32_t c) { return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE); }
bool is_alpha(char32_t c) { return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_ALPHABETIC); }
bool is_lower(char32_t c) { return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_LOWERCASE); }
bool is_number(char32_t c) { return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_N_MASK) != 0; }
bool is_alnum(char32_t c) { return is_alpha(c) || u_charType(static_cast<UChar32>(c)) == U_DECIMAL_DIGIT_NUMBER; }
bool is_ascii_digit(char32_t c) { return c >= U'0' && c <= U'9'; }

std::u32string decode_utf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(text.data());
  const auto length = static_cast<std::int32_t>(text.size());
  for (std::int32_t i = 0; i < length;) {
    UChar32 c = 0;
    U8_NEXT(bytes, i, length, c);
    if (c < 0) throw std::invalid_argument("moses_tokenize: invalid UTF-8 at byte " + std::to_string(i - 1));
    out.push_back(static_cast<char32_t>(c));
  }
  return out;
}

std::string encode_utf8(const std::u32string& text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    std::uint8_t buffer[U8_MAX_LENGTH];
    std::int32_t length = 0;
    U8_APPEND_UNSAFE(buffer, length, static_cast<UChar32>(c));
    out.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(length));
  }
  return out;
}

bool contains(const std::u32string& text, std::u32string_view what) { return text.find(what) != std::u32string::npos; }

// Perl's s/FROM/TO/g with a literal FROM.
std::u32string replace_all(const std::u32string& text, std::u32string_view from, std::u32string_view to) {
  std::u32string out;
  std::size_t start = 0;
  for (std::size_t at = text.find(from); at != std::u32string::npos; at = text.find(from, start)) {
    out.append(text, start, at - start).append(to);
    start = at + from.size();
  }
  return out.append(text, start, std::u32string::npos);
}

// s/ +/ /g; s/^ //; s/ $//
std::u32string collapse_spaces(const std::u32string& text) {
  std::u32string out;
  for (char32_t c : text) {
    if (c == U' ' && (out.empty() || out.back() == U' ')) continue;
    out.push_back(c);
  }
  if (!out.empty() && out.back() == U' ') out.pop_back();
  return out;
}

// Step 1: whitespace runs to one space, other control characters removed, trimmed.
std::u32string normalize_whitespace(const std::u32string& text) {
  std::u32string out;
  for (char32_t c : text) {
    if (is_space(c)) {
      out.push_back(U' ');
    } else if (c >= 0x20) {
      out.push_back(c);
    }
  }
  return collapse_spaces(out);
}

// Step 3: s/\.([\.]+)/ DOTMULTI$1/g, then while /DOTMULTI\./ { s/DOTMULTI\.([^\.])/DOTDOTMULTI $1/g;
// s/DOTMULTI\./DOTDOTMULTI/g }: a run of k periods ends as DOT x k MULTI.
std::u32string mark_multidots(const std::u32string& text) {
  std::u32string out;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t run = 0;
    while (i + run < text.size() && text[i + run] == U'.') ++run;
    if (run >= 2) {
      out.append(U" DOTMULTI").append(run - 1, U'.');
      i += run;
    } else {
      out.push_back(text[i++]);
    }
  }
  constexpr std::u32string_view marker = U"DOTMULTI.";
  while (contains(out, marker)) {
    std::u32string next;
    std::size_t start = 0;
    for (std::size_t at = out.find(marker); at != std::u32string::npos; at = out.find(marker, start)) {
      next.append(out, start, at - start);
      const std::size_t after = at + marker.size();
      if (after < out.size() && out[after] != U'.') {
        next.append(U"DOTDOTMULTI ").push_back(out[after]);
        start = after + 1;
      } else {
        next.append(out, at, marker.size());
        start = after;
      }
    }
    next.append(out, start, std::u32string::npos);
    out = replace_all(next, marker, U"DOTDOTMULTI");
  }
  return out;
}

std::u32string restore_multidots(std::u32string text) {
  while (contains(text, U"DOTDOTMULTI")) text = replace_all(text, U"DOTDOTMULTI", U"DOTMULTI.");
  return replace_all(text, U"DOTMULTI", U".");
}

std::u32string separate_commas(const std::u32string& text) {
  const auto is_comma = [](char32_t c) { return c == U','; };
  const auto not_number = [](char32_t c) { return !is_number(c); };
  std::u32string out = substitute_each(
      text, [](std::u32string& o, const char32_t* m) { o.push_back(m[0]), o.append(U" , "); }, not_number, is_comma);
  out = substitute_each(
      out, [](std::u32string& o, const char32_t* m) { o.append(U" , ").push_back(m[1]); }, is_comma, not_number);
  // s/([\p{IsN}])[,]$/$1 ,/
  if (out.size() >= 2 && out.back() == U',' && is_number(out[out.size() - 2])) {
    out.back() = U' ';
    out.push_back(U',');
  }
  return out;
}

std::u32string separate_apostrophes(const std::u32string& text, MosesLanguage language) {
  const auto is_apostrophe = [](char32_t c) { return c == U'\''; };
  if (language == MosesLanguage::de) {
    return substitute_each(text, [](std::u32string& o, const char32_t*) { o.append(U" ' "); }, is_apostrophe);
  }
  // English splits contractions to the right: "it 's", "don 't", "1990 's".
  const auto not_alpha = [](char32_t c) { return !is_alpha(c); };
  const auto neither_alpha_nor_number = [](char32_t c) { return !is_alpha(c) && !is_number(c); };
  const auto spaced = [](std::u32string& o, const char32_t* m) { o.push_back(m[0]), o.append(U" ' ").push_back(m[2]); };
  const auto attached_right = [](std::u32string& o, const char32_t* m) {
    o.push_back(m[0]), o.append(U" '").push_back(m[2]);
  };
  std::u32string out = substitute_each(text, spaced, not_alpha, is_apostrophe, not_alpha);
  out = substitute_each(out, spaced, neither_alpha_nor_number, is_apostrophe, is_alpha);
  out = substitute_each(out, spaced, is_alpha, is_apostrophe, not_alpha);
  out = substitute_each(out, attached_right, is_alpha, is_apostrophe, is_alpha);
  return substitute_each(out, attached_right, is_number, is_apostrophe, [](char32_t c) { return c == U's'; });
}

// Perl's split(/ /, TEXT): empty fields between adjacent spaces kept, trailing empty fields dropped.
std::vector<std::u32string> split_words(const std::u32string& text) {
  std::vector<std::u32string> words;
  std::size_t start = 0;
  for (std::size_t at = text.find(U' '); at != std::u32string::npos; at = text.find(U' ', start)) {
    words.push_back(text.substr(start, at - start));
    start = at + 1;
  }
  words.push_back(text.substr(start));
  while (!words.empty() && words.back().empty()) words.pop_back();
  return words;
}

// Step 6: the period of a word "PRE." is split off unless PRE is an abbreviation.
std::u32string split_final_periods(const std::u32string& text, MosesLanguage language) {
  const NonbreakingPrefixes& prefixes = nonbreaking_prefixes(language);
  const std::vector<std::u32string> words = split_words(text);
  std::u32string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::u32string& word = words[i];
    const bool has_next = i + 1 < words.size();
    bool keep = true;
    if (word.size() >= 2 && word.back() == U'.') {
      const std::u32string pre = word.substr(0, word.size() - 1);
      const std::string pre_utf8 = encode_utf8(pre);
      const bool dotted_word = contains(pre, U".") && std::any_of(pre.begin(), pre.end(), is_alpha);
      const bool next_lower = has_next && !words[i + 1].empty() && is_lower(words[i + 1][0]);
      const bool next_digit = has_next && !words[i + 1].empty() && is_ascii_digit(words[i + 1][0]);
      keep = dotted_word || prefixes.always.count(pre_utf8) > 0 || next_lower ||
             (prefixes.numeric_only.count(pre_utf8) > 0 && next_digit);
      if (!keep) out.append(pre).append(U" .");
    }
    if (keep) out.append(word);
    out.push_back(U' ');
  }
  return out;
}

std::u32string escape(const std::u32string& text) {
  std::u32string out;
  for (char32_t c : text) {
    switch (c) {
      case U'&': out.append(U"&amp;"); break;
      case U'|': out.append(U"&#124;"); break;
      case U'<': out.append(U"&lt;"); break;
      case U'>': out.append(U"&gt;"); break;
      case U'\'': out.append(U"&apos;"); break;
      case U'"': out.append(U"&quot;"); break;
      case U'[': out.append(U"&#91;"); break;
      case U']': out.append(U"&#93;"); break;
      default: out.push_back(c);
    }
  }
  return out;
}

}  // namespace

MosesLanguage moses_language(const std::string& code, const std::string& what) {
  if (code == "en") return MosesLanguage::en;
  if (code == "de") return MosesLanguage::de;
  throw std::invalid_argument(what + ": the Moses tokenizer here knows en and de, not '" + code + "'");
}

std::string replace_unicode_punctuation(std::string_view line) {
  // The script's substitutions in its order; "。 *" and "． *" also take the spaces after them.
  static constexpr std::pair<char32_t, std::u32string_view> kReplacements[] = {
      {U'，', U","},  {U'。', U". "}, {U'、', U","},  {U'”', U"\""},  {U'“', U"\""}, {U'∶', U":"},
      {U'：', U":"},  {U'？', U"?"},  {U'《', U"\""}, {U'》', U"\""},  {U'）', U")"}, {U'！', U"!"},
      {U'（', U"("},  {U'；', U";"},  {U'１', U"\""}, {U'」', U"\""},  {U'「', U"\""}, {U'０', U"0"},
      {U'３', U"3"},  {U'２', U"2"},  {U'５', U"5"},  {U'６', U"6"},   {U'９', U"9"}, {U'７', U"7"},
      {U'８', U"8"},  {U'４', U"4"},  {U'．', U". "}, {U'～', U"~"},   {U'’', U"'"},  {U'…', U"..."},
      {U'━', U"-"},   {U'〈', U"<"},  {U'〉', U">"},  {U'【', U"["},   {U'】', U"]"}, {U'％', U"%"},
  };
  std::u32string text = decode_utf8(line);
  for (const auto& [from, to] : kReplacements) {
    std::u32string out;
    for (std::size_t i = 0; i < text.size();) {
      if (text[i] != from) {
        out.push_back(text[i++]);
        continue;
      }
      out.append(to);
      ++i;
      if (from == U'。' || from == U'．') {
        while (i < text.size() && text[i] == U' ') ++i;
      }
    }
    text = std::move(out);
  }
  return encode_utf8(text);
}

std::string moses_tokenize(std::string_view line, MosesLanguage language) {
  std::u32string text = normalize_whitespace(decode_utf8(line));
  text = substitute_each(
      text, [](std::u32string& o, const char32_t* m) { o.push_back(U' '), o.push_back(m[0]), o.push_back(U' '); },
      [](char32_t c) {
        return !is_alnum(c) && !is_space(c) && c != U'.' && c != U'\'' && c != U'`' && c != U',' && c != U'-';
      });
  text = mark_multidots(text);
  text = separate_commas(text);
  text = separate_apostrophes(text, language);
  text = collapse_spaces(split_final_periods(text, language));
  // s/\.\' ?$/ . ' /: a final .' that the apostrophe rules left joined.
  if (text.size() >= 2 && text.compare(text.size() - 2, 2, U".'") == 0) text.replace(text.size() - 2, 2, U" . '");
  return encode_utf8(escape(restore_multidots(text)));
}

}  // namespace trepro::bleu
