// Calling a Highway kernel for a target chosen per backend instance, not per process.
//
// Each op file compiles its kernels once per Highway target (hwy/foreach_target.h) and
// HWY_EXPORTs a table of function pointers. HWY_DYNAMIC_DISPATCH would pick the entry of the
// process-wide best target; a CpuBackend instead carries its own target (cpu-avx3, cpu-avx2,
// cpu-sse4, cpu-scalar) so that every target is tested by the whole suite in one process:
//
//   HWY_EXPORT(GemmKernel);                                   // in the op's .cc
//   for_target(HWY_DISPATCH_TABLE(GemmKernel), ctx.target)(args...);
//
// Table layout of Highway 1.0.3 (hwy/highway.h, hwy/targets.h), with more than one compiled
// target: entry 0 is the "choose and call" initializer, entries 1..HWY_MAX_DYNAMIC_TARGETS are
// the targets of the architecture from best to worst (target bit b sits at entry
// b - (HWY_HIGHEST_TARGET_BIT + 1 - HWY_MAX_DYNAMIC_TARGETS) + 1, which is what
// ChosenTarget::GetIndex computes from HWY_CHOSEN_TARGET_SHIFT), and the last entry
// (HWY_MAX_DYNAMIC_TARGETS + 1) is the fallback, HWY_SCALAR or HWY_EMU128.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <hwy/targets.h>

namespace trepro::cpu {

// The index of `target` (one HWY_* bit) in an HWY_EXPORT table of a multi-target build.
constexpr std::size_t dispatch_index(std::int64_t target) {
  if (target == HWY_SCALAR || target == HWY_EMU128) return HWY_MAX_DYNAMIC_TARGETS + 1;
  int bit = 0;
  while ((target >> bit) != 1) ++bit;
  return static_cast<std::size_t>(bit - (HWY_HIGHEST_TARGET_BIT + 1 - HWY_MAX_DYNAMIC_TARGETS) + 1);
}

// The kernel of `table` compiled for `target`. Throws std::logic_error when this table has no
// such entry (the target was not compiled into the op's translation unit).
template <class Fn>
Fn for_target(Fn const* table, std::int64_t target) {
#if (HWY_TARGETS & (HWY_TARGETS - 1)) == 0
  // Single-target build: HWY_EXPORT makes a table of one entry.
  if (target != HWY_TARGETS) throw std::logic_error("for_target: only one target was compiled");
  return table[0];
#else
  Fn fn = table[dispatch_index(target)];
  if (fn == nullptr) {
    throw std::logic_error("for_target: target " + std::string(hwy::TargetName(target)) +
                           " is not compiled into this kernel");
  }
  return fn;
#endif
}

// The targets this machine supports AND the optimized library compiled, best first.
std::vector<std::int64_t> compiled_targets();
// Lower-case name used in backend names: "avx3", "avx2", "sse4", "scalar".
std::string target_name(std::int64_t target);
// The target of a name from target_name(); throws std::invalid_argument listing the compiled
// targets when `name` is not one of them.
std::int64_t target_from_name(const std::string& name);

}  // namespace trepro::cpu
