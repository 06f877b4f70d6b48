// text.h — the few pieces every reader of other tools' text output needs:
// trimming, whitespace-separated fields, a tracepoint's named fields,
// whole-field numbers and "SECONDS.FRACTION" timestamps.
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>

namespace faultline::util {

// s without leading and trailing blanks (spaces, tabs, a CR of CRLF text).
inline std::string_view trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// The next field of s separated by spaces or tabs; s moves past it. Empty
// when s has no more fields.
inline std::string_view next_field(std::string_view* s) {
  const size_t b = s->find_first_not_of(" \t");
  if (b == std::string_view::npos) {
    *s = {};
    return {};
  }
  const size_t e = s->find_first_of(" \t", b);
  const std::string_view f = s->substr(b, e == std::string_view::npos ? e : e - b);
  *s = e == std::string_view::npos ? std::string_view{} : s->substr(e);
  return f;
}

// The value of the field `key` in a tracepoint's text ("key=VALUE" or
// "key VALUE", as the kernel's formats write them: "dev 253:0 ino 12
// ofs=4096"): the token after it, where key starts a token. Empty if s
// has no such field.
inline std::string_view field_value(std::string_view s, std::string_view key) {
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  for (size_t p = s.find(key); p != std::string_view::npos; p = s.find(key, p + 1)) {
    if (p > 0 && !blank(s[p - 1])) continue;
    size_t v = p + key.size();
    if (v >= s.size() || (s[v] != '=' && !blank(s[v]))) continue;
    while (v < s.size() && (s[v] == '=' || blank(s[v]))) ++v;
    size_t e = v;
    while (e < s.size() && !blank(s[e])) ++e;
    return s.substr(v, e - v);
  }
  return {};
}

// All of s as an unsigned number in base; false if s is empty, has anything
// else or overflows.
inline bool parse_number(std::string_view s, int base, uint64_t* out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, base);
  return ec == std::errc() && end == s.data() + s.size();
}

// All of s as a decimal or 0x-prefixed hexadecimal number.
inline bool parse_number(std::string_view s, uint64_t* out) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    return parse_number(s.substr(2), 16, out);
  }
  return parse_number(s, 10, out);
}

// "6146.970503" (seconds, a dot and up to nine digits of fraction) in
// nanoseconds; false if s is not such a time.
inline bool parse_seconds(std::string_view s, uint64_t* ns) {
  const size_t dot = s.find('.');
  if (dot == std::string_view::npos) return false;
  uint64_t sec = 0, frac = 0;
  const std::string_view f = s.substr(dot + 1);
  if (!parse_number(s.substr(0, dot), 10, &sec) || f.size() > 9 || !parse_number(f, 10, &frac)) {
    return false;
  }
  for (size_t i = f.size(); i < 9; ++i) frac *= 10;
  *ns = sec * 1000000000 + frac;
  return true;
}

}  // namespace faultline::util
