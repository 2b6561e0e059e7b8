// A fresh directory for a test's files, removed when the test ends:
// NAME_TAG_PID under the system's temporary directory, with an optional
// subdirectory made in it.
#pragma once

#include <filesystem>
#include <string>
#include <unistd.h>

namespace nvmesim::test {

struct TempDir {
  std::filesystem::path path;
  TempDir(const std::string& name, const std::string& tag, const std::string& subdir = "") {
    namespace fs = std::filesystem;
    path = fs::temp_directory_path() / (name + (tag.empty() ? "" : "_" + tag) + "_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(subdir.empty() ? path : path / subdir);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

}  // namespace nvmesim::test
