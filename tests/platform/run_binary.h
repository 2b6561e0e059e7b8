// Helpers for tests that run the nvmesim executable as a user would.
#pragma once

#include <array>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <sys/wait.h>

#include <catch2/catch.hpp>

namespace nvmesim::test {

struct ProcessResult {
  int exit_code = -1;
  std::string out;  // standard output (standard error goes to err)
  std::string err;
};

// AddressSanitizer's notice when a SystemC thread (its own stack) unwinds an
// exception: three lines on standard error that are not the program's. Real
// sanitizer reports are kept.
inline std::string without_asan_stack_notices(const std::string& err) {
  std::string kept, line;
  for (size_t at = 0; at < err.size();) {
    const size_t end = err.find('\n', at);
    line = err.substr(at, end == std::string::npos ? std::string::npos : end - at + 1);
    at = end == std::string::npos ? err.size() : end + 1;
    if ((line.rfind("==", 0) == 0 && line.find("__asan_handle_no_return") != std::string::npos) ||
        line.rfind("False positive error reports may follow", 0) == 0 ||
        line.rfind("For details see https://github.com/google/sanitizers/issues/189", 0) == 0)
      continue;
    kept += line;
  }
  return kept;
}

// Runs `nvmesim <args>` through the shell; args are passed as written.
inline ProcessResult run_nvmesim(const std::string& args) {
  static int counter = 0;
  const std::string err_file =
      "/tmp/nvmesim_test_err_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const std::string cmd = std::string(NVMESIM_BINARY) + " " + args + " 2>" + err_file;
  ProcessResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("popen failed");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (FILE* e = std::fopen(err_file.c_str(), "r")) {
    while ((n = std::fread(buf.data(), 1, buf.size(), e)) > 0) r.err.append(buf.data(), n);
    std::fclose(e);
  }
  std::remove(err_file.c_str());
  r.err = without_asan_stack_notices(r.err);
  return r;
}

// A refused command line: exit code 2, exactly `error_line` on standard
// error (one line), nothing on standard output.
inline void check_refused(const std::string& args, const std::string& error_line) {
  INFO("nvmesim " << args);
  const ProcessResult r = run_nvmesim(args);
  CHECK(r.exit_code == 2);
  CHECK(r.err == error_line + "\n");
  CHECK(r.out.empty());
}

// The number after the first occurrence of "key": in a JSON text.
inline double json_number(const std::string& json, const std::string& key) {
  const std::string k = "\"" + key + "\": ";
  const size_t at = json.find(k);
  if (at == std::string::npos) throw std::runtime_error("no key " + key);
  return std::stod(json.substr(at + k.size()));
}

}  // namespace nvmesim::test
