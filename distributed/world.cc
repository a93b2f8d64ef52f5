#include "distributed/world.h"

#include <cstdlib>

#include "distributed/single_process_communicator.h"
#ifdef TR_WITH_MPI
#include "distributed/mpi_communicator.h"
#endif

namespace trepro {

namespace {

// The variables OpenMPI's mpirun, MPICH's hydra and Slurm's PMI set in every rank.
const char* launcher_variable() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return name;
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<Communicator> make_world_communicator() {
  const char* launched_by = launcher_variable();
  if (launched_by == nullptr) return std::make_unique<SingleProcessCommunicator>();
#ifdef TR_WITH_MPI
  return std::make_unique<MpiCommunicator>();
#else
  throw CommunicatorError(std::string("an MPI launcher started this process ($") + launched_by +
                          " is set) but this trepro was built without MPI (scripts/setup installs libopenmpi-dev; "
                          "then reconfigure)");
#endif
}

}  // namespace trepro
