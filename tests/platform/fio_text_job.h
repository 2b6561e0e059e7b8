// A fio job file's text resolved as `--job` would (platform/fio/fio_job.h),
// and the one-line error it is refused with, for the fio option tests.
#pragma once

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/fio/fio_job.h"

namespace nvmesim::test {

inline platform::FioJobs resolve_fio_text(const std::string& text,
                                          std::vector<std::pair<std::string, std::string>> cli = {}) {
  std::istringstream in(text);
  return platform::resolve_fio_jobs(platform::parse_fio_job_file(in, "t.fio"), platform::Config(), cli, false);
}

// The ConfigError's message, or "(no error)".
inline std::string fio_text_error(const std::string& text) {
  try {
    resolve_fio_text(text);
  } catch (const platform::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace nvmesim::test
