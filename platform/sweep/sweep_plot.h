// Sweep plots: `--plot y=METRIC,x=COLUMN[,series=COLUMN]` draws y against x
// (one line per series value) with gnuplot, run as a child process, into
// DIR/plot-<y>-vs-<x>.svg and .png (svg and pngcairo terminals, both in
// Debian's gnuplot-nox). The script and data stay beside them (.gp, .dat).
#pragma once

#include <string>
#include <vector>

#include "nvmesim/platform/sweep/sweep_output.h"

namespace nvmesim::platform::sweep {

struct PlotSpec {
  std::string y, x, series;  // CSV column names; series may be empty
  std::string logx = "auto";  // auto: log2 x when the values are powers of two spanning 8x or more
  bool cdf = false;  // "cdf[,series=COLUMN]": each point's latency distribution (sweep_cdf.cpp)
};

// "y=per_io.exits,x=iodepth,series=nvme.dbbuf", or "cdf[,series=COLUMN]";
// throws UsageError.
PlotSpec parse_plot_arg(const std::string& arg);

// Before any point runs: every column the spec names must be a grid
// parameter, seed/status/error, or a key of a run's JSON (array indexes
// such as utilization.vcpu.0 matched whatever the index). Throws UsageError.
void check_plot_columns(const PlotSpec& spec, const std::vector<std::string>& axis_names);

// "plot-per_io.exits-vs-iodepth" (characters other than [A-Za-z0-9._-] -> '_').
std::string plot_basename(const PlotSpec& spec);

// Draws the ok records. x values that are all numbers with one common unit
// ("2000cyc") give a numeric axis, otherwise one tick per distinct value in
// grid order. Axis labels and units come from the metric definitions
// (platform/report/metric_labels.h); the y range is padded; the subtitle
// lists what every point shares (single-valued axes, the `fixed` options);
// each further grid axis with several values makes a panel per value (at
// most 12 panels, else an error). Returns the files written; throws
// std::runtime_error when there is nothing to draw or gnuplot fails.
std::vector<std::string> write_plot(const std::string& dir, const PlotSpec& spec,
                                    const std::vector<std::string>& axis_names,
                                    const std::vector<Record>& records,
                                    const std::vector<std::string>& fixed = {});

// gnuplot string literals: single quotes ('' a quote), and double quotes
// (backslash escapes, a new line as \n: titles with a subtitle).
std::string gp_quote(const std::string& s);
std::string gp_dquote(const std::string& s);

// Finishes a plot's script `gp` with `body` (its plot commands, a multiplot
// of `panels` panels when more than one) for the svg and pngcairo
// terminals, writes BASE.gp and runs gnuplot: BASE.svg and BASE.png.
std::vector<std::string> render_plot(const std::string& base, std::string gp, std::string body, size_t panels,
                                     const std::string& what);

// Runs gnuplot on `script`, its output into `log`; throws std::runtime_error
// starting with `what` when gnuplot is missing or fails.
void run_gnuplot(const std::string& script, const std::string& log, const std::string& what);

// `--plot cdf[,series=COLUMN]`: each ok point's fio latency (lat_ns: min,
// the fio percentiles 1..99.99, max) as a cumulative distribution over a
// log10 latency axis, DIR/plot-lat-cdf[-by-COLUMN].svg and .png. Without
// series one curve per point (labelled by the grid values that vary); with
// it a panel per combination of the other varying axes and a curve per
// series value. At most 12 panels and 16 curves a panel.
std::vector<std::string> write_cdf_plot(const std::string& dir, const PlotSpec& spec,
                                        const std::vector<std::string>& axis_names,
                                        const std::vector<Record>& records,
                                        const std::vector<std::string>& fixed = {});

}  // namespace nvmesim::platform::sweep
