// `nvmesim validate`: the model against a real system it was not fitted to.
//
// Every row of a reference CSV (platform/validate/reference_csv.h) is run
// through the model at the row's configuration; at most two time costs are
// fitted first on the reference's own iodepth=1 rows (their IOPS). Each row
// is then in band when
//   - SQ and CQ MMIO doorbell writes per I/O are each within +-0.15 of the
//     reference, or within the row's measured min..max; and
//   - IOPS as a ratio to the row's iodepth=1 row (same rw, bs, numjobs,
//     dbbuf, ioeventfd) is within +-25% of the reference's ratio.
// Interrupts per I/O and clat p50/p99 are reported beside, not banded.
// Published figures (platform/validate/published.h) use the same bands.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "nvmesim/platform/validate/reference_csv.h"
#include "nvmesim/platform/validate/timing_csv.h"

namespace nvmesim::platform {

class Config;

constexpr double kDoorbellBand = 0.15;   // absolute, writes per I/O
constexpr double kIopsRatioBand = 0.25;  // relative
constexpr double kLatencyRatioBand = 0.25;  // relative

// The band rules, on their own so tests can state them.
bool doorbell_in_band(double model, double reference, double reference_min, double reference_max);
bool iops_ratio_in_band(double model_ratio, double reference_ratio);
// A per-I/O count (doorbell writes per I/O, SQ, CQ or summed) without a
// measured range: within +-0.15.
bool per_io_in_band(double model, double reference);
// A latency as a ratio to its baseline's: within +-25%.
bool latency_ratio_in_band(double model_ratio, double reference_ratio);

// A cost fitted on iodepth=1 rows: `param` (a time) is bisected so that,
// over the matching rows, the model's IOPS sum equals the reference's
// (target Iops), or the model's latency spread p99 - p50 (mean over the
// rows) equals that of the reference's clat (target Spread: at iodepth 1 the
// guest's fixed costs cancel in the difference, what varies from I/O to I/O
// remains).
struct Calibration {
  enum class Target { Iops, Spread };
  std::string param;
  Target target = Target::Iops;
  // Which iodepth=1 rows: "" (all of them) or KEY=VALUE[,KEY=VALUE] over
  // rw, numjobs, dbbuf, ioeventfd ("ioeventfd=off").
  std::string rows;
  double lo_ns = 10, hi_ns = 1e7;
  // Results.
  double value_ns = 0, reference_iops = 0, model_iops = 0;  // Iops: sums; Spread: mean ns
  unsigned matched_rows = 0;
  bool converged = false;  // within 5% of the reference
};

// Bisects c.param on a log scale between c.lo_ns and c.hi_ns: 16 steps,
// each setting c.value_ns and calling model_figure(), until the model's
// figure meets `reference` (IOPS fall as a cost rises; a latency spread
// grows with a varying delay). Fills value_ns, reference_iops, model_iops
// and converged (within 5%).
void bisect_calibration(Calibration& c, double reference, const std::function<double()>& model_figure);

// Parses --calibrate's PARAM[:TARGET][@ROWS] and takes the bounds from the
// parameter's range. Throws ConfigError.
Calibration parse_calibration(const std::string& text);
// Every calibrated parameter is a time, given once, not set by --set; at
// most two. Throws ConfigError.
void check_calibration_params(const std::vector<Calibration>& calibrations,
                              const std::vector<std::pair<std::string, std::string>>& what_if);

// One model run's figures that validate compares.
struct ModelFigures {
  double iops = 0, sq_mmio = 0, cq_mmio = 0, irq = 0;
  // The run's JSON lat_ns (fio's lat): mean, 50th and 99th percentile; and
  // clat_ns's percentiles (fio's clat, what the TCG reference records).
  double lat_mean_ns = 0, lat_p50_ns = 0, lat_p99_ns = 0;
  double clat_p50_ns = 0, clat_p99_ns = 0;
  bool stalled = false;
};
// A signal (SIGINT, SIGTERM, SIGHUP) cut validate short: the run under
// way is not a figure (it drained early), so no further run starts.
struct ValidateInterrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs `config` in a child process. Throws std::runtime_error naming
// `label` when the run fails, ValidateInterrupted once a signal arrived.
ModelFigures run_model(const Config& config, const std::string& label);

struct ValidateSetup {
  std::vector<std::string> presets;                             // applied in order, first
  std::vector<std::pair<std::string, std::string>> what_if;     // --set, after the presets
  std::vector<Calibration> calibrations;                        // at most two
  uint64_t number_ios = 10000;                                  // per job
  // --timing: the device thread's wake-up stalls measured at iodepth 1 in the
  // real system, per numjobs and dbbuf; each row gets its own line's values.
  std::string timing_file;
  std::vector<TimingRow> timing;
};

struct RowFigures {
  double sq_mmio = 0, cq_mmio = 0, irq = 0, iops = 0, iops_ratio = 0;
  double clat_p50_ns = 0, clat_p99_ns = 0;  // the model's latency percentiles (ModelFigures)
};

struct RowResult {
  ReferenceRow reference;
  double reference_ratio = 0;  // reference IOPS / its iodepth=1 row's
  RowFigures model;
  bool stalled = false;
  bool sq_in_band = false, cq_in_band = false, iops_in_band = false, in_band = false;
};

struct ValidateResult {
  std::vector<RowResult> rows;  // interrupted: the rows judged (their iodepth=1 row ran too)
  std::vector<Calibration> calibrations;
  unsigned in_band = 0;
  int interrupted = 0;           // the signal that cut it short, or 0
  bool during_calibration = false;
  double in_band_share() const { return rows.empty() ? 0 : double(in_band) / double(rows.size()); }
};

// The model's configuration for one row: presets, what-ifs, the row's
// workload and device settings, the calibrated values. Throws ConfigError.
Config row_config(const ValidateSetup& setup, const ReferenceRow& row);
// The pieces every reference's rows share: the row's workload and device
// settings; then the fitted costs, the I/O count, and the check.
void set_run_columns(Config& c, const RunColumns& row);
void finish_row_config(Config& c, const std::vector<Calibration>& calibrations, uint64_t number_ios);

// Checks the setup against the rows before anything runs (unknown
// parameters, bad values, calibration filters that match no row, rows
// without their iodepth=1 row). Throws ConfigError with one line.
void check_setup(const ValidateSetup& setup, const std::vector<ReferenceRow>& rows);

// Calibrates, then runs every row (each in a child process). Throws
// std::runtime_error when a model run fails. A signal ends it early with
// `interrupted` set and the rows judged so far.
ValidateResult validate(ValidateSetup setup, const std::vector<ReferenceRow>& rows);

// `nvmesim validate ...`: argv[0] is "validate".
int run_validate_command(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace nvmesim::platform
