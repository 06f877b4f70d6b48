// replay_plan.h — a recording (workload/recording.h) turned into the steps
// one process replays on this machine's kernel (probe::ReplayOp).
//
// The replayer is one process: every recorded process's mappings become
// mappings of its own (one per process and map, so each has its own PTEs,
// as each process had), every open file one descriptor of its own (so each
// has its own file_ra_state), and the events run in recorded order. A forked
// process's inherited mappings are mapped again at its start, with no PTE,
// as fork() leaves them; a process's last task unmaps its mappings and gives
// its anonymous memory back. Threads of one process share its mappings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "probe/probe.h"
#include "util/status.h"

namespace faultline::probe {

struct ReplayPlan {
  std::vector<uint64_t> file_bytes;     // the recorded files' sizes
  std::vector<std::string> file_paths;  // as recorded
  std::vector<ReplayOp> ops;
  uint32_t open_slots = 0, map_slots = 0, anon_slots = 0;
  std::vector<uint64_t> anon_max_pages;  // by anon slot: the most the process held
  uint64_t largest_read = 0;
  std::vector<std::string> argv;  // the recorded command, when the recording has it
  std::string cwd;
};

// At most this many steps: the plan is held in the replayer's memory, so that
// reading it never touches the disk while the replay is measured.
inline constexpr uint64_t kMaxReplayOps = 50'000'000;

faultline::Result<ReplayPlan> plan_replay(const std::string& recording, bool allow_incomplete);

}  // namespace faultline::probe
