// ranks.h — faultline run and sweep spread over MPI ranks
// (`mpirun -np N faultline sweep ...`).
//
// Every rank plans the same runs from the same arguments. The runs are
// dealt out by their expected cost (longest first, each to the rank with
// the least work so far: deterministic for a given plan and rank count),
// each rank simulates its own, and rank 0 gathers the results in plan order
// and writes the report, byte-identical to one process's. A run that fails
// stops the job: every rank returns the error of the first failed run in
// plan order, rank 0 writes nothing. Started without mpirun, nothing of MPI
// is touched and simulate() runs as it does alone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "faultline/scenario.h"
#include "faultline/simulator.h"
#include "faultline/stats.h"
#include "util/status.h"

namespace faultline::mpi {

// Whether mpirun (Open MPI, or a PMI launcher) started this process.
bool launched_by_mpi();

// MPI_Init when launched by mpirun (MPI_Finalize at destruction); nothing
// otherwise. Construct once, first thing in main().
class Session {
 public:
  Session(int* argc, char*** argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  // An error if the launch asked for MPI that this build lacks.
  const Status& status() const { return status_; }

 private:
  bool active_ = false;
  Status status_;
};

int rank();  // 0 without MPI
int size();  // 1 without MPI
inline bool is_root() { return rank() == 0; }

// The relative cost of a run, for dealing runs out (accesses and pages it
// will touch; not a time).
uint64_t expected_cost(const Config& cfg);

// Which rank simulates each run: longest expected cost first, to the rank
// with the least cost so far (ties: the lower rank, then the earlier run).
std::vector<int> assign_runs(const std::vector<uint64_t>& costs, int ranks);

// simulate() over the ranks. Rank 0 gets every result in plan order; the
// other ranks an empty vector.
Result<std::vector<RunResult>> simulate_on_ranks(const std::vector<PlannedRun>& runs,
                                                 const SimOptions& opts);

// The results (with their plan indexes) as bytes and back: doubles and
// strings exactly, so gathered results print as computed ones.
std::string encode_results(const std::vector<std::pair<uint64_t, RunResult>>& results);
Result<std::vector<std::pair<uint64_t, RunResult>>> decode_results(const std::string& bytes);

}  // namespace faultline::mpi
