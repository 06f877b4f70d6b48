// fuzz_input.h — what the fuzz targets share: the input written to a file
// of the process's own temporary directory (the parsers under test read
// paths, as the CLI hands them paths), and the input split in parts. The
// directory is on /dev/shm where there is one: on a disk file system each
// rewrite of a file waits for the writeback of its last version (ext4
// flushes a file truncated on open), which costs more than the parse.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "util/process.h"

namespace faultline::fuzz {

// A directory of this process, removed at exit.
inline const std::string& scratch_dir() {
  static const struct Dir {
    std::string path;
    Dir() {
      const std::filesystem::path base = ::access("/dev/shm", W_OK) == 0
                                             ? std::filesystem::path("/dev/shm")
                                             : std::filesystem::temp_directory_path();
      // A target stopped by a crash or a timeout leaves its directory.
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(base, ec)) {
        const pid_t pid = util::pid_from_name(e.path().filename().string(), "faultline-fuzz-");
        if (pid > 0 && !util::pid_alive(pid)) std::filesystem::remove_all(e.path(), ec);
      }
      path = (base / ("faultline-fuzz-" + std::to_string(::getpid()))).string();
      std::filesystem::create_directories(path);
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } dir;
  return dir.path;
}

// Writes bytes to scratch_dir()/name and returns the path.
inline std::string write_file(const std::string& name, std::string_view bytes) {
  const std::string path = scratch_dir() + "/" + name;
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    if (!bytes.empty()) std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  return path;
}

// The input split at each line "--" (the parts of one input).
inline std::vector<std::string> split_parts(std::string_view in) {
  std::vector<std::string> out(1);
  size_t pos = 0;
  while (pos <= in.size()) {
    size_t eol = in.find('\n', pos);
    if (eol == std::string_view::npos) eol = in.size();
    const std::string_view line = in.substr(pos, eol - pos);
    if (line == "--") {
      out.emplace_back();
    } else {
      out.back().append(line);
      if (eol < in.size()) out.back().push_back('\n');
    }
    pos = eol + 1;
  }
  return out;
}

// The lines of s, without their '\n'.
inline std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t eol = s.find('\n', pos);
    if (eol == std::string::npos) eol = s.size();
    out.push_back(s.substr(pos, eol - pos));
    pos = eol + 1;
  }
  return out;
}

}  // namespace faultline::fuzz
