// What every op function of the optimized CPU backend receives: the Highway target to run
// (see dispatch.h: call kernels through for_target(HWY_DISPATCH_TABLE(Kernel), ctx.target)),
// the backend's one thread pool, and its scratch workspace (no allocation in the steady state).
#pragma once

#include <cstdint>

#include "optimized/cpu/thread_pool.h"
#include "optimized/cpu/workspace.h"

namespace trepro::cpu {

struct CpuContext {
  std::int64_t target;  // one HWY_* bit, e.g. HWY_AVX3
  ThreadPool& pool;
  Workspace& workspace;  // workers = pool.threads()
};

}  // namespace trepro::cpu
