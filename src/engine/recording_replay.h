// recording_replay.h — a program's recording (access.workload = recording,
// access.trace = the file) replayed on the serial model.
//
// Every file of the recording is a file of the configuration's file system
// (file.fs, file.cache, file.large_folios), with the recorded size. Every
// process has an mm of its own and its threads share it; a process forked
// by another starts with its parent's file mappings, with no PTE mapped
// (fork copies no PTE of a file mapping without anonymous pages). Open
// files are struct files with their own file_ra_state, shared where the
// program shared them. The events run in recorded order: mmap, munmap and
// madvise on the process's VMAs, posix_fadvise and reads on open files,
// touches as loads or stores through the mapping, and the processes'
// anonymous memory charged against the page cache's capacity.
// mapping.madvise and file.fadvise, when not normal, are applied after
// every mmap and open, so a sweep can ask what another hint would do.
//
// Counters are the run's, and per file: what the events on each file
// caused, reclaim of other files' pages included. Events the model cannot
// apply (a touch past its mapping or past the end of its file, advice the
// model lacks) are counted in model.replay_skipped.
#pragma once

#include "engine/engine.h"
#include "faultline/config.h"
#include "faultline/stats.h"
#include "mm/trace.h"
#include "util/status.h"

namespace faultline::engine {

Result<RunResult> replay_recording(const Config& cfg, mm::Tracer* tracer,
                                   const RunProgress& progress);

}  // namespace faultline::engine
