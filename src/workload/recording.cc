// recording.cc — the faultline recording format (docs/trace_format.md).
#include "workload/recording.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "util/process.h"

namespace faultline::workload {
namespace {

constexpr char kMagic[8] = {'f', 'l', 'r', 'e', 'c', 'o', 'r', 'd'};
constexpr size_t kHeaderBytes = 64;
constexpr size_t kBufferBytes = size_t{1} << 20;
constexpr size_t kMaxEventBytes = 1 + 6 * 10;  // a header byte and at most six varints
constexpr uint32_t kFlagComplete = 1;

// The header byte of an event.
constexpr uint8_t kOpMask = 0x0f;
constexpr uint8_t kBitA = 0x10;         // kTouch, kOpen: write; kTaskStart: thread
constexpr uint8_t kBitSameTask = 0x20;  // the previous event's task
constexpr uint8_t kBitSameMap = 0x40;   // kTouch: the previous touch's map
constexpr uint8_t kBitsReserved = 0x80;

void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t get_u32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{p[i]} << (8 * i);
  return v;
}
uint64_t get_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

void put_varint(std::vector<uint8_t>& b, uint64_t v) {
  while (v >= 0x80) {
    b.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  b.push_back(static_cast<uint8_t>(v));
}
uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t unzigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

void put_string(std::vector<uint8_t>& b, const std::string& s) {
  put_varint(b, s.size());
  b.insert(b.end(), s.begin(), s.end());
}

// Bounded reads of the metadata section.
struct Cursor {
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p == end) break;
      const uint8_t b = *p++;
      v |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return v;
    }
    ok = false;
    return 0;
  }
  std::string string() {
    const uint64_t n = varint();
    if (!ok || n > static_cast<uint64_t>(end - p)) {
      ok = false;
      return {};
    }
    std::string s(reinterpret_cast<const char*>(p), n);
    p += n;
    return s;
  }
};

}  // namespace

const std::string* RecordingInfo::condition(const std::string& key) const {
  for (const auto& [k, v] : conditions) {
    if (k == key) return &v;
  }
  return nullptr;
}

// --- writing ---------------------------------------------------------------

namespace {

// PATH.tmp.<pid> files of writers that died before renaming theirs (SIGKILL).
void remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  const std::string prefix = p.filename().string() + ".tmp.";
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const pid_t pid = util::pid_from_name(name, prefix);
    if (pid > 0 && !util::pid_alive(pid)) {
      std::error_code rm;
      fs::remove(it->path(), rm);
    }
  }
}

}  // namespace

Result<std::unique_ptr<RecordingWriter>> RecordingWriter::create(const std::string& path) {
  std::unique_ptr<RecordingWriter> w(new RecordingWriter);
  w->path_ = path;
  w->tmp_ = path + ".tmp." + std::to_string(::getpid());
  remove_stale_temporaries(path);
  w->out_ = std::fopen(w->tmp_.c_str(), "wb");
  if (!w->out_) return Status::IoError(path + ": cannot write: " + std::strerror(errno));
  const uint8_t zeros[kHeaderBytes] = {};
  if (std::fwrite(zeros, 1, kHeaderBytes, w->out_) != kHeaderBytes) w->io_failed();
  w->buf_.reserve(size_t{64} << 10);  // grows to kBufferBytes for a long recording
  return w;
}

RecordingWriter::~RecordingWriter() {
  if (out_) {
    std::fclose(out_);
    std::remove(tmp_.c_str());
  }
}

uint32_t RecordingWriter::add_file(RecordedFile f) {
  info_.files.push_back(std::move(f));
  return static_cast<uint32_t>(info_.files.size() - 1);
}

uint32_t RecordingWriter::add_task(RecordedTask t) {
  info_.tasks.push_back(std::move(t));
  return static_cast<uint32_t>(info_.tasks.size() - 1);
}

