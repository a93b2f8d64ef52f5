// The CPU backend's per-instance dispatch: for_target(table, t) runs the code compiled for t,
// for every compiled target, whatever target the process-wide dispatch would choose.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "conformance/cpu/dispatch_test.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace trepro::cpu::HWY_NAMESPACE {

// Which target this copy was compiled for, and the lane count it sees (so that the test also
// catches a table entry that points at another target's code).
std::int64_t CompiledTarget(std::size_t* lanes) {
  *lanes = hwy::HWY_NAMESPACE::Lanes(hwy::HWY_NAMESPACE::ScalableTag<float>());
  return HWY_TARGET;
}

}  // namespace trepro::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "optimized/cpu/cpu_backend.h"
#include "optimized/cpu/dispatch.h"

namespace trepro::cpu {
HWY_EXPORT(CompiledTarget);

namespace {

std::size_t expected_lanes(std::int64_t target) {
  if (target == HWY_AVX3 || target == HWY_AVX3_DL) return 16;
  if (target == HWY_AVX2) return 8;
  if (target == HWY_SCALAR) return 1;
  return 4;  // SSE4, SSSE3, EMU128
}

TEST(Dispatch, EveryCompiledTargetRunsItsOwnCode) {
  const std::vector<std::int64_t> targets = compiled_targets();
  ASSERT_FALSE(targets.empty());
  for (std::int64_t target : targets) {
    std::size_t lanes = 0;
    EXPECT_EQ(for_target(HWY_DISPATCH_TABLE(CompiledTarget), target)(&lanes), target) << target_name(target);
    EXPECT_EQ(lanes, expected_lanes(target)) << target_name(target);
  }
}

TEST(Dispatch, LowTargetsAreCompiledBesideTheBestOne) {
  // The library is built without -march=native precisely so that these exist (on x86-64 with
  // AVX-512, as the machines here have, all four).
  std::vector<std::string> names;
  for (std::int64_t target : compiled_targets()) names.push_back(target_name(target));
  EXPECT_EQ(names.back(), "scalar");
  if (hwy::SupportedTargets() & HWY_AVX2) EXPECT_NE(std::find(names.begin(), names.end(), "avx2"), names.end());
  if (hwy::SupportedTargets() & HWY_SSE4) EXPECT_NE(std::find(names.begin(), names.end(), "sse4"), names.end());
}

TEST(Dispatch, NamesRoundTripAndUnknownNamesAreRejected) {
  for (std::int64_t target : compiled_targets()) EXPECT_EQ(target_from_name(target_name(target)), target);
  EXPECT_THROW(target_from_name("avx9"), std::invalid_argument);
}

TEST(Dispatch, EachBackendNamesItsTarget) {
  for (const CpuTarget& t : cpu_backend_targets()) {
    EXPECT_EQ(make_cpu_backend(t.target)->name(), t.backend_name);
    EXPECT_EQ(t.backend_name, "cpu-" + target_name(t.target));
  }
}

TEST(Dispatch, TheEnvironmentForcesTheTargetOfPlainCpu) {
  const char* saved = std::getenv("TREPRO_CPU_TARGET");
  const std::string restore = saved != nullptr ? saved : "";
  unsetenv("TREPRO_CPU_TARGET");
  EXPECT_EQ(default_cpu_backend_name(), cpu_backend_targets().front().backend_name);
  setenv("TREPRO_CPU_TARGET", "scalar", 1);
  EXPECT_EQ(default_cpu_backend_name(), "cpu-scalar");
  setenv("TREPRO_CPU_TARGET", "avx9", 1);
  try {
    default_cpu_backend_name();
    ADD_FAILURE() << "an unknown target was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("TREPRO_CPU_TARGET"), std::string::npos) << e.what();
  }
  if (saved != nullptr) {
    setenv("TREPRO_CPU_TARGET", restore.c_str(), 1);
  } else {
    unsetenv("TREPRO_CPU_TARGET");
  }
}

}  // namespace
}  // namespace trepro::cpu
#endif  // HWY_ONCE
