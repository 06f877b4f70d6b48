// trace.cc — a recorded access trace replayed page by page (see trace.h).
#include "workload/trace.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "util/text.h"

namespace faultline::workload {
namespace {

// The model's page size (mm::kPageShift; workload/ does not see mm/).
constexpr unsigned kPageShift = 12;

// One access of the trace: the pages [first, last] of the mapping it touches,
// and its bytes (length 0: a page index, no length given).
struct Extent {
  uint64_t first = 0;
  uint64_t last = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
};

using util::parse_number;
using util::trim;

// Splits one CSV row at commas outside double quotes; fields keep their quotes.
void split_csv(std::string_view line, std::vector<std::string_view>* out) {
  out->clear();
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') quoted = !quoted;
    if (line[i] == ',' && !quoted) {
      out->push_back(line.substr(start, i - start));
      start = i + 1;
    }
  }
  out->push_back(line.substr(start));
}

std::string_view unquote(std::string_view f) {
  f = trim(f);
  if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = trim(f.substr(1, f.size() - 2));
  return f;
}

std::string lower(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return o;
}

// Reads the accesses of one trace file in order, one line at a time. The
// counting pass and the replay each use one, so both see the same accesses.
class TraceReader {
 public:
  Status open(const AccessSpec& s) {
    path_ = s.trace;
    pages_ = s.pages;
    format_ = s.trace_format;
    std::error_code ec;
    if (std::filesystem::is_directory(path_, ec)) {
      return Status::InvalidArgument(path_ + ": is a directory, not a trace file (access.trace)");
    }
    in_.open(path_, std::ios::binary);
    if (!in_) return Status::NotFound(path_ + ": cannot open trace file (access.trace)");
    if (format_ == TraceFormat::kCsv) return read_csv_header();
    return Status::Ok();
  }

  // The next access; false at the end of the trace or at an error (status()).
  bool next(Extent* e) {
    while (status_.ok() && read_line()) {
      bool skip = false;
      status_ = parse_line(line_, e, &skip);
      if (!status_.ok()) return false;
      if (!skip) return true;
    }
    return false;
  }

  const Status& status() const { return status_; }
  const std::string& path() const { return path_; }

 private:
  // Reads the next line into line_ (without its end of line); false at EOF.
  bool read_line() {
    if (!std::getline(in_, buf_)) {
      if (in_.bad()) status_ = Status::IoError(path_ + ": read error");
      return false;
    }
    ++lineno_;
    line_ = buf_;
    if (!line_.empty() && line_.back() == '\r') line_.remove_suffix(1);
    if (lineno_ == 1 && line_.starts_with("\xEF\xBB\xBF")) line_.remove_prefix(3);  // UTF-8 BOM
    return true;
  }

  Status error(const std::string& what) const {
    return Status::InvalidArgument(path_ + ":" + std::to_string(lineno_) + ": " + what);
  }

  // The accessed pages of `len` bytes at byte `off` of the mapping.
  Status bytes(uint64_t off, uint64_t len, Extent* e) const {
    if (len == 0) return error("an access of length 0");
    const uint64_t map_bytes = pages_ << kPageShift;
    if (off >= map_bytes || len > map_bytes - off) {
      return error(std::to_string(len) + " bytes at offset " + std::to_string(off) +
                   " reach past the end of the mapping (" + std::to_string(map_bytes) + " bytes, " +
                   std::to_string(pages_) + " pages)");
    }
    e->first = off >> kPageShift;
    e->last = (off + len - 1) >> kPageShift;
    e->offset = off;
    e->length = len;
    return Status::Ok();
  }

  Status parse_line(std::string_view line, Extent* e, bool* skip) {
    if (format_ == TraceFormat::kCsv) {
      line = trim(line);
      *skip = line.empty() || line.front() == '#';
      return *skip ? Status::Ok() : parse_csv_row(line, e);
    }
    line = trim(line.substr(0, line.find('#')));
    *skip = line.empty();
    if (*skip) return Status::Ok();
    if (format_ == TraceFormat::kPages) {
      uint64_t page = 0;
      if (!parse_number(line, &page)) {
        return error("expected a page index, got '" + std::string(line) + "'");
      }
      if (page >= pages_) {
        return error("page " + std::to_string(page) + " is beyond the mapping (" +
                     std::to_string(pages_) + " pages)");
      }
      e->first = e->last = page;
      e->offset = page << kPageShift;
      e->length = 0;
      return Status::Ok();
    }
    // offsets: OFFSET[,LENGTH] or OFFSET LENGTH.
    std::string_view off_text = line, len_text;
    if (const size_t comma = line.find(','); comma != std::string_view::npos) {
      off_text = trim(line.substr(0, comma));
      len_text = trim(line.substr(comma + 1));
      if (len_text.empty()) off_text = {};  // "OFFSET," is malformed
    } else if (const size_t sp = line.find_first_of(" \t"); sp != std::string_view::npos) {
      off_text = line.substr(0, sp);
      len_text = trim(line.substr(sp));
    }
    uint64_t off = 0, len = 1;
    if (!parse_number(off_text, &off) || (!len_text.empty() && !parse_number(len_text, &len))) {
      return error("expected OFFSET[,LENGTH] or OFFSET LENGTH in bytes, got '" + std::string(line) +
                   "'");
    }
    return bytes(off, len, e);
  }