void RecordingWriter::append(const Event& e) {
  const bool same_task = any_ && e.task == prev_.task;
  uint8_t head = static_cast<uint8_t>(e.op);
  if (same_task) head |= kBitSameTask;
  const bool bit_a = e.op == EventOp::kTaskStart ? e.thread : e.write;
  if (bit_a) head |= kBitA;
  const bool same_map = e.op == EventOp::kTouch && prev_touch_ && e.map == prev_.map;
  if (same_map) head |= kBitSameMap;
  buf_.push_back(head);
  const uint64_t time = any_ ? std::max(e.time_ns, prev_.time_ns) : e.time_ns;
  put_varint(buf_, time - (any_ ? prev_.time_ns : 0));
  if (!same_task) put_varint(buf_, e.task);
  switch (e.op) {
    case EventOp::kTaskStart:
      put_varint(buf_, e.arg == kNone32 ? 0 : uint64_t{e.arg} + 1);
      break;
    case EventOp::kTaskExit:
      break;
    case EventOp::kOpen:
      put_varint(buf_, e.file);
      break;
    case EventOp::kClose:
      put_varint(buf_, e.handle);
      break;
    case EventOp::kMmap:
      put_varint(buf_, e.handle == kNone32 ? 0 : uint64_t{e.handle} + 1);
      put_varint(buf_, e.offset);
      put_varint(buf_, e.length);
      put_varint(buf_, e.arg);
      break;
    case EventOp::kMunmap:
      put_varint(buf_, e.map);
      put_varint(buf_, e.offset);
      put_varint(buf_, e.length);
      break;
    case EventOp::kMadvise:
      put_varint(buf_, e.map);
      put_varint(buf_, e.offset);
      put_varint(buf_, e.length);
      put_varint(buf_, e.arg);
      break;
    case EventOp::kFadvise:
      put_varint(buf_, e.handle);
      put_varint(buf_, e.offset);
      put_varint(buf_, e.length);
      put_varint(buf_, e.arg);
      break;
    case EventOp::kRead:
      put_varint(buf_, e.handle);
      put_varint(buf_, zigzag(static_cast<int64_t>(e.offset - read_end_)));
      put_varint(buf_, e.length);
      read_end_ = e.offset + e.length;
      break;
    case EventOp::kTouch:
      if (!same_map) put_varint(buf_, e.map);
      put_varint(buf_, zigzag(static_cast<int64_t>(e.offset - (touch_page_ + 1))));
      touch_page_ = e.offset;
      break;
    case EventOp::kAnon:
      put_varint(buf_, e.length);
      break;
  }
  if (e.op == EventOp::kTouch) prev_touch_ = true;
  const uint32_t map = e.op == EventOp::kTouch ? e.map : prev_.map;
  prev_ = e;
  prev_.time_ns = time;
  prev_.map = map;  // the previous touch's map, for kBitSameMap
  any_ = true;
  ++nr_events_;
  if (buf_.size() >= kBufferBytes) flush_buffer();
}

void RecordingWriter::flush_buffer() {
  if (buf_.empty()) return;
  if (std::fwrite(buf_.data(), 1, buf_.size(), out_) != buf_.size()) io_failed();
  events_bytes_ += buf_.size();
  buf_.clear();
}

