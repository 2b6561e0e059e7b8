// What a vCPU is given by the configuration: its fio job's options
// (WorkloadParams, fio's flat names), what the guest's driver costs it
// (GuestCpuCosts, guest.*), and where it sits in the system (VcpuParams).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <systemc>

#include "nvmesim/models/guest/fio_options.h"
#include "nvmesim/models/guest/fio_verify_opts.h"
#include "nvmesim/models/guest/workload.h"
#include "nvmesim/models/sim/param_defaults.h"

namespace nvmesim::models {

class HostCpus;

// How fio's engine hands the job's I/O to the kernel, where it differs from
// libaio's io_submit (fio's flat names; set from a job file's ioengine and
// the io_uring engines' options, platform/fio/fio_job.cpp). Its own visit
// table, listed after the other components' (platform/config/param_list.cpp);
// each job's are loaded from its configuration with WorkloadParams. The
// passthrough's cost is a guest.* name (a dotted name is taken whole).
struct IoEngineParams {
  bool uring_cmd{};      // ioengine=io_uring_cmd, cmd_type=nvme: NVMe passthrough on /dev/ngXnY
  bool sqthread_poll{};  // fio's sqthread_poll: a kernel SQPOLL thread submits (IORING_SETUP_SQPOLL)
  double uring_cmd_share{};  // guest.uring_cmd_share: a passthrough command's cost / guest.submit_cost

  IoEngineParams() { set_param_defaults(*this); }

  static constexpr const char* param_prefix = "";
  template <class V>
  void visit(V& v) {
    v.flag(uring_cmd, "uring_cmd", "off",
           "the job's I/O is NVMe passthrough on the generic char device (fio's ioengine=io_uring_cmd, "
           "cmd_type=nvme): one command per I/O, no bio split (bs above nvme.mdts is refused, as the kernel "
           "does), guest.uring_cmd_share of guest.submit_cost per command");
    v.flag(sqthread_poll, "sqthread_poll", "off",
           "a kernel SQPOLL thread submits the job's I/O (fio's sqthread_poll, io_uring engines only): no "
           "submit call, the per-command cost on that thread (vcpuN.sqpoll_time), not the job's vCPU; fio "
           "spins on the CQ ring instead of sleeping in a reap call");
    // An assumption, not fitted: FAST '24's "I/O Passthru" (Joshi et al.)
    // reports 16-40% more peak IOPS than the io_uring block path, so the
    // share is below 1; 0.75 (a quarter of the block path's per-command work
    // saved) is nvmesim's guess at its size. See docs/fio.md.
    v.real(uring_cmd_share, "guest.uring_cmd_share", "0.75", "x", 0, 2,
           "guest CPU per NVMe passthrough command (uring_cmd: nvme_uring_cmd_io, no bio split or merge) as a "
           "share of guest.submit_cost (the block path's per command); 0.75 is an assumption");
  }
};

// One fio job's options, fio's flat names (see models/sim/param_visit.h). A
// vCPU's Params are these plus its own (VcpuParams derives from it).
struct WorkloadParams {
  JobSpec job;
  uint32_t iodepth{};
  uint32_t numjobs{};             // vCPUs (and I/O queue pairs) running the job
  sc_core::sc_time runtime;       // 0: until number_ios
  uint64_t number_ios{};          // 0: until runtime
  uint32_t batch_submit{};        // fio iodepth_batch_submit: I/Os per SQ doorbell update
  uint32_t batch_complete_min{};  // fio iodepth_batch_complete_min: I/Os a reap waits for
  uint32_t batch_complete_max{};  // fio iodepth_batch_complete_max: most I/Os one reap takes
  VerifyMode verify{};            // fio verify: what writes carry and reads check (models/guest/fio_verify.h)
  uint32_t verify_interval{};     // fio verify_interval: bytes per header (0 = bs)
  std::string verify_pattern;     // fio verify_pattern (empty: none)
  bool verify_fatal{};            // fio verify_fatal: the job stops at its first mismatch
  bool do_verify{};               // fio do_verify: a writing job reads back what it wrote, after its writes
  uint32_t iodepth_low{};         // fio iodepth_low: a full queue is reaped down to this (0 = iodepth)
  std::string rate, rate_iops;    // fio rate / rate_iops: "read[,write]" per second (models/guest/fio_options.h)
  sc_core::sc_time thinktime;     // fio thinktime: stall after every thinktime_blocks I/Os issued
  sc_core::sc_time thinktime_spin;  // ... of which the first part spins (guest work), the rest sleeps
  uint32_t thinktime_blocks{};    // fio thinktime_blocks
  // fio's latency_target search (models/guest/fio_latency_target.h).
  sc_core::sc_time latency_target;  // 0: no search, the depth is iodepth
  sc_core::sc_time latency_window;  // each window judges the depth
  double latency_percentile{};      // % of a window's I/Os within the target for success
  bool latency_run{};               // keep searching instead of ending at the depth found
  IoEngineParams engine;            // its own visit table (not WorkloadParams::visit's)

