// `nvmesim validate` on published figures (platform/validate/published_csv.h).
//
// Per source: at most two costs are fitted on its baseline rows' IOPS
// (default hv.exit_mmio), then every row runs at its own configuration and
// each published figure is a point, in band when
//   - IOPS, as a ratio to the source's (first) baseline row, is within +-25%
//     of the published ratio;
//   - a per-I/O count (MMIO doorbell writes per I/O summed, SQ, CQ) is within
//     +-0.15 of the published one;
//   - a latency (mean, p50, p99), as a ratio to the baseline's, is within +-25%.
// A baseline row's IOPS (fitted on) and the first baseline's latencies (what
// ratios are taken to) are not points.
#pragma once

#include <string>
#include <vector>

#include "nvmesim/platform/validate/published_csv.h"
#include "nvmesim/platform/validate/validate.h"

namespace nvmesim::platform {

class Config;

struct PublishedPoint {
  std::string metric;  // iops_ratio, mmio_per_io, sq_mmio_per_io, cq_mmio_per_io, lat_{mean,p50,p99}_ratio
  double reference = 0, model = 0;
  bool in_band = false;
};

// The points of one row, from the model's figures at the row and at the
// source's reference baseline row. A stalled run's ratios are out of band.
std::vector<PublishedPoint> published_points(const PublishedRow& row, const PublishedRow& baseline,
                                             const ModelFigures& model, const ModelFigures& model_baseline);
// How many points a source gives (what published_points() returns, summed).
unsigned published_point_count(const PublishedSource& source);

struct PublishedRowResult {
  PublishedRow row;
  ModelFigures model;
  std::vector<PublishedPoint> points;
};

struct PublishedSourceResult {
  const PublishedSource* source = nullptr;
  std::vector<std::string> presets;  // as applied: the source's, then the command line's
  std::vector<Calibration> calibrations;
  std::vector<PublishedRowResult> rows;
  unsigned points = 0, in_band = 0;
  double in_band_share() const { return points ? double(in_band) / points : 0; }
};

struct PublishedResult {
  std::string fit_one;                         // PublishedSetup's, for the report
  std::vector<PublishedSourceResult> sources;  // interrupted: the sources judged whole
  int interrupted = 0;                         // the signal that cut it short, or 0
  unsigned points = 0, in_band = 0;
  double in_band_share() const { return points ? double(in_band) / points : 0; }
};

// What the command line gives every source: presets (after each source's
// own), what-ifs, I/Os per job, and the costs to fit (empty: each source's
// `calibrate` column, else hv.exit_mmio; no_calibrate: none; fit_one: exactly
// that one cost per source, fit_one_param()).
struct PublishedSetup {
  std::vector<std::string> presets;
  std::vector<std::pair<std::string, std::string>> what_if;
  std::vector<Calibration> calibrations;
  bool no_calibrate = false;
  std::string fit_one;  // --fit-one: "exit" or a time parameter; empty: not given
  uint64_t number_ios = 10000;
};

// The presets a source's rows run with: the source's, then the command line's.
std::vector<std::string> source_presets(const PublishedSetup& setup, const PublishedSource& source);
// --fit-one's values: "exit" or a time parameter's name. Throws ConfigError
// with one line naming the option and what it accepts.
void check_fit_one(const std::string& value);
// The one cost --fit-one fits for a source: "exit" is the doorbell's exit
// as the source's (first) baseline row runs it, hv.exit_ioeventfd with
// ioeventfd on, else hv.exit_mmio; any other value is that parameter.
std::string fit_one_param(const std::string& fit_one, const PublishedSource& source);
// The costs fitted for a source. Throws ConfigError.
std::vector<Calibration> source_calibrations(const PublishedSetup& setup, const PublishedSource& source);

// The model's configuration for one row: the presets, the what-ifs, the
// row's fio and device settings (dbbuf=on: nvme.dbbuf=spec; ioeventfd=on:
// hv.notify=ioeventfd; iothread=on: hv.device_thread=iothread, which polls
// only with polling=on; irqfd=on: hv.msi=irqfd), the fitted values. Throws
// ConfigError.
Config published_row_config(const std::vector<std::string>& presets, const PublishedSetup& setup,
                            const std::vector<Calibration>& calibrations, const PublishedRow& row);

// Checks everything before a run: presets, what-ifs, calibrations, every
// row's configuration. Throws ConfigError with one line.
void check_published_setup(const PublishedSetup& setup, const std::vector<PublishedSource>& sources);

// Fits and runs every source (each run in a child process). Throws
// std::runtime_error when a model run fails.
PublishedResult validate_published(const PublishedSetup& setup, const std::vector<PublishedSource>& sources);

}  // namespace nvmesim::platform
