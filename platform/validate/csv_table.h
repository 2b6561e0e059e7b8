// A small comma-separated table: the first line names the columns; a cell
// in double quotes may hold commas ("" is a quote inside it). Errors are one line naming the file, line and column; the
// readers of the reference (reference_csv.h) and of the measured wake-up
// timing (timing_csv.h) share it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace nvmesim::platform {

// One data line of the table.
struct CsvCells {
  const std::string& file;
  unsigned line;
  const std::map<std::string, size_t>& columns;
  const std::vector<std::string>& cells;

  [[noreturn]] void fail(const std::string& column, const std::string& what) const;
  [[noreturn]] void fail_line(const std::string& what) const;
  const std::string& cell(const std::string& column) const;  // empty when absent
  // A non-negative number; NaN for an empty cell unless it is required.
  double number(const std::string& column, bool required) const;
  bool on_off(const std::string& column) const;
};

// The run settings every table of measured runs has: fio's rw, bs, iodepth,
// numjobs and the device's dbbuf and ioeventfd, checked.
struct RunColumns {
  std::string rw;
  uint64_t bs = 0;
  unsigned iodepth = 0, numjobs = 0;
  bool dbbuf = false, ioeventfd = false;
};
RunColumns read_run_columns(const CsvCells& row);

// The column names of the table's first line. Throws ConfigError when the
// file cannot be read or has no header.
std::vector<std::string> read_csv_header(const std::string& path);


// Calls `each` for every non-empty data line. Throws ConfigError when the
// file cannot be read, is empty, lacks a required column, has a line longer
// than 4096 characters or more than 100000 lines, or holds no data line.
void read_csv_table(const std::string& path, const std::vector<const char*>& required,
                    const std::vector<const char*>& optional, const std::function<void(const CsvCells&)>& each);

}  // namespace nvmesim::platform
