// A vCPU running the guest's NVMe driver and one fio-like job (libaio): the
// job submits I/O to keep `iodepth` unreaped, and once its queue is full
// reaps iodepth_batch_complete_min..max of them (io_getevents), halting when
// none is ready (fio backend.c wait_for_completions). The MSI-X interrupt of
// its CQ preempts whatever the guest is doing, as on real hardware: the
// driver's handler consumes every completion, publishes the CQ head once and
// hands the I/Os to the job's aio ring (Linux drivers/nvme/host/pci.c
// nvme_irq). Time is annotated locally with a quantum keeper; the vCPU syncs
// where shared memory ordering matters.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <functional>
#include <vector>

#include "nvmesim/firmware/guest/driver.h"
#include "nvmesim/firmware/guest/virtio_blk_driver.h"
#include "nvmesim/firmware/guest/virtqueue_driver.h"
#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/models/hv/hypervisor.h"
#include "nvmesim/models/sim/param_defaults.h"
#include "nvmesim/models/guest/fio_latency.h"
#include "nvmesim/models/guest/latency_histogram.h"
#include "nvmesim/models/sim/quantum_keeper.h"
#include "nvmesim/models/sim/stat_time.h"
#include "nvmesim/models/guest/fio_options.h"
#include "nvmesim/models/guest/workload.h"

namespace nvmesim::models {

class Guest;
class HostCpus;

// One fio job's options, fio's flat names (see models/sim/param_visit.h). A
// vCPU's Params are these plus its own (Vcpu::Params derives from it).
struct WorkloadParams {
  JobSpec job;
  uint32_t iodepth{};
  uint32_t numjobs{};             // vCPUs (and I/O queue pairs) running the job
  sc_core::sc_time runtime;       // 0: until number_ios
  uint64_t number_ios{};          // 0: until runtime
  uint32_t batch_submit{};        // fio iodepth_batch_submit: I/Os per SQ doorbell update
  uint32_t batch_complete_min{};  // fio iodepth_batch_complete_min: I/Os a reap waits for
  uint32_t batch_complete_max{};  // fio iodepth_batch_complete_max: most I/Os one reap takes
  bool verify{};                  // fio verify=pattern: writes carry a per-block pattern, reads check it
  uint32_t iodepth_low{};         // fio iodepth_low: a full queue is reaped down to this (0 = iodepth)
  std::string rate, rate_iops;    // fio rate / rate_iops: "read[,write]" per second (models/guest/fio_options.h)
  sc_core::sc_time thinktime;     // fio thinktime: stall after every thinktime_blocks I/Os issued
  sc_core::sc_time thinktime_spin;  // ... of which the first part spins (guest work), the rest sleeps
  uint32_t thinktime_blocks{};    // fio thinktime_blocks

  WorkloadParams() { set_param_defaults(*this); }  // the visit lines' defaults

