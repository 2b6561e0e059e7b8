// Starts nvmesim in the background as a user's shell would, in its own
// process group (a stray signal never reaches the test), its standard output
// and error in files: for tests that signal a run while it goes.
#pragma once

#include <fcntl.h>
#include <string>
#include <sys/types.h>
#include <unistd.h>
#include <vector>

namespace nvmesim::test {

// The child's pid (-1 if fork failed); the child exits 127 if exec fails.
inline pid_t spawn_nvmesim(const std::vector<std::string>& args, const std::string& out, const std::string& err) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::setpgid(0, 0);
  const int fo = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int fe = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(fo, 1);
  ::dup2(fe, 2);
  std::vector<char*> argv{const_cast<char*>(NVMESIM_BINARY)};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(argv[0], argv.data());
  ::_exit(127);
}

}  // namespace nvmesim::test
