#include "model/beam_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace trepro {

namespace {

struct Live {
  std::vector<std::int64_t> tokens;
  double log_prob = 0.0;
  std::int64_t row = 0;  // its row in the scorer
};

struct Sentence {
  std::int64_t max_length = 0;
  std::vector<Live> live;  // best first
  std::vector<Hypothesis> finished;
  bool done = false;
};

struct Candidate {
  double log_prob;
  std::int64_t live_index;
  std::int64_t token;
};

// Better first: higher log-probability, then the earlier hypothesis, then the smaller id (so that
// beam 1 breaks ties as greedy's argmax does).
bool better(const Candidate& a, const Candidate& b) {
  if (a.log_prob != b.log_prob) return a.log_prob > b.log_prob;
  if (a.live_index != b.live_index) return a.live_index < b.live_index;
  return a.token < b.token;
}

// The best `count` tokens of one hypothesis's row of V log-probabilities, best first. Scanning
// ids upwards, a candidate is kept only when strictly above the current last of the best: an
// equal score with a larger id is never better.
//
// Once the best are `count` (before that, floor is NaN, below which nothing is), a row value at
// or below `floor` cannot enter them: floor is below every value v with base + v > last (the
// margin covers the rounding of the subtraction, of the sum and of the cast), so most of the row
// is passed over with one comparison in T, not a conversion, an addition and a comparison in
// double; the exact test decides the rest.
template <class T>
void best_in_row(const T* row, std::int64_t vocab, double base, std::int64_t live_index, std::size_t count,
                 const SearchTokens& tokens, std::vector<Candidate>& best) {
  const std::size_t first = best.size();
  constexpr T kNothing = std::numeric_limits<T>::quiet_NaN();
  T floor = kNothing;
  const auto update_floor = [&] {
    const double last = best.back().log_prob;
    const double margin = 1e-6 * (1.0 + std::abs(last) + std::abs(base));
    floor = std::isfinite(last) && std::isfinite(base)
                ? std::nextafter(static_cast<T>(last - base - margin), -std::numeric_limits<T>::infinity())
                : kNothing;
  };
  for (std::int64_t v = 0; v < vocab; ++v) {
    if (row[v] <= floor) continue;
    const double log_prob = base + static_cast<double>(row[v]);
    if (best.size() - first == count && !(log_prob > best.back().log_prob)) continue;
    if (v == tokens.pad || v == tokens.bos) continue;
    const Candidate c{log_prob, live_index, v};
    best.insert(std::upper_bound(best.begin() + static_cast<std::ptrdiff_t>(first), best.end(), c, better), c);
    if (best.size() - first > count) best.pop_back();
    if (best.size() - first == count) update_floor();
  }
}

// The best `count` (hypothesis, token) pairs of one sentence, best first. Pad and BOS are never
// produced. Any of the sentence's best `count` is among its hypothesis's best `count`, so each
// row keeps only that many while scanning its V log-probabilities.
std::vector<Candidate> best_candidates(const Sentence& s, const Tensor& log_probs, std::size_t count,
                                       const SearchTokens& tokens) {
  const std::int64_t vocab = log_probs.dim(1);
  std::vector<Candidate> best;
  for (std::size_t i = 0; i < s.live.size(); ++i) {
    const Live& h = s.live[i];
    const auto index = static_cast<std::int64_t>(i);
    if (log_probs.dtype() == DType::f64) {
      best_in_row(log_probs.data<double>() + h.row * vocab, vocab, h.log_prob, index, count, tokens, best);
    } else {
      best_in_row(log_probs.data<float>() + h.row * vocab, vocab, h.log_prob, index, count, tokens, best);
    }
  }
  std::sort(best.begin(), best.end(), better);
  if (best.size() > count) best.resize(count);
  return best;
}

Hypothesis finish(const Live& h, bool ended, double log_prob, double alpha) {
  Hypothesis out;
  out.tokens = h.tokens;
  out.ended = ended;
  out.log_prob = log_prob;
  out.score = log_prob / length_penalty(out.length(), alpha);
  return out;
}

double best_score(const std::vector<Hypothesis>& finished) {
  double best = -std::numeric_limits<double>::infinity();
  for (const Hypothesis& h : finished) best = std::max(best, h.score);
  return best;
}

// One step of one sentence: its live hypotheses are extended by the scorer's `log_probs`.
void advance(Sentence& s, const Tensor& log_probs, const SearchTokens& tokens, const BeamOptions& options) {
  const auto beam = static_cast<std::size_t>(options.beam);
  const bool k_finished = options.stop == BeamStop::k_finished;
  const std::size_t eos_ranks = k_finished ? beam : 2 * beam;
  std::vector<Live> next;
  const std::vector<Candidate> candidates = best_candidates(s, log_probs, 2 * beam, tokens);
  for (std::size_t rank = 0; rank < candidates.size(); ++rank) {
    const Candidate& c = candidates[rank];
    const Live& parent = s.live[static_cast<std::size_t>(c.live_index)];
    if (c.token == tokens.eos) {
      if (rank < eos_ranks && (!k_finished || s.finished.size() < beam)) {
        s.finished.push_back(finish(parent, true, c.log_prob, options.alpha));
      }
    } else if (next.size() < beam) {
      Live child{parent.tokens, c.log_prob, parent.row};
      child.tokens.push_back(c.token);
      next.push_back(std::move(child));
    }
  }
  s.live = std::move(next);
  if (!s.live.empty() && static_cast<std::int64_t>(s.live.front().tokens.size()) >= s.max_length) {
    for (const Live& h : s.live) s.finished.push_back(finish(h, false, h.log_prob, options.alpha));
    s.live.clear();
  }
  if (s.live.empty() || (k_finished && s.finished.size() >= beam)) {
    s.done = true;
    return;
  }
  const double live_bound = s.live.front().log_prob / length_penalty(s.max_length, options.alpha);
  if (!s.finished.empty() && live_bound <= best_score(s.finished)) s.done = true;
}

}  // namespace