  static constexpr const char* param_prefix = "";
  static constexpr EnumEntry<bool> verify_modes[] = {{false, "off"}, {true, "pattern"}};
  template <class V>
  void visit(V& v) {
    using namespace param_units;
    v.choice(job.rw, "rw", "randread", rw_modes, "", "I/O pattern, as fio's rw");
    v.size(job.bs, "bs", "4k", 512, 1 * MiB,
           "block size of each I/O (at most nvme.mdts allows; not split)");
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
             "pattern: writes carry a per-block pattern that reads of written blocks check");
    v.integer(iodepth_low, "iodepth_low", "0", "I/Os", 0, 4095,
              "a full queue is reaped until this many I/Os are left (fio's; 0 = iodepth)");
    v.text(job.bssplit_text, "bssplit", "", fio_opt::check_bssplit,
           "block sizes by weight, fio's bs/perc:bs/perc[,write's] (empty: bs)");
    v.text(job.bsrange_text, "bsrange", "", fio_opt::check_bsrange,
           "block sizes min-max[,write's], uniform over multiples of min as fio (empty: bs)");
    v.text(job.distribution_text, "random_distribution", "random", fio_opt::check_distribution,
           "random offsets: random, zipf[:theta], pareto[:h], normal[:dev%] (fio's, lib/zipf.c)");
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
  sc_core::sc_time poll_interval;     // polled completions: time between checks
  sc_core::sc_time store_visibility;  // store-buffer drain time
};

// The vCPU is the CPU the driver's code runs on: its fw::DriverEnv, with
// time (exits, the store buffer, barriers) on this vCPU's clock.
class Vcpu : public sc_core::sc_module,
             public InterruptTarget,
             public fw::DriverEnv,
             public fw::VirtioDriverEnv {
 public:
  // Its job's options and the driver's costs (both from the configuration),
  // and where it sits.
  struct Params : WorkloadParams, GuestCpuCosts {
    unsigned index = 0;
    uint16_t qid = 1;                 // its I/O queue pair
    bool poll_completions = false;
    uint32_t io_vector = 0;           // MSI data of its I/O CQ
    uint32_t admin_vector = 0;        // MSI data of the admin CQ
    HostCpus* cpus = nullptr;         // shared host cores (null: a core of its own)
  };

  tlm_utils::simple_initiator_socket<Vcpu> mmio_socket;

  Vcpu(sc_core::sc_module_name name, const Params& params, Guest& guest);

  void raise_interrupt(uint32_t vector, const sc_core::sc_time& delay) override;

  // ---- fw::DriverEnv: the driver code running on this vCPU.
  uint8_t* guest_memory(uint64_t gpa, uint32_t len) override;
  uint32_t mmio_read32(uint32_t offset) override;
  uint64_t mmio_read64(uint32_t offset) override;
  void mmio_write32(uint32_t offset, uint32_t value) override;
  void mmio_write64(uint32_t offset, uint64_t value) override;
  void write_barrier() override;
  void full_barrier() override;
  uint32_t load_shadow(uint64_t gpa) override;
  void store_shadow(uint64_t gpa, uint32_t value) override;
  uint32_t load_eventidx(uint64_t gpa) override;
  void wait_ns(uint64_t ns) override;
  // ---- fw::VirtioDriverEnv: the virtio-blk driver on this vCPU (guest
  // memory and barriers as above; virtio_rmb is a compiler barrier on x86).
  void read_barrier() override {}
  uint32_t mmio_read(uint32_t offset, unsigned size) override;
  void mmio_write(uint32_t offset, unsigned size, uint32_t value) override;
  void sync_shared_memory();  // let local time pass before touching shared state
  // The PCI core's MSI-X set-up: fills table entry `vector` (BAR2) and
  // unmasks it, untimed (enumeration's exits are not modelled).
  void program_msix_vector(uint16_t vector, uint64_t address, uint32_t data);

  // ---- Stall reports: its queue as the driver sees it, around the
  // device's descriptions of its SQ and CQ.
  uint16_t driver_sq_tail() const;
  std::string describe_queue(const std::string& device_sq, const std::string& device_cq) const;

  // ---- Results.
  // The "vcpuN" statistics group (the hypervisor's exits of this vCPU merge into it).
  struct Results : stats::Group {
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
    Scalar verified_reads{*this, "verified_reads", COUNT, "reads of blocks this job had written, checked (verify=pattern)"};
    Scalar verify_errors{*this, "verify_errors", COUNT, "checked reads whose data did not match"};
    // fio's latencies (models/guest/fio_latency.h), per direction (read, write),
    // and the driver's own: building the command to finishing its completion.
    LatencyStat slat[2], clat[2], lat[2], driver_lat[2];
    IoDepthCounts depths;  // fio's IO depths, submit and complete distributions
    TimeStat guest_time{*this, "guest_time", "guest work (exits apart)"};
    TimeStat idle_time{*this, "idle_time", "time halted, waiting for an interrupt"};
    Scalar halt_poll_hits{*this, "halt_poll_hits", COUNT,
                          "halts whose interrupt came while KVM polled (hv.halt_poll)"};
    Scalar halt_sleeps{*this, "halt_sleeps", COUNT,
                       "halts after which the vCPU thread scheduled out (each costs hv.halt_wakeup)"};
    sc_core::sc_time start, end;   // measured phase: first submission, last completion
    sc_core::sc_time released;     // when the jobs it waits for had finished (0: it waits for none)
    sc_core::sc_time done;         // when its job finished
    bool finished = false;
  };
  const Results& results() const { return results_; }
  // fio's stonewall / wait_for: the job starts once these vCPUs' jobs have
  // finished (set before the simulation starts).
  void wait_for_jobs(std::vector<const Vcpu*> vcpus) { waits_for_ = std::move(vcpus); }
  const sc_core::sc_event& finished_event() const { return finished_event_; }
  // fio's per-I/O logs (write_lat_log, ...): called at each I/O's finish.
  struct IoSample {
    uint64_t elapsed_ps;  // from its job's start, at the reap
    uint64_t slat_ns, clat_ns, lat_ns;  // fio's
    bool write;
    uint32_t bytes;
    uint64_t offset;
  };
  void on_io(std::function<void(const IoSample&)> sink) { io_sink_ = std::move(sink); }
  stats::Group& stats() { return results_; }
  // Its own present: global time plus its local offset (which can pass the
  // quantum by the last increment before it syncs).
  sc_core::sc_time current_time() const { return qk_.current_time(); }
  uint32_t outstanding() const { return outstanding_; }
  // The virtqueue this job submits on (blk_mq_map_queues: vCPU % queues).
  uint16_t virtqueue() const;
  // Another vCPU's virtblk_done completed this job's I/O at `at` (a virtqueue
  // shared by several vCPUs interrupts one of them): blk_mq_complete_request
  // ran there, the job's io_getevents sleeper is woken (the wake-up IPI's
  // own exits are not modelled).
  void complete_remote(const fw::Completion& c, const sc_core::sc_time& at);
  // The vCPU has something of its own to do as time passes (guest work, an
  // exit, an interrupt on its way, a store draining), as opposed to halting
  // for an interrupt nothing has sent or polling a CQ that stays empty.
  bool work_pending() const {
    return !results_.finished && !waiting_for_jobs_ && (!waits_on_device_ || store_head_ < store_buffer_.size());
  }
  const Params& params() const { return params_; }
  sc_core::sc_process_handle thread_handle() const { return thread_; }

 private:
  void run();
  void run_job();
  bool can_issue(uint32_t pending = 0) const;  // pending: I/Os of this batch not yet issued
  void submit_batch();
  void submit_batch_shared(fw::VirtioBlkDriver& vb);
  void submitted(unsigned n);  // the batch's io_submit returned
  bool virtqueue_shared() const;  // virtio.queues < numjobs: other jobs use this job's queue
  bool issue(const NextIo& io, const sc_core::sc_time& started);
  // Halts until the I/O interrupt is due (true) or another vCPU completed
  // one of this job's I/Os (false: a shared virtqueue's interrupt ran there).
  bool wait_for_interrupt();
  void adjust_halt_poll(const sc_core::sc_time& blocked, const sc_core::sc_time& max);
  sc_core::sc_time halt_poll_window_;  // KVM's vcpu->halt_poll_ns
  void reap();
  void quiesce();  // fio's io_u_quiesce: reap until nothing is in flight
  // fio's rate_ddir (io_u.c): true when the next I/O must wait for the
  // rate; with `sleep`, quiesces and sleeps for it first (and returns false).
  bool rate_wait(bool sleep);
  void think();  // fio's handle_thinktime (backend.c)
  void sleep_for(const sc_core::sc_time& d);  // the job sleeps (usec_sleep): the vCPU halts
  bool io_interrupt_due() const;
  void take_io_interrupt();
  void handle_completions(bool from_interrupt);
  void finish_io(const fw::Completion& c);
  // The I/O ended at `end`: latency, results, into the job's aio ring.
  void record_completion(const fw::Completion& c, const sc_core::sc_time& end);
  // fio's reap of n I/Os from the aio ring at the vCPU's present.
  void reap_events(uint32_t n);
  void guest_work(const sc_core::sc_time& t);
  void mmio(tlm::tlm_command cmd, uint32_t offset, void* data, unsigned len);
  void commit_stores();
  void arm_store_drain();
  bool must_sync(const sc_core::sc_time& offset) const;
  void store_buffer_drain();  // SC_METHOD: commit_stores at the stores' time
  void trace_update(bool sq, const fw::DoorbellUpdate& u);
  sc_core::sc_time now() const;
  void sync_local();
  void take_interrupt_lock();  // hv.bql_interrupts

  Params params_;
  Guest& guest_;
  QuantumKeeper qk_;
  tlm::tlm_generic_payload mmio_payload_;  // reused: no allocation per access
  sc_core::sc_process_handle thread_;
  Workload workload_;
  Results results_;

  std::vector<sc_core::sc_time> start_time_;  // per tag: fio prepared it (io_u->start_time)
  std::vector<sc_core::sc_time> issue_time_;  // per tag: its io_submit returned (io_u->issue_time)
  std::vector<uint16_t> batch_tags_;          // tags of the batch being submitted
  // The job's aio ring: I/Os the driver completed, in completion order,
  // until fio reaps them (a tag may be reused by then, so each entry keeps
  // what fio's figures need).
  struct AioEvent {
    sc_core::sc_time started, issued;
    uint64_t offset;
    uint32_t bytes;
    bool write;
  };
  std::vector<AioEvent> aio_ring_;  // capacity: every tag; head/count index it
  size_t aio_head_ = 0, aio_count_ = 0;
  std::vector<uint8_t> is_write_;             // per tag
  std::vector<uint64_t> offset_;              // per tag: byte offset (fio's log_offset)
  std::vector<uint32_t> bytes_;               // per tag
  std::vector<uint64_t> block_;               // per tag: block index (verify)
  std::vector<uint8_t> expect_pattern_;       // per tag: the block was written before this read
  std::vector<uint8_t> written_;              // per block: a write of it completed (verify)
  void fill_pattern(uint8_t* p, uint64_t block) const;
  bool check_pattern(const uint8_t* p, uint64_t block) const;
  std::vector<fw::Completion> reaped_;
  std::vector<fw::VirtioBlkDriver::UsedRequest> used_;  // one virtio interrupt's used requests
  uint32_t outstanding_ = 0;   // submitted to the driver, not yet completed by it
  // fio's view: I/Os submitted and not yet reaped (what iodepth bounds), and
  // those completed by the driver, waiting in the aio ring for fio's reap.
  uint32_t inflight_ = 0, ready_ = 0;
  // fio's rate control (backend.c usec_for_io): bytes per second per
  // direction (0: none), bytes issued, and when the next I/O is due (us
  // from the job's start).
  uint64_t rate_bps_[2] = {0, 0}, rate_issue_bytes_[2] = {0, 0}, rate_next_us_[2] = {0, 0};
  uint64_t last_think_issued_ = 0;  // fio's last_thinktime_blocks
  bool in_interrupt_ = false;  // the driver's interrupt handler runs: no nesting
  bool job_running_ = false;   // interrupts preempt guest work only in the job
  unsigned cpu_id_ = 0;
  void set_runnable(bool runnable);

  // Interrupt lines: the I/O queue's vector and the admin queue's.
  uint32_t io_vector_ = 0, admin_vector_ = 0;
  unsigned admin_irqs_pending_ = 0;
  void take_admin_interrupts();
  bool irq_pending_ = false;
  std::vector<const Vcpu*> waits_for_;
  std::function<void(const IoSample&)> io_sink_;
  bool waiting_for_jobs_ = false;  // its job waits for others (not work of its own)
  sc_core::sc_event finished_event_;
  bool waits_on_device_ = false;  // halted with no interrupt pending, or its last poll found nothing
  sc_core::sc_time irq_time_;
  sc_core::sc_event irq_event_;
  struct PendingIo {
    NextIo io;
    sc_core::sc_time started;
  };
  std::vector<PendingIo> shared_batch_;  // submit_batch_shared's batch (kept: no allocation once grown)
  bool woken_ = false;  // complete_remote: a wake-up at wake_time_
  sc_core::sc_time wake_time_;

  // Store buffer for shadow-doorbell stores: in order, drained at its time
  // or by a full barrier.
  struct PendingStore { uint64_t gpa; uint32_t value; sc_core::sc_time visible_at; };
  std::vector<PendingStore> store_buffer_;
  size_t store_head_ = 0;
  // A store was buffered and the drain's event not yet notified: deferred
  // to the vCPU's next sync (a full barrier may commit it itself first).
  bool store_drain_owed_ = false;
  sc_core::sc_event store_event_;
};

}  // namespace nvmesim::models
