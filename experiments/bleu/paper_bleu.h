// The BLEU of the paper's Table 2 (27.3 base, 28.4 big on newstest2014 En-De): tensor2tensor's
// get_ende_bleu.sh, which the paper's authors used. Each line, hypothesis and reference alike:
//   1. replace-unicode-punctuation.perl, then tokenizer.perl -l LANG (moses_tokenizer.h);
//   2. compound splitting: Perl's s{(\S)-(\S)}{$1 ##AT##-##AT## $2}g, so "rich-text" becomes
//      "rich ##AT##-##AT## text" (a match takes the character after the hyphen, so "a-b-c" gives
//      "a ##AT##-##AT## b-c": the second hyphen stays, as in the script);
//   3. multi-bleu.perl: corpus BLEU on whitespace tokens, case-sensitive, n-grams 1..4 clipped by
//      their maximum count in any reference, no smoothing (an order with no match gives 0), the
//      brevity penalty exp(1 - r/c) against the closest reference length (the shorter on a tie).
// Where multi-bleu.perl divides by zero (no hypothesis token), this gives 0.
//
// It differs from sacreBLEU (13a tokenization, exp smoothing): Moses splits ' and escapes
// characters, and ##AT##-##AT## adds tokens that are nearly always right, so the same output
// scores about a point higher here than with sacreBLEU (docs/paper.md, "Two BLEUs").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "experiments/bleu/bleu.h"
#include "experiments/bleu/moses_tokenizer.h"

namespace trepro::bleu {

// Step 2 on tokenized text.
std::string split_compounds(std::string_view tokenized);

// Steps 1 and 2: the tokens multi-bleu.perl counts, joined by single spaces.
std::string paper_wmt14_tokens(std::string_view line, MosesLanguage language);

// hypotheses[i] against references[k][i] for every reference set k, all of `language`.
BleuScore paper_wmt14_bleu(const std::vector<std::string>& hypotheses,
                           const std::vector<std::vector<std::string>>& references, MosesLanguage language);

// "paper-wmt14|nrefs:1|case:mixed|tok:moses-de+atat|moses:59bad94|smooth:none|metric:multi-bleu"
std::string paper_wmt14_signature(MosesLanguage language, std::size_t reference_sets);

// multi-bleu.perl's line: "BLEU = 27.30, 58.6/33.0/21.0/14.0 (BP=1.000, ratio=1.012, hyp_len=65433,
// ref_len=64676)".
std::string format_multi_bleu(const BleuScore& score);

}  // namespace trepro::bleu
