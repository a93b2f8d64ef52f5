// The gradient reduction of data-parallel training on the paper-base gradient (or --floats N):
// the engine's own allreduce_sum, and reduce_shard_gradients (the fixed-tree sum that makes N
// ranks train the bits of one), each timed against its peer in the same run: a memcpy of the
// same bytes, the memory bandwidth a rank has. Run under mpirun (every rank runs the same
// repetitions; rank 0 prints one JSON object):
//   mpirun -np 2 build/release/bench/allreduce_bench [--floats N] [--repetitions R]
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_support.h"
#include "core/config.h"
#include "distributed/gradient_reduction.h"
#include "distributed/world.h"
#include "experiments/run_info.h"
#include "model/parameter_specs.h"

namespace trepro::bench {
namespace {

std::int64_t paper_base_floats() {
  const Config config = load_config(std::string(TREPRO_SOURCE_DIR) + "/experiments/configs/paper_base.json");
  std::int64_t floats = 0;
  for (const ParameterSpec& spec : parameter_specs(config.model)) floats += shape_numel(spec.shape);
  return floats;
}

std::string whole_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Median seconds of `repetitions` calls, each started together on every rank.
template <class F>
double median_seconds(Communicator& comm, int repetitions, F&& f) {
  std::vector<double> seconds;
  f();  // warm-up: first-touch page faults and the engine's connection set-up
  for (int i = 0; i < repetitions; ++i) {
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    f();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

int run(int argc, char** argv) {
  std::int64_t floats = 0;
  int repetitions = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--floats") floats = std::stoll(argv[i + 1]);
    else if (flag == "--repetitions") repetitions = std::stoi(argv[i + 1]);
    else throw std::invalid_argument("allreduce_bench: unknown option " + flag);
  }
  if (floats == 0) floats = paper_base_floats();
  const std::unique_ptr<Communicator> comm = make_world_communicator();
  const std::unique_ptr<Backend> backend = cpu_backend(1);
  const double bytes = static_cast<double>(floats) * sizeof(float);

  std::vector<float> buffer(static_cast<std::size_t>(floats), 1.0f), copy(buffer.size());
  const double memcpy_s = median_seconds(*comm, repetitions, [&] { std::memcpy(copy.data(), buffer.data(), bytes); });
  const double allreduce_s = median_seconds(*comm, repetitions, [&] { comm->allreduce_sum(buffer); });
  const ShardPlan plan(comm->size(), comm->size(), comm->rank());
  const std::int64_t padded = padded_gradient_size(floats, comm->size());
  std::vector<Tensor> leaves{backend->zeros({padded}, DType::f32)};
  const double reduce_s =
      median_seconds(*comm, repetitions, [&] { reduce_shard_gradients(*backend, *comm, plan, leaves); });
  if (comm->rank() != 0) return 0;
  const double ranks = comm->size();
  // Bus bandwidth (NCCL's convention): what each rank's link carries, 2 (N - 1) / N x the bytes.
  auto figures = [&](double seconds) {
    return nlohmann::json{{"seconds", seconds},
                          {"algorithm_GBps", bytes / seconds / 1e9},
                          {"bus_GBps", 2.0 * (ranks - 1.0) / ranks * bytes / seconds / 1e9},
                          {"x_memcpy", memcpy_s / seconds}};
  };
  const nlohmann::json out = {
      {"floats", floats},
      {"ranks", comm->size()},
      {"engine", comm->engine()},
      {"threads_per_rank", backend->threads()},
      {"backend", backend->name()},
      {"cpu", cpu_model()},
      {"load_average", whole_line("/proc/loadavg")},
      {"repetitions", repetitions},
      {"memcpy", {{"seconds", memcpy_s}, {"GBps", bytes / memcpy_s / 1e9}}},
      {"engine_allreduce_sum", figures(allreduce_s)},
      {"reduce_shard_gradients", figures(reduce_s)},
  };
  std::cout << out.dump(2) << std::endl;
  return 0;
}

}  // namespace
}  // namespace trepro::bench

int main(int argc, char** argv) {
  try {
    return trepro::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "allreduce_bench: " << e.what() << "\n";
    return 1;
  }
}
