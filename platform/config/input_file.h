// Reading the text files a user names (--config, --job and its includes,
// --sweep-file, a timeline-html input, validate's CSV, a sweep's own files)
// with bounds: only a regular file is read (a FIFO, a device, a socket is
// refused by name: /dev/zero would grow without end and a FIFO with no
// writer would block, deaf to signals); it is opened non-blocking, so opening
// never waits; a file longer than its limit (kInputFileMax bytes unless the
// caller gives another) or with a line longer than kInputLineMax bytes is
// refused; a directory is named as one; a signal (SIGINT, SIGTERM) stops
// the read ("interrupted by SIGTERM"); and a UTF-8 byte order mark at the
// start is skipped (editors on Windows write one).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace nvmesim::platform {

constexpr size_t kInputFileMax = size_t(1) << 20;  // 1 MiB: far above any real config
constexpr size_t kInputLineMax = 4096;

// How much a caller accepts: bytes at most, and whether lines are bounded
// (JSON written on one line is not a text of lines).
struct InputLimits {
  size_t max_bytes = kInputFileMax;
  bool check_lines = true;
};

// The file's text without a leading BOM. Throws InputFileError whose what()
// is "<what>: <detail>" with `what` as the caller names the file
// (e.g. "config file x.ini"), details: "cannot open (reason)",
// "is a directory", "is a FIFO, not a regular file" (also "a character
// device", "a block device", "a socket"), "longer than 1048576 bytes",
// "interrupted by SIGTERM"; a long line gives
// "<what> line 3: longer than 4096 bytes".
struct InputFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
std::string read_input_file(const std::string& path, const std::string& what, const InputLimits& limits = {});
// The same, but a file that does not exist gives false (and no text).
bool read_input_file_if_exists(const std::string& path, const std::string& what, std::string& text,
                               const InputLimits& limits = {});
// "" for a regular file or a path that does not exist, else the reason it
// cannot be an input or an output file ("is a FIFO, not a regular file").
std::string not_regular_reason(const std::string& path);

// The same, its error rethrown as the caller's error type (ConfigError, ...).
template <class Error>
std::string read_input_file_as(const std::string& path, const std::string& what, const InputLimits& limits = {}) {
  try {
    return read_input_file(path, what, limits);
  } catch (const InputFileError& e) {
    throw Error(e.what());
  }
}

// The same checks for text already read (a stream given to a parser).
// Throws InputFileError for a line longer than kInputLineMax.
std::string strip_bom(const std::string& text);
void check_line_lengths(const std::string& text, const std::string& what);

}  // namespace nvmesim::platform
