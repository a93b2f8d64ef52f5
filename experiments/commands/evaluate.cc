// trepro evaluate RUN: decodes a Multi30K split (default test_2016_flickr) with the run's best
// (or a named, or averaged) checkpoint and writes into RUN/report.json's "test" object
// (reports/schema.json): sacreBLEU-compatible BLEU with its signature, the tokenized lower-cased
// BLEU of the public Multi30K anchor, with --paper-wmt14 the paper's tokenized BLEU with compound
// splitting (bleu_paper_wmt14 and its signature), the split's loss and perplexity (cross-entropy without
// smoothing, per target token) and how it decoded. The detokenized output goes to
// RUN/<split>.<checkpoint>[.<search>].hyp.<language>, the search named when it is not the paper's
// (search_file_tag), so that a greedy and a beam decoding of one checkpoint keep both files.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/json_input.h"
#include "experiments/bleu/bleu_files.h"
#include "experiments/bleu/paper_bleu.h"
#include "experiments/commands/commands.h"
#include "experiments/commands/evaluate.h"
#include "experiments/data/parallel_corpus.h"
#include "experiments/data/token_batches.h"

namespace trepro::cli {

namespace {

struct Perplexity {
  double loss = 0.0;
  std::int64_t tokens = 0, skipped_pairs = 0;
};

// Teacher-forced cross-entropy over the split, in length-sorted batches of max_tokens, over the
// pairs training's validation and test losses cover (the corpus's length bound:
// data.max_len_filter when set, else model.max_len).
Perplexity split_perplexity(const TranslationModel& t, const ParallelText& text, std::int64_t max_tokens) {
  std::vector<TokenPair> pairs;
  for (std::size_t i = 0; i < text.source.size(); ++i) {
    pairs.push_back({t.vocabulary->encode(text.source[i]), t.vocabulary->encode(text.target[i])});
  }
  Perplexity p;
  pairs = pairs_within(std::move(pairs), corpus_layout(t.config).max_len, &p.skipped_pairs);
  double weighted = 0.0;
  for (const std::vector<std::size_t>& rows : token_batches_in_order(pairs, max_tokens)) {
    const Batch batch = make_batch(pairs, rows, t.config.model.pad_id, Vocabulary::kBos, Vocabulary::kEos);
    t.model->forward(batch);
    const double loss = t.model->loss(batch.labels, 0.0, SmoothingForm::uniform);
    weighted += loss * static_cast<double>(t.model->loss_tokens());
    p.tokens += t.model->loss_tokens();
  }
  p.loss = p.tokens > 0 ? weighted / static_cast<double>(p.tokens) : 0.0;
  return p;
}

std::string in_run(const std::string& run_dir, const std::string& name) {
  return (std::filesystem::path(run_dir) / name).string();
}

// `path` relative to the run folder when it is inside it (the schema's convention), else as given.
std::string relative_to_run(const std::string& run_dir, const std::string& path) {
  const std::filesystem::path relative =
      std::filesystem::weakly_canonical(path).lexically_relative(std::filesystem::weakly_canonical(run_dir));
  return !relative.empty() && *relative.begin() != ".." ? relative.string() : path;
}

}  // namespace

void evaluate_run(const EvaluateOptions& o) {
  const std::string report_path = in_run(o.model.run_dir, "report.json");
  nlohmann::json report = read_json_file(report_path);
  const TranslationModel t = o.model.load();
  const DataConfig& data = t.config.data;
  if (data.dataset != Dataset::multi30k && data.dataset != Dataset::parallel) {
    throw std::invalid_argument(in_run(o.model.run_dir, "config.json") +
                                ": data.dataset: evaluate decodes a corpus (multi30k or parallel)");
  }
  const ParallelText text = read_split(corpus_spec(t.config, o.data_dir), o.split);
  std::vector<std::vector<std::int64_t>> sources;
  for (const std::string& line : text.source) sources.push_back(t.encode_source(line));
  std::vector<std::string> hypotheses;
  for (const Hypothesis& h : translate_all(*t.model, sources, t.tokens(), o.search)) hypotheses.push_back(t.detokenize(h));

  const std::string stem = std::filesystem::path(t.checkpoint).stem().string();
  const std::string tag = search_file_tag(o.search);
  const std::string hyp_file = o.split + "." + stem + (tag.empty() ? "" : "." + tag) + ".hyp." + data.target_language;
  std::string hyp_text;
  for (const std::string& h : hypotheses) hyp_text += h + "\n";
  write_file_atomically(in_run(o.model.run_dir, hyp_file), hyp_text);

  const bleu::BleuOptions sacre;
  const bleu::BleuScore score = bleu::corpus_bleu(hypotheses, {text.target}, sacre);
  const std::string signature = bleu::signature(sacre, 1);
  const double tok_lc = bleu::tokenized_lowercase_bleu(hypotheses, {text.target});
  const Perplexity ppl = split_perplexity(t, text, o.search.max_tokens);

  // reports/schema.json "test": training wrote loss and perplexity of the best checkpoint; these
  // replace them with the figures of the checkpoint decoded, so that every field is about one.
  nlohmann::json& test = report["test"];
  test["split"] = o.split;
  test["checkpoint"] = relative_to_run(o.model.run_dir, t.checkpoint);
  test["checkpoint_step"] = t.checkpoint_step;
  test["loss"] = ppl.loss;
  test["perplexity"] = std::exp(ppl.loss);
  test["bleu"] = score.score;
  test["bleu_signature"] = signature;
  test["bleu_tok_lc"] = tok_lc;
  test.erase("bleu_paper_wmt14");
  test.erase("bleu_paper_wmt14_signature");
  test["hypotheses_file"] = hyp_file;
  test["decoding"] = {{"search", describe(o.search)},
                      {"greedy", o.search.greedy},
                      {"beam", o.search.greedy ? 1 : o.search.beam},
                      {"length_penalty_alpha", o.search.alpha},
                      {"beam_stop", to_string(o.search.beam_stop)},
                      {"max_extra", o.search.max_extra},
                      {"sentences", hypotheses.size()},
                      {"bleu_verbose", bleu::verbose_score(score)},
                      {"bleu_tok_lc_tokens", "13a tokens of lower-cased lines (torchtext bleu_score, unsmoothed)"},
                      {"loss_target_tokens", ppl.tokens},
                      {"loss_skipped_pairs", ppl.skipped_pairs}};
  if (o.paper_wmt14) {
    const bleu::MosesLanguage language = bleu::moses_language(data.target_language, "data.target_language");
    const bleu::BleuScore paper = bleu::paper_wmt14_bleu(hypotheses, {text.target}, language);
    test["bleu_paper_wmt14"] = paper.score;
    test["bleu_paper_wmt14_signature"] = bleu::paper_wmt14_signature(language, 1);
    test["decoding"]["bleu_paper_wmt14_verbose"] = bleu::format_multi_bleu(paper);
    std::printf("paper's BLEU (%s): %s\n", test["bleu_paper_wmt14_signature"].get<std::string>().c_str(),
                bleu::format_multi_bleu(paper).c_str());
  }
  write_file_atomically(report_path, report.dump(1) + "\n");

  std::printf("%s %s->%s with %s (%s)\n", o.split.c_str(), data.source_language.c_str(),
              data.target_language.c_str(), t.checkpoint.c_str(), describe(o.search).c_str());
  std::printf("BLEU|%s = %.2f %s\n", signature.c_str(), score.score, bleu::verbose_score(score).c_str());
  std::printf("tokenized lower-cased BLEU = %.2f\n", tok_lc);
  std::printf("loss %.4f  perplexity %.3f  (%lld target tokens, %lld pairs past max_len skipped)\n", ppl.loss,
              std::exp(ppl.loss), static_cast<long long>(ppl.tokens), static_cast<long long>(ppl.skipped_pairs));
  std::printf("wrote %s and %s\n", in_run(o.model.run_dir, hyp_file).c_str(), report_path.c_str());
}

void add_evaluate_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("evaluate", "Decode a split of a run's corpus (Multi30K or parallel), add BLEU and perplexity to its report");
  auto o = std::make_shared<EvaluateOptions>();
  o->model.add_options(*cmd);
  add_search_options(*cmd, o->search);
  cmd->add_option("--split", o->split, "split to decode: Multi30K's test_2016_flickr (default) or val, or a parallel corpus's file prefix");
  cmd->add_option("--data-dir", o->data_dir,
                  "multi30k: folder holding multi30k/ (default: data.dir, $TREPRO_DATA_DIR, then the repository's data/); "
                  "parallel: the folder of the text files");
  cmd->add_flag("--paper-wmt14", o->paper_wmt14,
                "also the paper's BLEU (Moses-tokenized, ##AT## compound split, multi-bleu.perl) as test.bleu_paper_wmt14");
  cmd->callback([o] { evaluate_run(*o); });
}

}  // namespace trepro::cli
