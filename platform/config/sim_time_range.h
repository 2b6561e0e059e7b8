// SystemC's time is 64-bit picoseconds: it ends at 2^64 ps, about 213.5
// days. A run whose simulated time would pass that wraps silently (a rate's
// due time comes out small, so I/Os ignore the rate, and the reported time
// stops growing), so such a run is refused before it starts.
#pragma once

#include "nvmesim/platform/config/system_params.h"

namespace nvmesim::platform {

// SystemC's last representable time, in seconds (2^64 ps).
constexpr double kSimTimeRangeSeconds = 18446744.073709551615;
// Runs whose simulated time is bound to reach this share of the range are
// refused: what the bound leaves out (exits, the device, the guest's own
// costs) only adds time.
constexpr double kSimTimeRefusedShare = 0.5;

// The least simulated time each job needs, by the options that bound it
// from below (fio's rate and rate_iops, thinktime, the backend's latency per
// round of iodepth I/Os); throws ConfigError naming the option and the
// values behind it when that passes kSimTimeRefusedShare of the range.
// Runs bounded by runtime (number_ios 0) are within range by runtime's own.
void check_simulated_time_range(const SystemParams& params, const Config& config);

}  // namespace nvmesim::platform
