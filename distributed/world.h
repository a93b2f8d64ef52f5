// The communicator of this process: MPI when an MPI launcher (mpirun, srun) started it, else
// the single process.
#pragma once

#include <memory>

#include "distributed/communicator.h"

namespace trepro {

// Throws naming the launcher when one started this process but the build has no MPI.
std::unique_ptr<Communicator> make_world_communicator();

// The engine that sums gradients kept in `device` memory across the ranks of `host` (which must
// outlive it): NCCL, bootstrapped over `host`, for cuda ranks of a job of several; null where
// `host` serves (one process, or gradients in host memory). Throws naming the device when this
// build has no engine for it.
std::unique_ptr<Communicator> make_gradient_communicator(Communicator& host, Device device);

}  // namespace trepro
