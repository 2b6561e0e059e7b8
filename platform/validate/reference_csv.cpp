#include "nvmesim/platform/validate/reference_csv.h"

#include <cmath>
#include <set>
#include <tuple>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/user_text.h"
#include "nvmesim/platform/validate/csv_table.h"

namespace nvmesim::platform {

namespace {

const std::vector<const char*> kRequired = {"rw", "bs", "iodepth", "numjobs", "dbbuf", "ioeventfd",
                                            "iops", "sq_mmio_per_io", "cq_mmio_per_io"};
const std::vector<const char*> kOptional = {"accel", "qemu_version", "linux_version", "sq_mmio_per_io_min",
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
  std::vector<ReferenceRow> rows;
  std::set<std::tuple<std::string, uint64_t, unsigned, unsigned, bool, bool>> seen;
  read_csv_table(path, kRequired, kOptional, [&](const CsvCells& row) {
    ReferenceRow r;
    r.line = row.line;
    static_cast<RunColumns&>(r) = read_run_columns(row);
    r.accel = row.cell("accel");
    r.qemu_version = row.cell("qemu_version");
    r.linux_version = row.cell("linux_version");
    r.iops = row.number("iops", true);
    // IOPS are judged as ratios to the row's iodepth=1 row: 0 can be no one's.
    if (!(r.iops > 0)) row.fail("iops", "must be above 0 (a measured rate)");
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
      row.fail_line("the configuration " + r.label() + " appears twice");
    rows.push_back(std::move(r));
  });
  return rows;
}

}  // namespace nvmesim::platform
