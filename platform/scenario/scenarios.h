// Published experiments, rebuilt: each scenario is a baseline and one or
// more improved configurations with the figures their authors report. One cost
// is calibrated so the baseline matches its reported figure; the improved
// figures are then predictions, compared by their improvement ratios.
#pragma once

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace nvmesim::platform {

struct ScenarioRun {
  std::string label;
  std::vector<std::pair<std::string, std::string>> settings;  // on top of the common ones
  double reported;                                            // in the scenario's metric
  // What limits this prediction (what the sources lack); when set, the
  // text output says whether the prediction is in the band, with it.
  std::string gap = {};
};

struct Scenario {
  std::string name, title, source;
  std::string metric;  // "iops", "mb_s" (10^6 bytes per second, as fio printed MB/s) or "mib_s" (2^20)
  std::vector<std::pair<std::string, std::string>> common;
  // Where each fixed cost comes from: parameter -> reason.
  std::vector<std::pair<std::string, std::string>> cost_sources;
  std::string calibrated;        // the parameter fitted on the baseline (a time)
  double calibrate_lo_ns, calibrate_hi_ns;
  std::string calibration_note;  // what it stands for
  std::vector<ScenarioRun> runs;  // runs[0]: the baseline
};

const std::vector<Scenario>& scenarios();
// Launchpad bug 1847948: VFIO's trapped MSI-X page (scenario_vfio_msix.cpp).
Scenario vfio_msix_scenario();

// `nvmesim scenario ...`: argv[0] is "scenario".
int run_scenario_command(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace nvmesim::platform
