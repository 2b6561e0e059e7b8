// The real-system reference: validation/qemu/results.csv, one row per
// configuration of a real QEMU + Linux guest running fio (validation/qemu/README.md
// defines every column). This reader takes the columns `nvmesim validate`
// needs and refuses a file that lacks one, naming the file, line and column.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nvmesim/platform/validate/csv_table.h"

namespace nvmesim::platform {

struct ReferenceRow : RunColumns {  // the configuration (rw, bs, iodepth, numjobs, dbbuf, ioeventfd)
  unsigned line = 0;  // in the file, for messages
  std::string accel, qemu_version, linux_version;
  // The measured figures; NaN where the cell is empty.
  double iops, sq_mmio, sq_mmio_min, sq_mmio_max, cq_mmio, cq_mmio_min, cq_mmio_max, irq;
  double sq_updates, cq_updates;
  double clat_p50_ns, clat_p99_ns;  // fio's completion latency percentiles

  // "rw=read bs=4096 iodepth=8 numjobs=1 dbbuf=on ioeventfd=off"
  std::string label() const;
};

// Reads a reference CSV (comma-separated, first line the column names;
// csv_table.h). Throws ConfigError "FILE line N: column C: ..." on a
// missing column, a bad value or a duplicate configuration; "FILE: ..." when
// it cannot be read or holds no row.
std::vector<ReferenceRow> read_reference_csv(const std::string& path);

}  // namespace nvmesim::platform
