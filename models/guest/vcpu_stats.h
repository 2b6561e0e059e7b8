// The "vcpuN" statistics group: one group that the CPU (interrupts, guest
// and idle time, halts) and the fio job it runs (I/Os, bytes, fio's
// latencies and depths) both fill, in the order the reports list them. The
// hypervisor's exits of this vCPU merge into it (System::link_stats).
#pragma once

#include <cstdint>
#include <systemc>

#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/models/guest/fio_latency.h"
#include "nvmesim/models/sim/stat_time.h"

namespace nvmesim::models {

struct VcpuStats : stats::Group {
  using Scalar = stats::Scalar;
  static constexpr stats::Unit COUNT = stats::Unit::Count, BYTES = stats::Unit::Bytes;
  Scalar ios{*this, "ios", COUNT, "I/Os completed (the driver processed their completion)"};
  Scalar read_ios{*this, "read_ios", COUNT, "read I/Os completed"};
  Scalar write_ios{*this, "write_ios", COUNT, "write I/Os completed"};
  Scalar read_bytes{*this, "read_bytes", BYTES, "bytes read by completed I/Os"};
  Scalar write_bytes{*this, "write_bytes", BYTES, "bytes written by completed I/Os"};
  Scalar errors{*this, "io_errors", COUNT, "completions with a non-zero status"};
  uint16_t first_error_status = 0;  // the status field of the first of them
  Scalar interrupts{*this, "interrupts", COUNT, "interrupts taken"};
  Scalar issued{*this, "issued", COUNT, "I/Os the job issued"};
  Scalar submit_calls{*this, "submit_calls", COUNT, "io_submit calls the job made (one per batch it submitted)"};
  Scalar reap_calls{*this, "reap_calls", COUNT, "io_getevents calls the job made (one per reap)"};
  Scalar reap_events{*this, "reap_events", COUNT, "I/Os the job reaped (events io_getevents returned)"};
  Scalar reap_sleeps{*this, "reap_sleeps", COUNT, "io_getevents calls that slept until their minimum was ready (guest.reap_sleep_cost each)"};
  TimeStat sqpoll_time{*this, "sqpoll_time",
                       "guest CPU the kernel's SQPOLL thread spent submitting this job's commands (sqthread_poll: "
                       "on a CPU of its own, not this vCPU's guest_time)"};
  Scalar verified_reads{*this, "verified_reads", COUNT, "reads checked: of blocks this job had written (verify=pattern anytime; the header modes in the do_verify phase), or every read of a read-only job"};
  Scalar verify_errors{*this, "verify_errors", COUNT, "checked reads whose data did not match"};
  Scalar verify_intervals{*this, "verify_intervals", COUNT,
                          "verify_intervals the header modes examined in checked reads (one verify_header each; a "
                          "read's check stops at its first bad one)"};
  Scalar latency_target_depth{*this, "latency_target_depth", COUNT,
                              "the job's queue depth at its end: the latency_target search's (fio's latency_qd, "
                              "the depth found once it converged), else iodepth"};
  Scalar latency_target_windows{*this, "latency_target_windows", COUNT,
                                "latency_target windows the search judged (each a success or a failure of its depth)"};
  // fio's latencies (models/guest/fio_latency.h), per direction (read, write),
  // and the driver's own: building the command to finishing its completion.
  LatencyStat slat[2], clat[2], lat[2], driver_lat[2];
  IoDepthCounts depths;  // fio's IO depths, submit and complete distributions
  TimeStat guest_time{*this, "guest_time", "guest work (exits apart)"};
  TimeStat idle_time{*this, "idle_time", "time halted, waiting for an interrupt"};
  Scalar halt_poll_hits{*this, "halt_poll_hits", COUNT,
                        "halts whose interrupt came while KVM polled (hv.halt_poll)"};
  Scalar halt_sleeps{*this, "halt_sleeps", COUNT,
                     "halts after which the vCPU thread scheduled out (each costs a wake-up: a measured draw, or hv.halt_wakeup with hv.wakeup=fixed)"};
  Scalar tag_waits{*this, "tag_waits", COUNT,
                   "submissions that slept for a free tag of the job's queue (blk_mq_get_tag): its depth, "
                   "or the jobs sharing it, above the queue's tags"};
  Scalar ipis{*this, "ipis", COUNT,
              "wake-up IPIs this vCPU sent: its interrupt handler woke another vCPU's sleeping job "
              "(each an exits.ipi unless hv.ipiv)"};
  sc_core::sc_time start, end;   // measured phase: first submission, last completion
  sc_core::sc_time released;     // when the jobs it waits for had finished (0: it waits for none)
  sc_core::sc_time done;         // when its job finished
  bool finished = false;
};

}  // namespace nvmesim::models
