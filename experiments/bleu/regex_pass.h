// One pass of a fixed-length pattern of character classes over a string, as Perl's s///g and
// Python's re.sub run one: every position is tried left to right, a match is replaced by what
// `emit` appends for it, and the scan resumes behind the match, so matches never overlap ("a,,b"
// holds one match of "[^0-9],", not two). The tokenizers' rules are such passes.
#pragma once

#include <cstddef>

namespace trepro::bleu {

// emit(out, first) appends the replacement of the sizeof...(classes) characters at `first`.
template <class String, class Emit, class... Classes>
String substitute_each(const String& text, Emit emit, Classes... classes) {
  constexpr std::size_t length = sizeof...(Classes);
  String out;
  out.reserve(text.size() + text.size() / 4);
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t k = 0;
    if (i + length <= text.size() && (classes(text[i + k++]) && ...)) {
      emit(out, text.data() + i);
      i += length;
    } else {
      out.push_back(text[i++]);
    }
  }
  return out;
}

}  // namespace trepro::bleu
