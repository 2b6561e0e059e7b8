// Sweep results: one record per point, written as DIR/results.jsonl (one
// line per point) and DIR/results.csv (parameters, seed, status, error,
// then every metric of the run's JSON flattened with dotted names), both in
// grid order. DIR/sweep.json records the grid so --merge can rebuild it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nvmesim/platform/sweep/sweep_grid.h"
#include "nvmesim/platform/sweep/sweep_json.h"

namespace nvmesim::platform::sweep {

struct Record {
  PointValues point;
  uint64_t seed = 0;
  std::string status;  // "ok", "failed", or "missing" (merge: no result found)
  std::string error;   // failed: the run's first non-empty stderr line, or "exit code N"
  Json results;        // the run's JSON output, or null
};

// The record of one finished run: ok iff it exited 0 and printed a JSON
// object. `exit_code` is the shell's $? (128+N when killed by signal N).
Record make_record(const Point& point, const std::string& out, const std::string& err, int exit_code);

// {"point":{"iodepth":"1",...},"seed":N,"status":"ok","error":"","results":{...}}
std::string jsonl_line(const Record& record);
Record parse_jsonl_line(const std::string& line);  // throws JsonError
// Every parseable line of a JSONL file (a line cut short by an interrupted
// sweep is skipped); none if the file does not exist. Throws
// InputFileError (platform/config/input_file.h) when the path is not a
// regular file (a FIFO would block) or holds more than kSweepFileMax bytes.
constexpr size_t kSweepFileMax = size_t(1) << 30;  // 1 GiB
std::vector<Record> read_jsonl(const std::string& path);

std::string csv_text(const std::vector<std::string>& axis_names, const std::vector<Record>& records);
std::string csv_field(const std::string& s);  // RFC 4180 quoting when needed

// Writes DIR/results.csv and DIR/results.jsonl (each via a temporary file
// and rename). Throws std::runtime_error on an I/O error.
void write_results(const std::string& dir, const std::vector<std::string>& axis_names,
                   const std::vector<Record>& records);

// DIR/sweep.json: the sweep seed, fixed options and axes.
struct Manifest {
  uint64_t seed = 1;
  std::vector<std::string> fixed;
  std::vector<Axis> axes;
};
void write_manifest(const std::string& dir, const Manifest& manifest);
// False if DIR/sweep.json does not exist; UsageError naming the file when it
// is not a regular file or not a manifest.
bool read_manifest(const std::string& dir, Manifest& manifest);

// Small file helpers shared by the sweep code.
bool read_file(const std::string& path, std::string& text);  // false if absent, not regular or too long
void write_file_atomic(const std::string& path, const std::string& text);  // throws on error
void make_dirs(const std::string& path);                                    // mkdir -p; throws
std::string first_line(const std::string& text);  // first non-empty line, trimmed

}  // namespace nvmesim::platform::sweep