Status RecordingWriter::finish(bool complete,
                               std::vector<std::pair<std::string, std::string>> conditions) {
  flush_buffer();
  std::vector<uint8_t> meta;
  put_varint(meta, info_.files.size());
  for (const RecordedFile& f : info_.files) {
    put_string(meta, f.path);
    put_varint(meta, f.size);
  }
  put_varint(meta, info_.tasks.size());
  for (const RecordedTask& t : info_.tasks) {
    put_varint(meta, t.tid);
    put_varint(meta, t.pid);
    put_string(meta, t.comm);
  }
  put_varint(meta, conditions.size());
  for (const auto& [k, v] : conditions) {
    put_string(meta, k);
    put_string(meta, v);
  }
  if (std::fwrite(meta.data(), 1, meta.size(), out_) != meta.size()) io_failed();
  uint8_t h[kHeaderBytes] = {};
  std::memcpy(h, kMagic, sizeof kMagic);
  put_u32(h + 8, kRecordingVersion);
  put_u32(h + 12, complete ? kFlagComplete : 0);
  put_u64(h + 16, kHeaderBytes);
  put_u64(h + 24, events_bytes_);
  put_u64(h + 32, nr_events_);
  put_u64(h + 40, kHeaderBytes + events_bytes_);
  put_u64(h + 48, meta.size());
  put_u64(h + 56, any_ ? prev_.time_ns : 0);
  if (std::fseek(out_, 0, SEEK_SET) != 0 || std::fwrite(h, 1, kHeaderBytes, out_) != kHeaderBytes) {
    io_failed();
  }
  if (std::fclose(out_) != 0) io_failed();
  out_ = nullptr;
  if (io_error_) {
    std::remove(tmp_.c_str());
    return Status::IoError(path_ + ": write failed: " + std::strerror(io_errno_));
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    std::remove(tmp_.c_str());
    return Status::IoError(path_ + ": cannot rename into place: " + std::strerror(errno));
  }
  return Status::Ok();
}

// --- reading ---------------------------------------------------------------

Status RecordingReader::error(const std::string& what) const {
  const uint64_t at = file_pos_ - (end_ - pos_);
  return Status::InvalidArgument(path_ + ": byte " + std::to_string(at) + ": " + what);
}

Result<std::unique_ptr<RecordingReader>> RecordingReader::open(const std::string& path,
                                                               bool allow_incomplete) {
  std::unique_ptr<RecordingReader> r(new RecordingReader);
  r->path_ = path;
  r->in_ = std::fopen(path.c_str(), "rb");
  if (!r->in_) return Status::NotFound(path + ": cannot open recording");
  auto bad = [&](const std::string& what) { return Status::InvalidArgument(path + ": " + what); };
  uint8_t h[kHeaderBytes];
  if (std::fread(h, 1, kHeaderBytes, r->in_) != kHeaderBytes) {
    return bad("too short for a faultline recording (" + std::to_string(kHeaderBytes) +
               "-byte header)");
  }
  if (std::memcmp(h, kMagic, sizeof kMagic) != 0) return bad("not a faultline recording");
  RecordingInfo& info = r->info_;
  info.version = get_u32(h + 8);
  if (info.version != kRecordingVersion) {
    return bad("recording format version " + std::to_string(info.version) +
               ", this faultline reads " + std::to_string(kRecordingVersion));
  }
  info.complete = get_u32(h + 12) & kFlagComplete;
  const uint64_t events_off = get_u64(h + 16), events_bytes = get_u64(h + 24);
  info.nr_events = get_u64(h + 32);
  const uint64_t meta_off = get_u64(h + 40), meta_bytes = get_u64(h + 48);
  info.duration_ns = get_u64(h + 56);
  if (std::fseek(r->in_, 0, SEEK_END) != 0) return Status::IoError(path + ": cannot seek");
  const long size = std::ftell(r->in_);
  const uint64_t file_size = size < 0 ? 0 : static_cast<uint64_t>(size);
  if (events_off != kHeaderBytes || events_bytes > file_size ||
      meta_off != events_off + events_bytes || meta_bytes > file_size ||
      meta_off + meta_bytes != file_size) {
    return bad("truncated or damaged: the header gives " + std::to_string(events_bytes) +
               " event bytes and " + std::to_string(meta_bytes) + " metadata bytes, the file has " +
               std::to_string(file_size) + " bytes");
  }
  std::vector<uint8_t> meta(meta_bytes);
  if (std::fseek(r->in_, static_cast<long>(meta_off), SEEK_SET) != 0 ||
      std::fread(meta.data(), 1, meta.size(), r->in_) != meta.size()) {
    return Status::IoError(path + ": cannot read the metadata");
  }
  Cursor c{meta.data(), meta.data() + meta.size()};
  const uint64_t nr_files = c.varint();
  for (uint64_t i = 0; c.ok && i < nr_files && c.p != c.end; ++i) {
    RecordedFile f;
    f.path = c.string();
    f.size = c.varint();
    info.files.push_back(std::move(f));
  }
  const uint64_t nr_tasks = c.varint();
  for (uint64_t i = 0; c.ok && i < nr_tasks && c.p != c.end; ++i) {
    RecordedTask t;
    t.tid = static_cast<uint32_t>(c.varint());
    t.pid = static_cast<uint32_t>(c.varint());
    t.comm = c.string();
    info.tasks.push_back(std::move(t));
  }
  const uint64_t nr_cond = c.varint();
  for (uint64_t i = 0; c.ok && i < nr_cond && c.p != c.end; ++i) {
    std::string k = c.string();
    std::string v = c.string();
    info.conditions.emplace_back(std::move(k), std::move(v));
  }
  if (!c.ok || info.files.size() != nr_files || info.tasks.size() != nr_tasks ||
      info.conditions.size() != nr_cond || c.p != c.end) {
    return bad("damaged metadata (byte " + std::to_string(meta_off + (c.p - meta.data())) + ")");
  }
  if (!info.complete && !allow_incomplete) {
    return bad(
        "the recording is incomplete (the program or the recorder stopped early); "
        "replay it anyway with --set access.allow_incomplete=true");
  }
  if (std::fseek(r->in_, static_cast<long>(events_off), SEEK_SET) != 0) {
    return Status::IoError(path + ": cannot seek");
  }
  r->file_pos_ = events_off;
  r->events_end_ = events_off + events_bytes;
  // A small recording needs no more buffer than its events.
  r->chunk_ = static_cast<size_t>(std::min<uint64_t>(kBufferBytes, events_bytes));
  r->buf_.resize(r->chunk_ + kMaxEventBytes);
  return r;
}

