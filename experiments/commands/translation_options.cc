#include "experiments/commands/translation_options.h"

#include <map>
#include <string>

namespace trepro::cli {

void TranslationModelOptions::add_options(CLI::App& cmd) {
  cmd.add_option("run", run_dir, "run folder of `trepro train` (config.json, vocab.model, checkpoints/)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd.add_option("--checkpoint", checkpoint, "weights to use (default: RUN/checkpoints/best.safetensors)");
  cmd.add_option("--average", average, "use the mean of the last N step checkpoints (the paper: 5)")
      ->check(CLI::PositiveNumber);
  backend.add_options(cmd);
}

TranslationModel TranslationModelOptions::load() const {
  return load_translation_model(*this, [this] { return backend.make(); });
}

void add_search_options(CLI::App& cmd, TranslateOptions& options) {
  cmd.add_flag("--greedy", options.greedy, "greedy search instead of beam search");
  cmd.add_option("--beam", options.beam, "beam size (the paper: 4)")->check(CLI::PositiveNumber);
  cmd.add_option("--alpha", options.alpha, "GNMT length penalty exponent (the paper: 0.6)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--beam-stop", options.beam_stop,
                 "when a sentence's beam search ends: k_finished (default; fairseq's: once K hypotheses have "
                 "finished) or bound (tensor2tensor's, the paper's code: once no live hypothesis can beat the "
                 "best finished one)")
      ->transform(CLI::CheckedTransformer(
                      std::map<std::string, BeamStop>{{to_string(BeamStop::k_finished), BeamStop::k_finished},
                                                      {to_string(BeamStop::bound), BeamStop::bound}})
                      .description(""))  // the help names the values, not CLI11's mapping to enum numbers
      ->type_name("k_finished|bound");
  cmd.add_option("--max-extra", options.max_extra, "maximum output length = source length + this (the paper: 50)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--max-tokens", options.max_tokens, "source tokens per decoding batch")->check(CLI::PositiveNumber);
  cmd.add_option("--max-sentences", options.max_sentences, "sentences per decoding batch (default: no limit)")
      ->check(CLI::PositiveNumber);
}

}  // namespace trepro::cli
