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

#include "core/atomic_file.h"
#include "experiments/bleu/bleu_files.h"
#include "experiments/bleu/paper_bleu.h"
#include "experiments/commands/commands.h"
#include "experiments/commands/evaluate.h"
#include "experiments/data/parallel_corpus.h"
#include "experiments/data/token_batches.h"
#include "experiments/run_folder/report_sections.h"
#include "experiments/training/training_data.h"

namespace trepro::cli {

namespace {

// Teacher-forced cross-entropy over the split, in length-sorted batches of max_tokens, over the
// pairs training's validation and test losses cover (the corpus's length bound:
// data.max_len_filter when set, else model.max_len).
struct SplitLoss {
  TokenLoss loss;
  std::int64_t skipped_pairs = 0;
};
SplitLoss split_loss(const TranslationModel& t, const ParallelText& text, std::int64_t max_tokens) {
  std::vector<TokenPair> pairs;
  for (std::size_t i = 0; i < text.source.size(); ++i) {
    pairs.push_back({t.vocabulary->encode(text.source[i]), t.vocabulary->encode(text.target[i])});
  }
  SplitLoss result;
  pairs = pairs_within(std::move(pairs), corpus_layout(t.config).max_len, &result.skipped_pairs);
  std::vector<Batch> batches;
  for (const std::vector<std::size_t>& rows : token_batches_in_order(pairs, max_tokens)) {
    batches.push_back(make_batch(pairs, rows, t.config.model.pad_id, Vocabulary::kBos, Vocabulary::kEos));
  }
  result.loss = token_loss(*t.model, batches);
  return result;
}

std::vector<std::string> decode_split(const TranslationModel& t, const ParallelText& text, const TranslateOptions& search) {
  std::vector<std::vector<std::int64_t>> sources;
  for (const std::string& line : text.source) sources.push_back(t.encode_source(line));
  std::vector<std::string> hypotheses;
  for (const Hypothesis& h : translate_all(*t.model, sources, t.tokens(), search)) hypotheses.push_back(t.detokenize(h));
  return hypotheses;
}

TestDecoding score_decoding(const EvaluateOptions& o, const TranslationModel& t, const std::vector<std::string>& hypotheses,
                            const ParallelText& text, const SplitLoss& loss, const std::string& hypotheses_file) {
  const bleu::BleuOptions sacre;
  const bleu::BleuScore score = bleu::corpus_bleu(hypotheses, {text.target}, sacre);
  TestDecoding d;
  d.bleu = score.score;
  d.bleu_signature = bleu::signature(sacre, 1);
  d.bleu_tok_lc = bleu::tokenized_lowercase_bleu(hypotheses, {text.target});
  d.hypotheses_file = hypotheses_file;
  d.decoding = {{"search", describe(o.search)},
                {"greedy", o.search.greedy},
                {"beam", o.search.greedy ? 1 : o.search.beam},
                {"length_penalty_alpha", o.search.alpha},
                {"beam_stop", to_string(o.search.beam_stop)},
                {"max_extra", o.search.max_extra},
                {"sentences", hypotheses.size()},
                {"bleu_verbose", bleu::verbose_score(score)},
                {"bleu_tok_lc_tokens", "13a tokens of lower-cased lines (torchtext bleu_score, unsmoothed)"},
                {"loss_target_tokens", loss.loss.tokens},
                {"loss_skipped_pairs", loss.skipped_pairs}};
  if (o.paper_wmt14) {
    const bleu::MosesLanguage language = bleu::moses_language(t.config.data.target_language, "data.target_language");
    const bleu::BleuScore paper = bleu::paper_wmt14_bleu(hypotheses, {text.target}, language);
    d.paper_wmt14 = PaperBleu{paper.score, bleu::paper_wmt14_signature(language, 1), bleu::format_multi_bleu(paper)};
  }
  return d;
}

void print_evaluation(const EvaluateOptions& o, const TranslationModel& t, const TestDecoding& d, const SplitLoss& loss,
                      const RunFolder& run) {
  const DataConfig& data = t.config.data;
  if (d.paper_wmt14) std::printf("paper's BLEU (%s): %s\n", d.paper_wmt14->signature.c_str(), d.paper_wmt14->verbose.c_str());
  std::printf("%s %s->%s with %s (%s)\n", o.split.c_str(), data.source_language.c_str(), data.target_language.c_str(),
              t.checkpoint.c_str(), describe(o.search).c_str());
  std::printf("BLEU|%s = %.2f %s\n", d.bleu_signature.c_str(), d.bleu, d.decoding["bleu_verbose"].get<std::string>().c_str());
  std::printf("tokenized lower-cased BLEU = %.2f\n", d.bleu_tok_lc);
  std::printf("loss %.4f  perplexity %.3f  (%lld target tokens, %lld pairs past max_len skipped)\n", loss.loss.loss,
              std::exp(loss.loss.loss), static_cast<long long>(loss.loss.tokens),
              static_cast<long long>(loss.skipped_pairs));
  std::printf("wrote %s and %s\n", run.file(d.hypotheses_file).c_str(), run.report().c_str());
}

}  // namespace

void evaluate_run(const EvaluateOptions& o) {
  const RunFolder run(o.model.run_dir);
  if (!std::filesystem::exists(run.report())) {
    throw std::runtime_error(run.report() + ": missing: evaluate adds to the report that `trepro train` writes");
  }
  const TranslationModel t = o.model.load();
  const DataConfig& data = t.config.data;
  if (data.dataset != Dataset::multi30k && data.dataset != Dataset::parallel) {
    throw std::invalid_argument(run.config() + ": data.dataset: evaluate decodes a corpus (multi30k or parallel)");
  }
  const ParallelText text = read_split(corpus_spec(t.config, o.data_dir), o.split);
  const std::vector<std::string> hypotheses = decode_split(t, text, o.search);
  const std::string hypotheses_file = RunFolder::hypotheses_name(
      o.split, std::filesystem::path(t.checkpoint).stem().string(), search_file_tag(o.search), data.target_language);
  std::string hypotheses_text;
  for (const std::string& h : hypotheses) hypotheses_text += h + "\n";
  write_file_atomically(run.file(hypotheses_file), hypotheses_text);

  const SplitLoss loss = split_loss(t, text, o.search.max_tokens);
  const TestDecoding decoding = score_decoding(o, t, hypotheses, text, loss, hypotheses_file);
  record_decoded_test(run, {o.split, run.relative(t.checkpoint), t.checkpoint_step, loss.loss.loss}, decoding,
                      o.additional_test_set ? TestRole::additional : TestRole::primary);
  print_evaluation(o, t, decoding, loss, run);
}

void add_evaluate_command(CLI::App& app) {
  CLI::App* cmd = add_command(app, "evaluate", "Decode a split of a run's corpus (Multi30K or parallel), add BLEU and perplexity to its report",
      "trepro evaluate runs/multi30k_deen --split test_2017_flickr --beam 4");
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
