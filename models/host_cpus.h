// The host's cores, shared by vCPU threads and device-emulation threads.
// Processor sharing: while more threads are runnable than there are cores,
// each runnable thread progresses at cores/runnable of full speed, so CPU
// work started then takes proportionally longer (the fair-share view of a
// CFS scheduler, without modelling time slices). A busy-polling thread is
// runnable and takes its share like any other.
#pragma once

#include <string>
#include <systemc>
#include <vector>

#include "firmware/statistics.h"
#include "models/stat_time.h"

namespace nvmesim::models {

class HostCpus : public stats::Group {
 public:
  explicit HostCpus(unsigned cores) : cores_(cores) {}  // 0: one core per thread

  unsigned add_thread(const std::string& name) {
    names_.push_back(name);
    runnable_.push_back(false);
    return unsigned(names_.size() - 1);
  }
  void set_runnable(unsigned id, bool runnable) {
    if (runnable_[id] == runnable) return;
    account();
    runnable_[id] = runnable;
    runnable_count_ += runnable ? 1 : -1;
  }
  // How long `work` of CPU time takes when it starts now.
  sc_core::sc_time stretch(const sc_core::sc_time& work) const {
    if (!cores_ || runnable_count_ <= int(cores_)) return work;
    return sc_core::sc_time::from_value(work.value() * uint64_t(runnable_count_) / cores_);
  }
  unsigned cores() const { return cores_; }
  // Simulated time during which runnable threads outnumbered the cores.
  sc_core::sc_time overcommitted_time() {
    account();
    return overcommitted_;
  }

 private:
  void update() override { account(); }
  void account() {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    if (cores_ && runnable_count_ > int(cores_)) overcommitted_ += now - last_;
    last_ = now;
  }
  unsigned cores_;
  std::vector<std::string> names_;
  std::vector<bool> runnable_;
  int runnable_count_ = 0;
  sc_core::sc_time last_;
  TimeStat overcommitted_{*this, "overcommitted_time",
                          "time with more runnable threads than host cores (host.cores)"};
};

}  // namespace nvmesim::models
