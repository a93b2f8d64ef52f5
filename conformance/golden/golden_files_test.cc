// The committed golden files are what the generator wrote: each matches its manifest sha256,
// nothing under golden/data is unlisted, every case belongs to a test family, and the C++ golden
// parameter formula reproduces the generator's weights bit for bit.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "conformance/golden/golden_case.h"
#include "conformance/golden/golden_weights.h"
#include "core/sha256.h"

namespace trepro::golden {
namespace {

namespace fs = std::filesystem;

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(GoldenFiles, MatchTheirManifestHashes) {
  for (const nlohmann::json& entry : manifest().at("cases")) {
    for (const auto& [role, file] : entry.at("files").items()) {
      const std::string path = golden_dir() + "/data/" + file.at("path").get<std::string>();
      ASSERT_TRUE(fs::exists(path)) << path << " is listed in MANIFEST.json but missing";
      EXPECT_EQ(sha256_hex(file_bytes(path)), file.at("sha256").get<std::string>())
          << path << " differs from what golden/generate.py wrote (edited by hand?)";
    }
  }
}

TEST(GoldenFiles, EveryFileIsInTheManifest) {
  std::set<std::string> listed;
  for (const nlohmann::json& entry : manifest().at("cases")) {
    for (const auto& [role, file] : entry.at("files").items()) listed.insert(file.at("path").get<std::string>());
  }
  const fs::path data = golden_dir() + "/data";
  for (const fs::directory_entry& file : fs::recursive_directory_iterator(data)) {
    if (!file.is_regular_file()) continue;
    EXPECT_TRUE(listed.count(fs::relative(file.path(), data).string())) << file.path() << " is not in MANIFEST.json";
  }
}

TEST(GoldenFiles, EveryCaseHasATestFamily) {
  const std::set<std::string> kinds = {"op", "layer", "model", "training"};
  const std::set<std::string> ops = {"attention", "layer_norm", "activation", "swiglu",
                                     "linear",    "cross_entropy", "embedding", "adam"};
  for (const nlohmann::json& entry : manifest().at("cases")) {
    const std::string kind = entry.at("kind");
    EXPECT_TRUE(kinds.count(kind)) << entry.at("name") << ": no test runs kind " << kind;
    if (kind == "op") {
      EXPECT_TRUE(ops.count(entry.at("params").at("op"))) << entry.at("name") << ": no test runs its op";
    }
  }
}

TEST(GoldenFiles, TheCppParameterFormulaReproducesTheGenerator) {
  for (const std::string kind : {"model", "training"}) {
    for (const GoldenCase& g : cases(kind)) {
      if (!g.has_file("weights")) continue;
      const std::map<std::string, Tensor> committed = g.read("weights").tensors;
      const std::map<std::string, Tensor> computed = golden_weights(load_config(g.path("config")).model, g.dtype);
      EXPECT_EQ(data_sha256(computed), data_sha256(committed)) << g.label();
    }
  }
}

}  // namespace
}  // namespace trepro::golden
