// Helpers shared by the sweep tests: scratch directories, files, CSV rows.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>
#include <sys/wait.h>

#include "text_file.h"

namespace nvmesim::test {

// A fresh directory under /tmp, removed at the end of the test.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    char tmpl[] = "/tmp/nvsweep.XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

// One CSV record (RFC 4180 quotes) split into fields.
inline std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> f(1);
  bool quoted = false;
  for (size_t k = 0; k < line.size(); ++k) {
    const char c = line[k];
    if (quoted) {
      if (c == '"' && k + 1 < line.size() && line[k + 1] == '"') f.back() += '"', ++k;
      else if (c == '"') quoted = false;
      else f.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      f.emplace_back();
    } else {
      f.back() += c;
    }
  }
  return f;
}

// results.csv as header + rows, each row a column -> value lookup.
struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  explicit Csv(const std::string& text) {
    const auto lines = text_lines(text);
    if (lines.empty()) return;
    header = csv_split(lines[0]);
    for (size_t k = 1; k < lines.size(); ++k) rows.push_back(csv_split(lines[k]));
  }
  std::string at(size_t row, const std::string& column) const {
    for (size_t c = 0; c < header.size(); ++c)
      if (header[c] == column) return c < rows.at(row).size() ? rows.at(row)[c] : "";
    throw std::runtime_error("no column " + column);
  }
};

// Runs a shell command, returns its exit status; output (both streams) in `out`.
inline int shell(const std::string& cmd, std::string& out) {
  out.clear();
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace nvmesim::test