RecordingReader::~RecordingReader() {
  if (in_) std::fclose(in_);
}

bool RecordingReader::refill() {
  // Keep the undecoded tail, read after it; zeros after the last byte read,
  // so a decoder that runs past it stops at once (next() checks where it ended).
  const size_t left = end_ - pos_;
  std::memmove(buf_.data(), buf_.data() + pos_, left);
  pos_ = 0;
  end_ = left;
  const uint64_t want = std::min<uint64_t>(chunk_ - left, events_end_ - file_pos_);
  size_t got = 0;
  if (want > 0) {
    got = std::fread(buf_.data() + left, 1, want, in_);
    end_ += got;
    file_pos_ += got;
  }
  std::memset(buf_.data() + end_, 0, kMaxEventBytes);
  if (got != want) {
    status_ = Status::IoError(path_ + ": read error after byte " + std::to_string(file_pos_));
    return false;
  }
  return end_ > pos_;
}

namespace {

// A varint with no bound check: the buffer holds a whole event's worth of
// bytes (zeros past its end), and the caller checks where decoding ended.
// Longer than 10 bytes is malformed: *bad is set.
inline uint64_t get_varint(const uint8_t*& p, bool* bad) {
  uint64_t v = *p++;
  if (v < 0x80) return v;
  v &= 0x7f;
  for (unsigned shift = 7; shift < 70; shift += 7) {
    const uint64_t b = *p++;
    v |= (b & 0x7f) << shift;
    if (b < 0x80) return v;
  }
  *bad = true;
  return 0;
}

constexpr std::array<bool, 16> valid_ops() {
  std::array<bool, 16> ok{};
  for (const auto& n : enum_names(EventOp{})) ok[static_cast<uint8_t>(n.value)] = true;
  return ok;
}
constexpr std::array<bool, 16> kValidOp = valid_ops();

}  // namespace

