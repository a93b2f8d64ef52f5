// What every op function of the optimized CPU backend receives: the Highway target to run
// (see dispatch.h: call kernels through for_target(HWY_DISPATCH_TABLE(Kernel), ctx.target)),
// the backend's one thread pool, its scratch workspace and the caching allocator its tensors come
// from (together: no new memory in the steady state of a training step).
#pragma once

#include <cstdint>
#include <memory>

#include "core/caching_allocator.h"
#include "optimized/cpu/thread_pool.h"
#include "optimized/cpu/workspace.h"

namespace trepro::cpu {

struct CpuContext {
  std::int64_t target;  // one HWY_* bit, e.g. HWY_AVX3
  ThreadPool& pool;
  Workspace& workspace;  // workers = pool.threads()
  std::shared_ptr<CachingAllocator> allocator;
};

}  // namespace trepro::cpu
