#include "platform/validate/reference_csv.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "platform/config/params.h"
#include "platform/config/user_text.h"

namespace nvmesim::platform {

namespace {

constexpr size_t kMaxLine = 4096;       // a row of this CSV is ~300 characters
constexpr size_t kMaxRows = 100000;

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

struct Row {
  const std::string& file;
  unsigned line;
  const std::map<std::string, size_t>& columns;
  const std::vector<std::string>& cells;

  [[noreturn]] void fail(const std::string& column, const std::string& what) const {
    throw ConfigError(file + " line " + std::to_string(line) + ": column " + column + ": " + what);
  }
  const std::string& cell(const std::string& column) const {
    const size_t i = columns.at(column);
    static const std::string empty;
    return i < cells.size() ? cells[i] : empty;
  }
  double number(const std::string& column, bool required) const {
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
  bool on_off(const std::string& column) const {
    const std::string& t = cell(column);
    if (t == "on") return true;
    if (t == "off") return false;
    fail(column, quoted(t) + " is not one of on, off");
  }
};

const char* const kRequired[] = {"rw", "bs", "iodepth", "numjobs", "dbbuf", "ioeventfd",
                                 "iops", "sq_mmio_per_io", "cq_mmio_per_io"};
const char* const kOptional[] = {"accel", "qemu_version", "linux_version", "sq_mmio_per_io_min",
                                 "sq_mmio_per_io_max", "cq_mmio_per_io_min", "cq_mmio_per_io_max",
                                 "irq_per_io", "sq_updates_per_io", "cq_updates_per_io",
                                 "clat_p50_ns", "clat_p99_ns"};

}  // namespace

std::string ReferenceRow::label() const {
  return "rw=" + rw + " bs=" + std::to_string(bs) + " iodepth=" + std::to_string(iodepth) +
         " numjobs=" + std::to_string(numjobs) + " dbbuf=" + (dbbuf ? "on" : "off") +
         " ioeventfd=" + (ioeventfd ? "on" : "off");
}

std::vector<ReferenceRow> read_reference_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open (" + std::strerror(errno) + ")");
  std::string header;
  if (!std::getline(in, header) || header.empty()) throw ConfigError(path + ": empty file, no header line");
  if (header.size() > kMaxLine) throw ConfigError(path + " line 1: longer than 4096 characters");
  std::map<std::string, size_t> columns;
  const std::vector<std::string> names = split(header);
  for (size_t i = 0; i < names.size(); ++i) columns.emplace(names[i], i);
  for (const char* c : kRequired)
    if (!columns.count(c)) throw ConfigError(path + " line 1: no column '" + c + "'");
  const size_t missing = names.size();
  for (const char* c : kOptional) columns.emplace(c, missing);  // absent: always empty

  std::vector<ReferenceRow> rows;
  std::set<std::tuple<std::string, uint64_t, unsigned, unsigned, bool, bool>> seen;
  std::string text;
  unsigned line = 1;
  while (std::getline(in, text)) {
    ++line;
    if (text.size() > kMaxLine)
      throw ConfigError(path + " line " + std::to_string(line) + ": longer than 4096 characters");
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.empty()) continue;
    if (rows.size() == kMaxRows) throw ConfigError(path + ": more than 100000 rows");
    const std::vector<std::string> cells = split(text);
    const Row row{path, line, columns, cells};
    ReferenceRow r;
    r.line = line;
    r.rw = row.cell("rw");
    if (r.rw != "read" && r.rw != "randread" && r.rw != "write" && r.rw != "randwrite")
      row.fail("rw", quoted(r.rw) + " is not one of read, randread, write, randwrite");
    const double bs = row.number("bs", true), depth = row.number("iodepth", true),
                 jobs = row.number("numjobs", true);
    if (bs < 512 || bs != std::floor(bs) || std::fmod(bs, 512) != 0)
      row.fail("bs", "must be a multiple of 512 bytes");
    if (depth < 1 || depth > 4095 || depth != std::floor(depth)) row.fail("iodepth", "must be 1..4095");
    if (jobs < 1 || jobs > 64 || jobs != std::floor(jobs)) row.fail("numjobs", "must be 1..64");
    r.bs = uint64_t(bs);
    r.iodepth = unsigned(depth);
    r.numjobs = unsigned(jobs);
    r.dbbuf = row.on_off("dbbuf");
    r.ioeventfd = row.on_off("ioeventfd");
    r.accel = row.cell("accel");
    r.qemu_version = row.cell("qemu_version");
    r.linux_version = row.cell("linux_version");
    r.iops = row.number("iops", true);
    r.sq_mmio = row.number("sq_mmio_per_io", true);
    r.cq_mmio = row.number("cq_mmio_per_io", true);
    r.sq_mmio_min = row.number("sq_mmio_per_io_min", false);
    r.sq_mmio_max = row.number("sq_mmio_per_io_max", false);
    r.cq_mmio_min = row.number("cq_mmio_per_io_min", false);
    r.cq_mmio_max = row.number("cq_mmio_per_io_max", false);
    r.irq = row.number("irq_per_io", false);
    r.sq_updates = row.number("sq_updates_per_io", false);
    r.cq_updates = row.number("cq_updates_per_io", false);
    r.clat_p50_ns = row.number("clat_p50_ns", false);
    r.clat_p99_ns = row.number("clat_p99_ns", false);
    if (!seen.emplace(r.rw, r.bs, r.iodepth, r.numjobs, r.dbbuf, r.ioeventfd).second)
      throw ConfigError(path + " line " + std::to_string(line) + ": the configuration " + r.label() +
                        " appears twice");
    rows.push_back(std::move(r));
  }
  if (rows.empty()) throw ConfigError(path + ": no rows after the header");
  return rows;
}

}  // namespace nvmesim::platform