  // The first row that is not blank or a comment names the columns.
  Status read_csv_header() {
    while (read_line()) {
      const std::string_view line = trim(line_);
      if (line.empty() || line.front() == '#') continue;
      split_csv(line, &fields_);
      std::string names;
      for (size_t i = 0; i < fields_.size(); ++i) {
        const std::string name = lower(unquote(fields_[i]));
        if (name == "offset" && offset_col_ == kNone) offset_col_ = i;
        if (name == "length" && length_col_ == kNone) length_col_ = i;
        if (name == "size" && size_col_ == kNone) size_col_ = i;
        names += (names.empty() ? "'" : ", '") + name + "'";
      }
      if (length_col_ == kNone) length_col_ = size_col_;
      if (offset_col_ == kNone) {
        return error("the CSV header has no 'offset' column (columns: " + names + ")");
      }
      need_cols_ = std::max(offset_col_, length_col_ == kNone ? 0 : length_col_) + 1;
      return Status::Ok();
    }
    if (!status_.ok()) return status_;
    return Status::InvalidArgument(path_ + ": the trace has no accesses (no CSV header)");
  }

  Status parse_csv_row(std::string_view line, Extent* e) {
    split_csv(line, &fields_);
    if (fields_.size() < need_cols_) {
      return error("expected at least " + std::to_string(need_cols_) + " columns, got " +
                   std::to_string(fields_.size()));
    }
    uint64_t off = 0, len = 1;
    const std::string_view off_text = unquote(fields_[offset_col_]);
    if (!parse_number(off_text, &off)) {
      return error("offset: expected a byte offset, got '" + std::string(off_text) + "'");
    }
    if (length_col_ != kNone) {
      const std::string_view len_text = unquote(fields_[length_col_]);
      if (!parse_number(len_text, &len)) {
        return error("length: expected a byte count, got '" + std::string(len_text) + "'");
      }
    }
    return bytes(off, len, e);
  }

  static constexpr size_t kNone = static_cast<size_t>(-1);

  std::ifstream in_;
  std::string path_;
  TraceFormat format_ = TraceFormat::kPages;
  uint64_t pages_ = 0;     // pages of the mapping
  uint64_t lineno_ = 0;    // 1-based number of line_
  std::string buf_;        // the line read last
  std::string_view line_;  // buf_ without its end of line
  Status status_;          // why next() stopped early
  size_t offset_col_ = kNone, length_col_ = kNone, size_col_ = kNone, need_cols_ = 0;  // csv
  std::vector<std::string_view> fields_;                                               // csv
};

// The replay: pages of the trace's accesses in order, batch by batch; an
// access longer than the batch continues in the next one.
class TraceGenerator final : public Generator {
 public:
  explicit TraceGenerator(uint64_t total) : total_(total) {}
  Status open(const AccessSpec& s) { return reader_.open(s); }

  size_t next(std::span<uint64_t> out) override {
    size_t n = 0;
    while (n < out.size() && done_ < total_) {
      if (left_ == 0) {
        Extent e;
        if (!reader_.next(&e)) {
          // The counting pass saw more: the file changed under the replay.
          status_ = reader_.status().ok()
                        ? Status::IoError(reader_.path() + ": the trace ended after " +
                                          std::to_string(done_) + " of " + std::to_string(total_) +
                                          " accesses (changed while being replayed?)")
                        : reader_.status();
          total_ = done_;
          break;
        }
        cur_ = e.first;
        left_ = e.last - e.first + 1;
      }
      const size_t k =
          static_cast<size_t>(std::min<uint64_t>({left_, out.size() - n, total_ - done_}));
      for (size_t i = 0; i < k; ++i) out[n + i] = cur_ + i;
      n += k;
      cur_ += k;
      left_ -= k;
      done_ += k;
    }
    return n;
  }
  uint64_t total() const override { return total_; }
  Status status() const override { return status_; }

 private:
  TraceReader reader_;
  uint64_t total_;     // pages to replay (the counting pass's number)
  uint64_t done_ = 0;  // pages handed out
  uint64_t cur_ = 0;   // next page of the current access
  uint64_t left_ = 0;  // its pages not yet handed out
  Status status_;
};

}  // namespace

Result<std::vector<ByteRange>> read_trace_ranges(const AccessSpec& s) {
  if (s.trace.empty()) {
    return Status::InvalidArgument("access.trace: access.pattern=trace needs a trace file");
  }
  TraceReader reader;
  FAULTLINE_RETURN_IF_ERROR(reader.open(s));
  std::vector<ByteRange> out;
  Extent e;
  while ((s.count == 0 || out.size() < s.count) && reader.next(&e)) {
    out.push_back({e.offset, e.length});
  }
  if (!reader.status().ok()) return reader.status();
  if (out.empty()) return Status::InvalidArgument(s.trace + ": the trace has no accesses");
  return out;
}

Result<std::unique_ptr<Generator>> make_trace(const AccessSpec& s) {
  if (s.trace.empty()) {
    return Status::InvalidArgument("access.trace: access.pattern=trace needs a trace file");
  }
  // First pass: check the lines that will be replayed and count their pages.
  uint64_t total = 0;
  {
    TraceReader counter;
    FAULTLINE_RETURN_IF_ERROR(counter.open(s));
    Extent e;
    while ((s.count == 0 || total < s.count) && counter.next(&e)) total += e.last - e.first + 1;
    if (!counter.status().ok()) return counter.status();
  }
  if (total == 0) return Status::InvalidArgument(s.trace + ": the trace has no accesses");
  if (s.count) total = std::min(total, s.count);
  auto gen = std::make_unique<TraceGenerator>(total);
  FAULTLINE_RETURN_IF_ERROR(gen->open(s));
  return std::unique_ptr<Generator>(std::move(gen));
}

}  // namespace faultline::workload
