#include "nvmesim/platform/validate/csv_table.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "nvmesim/platform/config/input_file.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/user_text.h"

namespace nvmesim::platform {

namespace {

constexpr size_t kMaxLine = 4096;  // a row of these tables is ~300 characters
constexpr size_t kMaxRows = 100000;
constexpr size_t kMaxInputBytes = size_t(64) << 20;  // 64 MiB: kMaxRows rows of ~300 characters, twice over

// Cells split at commas; a cell in double quotes may hold commas, and ""
// inside it stands for one quote (RFC 4180). False when a quote is left open.
bool split(const std::string& line, std::vector<std::string>& cells) {
  cells.clear();
  std::string cell;
  bool quoted_cell = false, in_quotes = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_quotes) {
      if (c != '"')
        cell += c;
      else if (i + 1 < line.size() && line[i + 1] == '"')
        cell += line[++i];
      else
        in_quotes = false;
    } else if (c == ',') {
      cells.push_back(cell);
      cell.clear();
      quoted_cell = false;
    } else if (c == '"' && cell.empty() && !quoted_cell) {
      in_quotes = quoted_cell = true;
    } else {
      cell += c;
    }
  }
  cells.push_back(cell);
  return !in_quotes;
}

// Bounded, regular files only (a FIFO would block): kMaxRows lines of kMaxLine.
std::istringstream open_table(const std::string& path) {
  InputLimits limits;
  limits.max_bytes = kMaxInputBytes;
  limits.check_lines = false;  // the lines are checked below, with their own message
  return std::istringstream(read_input_file_as<ConfigError>(path, path, limits));
}

std::vector<std::string> header_names(const std::string& path, std::istream& in) {
  std::string header;
  if (!std::getline(in, header) || header.empty()) throw ConfigError(path + ": empty file, no header line");
  if (header.size() > kMaxLine) throw ConfigError(path + " line 1: longer than 4096 characters");
  if (header.back() == '\r') header.pop_back();
  std::vector<std::string> names;
  if (!split(header, names)) throw ConfigError(path + " line 1: a quoted cell is not closed");
  // A column named twice would be read from its first place only.
  for (size_t i = 0; i < names.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (names[i] == names[j] && !names[i].empty())
        throw ConfigError(path + " line 1, column " + std::to_string(i + 1) + " (" + names[i] +
                          "): the column is named twice (also column " + std::to_string(j + 1) + ")");
  return names;
}

}  // namespace

void CsvCells::fail(const std::string& column, const std::string& what) const {
  throw ConfigError(file + " line " + std::to_string(line) + ": column " + column + ": " + what);
}

void CsvCells::fail_line(const std::string& what) const {
  throw ConfigError(file + " line " + std::to_string(line) + ": " + what);
}

const std::string& CsvCells::cell(const std::string& column) const {
  const size_t i = columns.at(column);
  static const std::string empty;
  return i < cells.size() ? cells[i] : empty;
}

double CsvCells::number(const std::string& column, bool required) const {
  const std::string& t = cell(column);
  if (t.empty()) {
    if (required) fail(column, "is empty");
    return std::nan("");
  }
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || errno || !std::isfinite(v) || v < 0)
    fail(column, quoted(t) + " is not a non-negative number");
  return v;
}

bool CsvCells::on_off(const std::string& column) const {
  const std::string& t = cell(column);
  if (t == "on") return true;
  if (t == "off") return false;
  fail(column, quoted(t) + " is not one of on, off");
}

std::vector<std::string> read_csv_header(const std::string& path) {
  std::istringstream in = open_table(path);
  return header_names(path, in);
}

void read_csv_table(const std::string& path, const std::vector<const char*>& required,
                    const std::vector<const char*>& optional, const std::function<void(const CsvCells&)>& each) {
  std::istringstream in = open_table(path);
  const std::vector<std::string> names = header_names(path, in);
  std::map<std::string, size_t> columns;
  for (size_t i = 0; i < names.size(); ++i) columns.emplace(names[i], i);
  for (const char* c : required)
    if (!columns.count(c)) throw ConfigError(path + " line 1: no column '" + c + "'");
  const size_t missing = names.size();
  for (const char* c : optional) columns.emplace(c, missing);  // absent: always empty

  std::string text;
  unsigned line = 1;
  size_t rows = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.size() > kMaxLine)
      throw ConfigError(path + " line " + std::to_string(line) + ": longer than 4096 characters");
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.empty()) continue;
    if (rows++ == kMaxRows) throw ConfigError(path + ": more than 100000 rows");
    std::vector<std::string> cells;
    if (!split(text, cells))
      throw ConfigError(path + " line " + std::to_string(line) + ": a quoted cell is not closed");
    each(CsvCells{path, line, columns, cells});
  }
  if (!rows) throw ConfigError(path + ": no rows after the header");
}

RunColumns read_run_columns(const CsvCells& row) {
  RunColumns r;
  r.rw = row.cell("rw");
  if (r.rw != "read" && r.rw != "randread" && r.rw != "write" && r.rw != "randwrite")
    row.fail("rw", quoted(r.rw) + " is not one of read, randread, write, randwrite");
  const double bs = row.number("bs", true), depth = row.number("iodepth", true), jobs = row.number("numjobs", true);
  if (bs < 512 || bs != std::floor(bs) || std::fmod(bs, 512) != 0) row.fail("bs", "must be a multiple of 512 bytes");
  if (depth < 1 || depth > 4095 || depth != std::floor(depth)) row.fail("iodepth", "must be 1..4095");
  if (jobs < 1 || jobs > 64 || jobs != std::floor(jobs)) row.fail("numjobs", "must be 1..64");
  r.bs = uint64_t(bs);
  r.iodepth = unsigned(depth);
  r.numjobs = unsigned(jobs);
  r.dbbuf = row.on_off("dbbuf");
  r.ioeventfd = row.on_off("ioeventfd");
  return r;
}

}  // namespace nvmesim::platform
