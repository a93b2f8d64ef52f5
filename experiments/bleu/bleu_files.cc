#include "experiments/bleu/bleu_files.h"

#include <cerrno>
#include <cstring>
#include <zlib.h>

#include <memory>
#include <stdexcept>

#include "experiments/bleu/tokenizer_13a.h"

namespace trepro::bleu {

namespace {

std::vector<std::string> tokens(const std::string& line) {
  BleuOptions lowercase_13a;
  lowercase_13a.lowercase = true;
  const std::string tokenized = preprocess(line, lowercase_13a);
  std::vector<std::string> out;
  for (std::string_view token : split_whitespace(tokenized)) out.emplace_back(token);
  return out;
}

}  // namespace

std::vector<std::string> read_text_lines(const std::string& path) {
  // zlib reads plain files through the same calls (gzread passes non-gzip data through).
  errno = 0;
  const std::unique_ptr<gzFile_s, decltype(&gzclose)> file(gzopen(path.c_str(), "rb"), &gzclose);
  // gzopen sets errno when open(2) fails; 0 is zlib's own failure (no memory).
  if (!file) throw std::runtime_error(path + ": cannot open: " + (errno != 0 ? std::strerror(errno) : "zlib could not start reading"));
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const int n = gzread(file.get(), buffer, sizeof buffer);
    if (n < 0) {
      int code = 0;
      throw std::runtime_error(path + ": cannot read: " + gzerror(file.get(), &code));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  for (std::size_t i = 0; i < lines.size(); ++i) check_utf8(lines[i], path + ": line " + std::to_string(i + 1));
  return lines;
}

std::vector<std::vector<std::string>> read_references(const std::vector<std::string>& reference_paths,
                                                      const std::string& hypothesis_path, std::size_t hypothesis_lines) {
  if (reference_paths.empty()) throw std::invalid_argument("bleu: at least one reference file is needed");
  std::vector<std::vector<std::string>> references;
  for (const std::string& path : reference_paths) {
    references.push_back(read_text_lines(path));
    if (references.back().size() != hypothesis_lines) {
      throw std::invalid_argument("bleu: " + path + " has " + std::to_string(references.back().size()) +
                                  " lines but " + hypothesis_path + " has " + std::to_string(hypothesis_lines));
    }
  }
  return references;
}

BleuScore corpus_bleu_files(const std::string& hypothesis_path, const std::vector<std::string>& reference_paths,
                            const BleuOptions& options) {
  const std::vector<std::string> hypotheses = read_text_lines(hypothesis_path);
  return corpus_bleu(hypotheses, read_references(reference_paths, hypothesis_path, hypotheses.size()), options);
}

double tokenized_lowercase_bleu(const std::vector<std::string>& hypotheses,
                                const std::vector<std::vector<std::string>>& references) {
  std::vector<std::vector<std::string>> candidates;
  std::vector<std::vector<std::vector<std::string>>> reference_tokens(hypotheses.size());
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    candidates.push_back(tokens(hypotheses[i]));
    for (const auto& set : references) reference_tokens[i].push_back(tokens(set.at(i)));
  }
  return torchtext_bleu(candidates, reference_tokens);
}

}  // namespace trepro::bleu
