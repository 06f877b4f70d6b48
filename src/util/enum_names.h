// enum_names.h — one name table per enum, and everything else from it.
//
// A choice (file.fs, access.pattern, madvise advice, a tracepoint, ...) is
// an enum declared with its names in one list:
//
//   #define FAULTLINE_FS_TYPES(X) X(kExt4, "ext4") X(kXfs, "xfs") X(kTmpfs, "tmpfs")
//   FAULTLINE_NAMED_ENUM(FsType, FAULTLINE_FS_TYPES)
//
// which declares `enum class FsType : uint8_t` and its table enum_names(FsType),
// found by argument-dependent lookup. enum_name() prints a value, parse_enum()
// reads one, enum_choices() lists the names for a key's type and for the
// error that rejects a value. An enum whose numbers are an ABI (madvise(2)
// advice) gives them: FAULTLINE_NAMED_ENUM_VALUES with X(kRandom, 1, "random").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace faultline {

template <typename E>
struct EnumName {
  E value;
  std::string_view name;
};

// Entries may carry more columns after the name (a doc string, say): the
// macros below ignore them.
#define FAULTLINE_ENUM_ID_(id, name, ...) id,
#define FAULTLINE_ENUM_ID_VALUE_(id, value, name, ...) id = value,
#define FAULTLINE_ENUM_ENTRY_(id, name, ...) {Enum_::id, name},
#define FAULTLINE_ENUM_ENTRY_VALUE_(id, value, name, ...) {Enum_::id, name},

#define FAULTLINE_NAMED_ENUM(Name, LIST)                                              \
  enum class Name : uint8_t { LIST(FAULTLINE_ENUM_ID_) };                             \
  constexpr auto enum_names(Name) {                                                   \
    using Enum_ = Name;                                                               \
    return std::to_array<::faultline::EnumName<Name>>({LIST(FAULTLINE_ENUM_ENTRY_)}); \
  }

#define FAULTLINE_NAMED_ENUM_VALUES(Name, LIST)                                             \
  enum class Name : uint8_t { LIST(FAULTLINE_ENUM_ID_VALUE_) };                             \
  constexpr auto enum_names(Name) {                                                         \
    using Enum_ = Name;                                                                     \
    return std::to_array<::faultline::EnumName<Name>>({LIST(FAULTLINE_ENUM_ENTRY_VALUE_)}); \
  }

template <typename E>
concept NamedEnum = requires(E e) {
  enum_names(e);
};

template <NamedEnum E>
constexpr size_t enum_count() {
  return enum_names(E{}).size();
}

// The name of e; "?" for a value outside the table (a corrupted byte).
template <NamedEnum E>
constexpr std::string_view enum_name(E e) {
  for (const auto& n : enum_names(E{})) {
    if (n.value == e) return n.name;
  }
  return "?";
}

template <NamedEnum E>
constexpr std::optional<E> parse_enum(std::string_view name) {
  for (const auto& n : enum_names(E{})) {
    if (n.name == name) return n.value;
  }
  return std::nullopt;
}

// Every name in table order, joined by sep: "ext4|xfs|tmpfs".
template <NamedEnum E>
std::string enum_choices(std::string_view sep = "|") {
  std::string out;
  for (const auto& n : enum_names(E{})) {
    if (!out.empty()) out += sep;
    out += n.name;
  }
  return out;
}

// The position of e in its table (0-based), for per-value arrays.
template <NamedEnum E>
constexpr size_t enum_index(E e) {
  const auto names = enum_names(E{});
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].value == e) return i;
  }
  return names.size();
}

}  // namespace faultline
