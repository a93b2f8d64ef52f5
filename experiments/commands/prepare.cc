// trepro prepare: binarizes a config's corpus once into a folder that `train --data` memory-maps
// (experiments/data/prepared_corpus.h has the layout); an existing folder is checked and reused.
#include <iostream>
#include <memory>

#include "core/config.h"
#include "experiments/commands/commands.h"
#include "experiments/data/prepared_corpus.h"

namespace trepro::cli {

namespace {

struct PrepareCommand {
  std::string config_path, out, data_dir, vocabulary;
};

}  // namespace

void add_prepare_command(CLI::App& app) {
  CLI::App* cmd = add_command(app, "prepare", "Binarize a config's corpus (multi30k or parallel) into memory-mappable token files for train --data",
      "trepro prepare experiments/configs/wmt14_ende_base.json --out corpora/wmt14_base --data-dir corpora/wmt14");
  auto o = std::make_shared<PrepareCommand>();
  cmd->add_option("config", o->config_path, "config JSON (its data section and model.vocab_size, max_len)")->required();
  cmd->add_option("--out", o->out, "the prepared folder (reused after checking when it exists)")->required();
  cmd->add_option("--data-dir", o->data_dir, "folder of the text files (default: data.dir; multi30k: as for train)");
  cmd->add_option("--vocabulary", o->vocabulary,
                  "an existing sentencepiece model to use instead of training one (its size must be model.vocab_size)")
      ->check(CLI::ExistingFile);
  cmd->callback([o] {
    const Config config = load_config(o->config_path);
    const auto note = [](const std::string& text) { std::cerr << text << std::endl; };
    const nlohmann::json manifest = prepare_corpus(config, o->data_dir, o->vocabulary, o->out, note);
    std::cout << manifest.at("splits").dump(2) << "\n";
  });
}

}  // namespace trepro::cli
