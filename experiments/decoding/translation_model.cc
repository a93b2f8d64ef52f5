#include "experiments/decoding/translation_model.h"

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "experiments/run_folder/run_folder.h"
#include "experiments/training/checkpoint.h"

namespace trepro {

namespace {

// The weights to load: a named file, the average of the last N step checkpoints (written once
// to RUN/checkpoints/average_last_N.safetensors), or the best checkpoint.
std::string weights_path(const TranslationModelSource& o) {
  if (!o.checkpoint.empty() && o.average > 0) {
    throw std::invalid_argument("give --checkpoint or --average, not both");
  }
  if (!o.checkpoint.empty()) return o.checkpoint;
  const RunFolder run(o.run_dir);
  if (o.average > 0) {
    const std::vector<StepCheckpoint> all = run.step_checkpoints();
    if (static_cast<std::int64_t>(all.size()) < o.average) {
      throw std::runtime_error(run.checkpoints() + ": --average " + std::to_string(o.average) + " needs " +
                               std::to_string(o.average) + " step checkpoints, found " + std::to_string(all.size()));
    }
    std::vector<std::string> paths;
    for (auto it = all.end() - o.average; it != all.end(); ++it) paths.push_back(it->path);
    const std::string out = run.average_checkpoint(o.average, all.back().step);
    average_checkpoints(paths, out);
    return out;
  }
  return run.best_checkpoint();
}

}  // namespace

TranslationModel load_translation_model(const TranslationModelSource& o,
                                        const std::function<std::unique_ptr<Backend>()>& make_backend) {
  const RunFolder run(o.run_dir);
  TranslationModel t;
  t.config = load_config(run.config());
  if (t.config.model.architecture != Architecture::encoder_decoder) {
    throw std::invalid_argument(run.config() + ": model.architecture: translation needs "
                                "encoder_decoder, this run is " + to_string(t.config.model.architecture));
  }
  if (!std::filesystem::exists(run.vocabulary())) {
    throw std::invalid_argument(run.vocabulary() + ": missing: this run trained on data.dataset " +
                                to_string(t.config.data.dataset) + ", which has no vocabulary to translate with "
                                "(translate and evaluate need a run of a corpus: multi30k or parallel)");
  }
  t.vocabulary = std::make_unique<Vocabulary>(Vocabulary::load(run.vocabulary()));
  if (t.vocabulary->size() != t.config.model.vocab_size) {
    throw std::runtime_error(run.vocabulary() + ": " + std::to_string(t.vocabulary->size()) +
                             " pieces, but model.vocab_size is " + std::to_string(t.config.model.vocab_size));
  }
  t.backend = make_backend();
  t.model = std::make_unique<Transformer>(t.config.model, *t.backend);
  t.checkpoint = weights_path(o);
  const SafetensorsFile file = without_optimizer_state(read_safetensors(t.checkpoint));
  t.model->parameters().load(*t.backend, file, t.checkpoint);
  t.checkpoint_step = recorded_step(file, t.checkpoint);
  return t;
}

std::vector<std::int64_t> TranslationModel::encode_source(const std::string& text) const {
  std::vector<std::int64_t> ids;
  for (int id : vocabulary->encode(text)) ids.push_back(id);
  if (!ids.empty()) ids.push_back(Vocabulary::kEos);
  return ids;
}

std::string TranslationModel::detokenize(const Hypothesis& hypothesis) const {
  return vocabulary->decode(std::vector<int>(hypothesis.tokens.begin(), hypothesis.tokens.end()));
}

std::string describe(const TranslateOptions& options) {
  const std::string length = "max length source + " + std::to_string(options.max_extra);
  if (options.greedy) return "greedy, " + length;
  char alpha[32];
  std::snprintf(alpha, sizeof alpha, "%g", options.alpha);
  // The default stop leaves the text as reports before --beam-stop wrote it.
  const std::string stop = options.beam_stop == BeamStop::k_finished ? "" : ", stop at the bound";
  return "beam " + std::to_string(options.beam) + ", alpha " + alpha + stop + ", " + length;
}

std::string search_file_tag(const TranslateOptions& options) {
  const TranslateOptions paper;
  std::vector<std::string> parts;
  if (options.greedy) {
    parts.push_back("greedy");
  } else {
    if (options.beam != paper.beam) parts.push_back("beam" + std::to_string(options.beam));
    if (options.alpha != paper.alpha) {
      char alpha[32];
      std::snprintf(alpha, sizeof alpha, "alpha%g", options.alpha);
      parts.emplace_back(alpha);
    }
    if (options.beam_stop != paper.beam_stop) parts.push_back(to_string(options.beam_stop));
  }
  if (options.max_extra != paper.max_extra) parts.push_back("extra" + std::to_string(options.max_extra));
  std::string tag;
  for (const std::string& part : parts) tag += (tag.empty() ? "" : "_") + part;
  return tag;
}

}  // namespace trepro
