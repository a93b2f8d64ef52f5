// trepro translate RUN: sentences (stdin, or --input FILE, one a line) -> detokenized
// translations, one a line, with the run's vocabulary and weights; beam search (the paper's
// beam 4, alpha 0.6, source + 50) unless --greedy.
#include <iostream>
#include <iterator>

#include "core/atomic_file.h"
#include "experiments/bleu/bleu_files.h"
#include "experiments/bleu/tokenizer_13a.h"
#include "experiments/commands/commands.h"
#include "experiments/commands/translation_options.h"

namespace trepro::cli {

namespace {

struct TranslateCommandOptions {
  TranslationModelOptions model;
  TranslateOptions search;
  std::string input, output;
};

std::vector<std::string> read_input(const std::string& input) {
  if (!input.empty() && input != "-") return bleu::read_text_lines(input);
  std::vector<std::string> lines;
  for (std::string line; std::getline(std::cin, line);) {
    bleu::check_utf8(line, "stdin: line " + std::to_string(lines.size() + 1));
    lines.push_back(line);
  }
  return lines;
}

void run_translate(const TranslateCommandOptions& o) {
  const std::vector<std::string> lines = read_input(o.input);
  const TranslationModel t = o.model.load();
  std::vector<std::vector<std::int64_t>> sources;
  for (const std::string& line : lines) sources.push_back(t.encode_source(line));
  const std::vector<Hypothesis> hypotheses = translate_all(*t.model, sources, t.tokens(), o.search);
  std::string text;
  for (const Hypothesis& h : hypotheses) text += t.detokenize(h) + "\n";
  if (o.output.empty() || o.output == "-") {
    std::cout << text << std::flush;
  } else {
    write_file_atomically(o.output, text);
  }
  std::cerr << "translate: " << lines.size() << " sentences with " << t.checkpoint << " (" << describe(o.search)
            << ")\n";
}

}  // namespace

void add_translate_command(CLI::App& app) {
  CLI::App* cmd = add_command(app, "translate", "Translate sentences with a trained run (detokenized output)",
      "echo \"Ein Hund rennt durch den Schnee.\" | trepro translate runs/multi30k_deen --beam 4");
  auto o = std::make_shared<TranslateCommandOptions>();
  o->model.add_options(*cmd);
  add_search_options(*cmd, o->search);
  cmd->add_option("--input", o->input, "UTF-8 text, one sentence a line, plain or gzip (default: stdin)");
  cmd->add_option("--output", o->output, "where to write the translations (default: stdout; written atomically)");
  cmd->callback([o] { run_translate(*o); });
}

}  // namespace trepro::cli
