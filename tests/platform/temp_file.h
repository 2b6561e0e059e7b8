// A temporary file with given content, removed when the test ends.
#pragma once

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

namespace nvmesim::test {

struct TempFile {
  std::string path;
  explicit TempFile(const std::string& content) {
    char name[] = "/tmp/nvmesim_test_XXXXXX";
    const int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    close(fd);
    path = name;
    std::ofstream(path) << content;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

}  // namespace nvmesim::test
