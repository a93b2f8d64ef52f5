// BLEU of files, as the sacreBLEU command line reads them: UTF-8, one segment a line (split on
// '\n' only), plain or gzip (recognised by its content, whatever the name).
#pragma once

#include <string>
#include <vector>

#include "experiments/bleu/bleu.h"

namespace trepro::bleu {

// The lines of `path` without their '\n'; throws naming the file when it cannot be read or is
// not UTF-8.
std::vector<std::string> read_text_lines(const std::string& path);

// The reference files, each checked to have `hypothesis_lines` lines: throws
// std::invalid_argument naming both files and both counts otherwise.
std::vector<std::vector<std::string>> read_references(const std::vector<std::string>& reference_paths,
                                                      const std::string& hypothesis_path, std::size_t hypothesis_lines);

// Throws std::invalid_argument naming both files and both counts when a reference file's line
// count differs from the hypothesis file's.
BleuScore corpus_bleu_files(const std::string& hypothesis_path, const std::vector<std::string>& reference_paths,
                            const BleuOptions& options);

// The tokenized, lower-cased BLEU of torchtext_bleu on lines: each line lower-cased and split
// into 13a tokens.
double tokenized_lowercase_bleu(const std::vector<std::string>& hypotheses,
                                const std::vector<std::vector<std::string>>& references);

}  // namespace trepro::bleu
