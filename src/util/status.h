// status.h — error values for the boundaries (config, traces, probe, CLI).
//
// The model itself never fails by Status: a fault returns an outcome. Status
// carries a message that names the key or file at fault, leveldb-style.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace faultline {

class Status {
 public:
  enum class Code {
    kOk,
    kInvalidArgument,
    kNotFound,
    kIoError,
    kPermission,
    kUnavailable,
    kInterrupted,
    kProgramFailed,  // a program faultline ran (recorded, probed) failed or was not found
    kInternal        // faultline's own state is inconsistent (model.invariants): a bug
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return {Code::kInvalidArgument, std::move(msg)};
  }
  static Status NotFound(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
  static Status IoError(std::string msg) { return {Code::kIoError, std::move(msg)}; }
  static Status Permission(std::string msg) { return {Code::kPermission, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {Code::kUnavailable, std::move(msg)}; }
  static Status Interrupted(std::string msg) { return {Code::kInterrupted, std::move(msg)}; }
  static Status ProgramFailed(std::string msg) { return {Code::kProgramFailed, std::move(msg)}; }
  static Status Internal(std::string msg) { return {Code::kInternal, std::move(msg)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return msg_; }

  // The same error with `context` in front of its message ("file.toml: "
  // + message), or `more` after it; the code is kept, so a failure of the
  // machine stays one however many layers name where it happened.
  Status with_context(const std::string& context) const& {
    return ok() ? *this : Status(code_, context + ": " + msg_);
  }
  Status with_suffix(const std::string& more) const& {
    return ok() ? *this : Status(code_, msg_ + more);
  }

 private:
  Status(Code c, std::string m) : code_(c), msg_(std::move(m)) {}
  Code code_ = Code::kOk;
  std::string msg_;
};

// A value or the Status explaining why there is none.
template <typename T>
class Result {
 public:
  Result(T v) : value_(std::move(v)) {}        // NOLINT: implicit by design
  Result(Status s) : status_(std::move(s)) {}  // NOLINT
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace faultline

#define FAULTLINE_RETURN_IF_ERROR(expr) \
  do {                                  \
    ::faultline::Status _st = (expr);   \
    if (!_st.ok()) return _st;          \
  } while (0)
