// Twin cells: one training that two sweeps both contain. Every Table 3 spec and the activation
// spec compare against the same base model (heads8 = head_dim32 = base = sinusoidal = relu), as the
// paper's Table 3 has one base row; run apart, each sweep would train that base again for every
// seed. `trepro ablate --share-cells DIR` (DIR holds sweeps' output folders, e.g.
// reports/ablations) trains such a cell once: a cell whose twin has finished under DIR on the
// same backend is copied from it (its report then names the twin in "shared_from"), and a cell
// whose twin is training in another process now waits for it instead of training it beside it.
// Copying is exact, not an approximation: the same config, seed and backend give the same bits
// (conformance/experiments/twin_cells_test.sh trains a twin both ways and compares).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"

namespace trepro {

// The Multi30K test sets (kMulti30kTestSets, the primary first) a finished cell has not decoded
// yet: none for another corpus or a cell with no best checkpoint (it diverged before its first
// validation), and none for a cell decoded before sweeps decoded all three (a "test" with BLEU
// and no "tests": its checkpoints are gone, its one test set is its result). Throws naming
// `source` (the report's file) when the report lacks the fields that say so.
std::vector<std::string> undecoded_test_sets(const nlohmann::json& report, const std::string& source);

// Whether a cell's run report says it is done: trained to the end (or diverged) and decoded when
// its data can be (undecoded_test_sets). A diverged cell decodes its best checkpoint from before
// the divergence, when it had one: that model is its result. False for a null report (nothing
// run). Throws naming `source` when the report lacks the fields that say so.
bool cell_report_complete(const nlohmann::json& report, const std::string& source);

// Equal for two cells exactly when their configs train the same model the same way: the config
// hash with the defaults that other keys decide written out (head_dim 0 is d_model / heads).
std::string cell_identity(Config config);

struct TwinCell {
  std::filesystem::path folder;  // SHARE/<sweep>/<variant>/seed_<S>
  std::string backend;           // its report's
};

// The complete cells SHARE/*/*/seed_*/ that trained `wanted` (stale_cells.h: a cell early stopping
// ended within a budget no larger counts), other than `own` (the cell looking), in path order.
// Throws naming the report when one cannot be read as a run report.
std::vector<TwinCell> complete_twins(const std::filesystem::path& share_dir, const Config& wanted,
                                     const std::filesystem::path& own);

// Makes `run` a copy of `twin`'s files (not its checkpoints), its report with "shared_from": the
// original cell relative to SHARE (a copy's own "shared_from" when the twin is itself a copy).
// Built under a temporary name and renamed into place, so a kill leaves the cell as it was or
// whole.
void copy_twin(const std::filesystem::path& share_dir, const std::filesystem::path& twin, const std::filesystem::path& run);

}  // namespace trepro
