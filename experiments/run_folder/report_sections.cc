#include "experiments/run_folder/report_sections.h"

#include <cmath>
#include <stdexcept>

namespace trepro {

nlohmann::json best_section_json(const RunFolder& run, const BestSection& best) {
  return {{"step", best.step},
          {"validation_loss", best.step > 0 ? nlohmann::json(best.validation_loss) : nlohmann::json()},
          {"checkpoint", run.relative(run.best_checkpoint())}};
}

nlohmann::json test_loss_json(const TestLoss& test) {
  return {{"split", test.split},
          {"checkpoint", test.checkpoint},
          {"checkpoint_step", test.checkpoint_step},
          {"loss", test.loss},
          {"perplexity", std::exp(test.loss)}};
}

namespace {

void set_decoded_fields(nlohmann::json& test, const TestLoss& loss, const TestDecoding& decoded) {
  test.update(test_loss_json(loss));
  test["bleu"] = decoded.bleu;
  test["bleu_signature"] = decoded.bleu_signature;
  test["bleu_tok_lc"] = decoded.bleu_tok_lc;
  test["hypotheses_file"] = decoded.hypotheses_file;
  test["decoding"] = decoded.decoding;
  test.erase("bleu_paper_wmt14");
  test.erase("bleu_paper_wmt14_signature");
  if (decoded.paper_wmt14) {
    test["bleu_paper_wmt14"] = decoded.paper_wmt14->score;
    test["bleu_paper_wmt14_signature"] = decoded.paper_wmt14->signature;
    test["decoding"]["bleu_paper_wmt14_verbose"] = decoded.paper_wmt14->verbose;
  }
}

}  // namespace

void record_decoded_test(const RunFolder& run, const TestLoss& loss, const TestDecoding& decoded, TestRole role) {
  std::optional<nlohmann::json> report = run.read_report();
  if (!report) throw std::runtime_error(run.report() + ": missing: a run folder that `trepro train` wrote has one");
  nlohmann::json one = nlohmann::json::object();
  set_decoded_fields(one, loss, decoded);
  (*report)["tests"][loss.split] = one;
  if (role == TestRole::primary) {
    nlohmann::json& test = (*report)["test"];
    if (!test.is_object()) test = nlohmann::json::object();
    set_decoded_fields(test, loss, decoded);
  }
  run.write_report(*report);
}

}  // namespace trepro
