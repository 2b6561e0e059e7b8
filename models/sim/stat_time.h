// A statistic of simulated time (firmware/sim/statistics.h's kind for models):
// it adds sc_time exactly and reads as sc_time; dumped in ns.
#pragma once

#include <systemc>

#include "nvmesim/firmware/sim/statistics.h"

namespace nvmesim::models {

class TimeStat : public stats::Stat {
 public:
  TimeStat(stats::Group& parent, std::string name, std::string description)
      : Stat(parent, std::move(name), stats::Unit::Time, std::move(description)) {}
  TimeStat& operator+=(const sc_core::sc_time& t) {
    time_ += t;
    return *this;
  }
  operator const sc_core::sc_time&() const { return time_; }
  const sc_core::sc_time& time() const { return time_; }
  // In SystemC's resolution, picoseconds by default (as sc_time::value()).
  uint64_t value(size_t = 0) const override { return time_.value(); }
  void reset() override { time_ = sc_core::SC_ZERO_TIME; }

 private:
  sc_core::sc_time time_;
};

}  // namespace nvmesim::models
