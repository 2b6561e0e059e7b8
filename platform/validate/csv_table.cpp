#include "platform/validate/csv_table.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "platform/config/input_file.h"
#include "platform/config/params.h"
#include "platform/config/user_text.h"

namespace nvmesim::platform {

namespace {

constexpr size_t kMaxLine = 4096;  // a row of these tables is ~300 characters
constexpr size_t kMaxRows = 100000;
constexpr size_t kMaxInputBytes = size_t(64) << 20;  // 64 MiB: kMaxRows rows of ~300 characters, twice over

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
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

void read_csv_table(const std::string& path, const std::vector<const char*>& required,
                    const std::vector<const char*>& optional, const std::function<void(const CsvCells&)>& each) {
  // Bounded, regular files only (a FIFO would block): kMaxRows lines of kMaxLine.
  InputLimits limits;
  limits.max_bytes = kMaxInputBytes;
  limits.check_lines = false;  // the lines are checked below, with their own message
  std::istringstream in(read_input_file_as<ConfigError>(path, path, limits));
  std::string header;
  if (!std::getline(in, header) || header.empty()) throw ConfigError(path + ": empty file, no header line");
  if (header.size() > kMaxLine) throw ConfigError(path + " line 1: longer than 4096 characters");
  if (header.back() == '\r') header.pop_back();
  std::map<std::string, size_t> columns;
  const std::vector<std::string> names = split(header);
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
    const std::vector<std::string> cells = split(text);
    each(CsvCells{path, line, columns, cells});
  }
  if (!rows) throw ConfigError(path + ": no rows after the header");
}

}  // namespace nvmesim::platform
