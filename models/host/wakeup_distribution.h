// How long a sleeping thread takes to run again once it is woken, drawn from
// delays measured on this project's host (validation/host/wakeup-idle*.csv:
// a thread asleep in ppoll woken by an eventfd write, validation/qemu/
// wakeup_probe.c). The tables are compiled in (generated from the CSV files
// at build time), so a component user needs no file at run time.
//
// A draw: inverse-CDF sampling of a table (linear interpolation between its
// quantiles), the two tables around the thread's idle time mixed by linear
// interpolation in log(idle time) at the same quantile; idle times below the
// shortest table's use it, above the longest's use that one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <systemc>

#include "nvmesim/firmware/sim/enum_table.h"

namespace nvmesim::models {

// hv.wakeup: the delays from the measured tables, or the fixed
// hv.dispatch_latency (+ hv.dispatch_jitter) and hv.halt_wakeup.
enum class WakeupModel { Measured, Fixed };
inline constexpr fw::EnumEntry<WakeupModel> wakeup_models[] = {{WakeupModel::Measured, "measured"},
                                                               {WakeupModel::Fixed, "fixed"}};

// One measured table: the delay at each quantile, quantiles rising from 0 to 1.
struct WakeupTable {
  double idle_ns;           // how long the thread slept before each signal (nominal)
  const double* quantile;   // [0, 1], rising, first 0 and last 1
  const double* delay_ns;   // non-decreasing
  size_t size;
  const char* source;       // the CSV file's name
};

// The tables, by idle time rising (generated from the CSVs).
const std::vector<WakeupTable>& wakeup_tables();
// Sorts by idle time and checks each table's shape (throws std::logic_error).
std::vector<WakeupTable> sorted_wakeup_tables(std::vector<WakeupTable> tables);

// The table's delay at quantile u in [0, 1] (linear between its quantiles).
double wakeup_quantile_ns(const WakeupTable& table, double u);
// The delay at quantile u after an idle time of idle_ns, over `tables`
// (sorted by idle time; the compiled-in ones by default).
double wakeup_delay_ns(double idle_ns, double u, const std::vector<WakeupTable>& tables = wakeup_tables());
// The same as an sc_time (to the kernel's resolution).
sc_core::sc_time wakeup_draw(const sc_core::sc_time& idle, double u);

// splitmix64 -> uniform (0, 1]: the deterministic stream each waking thread
// draws from (HostThread's, and each vCPU's own).
class UniformStream {
 public:
  explicit UniformStream(uint64_t seed = 1) : seed_(seed) {}
  double next();

 private:
  uint64_t seed_;
  uint64_t state_ = 0;
};

}  // namespace nvmesim::models
