#include "distributed/world.h"

#include <cstdlib>

#include "distributed/single_process_communicator.h"
#ifdef TR_WITH_MPI
#include "distributed/mpi_communicator.h"
#endif
#ifdef TR_WITH_NCCL
#include "distributed/nccl_communicator.h"
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

std::unique_ptr<Communicator> make_gradient_communicator(Communicator& host, Device device) {
  if (host.size() == 1 || device == host.memory()) return nullptr;
#ifdef TR_WITH_NCCL
  if (device == Device::cuda) return std::make_unique<NcclCommunicator>(host);
#endif
  throw CommunicatorError("data-parallel training keeps the gradients in " + std::string(device_name(device)) +
                          " memory, but this trepro was built without an engine for it (NCCL for cuda: it is found "
                          "beside the CUDA toolkit when CUDA builds)");
}

}  // namespace trepro
