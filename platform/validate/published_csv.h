// Published figures: validation/published/figures.csv, one row per point a
// public source (a mailing-list post, a commit) published for QEMU's NVMe
// emulation under KVM, with its citation, setup, fio settings, device
// settings and the figures as published (validation/published/README.md
// defines every column). Rows are grouped by their `source`; a source's
// citation and setup columns hold one value for all of its rows.
#pragma once

#include "nvmesim/platform/validate/csv_table.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nvmesim::platform {

struct PublishedRow : RunColumns {  // fio's settings and the device's
  unsigned line = 0;  // in the file, for messages
  std::string label;  // the source's name for the row ("QEMU", "+dbbuf")
  std::string ioengine, direct;
  std::string irqfd, iothread, polling;  // "on", "off", or "" where the source does not say
  bool baseline = false;                 // fitted on; the first one is what ratios are taken to
  // The figures as published; NaN where the source gives none.
  double iops, mmio_per_io, sq_mmio_per_io, cq_mmio_per_io;
  double lat_mean_ns, lat_p50_ns, lat_p99_ns;

  // "QEMU rw=randread bs=4096 iodepth=2 numjobs=1 dbbuf=off ioeventfd=off"
  std::string description() const;
};

struct PublishedSource {
  std::string id;  // the `source` column
  // The citation.
  std::string title, author, list, date, message_id, commit;
  // The setup as the source gives it.
  std::string host_cpu, accel, qemu_version, guest_kernel;
  std::string presets;                 // the presets its QEMU version needs ("qemu-7.1"), or ""
  std::vector<std::string> calibrate;  // its costs to fit (--calibrate's syntax), or none
  std::string assumed;                 // columns that are not from the source, or ""
  unsigned line = 0;                   // its first row's
  std::vector<PublishedRow> rows;      // in file order

  const PublishedRow& reference_baseline() const;  // the first baseline row
};

// The header of a published-figures table: it has `source` and `baseline`.
bool is_published_header(const std::vector<std::string>& columns);

// Reads the table, sources in the order they first appear. Throws
// ConfigError "FILE line N: column C: ..." on a missing column, a bad value,
// a citation or setup cell that differs within a source, a row without a
// figure, a duplicate row, a latency without the baseline's to take its
// ratio to; "FILE: source S ..." for a source without a baseline row.
std::vector<PublishedSource> read_published_csv(const std::string& path);

}  // namespace nvmesim::platform
