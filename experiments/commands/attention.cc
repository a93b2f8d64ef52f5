// trepro attention RUN --source TEXT [--target TEXT] --out FILE.json: the attention
// probabilities of every layer and head for one sentence pair (the target defaults to the run's
// own translation of the source), as JSON for reports/render.py's heat maps:
//   {"kind": "attention", "source_tokens": [...], "target_tokens": [...],
//    "attention": {"encoder_self" | "decoder_self" | "decoder_cross": [layer][head][query][key]}}
// Source tokens are the subword pieces and "</s>"; target tokens are the decoder's inputs, "<s>"
// and the pieces (row i is where the model predicts the token after it).
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "experiments/commands/commands.h"
#include "experiments/commands/translation_options.h"
#include "model/decoding_attention.h"

namespace trepro::cli {

namespace {

struct AttentionOptions {
  TranslationModelOptions model;
  TranslateOptions search;
  std::string source, target, out;
};

std::string piece(const TranslationModel& t, std::int64_t id) {
  if (id == Vocabulary::kBos) return "<s>";
  if (id == Vocabulary::kEos) return "</s>";
  const std::string text = t.vocabulary->decode({static_cast<int>(id)});
  return text.empty() ? "#" + std::to_string(id) : text;
}

Tensor row_tensor(const std::vector<std::int64_t>& ids) {
  Tensor out = Tensor::empty({1, static_cast<std::int64_t>(ids.size())}, DType::i64);
  for (std::size_t i = 0; i < ids.size(); ++i) out.set(static_cast<std::int64_t>(i), static_cast<double>(ids[i]));
  return out;
}

// [layer][head][query][key] from one [heads, queries, keys] tensor per layer.
nlohmann::json nested(const std::vector<Tensor>& layers) {
  nlohmann::json out = nlohmann::json::array();
  for (const Tensor& p : layers) {
    nlohmann::json heads = nlohmann::json::array();
    for (std::int64_t h = 0; h < p.dim(0); ++h) {
      nlohmann::json rows = nlohmann::json::array();
      for (std::int64_t i = 0; i < p.dim(1); ++i) {
        std::vector<double> row;
        for (std::int64_t j = 0; j < p.dim(2); ++j) row.push_back(p.at((h * p.dim(1) + i) * p.dim(2) + j));
        rows.push_back(row);
      }
      heads.push_back(rows);
    }
    out.push_back(heads);
  }
  return out;
}

void run_attention(const AttentionOptions& o) {
  const TranslationModel t = o.model.load();
  const std::vector<std::int64_t> source = t.encode_source(o.source);
  if (source.empty()) throw std::invalid_argument("attention: --source is empty");
  std::vector<std::int64_t> target = {Vocabulary::kBos};
  if (o.target.empty()) {
    const Hypothesis h = translate_all(*t.model, {source}, t.tokens(), o.search).front();
    target.insert(target.end(), h.tokens.begin(), h.tokens.end());
  } else {
    for (int id : t.vocabulary->encode(o.target)) target.push_back(id);
  }
  const AttentionMaps maps = attention_maps(*t.model, {row_tensor(source), row_tensor(target), Tensor()});
  nlohmann::json out = {{"kind", "attention"}, {"checkpoint", t.checkpoint}, {"source", o.source}};
  for (std::int64_t id : source) out["source_tokens"].push_back(piece(t, id));
  for (std::int64_t id : target) out["target_tokens"].push_back(piece(t, id));
  out["target"] = t.detokenize({std::vector<std::int64_t>(target.begin() + 1, target.end())});
  out["attention"] = {{"encoder_self", nested(maps.encoder_self)},
                      {"decoder_self", nested(maps.decoder_self)},
                      {"decoder_cross", nested(maps.decoder_cross)}};
  write_file_atomically(o.out, out.dump() + "\n");
  std::cerr << "attention: " << source.size() << " source x " << target.size() << " target tokens, "
            << maps.encoder_self.size() << "+" << maps.decoder_self.size() << " layers -> " << o.out << "\n";
}

}  // namespace

void add_attention_command(CLI::App& app) {
  CLI::App* cmd = add_command(app, "attention", "Attention weights of every layer and head for a sentence pair (JSON)",
      "trepro attention runs/multi30k_deen --source \"Ein Hund rennt.\" --out attention.json");
  auto o = std::make_shared<AttentionOptions>();
  o->model.add_options(*cmd);
  add_search_options(*cmd, o->search);
  cmd->add_option("--source", o->source, "source sentence")->required();
  cmd->add_option("--target", o->target, "target sentence (default: the run's translation of the source)");
  cmd->add_option("--out", o->out, "output JSON (written atomically)")->required();
  cmd->callback([o] { run_attention(*o); });
}

}  // namespace trepro::cli