double length_penalty(std::int64_t length, double alpha) {
  return std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha);
}

std::vector<Hypothesis> beam_search(Transformer& model, const Tensor& src, const SearchTokens& tokens,
                                    const BeamOptions& options) {
  check_translation_input(model, src, "beam_search");
  CachedScorer scorer(model, src);
  return beam_search(scorer, max_output_lengths(model.config(), src, options.max_extra), tokens, options);
}

std::vector<Hypothesis> beam_search(NextTokenScorer& scorer, const std::vector<std::int64_t>& max_lengths,
                                    const SearchTokens& tokens, const BeamOptions& options) {
  if (options.beam < 1) throw std::invalid_argument("beam_search: beam must be >= 1, got " + std::to_string(options.beam));
  if (options.alpha < 0.0) throw std::invalid_argument("beam_search: alpha must be >= 0");
  std::vector<Sentence> sentences(max_lengths.size());
  std::vector<std::int64_t> rows;  // the scorer's rows, as indices into its previous rows
  for (std::size_t b = 0; b < max_lengths.size(); ++b) {
    Sentence& s = sentences[b];
    s.max_length = max_lengths[b];
    s.done = s.max_length <= 0;
    if (!s.done) {
      s.live.push_back({{}, 0.0, static_cast<std::int64_t>(rows.size())});
      rows.push_back(static_cast<std::int64_t>(b));
    }
  }
  if (rows.size() != max_lengths.size()) scorer.reorder(rows);
  while (!rows.empty()) {
    std::vector<std::int64_t> last;
    for (const Sentence& s : sentences) {
      if (s.done) continue;
      for (const Live& h : s.live) last.push_back(h.tokens.empty() ? tokens.bos : h.tokens.back());
    }
    const Tensor log_probs = scorer.next_log_probs(last);
    rows.clear();
    for (Sentence& s : sentences) {
      if (s.done) continue;
      advance(s, log_probs, tokens, options);
      if (s.done) continue;
      for (Live& h : s.live) {
        rows.push_back(h.row);
        h.row = static_cast<std::int64_t>(rows.size()) - 1;
      }
    }
    if (!rows.empty()) scorer.reorder(rows);
  }
  std::vector<Hypothesis> results(sentences.size());
  for (std::size_t b = 0; b < sentences.size(); ++b) {
    const std::vector<Hypothesis>& finished = sentences[b].finished;
    // The first of equal scores wins: the earliest finished.
    auto best = std::max_element(finished.begin(), finished.end(),
                                 [](const Hypothesis& a, const Hypothesis& c) { return a.score < c.score; });
    if (best != finished.end()) results[b] = *best;
  }
  return results;
}

}  // namespace trepro