  WorkloadParams() { set_param_defaults(*this); }  // the visit lines' defaults

  static constexpr const char* param_prefix = "";
  static constexpr EnumEntry<VerifyMode> verify_modes[] = {
      {VerifyMode::Off, "off"},     {VerifyMode::Pattern, "pattern"}, {VerifyMode::Crc32c, "crc32c"},
      {VerifyMode::Crc32, "crc32"}, {VerifyMode::Md5, "md5"},         {VerifyMode::Sha256, "sha256"},
      {VerifyMode::Meta, "meta"}};
  template <class V>
  void visit(V& v) {
    using namespace param_units;
    v.choice(job.rw, "rw", "randread", rw_modes, "", "I/O pattern, as fio's rw");
    v.size(job.bs, "bs", "4k", 512, 1 * MiB,
           "block size of each I/O (above nvme.mdts: split into commands, as Linux's block layer)");
    v.integer(iodepth, "iodepth", "32", "I/Os", 1, 4095, "I/Os kept in flight per job");
    v.integer(numjobs, "numjobs", "1", "jobs", 1, 64, "jobs, one per vCPU and I/O queue pair");
    v.time(runtime, "runtime", "0s", 0, 3600 * S, "measured interval (0 = until number_ios)");
    v.integer(number_ios, "number_ios", "200000", "I/Os", 0, 1e10,
              "I/Os each job completes, as fio (0 = until runtime); k, m, g multiply by 1024 as in fio",
              ParamOptions{true, false, ""});
    v.size(job.size, "size", "1g", 4 * KiB, 1 * TiB, "region of the namespace the jobs address");
    v.integer(job.rwmixread, "rwmixread", "50", "%", 0, 100, "percentage of reads for rw=randrw");
    v.integer(job.seed, "seed", "1", "", 0, 9223372036854775807.0, "random seed (same seed, same run)");
    v.integer(batch_submit, "iodepth_batch_submit", "1", "I/Os", 1, 4095,
              "I/Os submitted together, one SQ doorbell update per batch (fio's)");
    v.integer(batch_complete_min, "iodepth_batch_complete_min", "1", "I/Os", 1, 4095,
              "I/Os a job waits for before it reaps (fio's; its queue full, it reaps then)");
    v.integer(batch_complete_max, "iodepth_batch_complete_max", "0", "I/Os", 0, 4095,
              "most I/Os one reap takes (fio's; 0 = iodepth_batch_complete_min)");
    v.choice(verify, "verify", "off", verify_modes, "",
             "fio's verify: pattern (a per-block pattern, or verify_pattern's), or crc32c, crc32, md5, sha256, "
             "meta (fio's verify_header and checksum per verify_interval); reads of written blocks, and every read of a "
             "read-only job, check it");
    v.integer(iodepth_low, "iodepth_low", "0", "I/Os", 0, 4095,
              "a full queue is reaped until this many I/Os are left (fio's; 0 = iodepth)");
    v.text(job.bssplit_text, "bssplit", "", fio_opt::check_bssplit,
           "block sizes by weight, fio's bs/perc:bs/perc[,write's] (empty: bs)");
    v.text(job.bsrange_text, "bsrange", "", fio_opt::check_bsrange,
           "block sizes min-max[,write's], uniform over multiples of min as fio (empty: bs)");
    v.size(job.blockalign, "blockalign", "0", 0, 1 * MiB,
           "random offsets aligned to this many bytes, a multiple of nvme.lba_bytes (fio's blockalign / ba; "
           "0 = the block size; sequential I/O ignores it, as fio)");
    v.text(job.distribution_text, "random_distribution", "random", fio_opt::check_distribution,
           "random offsets: random, zipf[:theta], pareto[:h], normal[:dev%] (fio's, lib/zipf.c), zoned:A/S:... (A% of accesses in the next S% of the region)");
    v.text(rate, "rate", "", fio_opt::check_rate,
           "bytes per second per job, read[,write] (fio's rate; empty: no limit)");
    v.text(rate_iops, "rate_iops", "", fio_opt::check_rate_iops,
           "I/Os per second per job, read[,write] (fio's rate_iops; empty: no limit)");
    v.time(thinktime, "thinktime", "0s", 0, 3600 * S,
           "stall after thinktime_blocks I/Os, in-flight ones completed first (fio's)");
    v.time(thinktime_spin, "thinktime_spin", "0s", 0, 3600 * S,
           "part of thinktime spent busy (guest work) instead of sleeping (fio's)");
    v.integer(thinktime_blocks, "thinktime_blocks", "1", "I/Os", 1, 1e9,
              "I/Os issued between thinktimes (fio's)");
    v.time(latency_target, "latency_target", "0s", 0, 3600 * S,
           "search the largest queue depth up to iodepth at which latency_percentile of the I/Os' total latency "
           "(fio's lat) stays within this (fio's latency_target; 0 = off)");
    v.time(latency_window, "latency_window", "0s", 0, 3600 * S,
           "time each depth of the latency_target search runs before it is judged (fio's latency_window)");
    v.real(latency_percentile, "latency_percentile", "100", "%", 0, 100,
           "share of a window's I/Os that must be within latency_target (fio's latency_percentile)");
    v.flag(latency_run, "latency_run", "off",
           "keep adjusting the depth to latency_target instead of ending the job at the depth found (fio's latency_run)");
    v.size(verify_interval, "verify_interval", "0", 0, 1 * MiB,
           "bytes each verify header covers, dividing bs (fio's verify_interval; 0 = bs)");
    v.text(verify_pattern, "verify_pattern", "", fio_opt::check_verify_pattern,
           "bytes writes carry, repeated: 0x hex, a number or a \"string\" (fio's verify_pattern; empty: "
           "random data, or pattern's own)");
    v.flag(verify_fatal, "verify_fatal", "off", "a job stops at its first verify mismatch (fio's verify_fatal)");
    v.flag(do_verify, "do_verify", "on",
           "a job that writes with verify reads back each block it wrote, in offset order, after its writes "
           "(fio's do_verify, verify_sort)");
  }
  // The largest I/O the job issues (buffers, MDTS).
  uint64_t max_bs() const { return std::max(job.max_bs(0), job.max_bs(1)); }
};

// What the guest's driver costs a vCPU: guest.submit_cost and the others
// GuestParams (models/guest/guest.h) visits.
struct GuestCpuCosts {
  sc_core::sc_time submit_cost;       // guest CPU per command submitted
  sc_core::sc_time complete_cost;     // guest CPU per completion
  sc_core::sc_time irq_entry;         // guest interrupt entry
  // What Linux pays per system call, not per I/O (0: folded into the above):
  sc_core::sc_time submit_call_cost;  // per io_submit call (fio's iodepth_batch_submit batch)
  sc_core::sc_time reap_call_cost;    // per io_getevents call (fio's reap)
  sc_core::sc_time reap_event_cost;   // per event io_getevents returns
  sc_core::sc_time reap_sleep_cost;   // per io_getevents call that slept: the task's switch out and back in
  sc_core::sc_time poll_interval;     // polled completions: time between checks
  sc_core::sc_time store_visibility;  // store-buffer drain time
  double verify_gbps{};               // fio verify's checksum throughput (0: the mode's own figure)
};

// One vCPU's settings: its job's options and the driver's costs (both from
// the configuration), and where it sits.
struct VcpuParams : WorkloadParams, GuestCpuCosts {
  unsigned index = 0;
  uint16_t qid = 1;                 // its I/O queue pair
  bool poll_completions = false;
  uint32_t io_vector = 0;           // MSI data of its I/O CQ
  uint32_t admin_vector = 0;        // MSI data of the admin CQ
  HostCpus* cpus = nullptr;         // shared host cores (null: a core of its own)
};

}  // namespace nvmesim::models
