// The communicator of this process: MPI when an MPI launcher (mpirun, srun) started it, else
// the single process.
#pragma once

#include <memory>

#include "distributed/communicator.h"

namespace trepro {

// Throws naming the launcher when one started this process but the build has no MPI.
std::unique_ptr<Communicator> make_world_communicator();

}  // namespace trepro