size_t RecordingReader::next(std::span<Event> out) {
  size_t n = 0;
  const uint32_t nr_files = static_cast<uint32_t>(info_.files.size());
  const uint32_t nr_tasks = static_cast<uint32_t>(info_.tasks.size());
  while (n < out.size() && status_.ok()) {
    if (end_ - pos_ < kMaxEventBytes && file_pos_ < events_end_ && !refill()) break;
    if (pos_ == end_) {
      if (decoded_ != info_.nr_events) {
        status_ = error("truncated: " + std::to_string(decoded_) + " of " +
                        std::to_string(info_.nr_events) + " events");
      }
      break;
    }
    const uint8_t* const start = buf_.data() + pos_;
    const uint8_t* p = start;
    bool bad = false;
    const uint8_t head = *p++;
    const uint8_t op = head & kOpMask;
    if ((head & kBitsReserved) || !kValidOp[op]) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", head);
      status_ = error(std::string("not an event (") + hex + ")");
      break;
    }
    Event& e = out[n];
    e = Event{};
    e.op = static_cast<EventOp>(op);
    e.time_ns = prev_time_ + get_varint(p, &bad);
    e.task = (head & kBitSameTask) ? prev_task_ : static_cast<uint32_t>(get_varint(p, &bad));
    const bool a = head & kBitA;
    // A number that names something must name one the recording has by now.
    const char* missing = nullptr;
    uint64_t missing_id = 0, missing_bound = 0;
    auto check = [&](uint64_t id, uint64_t bound, const char* what) {
      if (id >= bound && !missing) {
        missing = what;
        missing_id = id;
        missing_bound = bound;
      }
      return static_cast<uint32_t>(id);
    };
    switch (e.op) {
      case EventOp::kTouch:
        e.write = a;
        e.map = (head & kBitSameMap) ? touch_map_ : check(get_varint(p, &bad), nr_maps_, "mapping");
        e.offset = touch_page_ + 1 + static_cast<uint64_t>(unzigzag(get_varint(p, &bad)));
        touch_page_ = e.offset;
        touch_map_ = e.map;
        break;
      case EventOp::kRead:
        e.handle = check(get_varint(p, &bad), nr_handles_, "open file");
        e.offset = read_end_ + static_cast<uint64_t>(unzigzag(get_varint(p, &bad)));
        e.length = get_varint(p, &bad);
        read_end_ = e.offset + e.length;
        break;
      case EventOp::kTaskStart: {
        e.thread = a;
        const uint64_t parent = get_varint(p, &bad);
        e.arg = parent == 0 ? kNone32 : check(parent - 1, nr_tasks, "parent task");
        break;
      }
      case EventOp::kTaskExit:
        break;
      case EventOp::kOpen:
        e.write = a;
        e.file = check(get_varint(p, &bad), nr_files, "file");
        e.handle = nr_handles_++;
        break;
      case EventOp::kClose:
        e.handle = check(get_varint(p, &bad), nr_handles_, "open file");
        break;
      case EventOp::kMmap: {
        const uint64_t h = get_varint(p, &bad);
        e.handle = h == 0 ? kNone32 : check(h - 1, nr_handles_, "open file");
        e.offset = get_varint(p, &bad);
        e.length = get_varint(p, &bad);
        e.arg = static_cast<uint32_t>(get_varint(p, &bad));
        e.map = nr_maps_++;
        break;
      }
      case EventOp::kMunmap:
      case EventOp::kMadvise:
        e.map = check(get_varint(p, &bad), nr_maps_, "mapping");
        e.offset = get_varint(p, &bad);
        e.length = get_varint(p, &bad);
        if (e.op == EventOp::kMadvise) e.arg = static_cast<uint32_t>(get_varint(p, &bad));
        break;
      case EventOp::kFadvise:
        e.handle = check(get_varint(p, &bad), nr_handles_, "open file");
        e.offset = get_varint(p, &bad);
        e.length = get_varint(p, &bad);
        e.arg = static_cast<uint32_t>(get_varint(p, &bad));
        break;
      case EventOp::kAnon:
        e.length = get_varint(p, &bad);
        break;
    }
    if (bad || p > buf_.data() + end_) {
      status_ = error("an event ends in the middle of a number");
      break;
    }
    check(e.task, nr_tasks, "task");
    if (missing) {
      status_ = error("event " + std::to_string(decoded_) + " names " + missing + " " +
                      std::to_string(missing_id) + ", the recording has " +
                      std::to_string(missing_bound));
      break;
    }
    pos_ += static_cast<size_t>(p - start);
    prev_time_ = e.time_ns;
    prev_task_ = e.task;
    ++decoded_;
    ++n;
  }
  return n;
}

