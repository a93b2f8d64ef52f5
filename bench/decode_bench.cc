// Our half of bench/decode_bench.py: translates a file with a trained run and times the search
// alone (not start-up, loading or tokenization), so that the peer's time (CTranslate2, timed the
// same way in bench/ct2_decode.py) compares like for like.
//   decode_bench RUN INPUT --threads N --batch B [--greedy] [--beam 4 --alpha 0.6]
//                --source-ids OUT --hypothesis-ids OUT [--repeat R]
// INPUT: text, one sentence a line (plain or gzip). Writes the source ids (subwords then EOS)
// and the hypotheses' ids (no BOS, no EOS), one sentence a line, space-separated, and prints one
// JSON object: the wall and CPU seconds of each repetition, sentences, target tokens, peak RSS, target, CPU.
#include <chrono>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/bench_support.h"
#include "core/atomic_file.h"
#include "experiments/bleu/bleu_files.h"
#include "experiments/decoding/translation_model.h"
#include "experiments/run_info.h"
#include "optimized/cpu/cpu_backend.h"

namespace {

std::string ids_text(const std::vector<std::vector<std::int64_t>>& rows) {
  std::string text;
  for (const std::vector<std::int64_t>& ids : rows) {
    for (std::size_t j = 0; j < ids.size(); ++j) {
      if (j > 0) text += ' ';
      text += std::to_string(ids[j]);
    }
    text += "\n";
  }
  return text;
}

// User + system time of every thread of this process, as Python's time.process_time().
double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Times our translation of a file (bench/decode_bench.py runs it)");
  trepro::TranslationModelSource source;
  std::string input, source_ids, hypothesis_ids;
  int threads = 1, repeat = 1;
  trepro::TranslateOptions search;
  search.max_tokens = 1 << 30;  // batches by sentence count alone, as the peer's max_batch_size
  app.add_option("run", source.run_dir, "run folder of `trepro train`")->required()->check(CLI::ExistingDirectory);
  app.add_option("input", input, "text to translate, one sentence a line")->required()->check(CLI::ExistingFile);
  app.add_option("--threads", threads, "threads of the cpu backend")->check(CLI::PositiveNumber);
  app.add_option("--batch", search.max_sentences, "sentences per batch")->required()->check(CLI::PositiveNumber);
  app.add_flag("--greedy", search.greedy, "greedy search instead of beam search");
  app.add_option("--beam", search.beam, "beam size")->check(CLI::PositiveNumber);
  app.add_option("--alpha", search.alpha, "GNMT length penalty exponent")->check(CLI::NonNegativeNumber);
  app.add_option("--repeat", repeat, "timed translations of the whole file")->check(CLI::PositiveNumber);
  app.add_option("--source-ids", source_ids, "where to write the source ids")->required();
  app.add_option("--hypothesis-ids", hypothesis_ids, "where to write the hypotheses' ids")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    const trepro::TranslationModel t = trepro::load_translation_model(source, [&] { return trepro::bench::cpu_backend(threads); });
    std::vector<std::vector<std::int64_t>> sources;
    for (const std::string& line : trepro::bleu::read_text_lines(input)) sources.push_back(t.encode_source(line));
    std::vector<double> seconds, cpu_seconds;
    std::vector<trepro::Hypothesis> hypotheses;
    for (int r = 0; r < repeat; ++r) {
      const auto start = std::chrono::steady_clock::now();
      const double cpu_start = process_cpu_seconds();
      hypotheses = trepro::translate_all(*t.model, sources, t.tokens(), search);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      cpu_seconds.push_back(process_cpu_seconds() - cpu_start);
    }
    std::vector<std::vector<std::int64_t>> outputs;
    std::int64_t target_tokens = 0;
    for (const trepro::Hypothesis& h : hypotheses) {
      outputs.push_back(h.tokens);
      target_tokens += h.length();
    }
    trepro::write_file_atomically(source_ids, ids_text(sources));
    trepro::write_file_atomically(hypothesis_ids, ids_text(outputs));
    const nlohmann::json result = {{"seconds", seconds},
                                   {"cpu_seconds", cpu_seconds},
                                   {"sentences", sources.size()},
                                   {"target_tokens", target_tokens},
                                   {"peak_rss_mib", static_cast<double>(trepro::peak_memory_bytes()) / (1 << 20)},
                                   {"threads", threads},
                                   {"cpu_backend", trepro::cpu::default_cpu_backend_name()}};
    std::cout << result.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "decode_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
