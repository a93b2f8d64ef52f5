// trepro bleu HYP REF...: sacreBLEU-compatible corpus BLEU (experiments/bleu/bleu.h), the
// tokenized lower-cased BLEU of the public Multi30K tutorial (--tokenized-lowercase), or the
// paper's tokenized BLEU with compound splitting (--paper-wmt14, experiments/bleu/paper_bleu.h).
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "experiments/bleu/bleu_files.h"
#include "experiments/bleu/paper_bleu.h"
#include "experiments/commands/commands.h"

namespace trepro::cli {

namespace {

struct BleuCommandOptions {
  std::string hypotheses;
  std::vector<std::string> references;
  bool lowercase = false;
  bool json = false;
  bool tokenized_lowercase = false;
  bool paper_wmt14 = false;
  std::string language = "de";
  std::string tokenize = "13a";
};

void run_paper_bleu(const BleuCommandOptions& o) {
  const bleu::MosesLanguage language = bleu::moses_language(o.language, "bleu --language");
  const std::vector<std::string> hypotheses = bleu::read_text_lines(o.hypotheses);
  const auto references = bleu::read_references(o.references, o.hypotheses, hypotheses.size());
  const bleu::BleuScore score = bleu::paper_wmt14_bleu(hypotheses, references, language);
  const std::string signature = bleu::paper_wmt14_signature(language, o.references.size());
  if (o.json) {
    std::cout << nlohmann::json{{"name", "paper_wmt14_bleu"},
                                {"score", score.score},
                                {"signature", signature},
                                {"verbose_score", bleu::format_multi_bleu(score)},
                                {"precisions", score.precisions},
                                {"bp", score.brevity_penalty},
                                {"hyp_len", score.stats.hyp_len},
                                {"ref_len", score.stats.ref_len},
                                {"correct", score.stats.correct},
                                {"total", score.stats.total}}
                     .dump(1)
              << "\n";
  } else {
    std::cout << bleu::format_multi_bleu(score) << "\n" << signature << "\n";
  }
}

void run_bleu(const BleuCommandOptions& o) {
  if (o.paper_wmt14) return run_paper_bleu(o);
  if (o.tokenized_lowercase) {
    const std::vector<std::string> hypotheses = bleu::read_text_lines(o.hypotheses);
    const auto references = bleu::read_references(o.references, o.hypotheses, hypotheses.size());
    const double score = bleu::tokenized_lowercase_bleu(hypotheses, references);
    if (o.json) {
      std::cout << nlohmann::json{{"name", "tokenized_lowercase_bleu"}, {"score", score},
                                  {"tokens", "13a of lower-cased lines"}, {"smoothing", "none"}}
                       .dump(1)
                << "\n";
    } else {
      std::cout << "tokenized lower-cased BLEU (torchtext bleu_score on 13a tokens) = " << score << "\n";
    }
    return;
  }
  bleu::BleuOptions options;
  options.lowercase = o.lowercase;
  options.tokenize = o.tokenize == "none" ? bleu::Tokenization::none : bleu::Tokenization::tok_13a;
  const bleu::BleuScore score = bleu::corpus_bleu_files(o.hypotheses, o.references, options);
  const std::string signature = bleu::signature(options, o.references.size());
  if (o.json) {
    nlohmann::json out = {{"name", "BLEU"},
                          {"score", score.score},
                          {"signature", signature},
                          {"verbose_score", bleu::verbose_score(score)},
                          {"precisions", score.precisions},
                          {"bp", score.brevity_penalty},
                          {"hyp_len", score.stats.hyp_len},
                          {"ref_len", score.stats.ref_len},
                          {"nrefs", std::to_string(o.references.size())},
                          {"case", o.lowercase ? "lc" : "mixed"},
                          {"eff", "no"},
                          {"tok", o.tokenize},
                          {"smooth", "exp"},
                          {"version", bleu::kSacrebleuVersion}};
    std::cout << out.dump(1) << "\n";
  } else {
    // sacreBLEU's "-f text" line.
    char number[32];
    std::snprintf(number, sizeof number, "%.2f", score.score);
    std::cout << "BLEU|" << signature << " = " << number << " " << bleu::verbose_score(score) << "\n";
  }
}

}  // namespace

void add_bleu_command(CLI::App& app) {
  CLI::App* cmd = add_command(app, "bleu", "Corpus BLEU of a hypothesis file against reference files, as sacreBLEU " +
                  std::string(bleu::kSacrebleuVersion) + " computes it (13a, exp smoothing, case-sensitive)",
      "trepro bleu runs/multi30k_deen/test_2016_flickr.best.hyp.en data/multi30k/test_2016_flickr.en.gz");
  auto o = std::make_shared<BleuCommandOptions>();
  cmd->add_option("hypotheses", o->hypotheses, "system output, one segment a line (plain or .gz)")->required();
  cmd->add_option("references", o->references, "one or more reference files, line-aligned")->required();
  cmd->add_flag("--lowercase", o->lowercase, "case-insensitive (sacreBLEU -lc)");
  cmd->add_option("--tokenize", o->tokenize, "13a (default) or none")->check(CLI::IsMember({"13a", "none"}));
  cmd->add_flag("--tokenized-lowercase", o->tokenized_lowercase,
                "the tutorial's metric instead: torchtext bleu_score on lower-cased 13a tokens, unsmoothed");
  cmd->add_flag("--paper-wmt14", o->paper_wmt14,
                "the paper's measure instead: Moses-tokenized, compounds split as ##AT##-##AT##, multi-bleu.perl "
                "(tensor2tensor's get_ende_bleu.sh)");
  cmd->add_option("--language", o->language, "--paper-wmt14: the Moses tokenizer's language, de (default) or en");
  cmd->add_flag("--json", o->json, "JSON output");
  cmd->callback([o] { run_bleu(*o); });
}

}  // namespace trepro::cli
