// Reading the small text files a user names (--config, --job, --sweep-file)
// with bounds: a file longer than kInputFileMax bytes or with a line longer
// than kInputLineMax bytes is refused (reading /dev/zero must not grow
// without end), a directory is named as one, and a UTF-8 byte order mark at
// the start is skipped (editors on Windows write one).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace nvmesim::platform {

constexpr size_t kInputFileMax = size_t(1) << 20;  // 1 MiB: far above any real config
constexpr size_t kInputLineMax = 4096;

// The file's text without a leading BOM. Throws InputFileError whose what()
// is "<what>: <detail>" with `what` as the caller names the file
// (e.g. "config file x.ini"), details: "cannot open (reason)",
// "is a directory", "longer than 1048576 bytes"; a long line gives
// "<what> line 3: longer than 4096 bytes".
struct InputFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
std::string read_input_file(const std::string& path, const std::string& what);

// The same, its error rethrown as the caller's error type (ConfigError, ...).
template <class Error>
std::string read_input_file_as(const std::string& path, const std::string& what) {
  try {
    return read_input_file(path, what);
  } catch (const InputFileError& e) {
    throw Error(e.what());
  }
}

// The same checks for text already read (a stream given to a parser).
// Throws InputFileError for a line longer than kInputLineMax.
std::string strip_bom(const std::string& text);
void check_line_lengths(const std::string& text, const std::string& what);

}  // namespace nvmesim::platform
