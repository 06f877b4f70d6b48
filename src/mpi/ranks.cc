#include "mpi/ranks.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>
#include <thread>

#ifdef FAULTLINE_HAVE_MPI
#include <mpi.h>
#endif

#include "util/cpus.h"

namespace faultline::mpi {
namespace {

bool g_active = false;

// Little-endian bytes of fixed-size values and length-prefixed strings.
class Writer {
 public:
  void u64(uint64_t v) { put(&v, sizeof v); }
  void f64(double v) { put(&v, sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    put(s.data(), s.size());
  }
  void counters(const std::vector<Counter>& cs) {
    u64(cs.size());
    for (const Counter& c : cs) {
      str(c.name);
      f64(c.value);
    }
  }
  std::string take() { return std::move(out_); }

 private:
  void put(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  bool u64(uint64_t* v) { return get(v, sizeof *v); }
  bool f64(double* v) { return get(v, sizeof *v); }
  bool str(std::string* s) {
    uint64_t n = 0;
    if (!u64(&n) || n > in_.size() - pos_) return false;
    s->assign(in_, pos_, n);
    pos_ += n;
    return true;
  }
  bool counters(std::vector<Counter>* cs) {
    uint64_t n = 0;
    if (!u64(&n) || n > in_.size()) return false;
    cs->resize(n);
    for (Counter& c : *cs) {
      if (!str(&c.name) || !f64(&c.value)) return false;
    }
    return true;
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  bool get(void* p, size_t n) {
    if (n > in_.size() - pos_) return false;
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  const std::string& in_;
  size_t pos_ = 0;
};

uint64_t pages_of(uint64_t bytes) { return (bytes + 4095) / 4096; }

uint64_t accesses(uint64_t count, double fraction, uint64_t pages) {
  return count ? count : static_cast<uint64_t>(fraction * static_cast<double>(pages));
}

#ifdef FAULTLINE_HAVE_MPI
// One rank's outcome: its results, or the first run of its share that failed.
struct Outcome {
  bool failed = false;
  uint64_t failed_run = 0;
  int code = 0;
  std::string message;
  std::vector<std::pair<uint64_t, RunResult>> results;
};

std::string encode_outcome(const Outcome& o) {
  Writer w;
  w.u64(o.failed);
  w.u64(o.failed_run);
  w.u64(static_cast<uint64_t>(o.code));
  w.str(o.message);
  w.str(encode_results(o.results));
  return w.take();
}

Result<Outcome> decode_outcome(const std::string& bytes) {
  Reader r(bytes);
  Outcome o;
  uint64_t failed = 0, code = 0;
  std::string results;
  if (!r.u64(&failed) || !r.u64(&o.failed_run) || !r.u64(&code) || !r.str(&o.message) ||
      !r.str(&results) || !r.done()) {
    return Status::IoError("mpi: a rank's results are truncated");
  }
  o.failed = failed != 0;
  o.code = static_cast<int>(code);
  auto decoded = decode_results(results);
  if (!decoded.ok()) return decoded.status();
  o.results = std::move(*decoded);
  return o;
}

// The Status a rank sent, with its code (the exit status follows it).
Status status_of(int code, const std::string& message) {
  using C = Status::Code;
  switch (static_cast<C>(code)) {
    case C::kOk:
      return Status::Ok();
    case C::kInvalidArgument:
      return Status::InvalidArgument(message);
    case C::kNotFound:
      return Status::NotFound(message);
    case C::kPermission:
      return Status::Permission(message);
    case C::kUnavailable:
      return Status::Unavailable(message);
    case C::kInterrupted:
      return Status::Interrupted(message);
    case C::kProgramFailed:
      return Status::ProgramFailed(message);
    case C::kInternal:
      return Status::Internal(message);
    case C::kIoError:
      break;
  }
  return Status::IoError(message);
}
#endif

}  // namespace

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"}) {
    if (std::getenv(v)) return true;
  }
  return false;
}

Session::Session(int* argc, char*** argv) {
  if (!launched_by_mpi()) return;
#ifdef FAULTLINE_HAVE_MPI
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready) MPI_Init(argc, argv);
  active_ = g_active = true;
#else
  (void)argc;
  (void)argv;
  status_ = Status::Unavailable(
      "started by mpirun, but this faultline was built without MPI (install libopenmpi-dev "
      "and build again)");
#endif
}

Session::~Session() {
#ifdef FAULTLINE_HAVE_MPI
  if (active_) {
    MPI_Finalize();
    g_active = false;
  }
#endif
}

int rank() {
#ifdef FAULTLINE_HAVE_MPI
  if (g_active) {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
  }
#endif
  return 0;
}

int size() {
#ifdef FAULTLINE_HAVE_MPI
  if (g_active) {
    int n = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
  }
#endif
  return 1;
}

uint64_t expected_cost(const Config& cfg) {
  using workload::Kind;
  const uint64_t file_pages = pages_of(cfg.file.size);
  // A warm cache is filled before the accesses: its pages cost too.
  const uint64_t warm = cfg.file.cache == workload::CacheState::kCold ? 0 : file_pages;
  if (!cfg.streams.empty()) {
    uint64_t sum = 0;
    for (const StreamDecl& s : cfg.streams) {
      if (!s.recording.empty()) {
        sum += file_pages;  // unknown until read: as much as a file's pages
        continue;
      }
      uint64_t pages = file_pages;
      for (const FileDecl& f : cfg.files) {
        if (f.name == s.file) pages = pages_of(f.size);
      }
      sum += accesses(s.count, s.fraction, pages) + 1;
    }
    return sum;
  }
  switch (cfg.access.workload) {
    case Kind::kPft:
    case Kind::kLatPagefault:
      return pages_of(cfg.access.region) * std::max<uint64_t>(cfg.access.passes, 1);
    case Kind::kRecording:
      return file_pages + 1;
    case Kind::kStream:
      break;
  }
  const uint64_t map_pages = cfg.mapping.length ? pages_of(cfg.mapping.length) : file_pages;
  return warm + accesses(cfg.access.count, cfg.access.fraction, map_pages) + 1;
}

std::vector<int> assign_runs(const std::vector<uint64_t>& costs, int ranks) {
  std::vector<int> owner(costs.size(), 0);
  if (ranks <= 1) return owner;
  std::vector<size_t> order(costs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return costs[a] > costs[b]; });
  std::vector<uint64_t> load(static_cast<size_t>(ranks), 0);
  for (size_t i : order) {
    const auto least = std::min_element(load.begin(), load.end());
    owner[i] = static_cast<int>(least - load.begin());
    *least += costs[i];
  }
  return owner;
}

std::string encode_results(const std::vector<std::pair<uint64_t, RunResult>>& results) {
  Writer w;
  w.u64(results.size());
  for (const auto& [index, r] : results) {
    w.u64(index);
    w.str(r.case_name);
    w.str(r.variant);
    w.u64(r.config.size());
    for (const auto& [k, v] : r.config) {
      w.str(k);
      w.str(v);
    }
    w.counters(r.counters);
    w.u64(r.files.size());
    for (const FileResult& f : r.files) {
      w.str(f.path);
      w.counters(f.counters);
    }
    w.u64(r.repetitions.size());
    for (const Repetition& rep : r.repetitions) {
      w.u64(rep.seed);
      w.counters(rep.counters);
    }
    w.str(r.timeline.every);
    w.u64(r.timeline.columns.size());
    for (const std::string& c : r.timeline.columns) w.str(c);
    w.u64(r.timeline.rows.size());
    for (const std::vector<double>& row : r.timeline.rows) {
      w.u64(row.size());
      for (double v : row) w.f64(v);
    }
  }
  return w.take();
}

Result<std::vector<std::pair<uint64_t, RunResult>>> decode_results(const std::string& bytes) {
  Reader rd(bytes);
  auto bad = [] { return Status::IoError("mpi: gathered results are truncated or malformed"); };
  uint64_t n = 0;
  if (!rd.u64(&n) || n > bytes.size()) return bad();
  std::vector<std::pair<uint64_t, RunResult>> out(n);
  for (auto& [index, r] : out) {
    uint64_t nc = 0, nf = 0;
    if (!rd.u64(&index) || !rd.str(&r.case_name) || !rd.str(&r.variant) || !rd.u64(&nc) ||
        nc > bytes.size()) {
      return bad();
    }
    r.config.resize(nc);
    for (auto& [k, v] : r.config) {
      if (!rd.str(&k) || !rd.str(&v)) return bad();
    }
    if (!rd.counters(&r.counters) || !rd.u64(&nf) || nf > bytes.size()) return bad();
    r.files.resize(nf);
    for (FileResult& f : r.files) {
      if (!rd.str(&f.path) || !rd.counters(&f.counters)) return bad();
    }
    uint64_t nr = 0;
    if (!rd.u64(&nr) || nr > bytes.size()) return bad();
    r.repetitions.resize(nr);
    for (Repetition& rep : r.repetitions) {
      if (!rd.u64(&rep.seed) || !rd.counters(&rep.counters)) return bad();
    }
    uint64_t ncol = 0, nrow = 0;
    if (!rd.str(&r.timeline.every) || !rd.u64(&ncol) || ncol > bytes.size()) return bad();
    r.timeline.columns.resize(ncol);
    for (std::string& c : r.timeline.columns) {
      if (!rd.str(&c)) return bad();
    }
    if (!rd.u64(&nrow) || nrow > bytes.size()) return bad();
    r.timeline.rows.resize(nrow);
    for (std::vector<double>& row : r.timeline.rows) {
      uint64_t nv = 0;
      if (!rd.u64(&nv) || nv > bytes.size()) return bad();
      row.resize(nv);
      for (double& v : row) {
        if (!rd.f64(&v)) return bad();
      }
    }
  }
  if (!rd.done()) return bad();
  return out;
}

Result<std::vector<RunResult>> simulate_on_ranks(const std::vector<PlannedRun>& runs,
                                                 const SimOptions& opts) {
  if (size() <= 1) return simulate(runs, opts);
#ifdef FAULTLINE_HAVE_MPI
  const int me = rank(), n = size();
  std::vector<uint64_t> costs;
  for (const PlannedRun& p : runs) costs.push_back(expected_cost(p.cfg));
  const std::vector<int> owner = assign_runs(costs, n);
  std::vector<PlannedRun> mine;
  std::vector<uint64_t> index;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (owner[i] == me) {
      mine.push_back(runs[i]);
      index.push_back(i);
    }
  }
  SimOptions local = opts;
  local.progress = opts.progress && me == 0;  // one progress line, rank 0's share
  if (local.jobs == 0) {
    // A rank the launcher bound to some cores uses those; unbound ranks
    // share the host's cores between them.
    MPI_Comm host;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &host);
    int on_host = 1;
    MPI_Comm_size(host, &on_host);
    MPI_Comm_free(&host);
    const int usable = usable_cpus();
    local.jobs = usable < online_cpus() ? usable : std::max(1, usable / on_host);
  }
  Outcome o;
  if (!mine.empty()) {
    size_t failed = 0;
    local.failed_run = &failed;
    auto r = simulate(mine, local);
    if (r.ok()) {
      for (size_t i = 0; i < mine.size(); ++i) o.results.emplace_back(index[i], (*r)[i]);
    } else {
      // simulate() returns the first failed run of the plan it was given.
      o.failed = true;
      o.failed_run = index[failed];
      o.code = static_cast<int>(r.status().code());
      o.message = r.status().message();
    }
  }
  const std::string bytes = encode_outcome(o);
  const int len = static_cast<int>(bytes.size());
  std::vector<int> lens(me == 0 ? static_cast<size_t>(n) : 0);
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets;
  std::string all;
  if (me == 0) {
    offsets.resize(static_cast<size_t>(n));
    long total = 0;
    for (int i = 0; i < n; ++i) {
      offsets[static_cast<size_t>(i)] = static_cast<int>(total);
      total += lens[static_cast<size_t>(i)];
    }
    all.resize(static_cast<size_t>(total));
  }
  MPI_Gatherv(bytes.data(), len, MPI_BYTE, all.data(), lens.data(), offsets.data(), MPI_BYTE, 0,
              MPI_COMM_WORLD);
  // Rank 0 decides: every result in plan order, or the first failure.
  Status verdict;
  std::vector<RunResult> out;
  if (me == 0) {
    std::vector<std::optional<RunResult>> by_index(runs.size());
    uint64_t first_failed = runs.size();
    for (int i = 0; i < n && verdict.ok(); ++i) {
      auto got = decode_outcome(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(i)]),
                                           static_cast<size_t>(lens[static_cast<size_t>(i)])));
      if (!got.ok()) {
        verdict = got.status();
        break;
      }
      if (got->failed && got->failed_run < first_failed) {
        first_failed = got->failed_run;
        verdict = Status::Ok();
        o = std::move(*got);
        continue;
      }
      for (auto& [k, r] : got->results) by_index[k] = std::move(r);
    }
    if (verdict.ok() && first_failed < runs.size()) verdict = status_of(o.code, o.message);
    if (verdict.ok()) {
      for (auto& r : by_index) {
        if (!r) {
          verdict = Status::IoError("mpi: a run's result is missing from the gather");
          break;
        }
        out.push_back(std::move(*r));
      }
    }
  }
  // Every rank learns the verdict, so the whole job exits with it.
  std::string v =
      verdict.ok()
          ? std::string()
          : encode_outcome({true, 0, static_cast<int>(verdict.code()), verdict.message(), {}});
  int vlen = static_cast<int>(v.size());
  MPI_Bcast(&vlen, 1, MPI_INT, 0, MPI_COMM_WORLD);
  v.resize(static_cast<size_t>(vlen));
  MPI_Bcast(v.data(), vlen, MPI_BYTE, 0, MPI_COMM_WORLD);
  if (vlen > 0) {
    auto got = decode_outcome(v);
    if (!got.ok()) return got.status();
    return status_of(got->code, got->message);
  }
  return out;
#else
  return simulate(runs, opts);
#endif
}

}  // namespace faultline::mpi
