#include "nvmesim/platform/validate/timing_csv.h"

#include <cmath>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/validate/csv_table.h"

namespace nvmesim::platform {

std::vector<TimingRow> read_timing_csv(const std::string& path) {
  std::vector<TimingRow> rows;
  read_csv_table(path, {"numjobs", "dbbuf", "iodepth", "stall_share", "stall_max_ns"},
                 {"wakeups", "reaction_p50_ns", "command_p50_ns", "post_p50_ns"}, [&](const CsvCells& cells) {
                   TimingRow t;
                   t.line = cells.line;
                   if (cells.number("iodepth", true) != 1)
                     cells.fail("iodepth", "timing is measured at iodepth 1 (allowed 1)");
                   const double jobs = cells.number("numjobs", true);
                   if (jobs < 1 || jobs > 64 || jobs != std::floor(jobs)) cells.fail("numjobs", "must be 1..64");
                   t.numjobs = unsigned(jobs);
                   t.dbbuf = cells.on_off("dbbuf");
                   t.stall_share = cells.number("stall_share", true);
                   if (t.stall_share > 1) cells.fail("stall_share", "must be 0..1");
                   t.stall_max_ns = cells.number("stall_max_ns", true);
                   if (t.stall_max_ns > 1e8) cells.fail("stall_max_ns", "must be 0..100000000 (100 ms)");
                   if (t.stall_share > 0 && t.stall_max_ns == 0)
                     cells.fail("stall_max_ns", "is 0 while stall_share is not");
                   t.wakeups = cells.number("wakeups", false);
                   t.reaction_p50_ns = cells.number("reaction_p50_ns", false);
                   t.command_p50_ns = cells.number("command_p50_ns", false);
                   t.post_p50_ns = cells.number("post_p50_ns", false);
                   for (const char* column : {"command_p50_ns", "post_p50_ns"})
                     if (cells.number(column, false) > 1e6) cells.fail(column, "must be 0..1000000 (1 ms)");
                   for (const TimingRow& r : rows)
                     if (r.numjobs == t.numjobs && r.dbbuf == t.dbbuf)
                       cells.fail_line("numjobs=" + std::to_string(t.numjobs) + " dbbuf=" +
                                       (t.dbbuf ? "on" : "off") + " appears twice (first on line " +
                                       std::to_string(r.line) + ")");
                   rows.push_back(t);
                 });
  return rows;
}

std::string MeasuredParam::config_text() const {
  return is_time ? time_value_text(value) : std::to_string(value);
}

std::vector<MeasuredParam> measured_params(const TimingRow& t) {
  std::vector<MeasuredParam> p = {{"hv.dispatch_stall_share", t.stall_share, false},
                                  {"hv.dispatch_stall_max", t.stall_max_ns, true}};
  if (!std::isnan(t.command_p50_ns)) p.push_back({"nvme.cmd_cost", t.command_p50_ns, true});
  if (!std::isnan(t.post_p50_ns)) p.push_back({"nvme.cqe_cost", t.post_p50_ns, true});
  return p;
}

const TimingRow* timing_for(const std::vector<TimingRow>& timing, const ReferenceRow& row) {
  for (const TimingRow& t : timing)
    if (t.numjobs == row.numjobs && t.dbbuf == row.dbbuf) return &t;
  return nullptr;
}

}  // namespace nvmesim::platform
