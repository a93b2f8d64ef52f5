// Beam search (the paper's decoding: beam 4, GNMT length penalty alpha 0.6, maximum output
// length = source length + 50, early stop), batched over sentences on one scorer.
//
// Every step, each sentence ranks the (hypothesis, next token) pairs of its live hypotheses by
// cumulative log-probability and walks the best 2K (K = beam):
//   - an EOS candidate among the best K (BeamStop::k_finished; among all 2K with
//     BeamStop::bound) finishes its hypothesis, scored log_prob / lp(|Y|)
//     with lp(n) = ((5 + n) / 6)^alpha (Wu et al. 2016), |Y| counting EOS. The penalty is
//     applied once, to finished hypotheses: ranking partial hypotheses by a per-step penalised
//     score is the classic bug, and changes which hypotheses survive;
//   - the best K non-EOS candidates become the live hypotheses of the next step.
// A sentence is done when no live hypothesis can beat the best finished one (log_prob only falls
// as tokens are added, and lp(n) <= lp(max length), so a live hypothesis ends with a score <=
// log_prob / lp(max length)), at its maximum length, when its live hypotheses finish without EOS,
// and, with BeamStop::k_finished, as soon as K hypotheses have finished. The result is the
// best-scoring finished hypothesis. With K = 1 and k_finished this is exactly greedy search.
//
// The two stopping rules are the two toolkits': k_finished is fairseq's, and ends a search before
// a longer hypothesis that would score better has finished (short ones finish first); bound is
// tensor2tensor's (the paper's code, beam_search with stop_early), which stops only when the
// best finished score cannot be beaten.
#pragma once

#include "model/decoding.h"

namespace trepro {

struct BeamOptions {
  std::int64_t beam = 4;
  double alpha = 0.6;
  std::int64_t max_extra = 50;  // maximum output length = source length + max_extra
  BeamStop stop = BeamStop::k_finished;
};


// lp(n) = ((5 + n) / 6)^alpha
double length_penalty(std::int64_t length, double alpha);

// src [B, S] host ids. One Hypothesis per sentence.
std::vector<Hypothesis> beam_search(Transformer& model, const Tensor& src, const SearchTokens& tokens,
                                    const BeamOptions& options = {});

// The same search against any scorer whose rows start as the B sentences (one row each).
std::vector<Hypothesis> beam_search(NextTokenScorer& scorer, const std::vector<std::int64_t>& max_lengths,
                                    const SearchTokens& tokens, const BeamOptions& options);

}  // namespace trepro
