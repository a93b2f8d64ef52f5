// The BLEU tokenizer (experiments/bleu/tokenizer_13a.h): text that is not UTF-8 is refused by
// check_utf8 naming it; UTF-8 text tokenizes and lowercases into UTF-8 without a crash.
#include "experiments/bleu/tokenizer_13a.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trepro;
  using namespace trepro::bleu;
  const std::string_view text = fuzz::bytes(data, size);
  const std::string name = "hypotheses.txt:1";
  fuzz::expect_clean_errors(name, [&] {
    check_utf8(text, name);
    const std::string tokens = tokenize_13a(text);
    const std::string lower = lowercase_utf8(text);
    for (const std::string& produced : {tokens, lower, tokenize_13a(lower)}) {
      check_utf8(produced, "the tokenizer's output");  // an error here names another thing: rejected
    }
    for (std::string_view word : split_whitespace(tokens)) {
      if (word.empty()) fuzz::reject("split_whitespace", "an empty word");
    }
  });
  return 0;
}
