// The per-section part of a run's report, for a fio job file with several
// sections or an order between them (stonewall, wait_for): each section's
// own options, its reporting group, what it waited for, and its measured
// figures (derived_figures.h's job_results.*, from its vCPUs').
#pragma once

#include <iosfwd>

#include "nvmesim/platform/report/results.h"

namespace nvmesim::platform {

struct FioJobs;

// RunResults::sections from the job file (empty unless it has several
// sections or an order).
std::vector<JobSection> job_sections(const FioJobs& fio);

// Text: "job sections:" and per section two lines (nothing when empty).
void write_job_sections(const RunResults& r, std::ostream& out);
// JSON: "jobs" beside "config" (each section's name, group, vCPUs, the jobs
// it waits for, its own options), in file order. "job_results" at the end
// (each section's start, finish, interval, I/O counts and IOPS) are derived
// figures (derived_figures.h).
report::Json job_sections_json(const RunResults& r);

}  // namespace nvmesim::platform
