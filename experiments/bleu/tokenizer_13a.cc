#include "experiments/bleu/tokenizer_13a.h"

#include <clocale>
#include <cwctype>
#include <locale.h>
#include <memory>
#include <stdexcept>

#include "experiments/bleu/regex_pass.h"

namespace trepro::bleu {

namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  std::string out;
  std::size_t start = 0;
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, start)) {
    out.append(s, start, at - start).append(to);
    start = at + from.size();
  }
  out.append(s, start, std::string::npos);
  s = std::move(out);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_period_or_comma(char c) { return c == '.' || c == ','; }

// [\{-\~\[-\` -\&\(-\+\:-\@\/]
bool is_separated_symbol(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 0x7B && u <= 0x7E) || (u >= 0x5B && u <= 0x60) || (u >= 0x20 && u <= 0x26) ||
         (u >= 0x28 && u <= 0x2B) || (u >= 0x3A && u <= 0x40) || u == 0x2F;
}

// Length of the UTF-8 whitespace character at text[i] (Python's str.isspace), 0 if none.
std::size_t whitespace_length(std::string_view t, std::size_t i) {
  const auto b = [&](std::size_t k) { return i + k < t.size() ? static_cast<unsigned char>(t[i + k]) : 0u; };
  const unsigned c = b(0);
  if ((c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20)) return 1;
  if (c == 0xC2 && (b(1) == 0x85 || b(1) == 0xA0)) return 2;  // U+0085, U+00A0
  if (c == 0xE1 && b(1) == 0x9A && b(2) == 0x80) return 3;    // U+1680
  const unsigned last = b(2);
  if (c == 0xE2 && b(1) == 0x80 && ((last >= 0x80 && last <= 0x8A) || last == 0xA8 || last == 0xA9 || last == 0xAF))
    return 3;                                                  // U+2000-200A, U+2028, U+2029, U+202F
  if (c == 0xE2 && b(1) == 0x81 && b(2) == 0x9F) return 3;    // U+205F
  if (c == 0xE3 && b(1) == 0x80 && b(2) == 0x80) return 3;    // U+3000
  return 0;
}

// Decodes the code point at text[i] (valid UTF-8 assumed) and its length.
char32_t decode(std::string_view t, std::size_t i, std::size_t& length) {
  const auto c = static_cast<unsigned char>(t[i]);
  if (c < 0x80) return length = 1, c;
  length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
  char32_t cp = c & (0x7F >> length);
  for (std::size_t k = 1; k < length && i + k < t.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(t[i + k]) & 0x3F);
  return cp;
}

void encode(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

struct LocaleDeleter {
  void operator()(locale_t l) const { freelocale(l); }
};

}  // namespace

std::string tokenize_13a(std::string_view text) {
  std::string line(text);
  replace_all(line, "<skipped>", "");
  replace_all(line, "-\n", "");
  replace_all(line, "\n", " ");
  if (line.find('&') != std::string::npos) {
    replace_all(line, "&quot;", "\"");
    replace_all(line, "&amp;", "&");
    replace_all(line, "&lt;", "<");
    replace_all(line, "&gt;", ">");
  }
  std::string padded;
  padded.reserve(line.size() * 2 + 2);
  padded.push_back(' ');
  for (char c : line) {
    if (is_separated_symbol(c)) {
      padded.push_back(' ');
      padded.push_back(c);
      padded.push_back(' ');
    } else {
      padded.push_back(c);
    }
  }
  padded.push_back(' ');
  auto not_digit = [](char c) { return !is_digit(c); };
  const auto separate_second = [](std::string& o, const char* m) {
    o.push_back(m[0]), o.push_back(' '), o.push_back(m[1]), o.push_back(' ');
  };
  padded = substitute_each(padded, separate_second, not_digit, is_period_or_comma);
  padded = substitute_each(
      padded, [](std::string& o, const char* m) { o.push_back(' '), o.push_back(m[0]), o.push_back(' '), o.push_back(m[1]); },
      is_period_or_comma, not_digit);
  padded = substitute_each(padded, separate_second, is_digit, [](char c) { return c == '-'; });
  std::string out;
  for (std::string_view word : split_whitespace(padded)) {
    if (!out.empty()) out.push_back(' ');
    out.append(word);
  }
  return out;
}

std::vector<std::string_view> split_whitespace(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t i = 0, start = 0;
  bool in_word = false;
  while (i < text.size()) {
    const std::size_t space = whitespace_length(text, i);
    if (space > 0) {
      if (in_word) words.push_back(text.substr(start, i - start));
      in_word = false;
      i += space;
    } else {
      if (!in_word) start = i, in_word = true;
      ++i;
    }
  }
  if (in_word) words.push_back(text.substr(start));
  return words;
}

std::string_view rstrip_whitespace(std::string_view text) {
  std::size_t end = 0;  // one past the last non-whitespace byte
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t space = whitespace_length(text, i);
    if (space > 0) {
      i += space;
    } else {
      end = ++i;
      while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) end = ++i;
    }
  }
  return text.substr(0, end);
}

std::string lowercase_utf8(std::string_view text) {
  const std::unique_ptr<std::remove_pointer_t<locale_t>, LocaleDeleter> locale(
      newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0)));
  if (!locale) throw std::runtime_error("lowercase: the C.UTF-8 locale is not available");
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = 0;
    const char32_t cp = decode(text, i, length);
    encode(cp < 0x80 ? static_cast<char32_t>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp)
                     : static_cast<char32_t>(towlower_l(static_cast<wint_t>(cp), locale.get())),
           out);
    i += length;
  }
  return out;
}

void check_utf8(std::string_view text, const std::string& what) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = length > 0 && i + length <= text.size();
    for (std::size_t k = 1; ok && k < length; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    if (!ok) throw std::invalid_argument(what + ": invalid UTF-8 at byte " + std::to_string(i));
    i += length;
  }
}

}  // namespace trepro::bleu
