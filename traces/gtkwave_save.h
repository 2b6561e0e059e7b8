// The GTKWave save file written beside each VCD (--vcd X.vcd also writes
// X.gtkw), made from the writer's own signal list so that every signal it
// lists resolves: GTKWave names a vector with its range (driver_sq_tail[15:0])
// and silently drops a save-file line that lacks it.
//
// Layout: one group per I/O queue (its indices, doorbell pulses and MSI-X
// vector), then the vCPUs, the host threads and the admin queue's vector;
// indices in decimal, pulses as bits, states with their names beside them.
// The view opens on the first I/Os (not on controller bring-up), zoomed so
// that a few completions fit the window.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvmesim::traces {

struct VcdSignal {
  std::string scope, name;  // "q1", "driver_sq_tail"
  unsigned width;           // 0: a string variable
};

struct GtkwaveView {
  uint64_t start_ps = 0;  // left edge of the window
  uint64_t span_ps = 0;   // width of the window (0: GTKWave's default zoom)
};

// GTKWave's zoom level z shows kGtkwaveZoomSpan * 2^-z time units across
// the wave area of the window this save file asks for ([size] 1400 900).
// Measured with GTKWave 3.3.118 (Debian 12): at z = -24 the window spans
// 70.46 us of a 1 ps VCD, at z = -19 2.202 us (the ratio is 2^5 to 0.01%).
constexpr double kGtkwaveZoomSpan = 4.2;

// The zoom level that shows `span_ps` across the window.
double gtkwave_zoom(uint64_t span_ps);

// The save file's text. `dump_file` is written as [dumpfile] (the VCD's
// path as the user gave it; `gtkwave X.vcd X.gtkw` works from anywhere).
std::string gtkwave_save_file(const std::vector<VcdSignal>& signals, const std::string& dump_file,
                              const GtkwaveView& view);

// X.vcd -> X.gtkw; a name without .vcd gets .gtkw appended.
std::string gtkwave_save_path(const std::string& vcd_path);

}  // namespace nvmesim::traces
