// Output files that appear whole or not at all.
//
// Each output (--output, --vcd, --timeline) is written to a temporary file
// in the destination's folder and renamed over the destination only when the
// run finished writing it (rename(2) is atomic within one file system). A
// refused or failed run leaves an existing file as it was, and never a
// truncated one.
#pragma once

#include <string>
#include <vector>

namespace nvmesim::platform {

class PendingFile {
 public:
  PendingFile() = default;
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  ~PendingFile();  // removes the temporary file unless committed

  // Creates the temporary file beside `path`, with the replaced file's mode
  // (and owner when allowed), else the mode a new file gets under the umask;
  // beside the file a symbolic link names, which stays a link (a dangling
  // one too: the file it names is created). A file the user may not write
  // is refused ("Permission denied"), as open(2) would. A path that is not
  // a regular file (/dev/null, /dev/stdout, a FIFO) is written in place.
  // Returns "" or the reason (strerror text).
  std::string create(const std::string& path);
  const std::string& temp_path() const { return temp_; }
  const std::string& path() const { return path_; }  // the file replaced
  // Renames the temporary file to the destination. "" or the reason.
  std::string commit();

 private:
  std::string path_, temp_;
  bool committed_ = false;
  bool direct_ = false;  // not a regular file: temp_ is the path itself
};

// Why `path` cannot be written as an output, checked before a run: "" when
// it can be tried, else "is a directory" or the reason its folder cannot
// take a new file (strerror text: "No such file or directory", "Not a
// directory", "Permission denied"). A special file (/dev/null, a FIFO) is
// written in place and passes.
std::string output_path_problem(const std::string& path);

// Two of the named outputs that are one file: the same name spelled twice
// (./a.vcd and a.vcd, dir/../a.vcd), a symbolic or hard link to the same
// file. `outputs` holds (option, file name) pairs, empty names and
// character devices (/dev/null) skipped.
// Returns "" or the one-line error naming both options.
std::string same_output_files(const std::vector<std::pair<std::string, std::string>>& outputs);

// The same for every file a command names: an output that is one of the
// inputs (it would be replaced by the results), or two outputs that are one
// file. Implicit outputs count (the GTKWave save file beside --vcd, fio's
// log files): their `option` says whose they are ("the GTKWave save file of
// --vcd"). Inputs and outputs are (option, file name) pairs; empty names
// are skipped, and so are character devices among the outputs (/dev/null).
// Returns "" or the one-line error naming both.
using NamedFiles = std::vector<std::pair<std::string, std::string>>;
std::string clashing_files(const NamedFiles& inputs, const NamedFiles& outputs);

}  // namespace nvmesim::platform