bool is_recording(std::istream& in) {
  char head[sizeof kMagic] = {};
  in.read(head, sizeof head);
  const bool yes = in.gcount() == static_cast<std::streamsize>(sizeof head) &&
                   std::memcmp(head, kMagic, sizeof head) == 0;
  in.clear();
  in.seekg(0);
  return yes;
}

Result<Recording> read_recording(const std::string& path, bool allow_incomplete) {
  auto r = RecordingReader::open(path, allow_incomplete);
  if (!r.ok()) return r.status();
  Recording rec;
  rec.info = (*r)->info();
  std::vector<Event> batch(1024);
  while (const size_t n = (*r)->next(batch))
    rec.events.insert(rec.events.end(), batch.begin(), batch.begin() + n);
  FAULTLINE_RETURN_IF_ERROR((*r)->status());
  return rec;
}

std::string format_event(const RecordingInfo& info, const Event& e) {
  char t[32];
  std::snprintf(t, sizeof t, "%llu.%09llu", static_cast<unsigned long long>(e.time_ns / 1000000000),
                static_cast<unsigned long long>(e.time_ns % 1000000000));
  std::string s = std::string(t) + " task " + std::to_string(e.task);
  if (e.task < info.tasks.size()) s += " (tid " + std::to_string(info.tasks[e.task].tid) + ")";
  s += " " + std::string(enum_name(e.op));
  auto kv = [&s](const char* k, uint64_t v) {
    s += std::string(" ") + k + "=" + std::to_string(v);
  };
  switch (e.op) {
    case EventOp::kTaskStart:
      s += e.thread ? " thread" : " process";
      if (e.arg != kNone32) kv("parent", e.arg);
      break;
    case EventOp::kTaskExit:
      break;
    case EventOp::kOpen:
      kv("handle", e.handle);
      kv("file", e.file);
      if (e.file < info.files.size()) s += " path=" + info.files[e.file].path;
      if (e.write) s += " write";
      break;
    case EventOp::kClose:
      kv("handle", e.handle);
      break;
    case EventOp::kMmap:
      kv("map", e.map);
      if (e.handle == kNone32) {
        s += " anonymous";
      } else {
        kv("handle", e.handle);
      }
      kv("pgoff", e.offset);
      kv("pages", e.length);
      kv("prot", e.arg & 0xff);
      s += (e.arg & kMapShared) ? " shared" : " private";
      if (map_align_pages(e.arg)) kv("align", map_align_pages(e.arg));
      break;
    case EventOp::kMunmap:
      kv("map", e.map);
      kv("page", e.offset);
      kv("pages", e.length);
      break;
    case EventOp::kMadvise:
      kv("map", e.map);
      kv("page", e.offset);
      kv("pages", e.length);
      kv("advice", e.arg);
      break;
    case EventOp::kFadvise:
      kv("handle", e.handle);
      kv("offset", e.offset);
      kv("len", e.length);
      kv("advice", e.arg);
      break;
    case EventOp::kRead:
      kv("handle", e.handle);
      kv("offset", e.offset);
      kv("len", e.length);
      break;
    case EventOp::kTouch:
      kv("map", e.map);
      kv("page", e.offset);
      if (e.write) s += " write";
      break;
    case EventOp::kAnon:
      kv("pages", e.length);
      break;
  }
  return s;
}

}  // namespace faultline::workload
