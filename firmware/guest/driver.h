// The guest's NVMe driver logic (Linux drivers/nvme/host/pci.c in spirit),
// with no notion of time: controller bring-up, per-queue submission and
// completion, and the doorbell-buffer path (shadow store, barriers,
// EventIdx load, need_event). The vCPU model decides what each step costs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nvmesim/firmware/nvme/eventidx.h"
#include "nvmesim/firmware/nvme/nvme_spec.h"
#include "nvmesim/firmware/sim/statistics.h"

namespace nvmesim::fw {

// Fault injection: a driver bug in Doorbell Buffer Config's PRPs, which the
// controller must refuse (Invalid Field) and the driver survive on MMIO.
enum class DbbufConfigFault : uint8_t {
  None,
  Misaligned,  // PRP1 8 bytes into its page
  Zero,        // PRP2 = 0
  Same,        // PRP2 = PRP1
  Outside,     // PRP2 = the first page past the driver's memory region
};
// The names guest.dbbuf_fault takes.
inline constexpr EnumEntry<DbbufConfigFault> dbbuf_config_faults[] = {
    {DbbufConfigFault::None, "none"},          {DbbufConfigFault::Misaligned, "misaligned"},
    {DbbufConfigFault::Zero, "zero"},          {DbbufConfigFault::Same, "same"},
    {DbbufConfigFault::Outside, "outside"}};

struct DriverConfig {
  uint16_t io_queues = 1;              // I/O queue pairs to create (qid 1..io_queues)
  uint32_t io_queue_entries = 1024;    // wished entries per I/O queue (clamped to CAP.MQES+1)
  // Entries of each I/O CQ (0: io_queue_entries). Smaller than the commands
  // in flight only to provoke a full CQ (the CQ EventIdx "never" hang).
  uint32_t io_cq_entries = 0;
  uint32_t admin_queue_entries = 32;
  uint32_t max_outstanding_per_queue = 1023;  // tags (and data buffers) per I/O queue
  uint32_t max_transfer_bytes = 131072;       // largest I/O the workload will issue (buffers)
  bool use_dbbuf = true;               // configure the doorbell buffer when offered
  bool admin_shadow = false;           // also use the shadow for the admin queue (qid 0)
  bool dbbuf_full_barrier = true;      // false: Google's older driver (no mb() before the EventIdx load)
  // Zero both buffers when they are configured again after a reset (Linux
  // nvme_dbbuf_dma_alloc). false keeps the old tails and EventIdx values.
  bool zero_dbbuf_on_reset = true;
  NeedEventForm need_event_form = NeedEventForm::Linux;
  bool interrupts = true;              // false: I/O CQs created with IEN = 0 (polled)
  uint16_t vendor_id_for_vendor_dbbuf = nvme::PCI_VENDOR_VENDOR_EXT;
  // Guest-physical memory the driver may use for queues, buffers and PRP lists.
  uint64_t memory_base = 0;
  uint64_t memory_bytes = 0;
  uint32_t bringup_poll_ns = 1000;     // poll interval while waiting on CSTS.RDY / admin CQEs
  uint64_t bringup_timeout_ns = 10'000'000'000ull;  // also the admin-command timeout
  // Where Doorbell Buffer Config goes. false: after Set Features Number of
  // Queues, before the I/O queues (this project's order). true: after the
  // I/O queues are created, where Linux issues it (nvme_dev_add ->
  // nvme_dbbuf_set).
  bool dbbuf_config_after_queues = false;
  DbbufConfigFault dbbuf_config_fault = DbbufConfigFault::None;
  // Interrupt Coalescing (Set Features 0x08) sent at bring-up when either is
  // non-zero: aggregation threshold in CQEs (1..256) and time in 100 us units.
  uint16_t irq_coalescing_threshold = 0;
  uint8_t irq_coalescing_time_100us = 0;
  // Fault injection: every I/O's PRP1 2 bytes off dword alignment, which the
  // controller must answer with PRP Offset Invalid (NVMe 1.3 section 4.3).
  bool io_prp1_misaligned = false;
};

// The CPU the driver code runs on, in the guest around it. Implemented by the
// vCPU model (with timing) and by test harnesses (without).
class DriverEnv {
 public:
  virtual ~DriverEnv() = default;
  // Plain guest memory as the vCPU sees it (queues, buffers, PRP lists).
  virtual uint8_t* guest_memory(uint64_t gpa, uint32_t len) = 0;
  // BAR0 accesses (each one a trapped MMIO access under a hypervisor).
  virtual uint32_t mmio_read32(uint32_t offset) = 0;
  virtual uint64_t mmio_read64(uint32_t offset) = 0;
  virtual void mmio_write32(uint32_t offset, uint32_t value) = 0;
  virtual void mmio_write64(uint32_t offset, uint64_t value) = 0;
  // The doorbell-buffer path, kept apart so the model can give memory
  // ordering its real window: a shadow store may sit in a store buffer
  // until full_barrier() drains it.
  virtual void write_barrier() = 0;                       // wmb()
  virtual void full_barrier() = 0;                        // mb()
  virtual uint32_t load_shadow(uint64_t gpa) = 0;         // old value
  virtual void store_shadow(uint64_t gpa, uint32_t value) = 0;
  virtual uint32_t load_eventidx(uint64_t gpa) = 0;
  // Bring-up only: let `ns` of time pass while polling.
  virtual void wait_ns(uint64_t ns) = 0;
};

// How one doorbell update went.
struct DoorbellUpdate {
  bool updated = false;     // a new value was published (false: nothing to publish)
  bool mmio = false;        // the BAR0 doorbell was written
  bool suppressed = false;  // the shadow + EventIdx showed no MMIO was needed
  bool via_shadow = false;  // the doorbell buffer was active for this update
  uint16_t old_value = 0, new_value = 0, eventidx = 0;
};

// One doorbell's statistics ("driver.sqN" / "driver.cqN"), PRODUCT.md's
// definitions: updates = mmio + suppressed.
struct QueueDoorbellCounters : stats::Group {
  using Scalar = stats::Scalar;
  Scalar updates{*this, "updates", stats::Unit::Count, "new values the driver published"};
  Scalar mmio{*this, "mmio", stats::Unit::Count, "updates that wrote the doorbell register in BAR0"};
  Scalar suppressed{*this, "suppressed", stats::Unit::Count,
                    "updates the shadow doorbell and EventIdx showed needed no MMIO write"};
  Scalar updates_with_dbbuf{*this, "updates_with_dbbuf", stats::Unit::Count,
                            "updates made while the doorbell buffer was active"};
};

struct CqDoorbellCounters : QueueDoorbellCounters {
  Scalar completions{*this, "completions", stats::Unit::Count,
                     "CQEs the driver consumed (completions / updates: CQEs per CQ doorbell update)"};
  Scalar invalid_completions{*this, "invalid_completions", stats::Unit::Count,
                             "CQEs with a command id that was not outstanding (Linux: \"invalid id %d completed on queue %d\")"};
};

struct BringUpResult {
  bool ok = false;
  const char* error = "";      // what failed, when !ok (valid until the next bring-up)
  uint16_t io_queues = 0;      // created
  uint32_t io_queue_entries = 0;
  bool dbbuf_active = false;   // Doorbell Buffer Config succeeded
  uint8_t dbbuf_opcode = 0;    // 0x7C or 0xC0 (0: not attempted)
  uint16_t dbbuf_status = 0;   // its completion status field
  uint16_t vendor_id = 0;
  uint64_t namespace_lbas = 0;
  uint32_t lba_bytes = 0;
  // Identify Controller fields kept for reports.
  uint16_t oacs = 0;
  uint8_t mdts = 0;
  uint32_t nn = 0;
  uint32_t tags_per_queue = 0;  // tags (outstanding commands) per I/O queue
};

// One I/O for the workload: what to do, and to which blocks.
struct IoSpec {
  uint8_t opcode = nvme::io::READ;
  uint64_t slba = 0;
  uint32_t nlb = 1;  // blocks (1-based)
};

struct Completion {
  uint32_t tag;     // as returned by submit()
  uint16_t status;  // status field (0 = success)
  uint16_t qid;
};

class Driver {
 public:
  // Every queue driven from `env` (one CPU, or a harness).
  Driver(const DriverConfig& config, DriverEnv& env);
  // CPUs attached per queue with attach_cpu().
  explicit Driver(const DriverConfig& config);
  // Queue qid's work (submission, completion, doorbell publishing) runs on
  // `cpu`, as blk-mq maps each hardware queue to its CPUs. Queue 0's CPU
  // brings the controller up and runs the admin commands.
  void attach_cpu(uint16_t qid, DriverEnv& cpu);

  // Linux's order: disable (CC.EN=0, wait !RDY), program AQA/ASQ/ACQ, enable,
  // wait RDY, Identify Controller and Namespace 1, Set Features Number of
  // Queues, Doorbell Buffer Config when offered (and allowed), then each CQ
  // followed by its SQ (dbbuf_config_after_queues: the config last, as
  // Linux's nvme_dev_add does). Admin completions are polled with wait_ns().
  // Starts from scratch: queues, tags and counters are new.
  BringUpResult bring_up();
  // Controller reset (CC.EN 1 -> 0) and bring-up again: the buffers are
  // zeroed before they are configured again (unless !zero_dbbuf_on_reset;
  // the first configuration always starts from zeroed buffers).
  BringUpResult reset_and_bring_up();

  // ---- I/O path (qid 1..io_queues).
  // Build the command in the next SQ slot (PRPs for its data buffer); does
  // not publish the tail. Returns the tag, or -1 when the SQ or the tags are
  // full. Also -1 for a request that can never go (qid not a live I/O queue,
  // nlb 0 or > 65536, more than max_transfer_bytes, unknown opcode):
  // last_submit_error() tells which ("" when the queue was only full).
  int32_t submit(uint16_t qid, const IoSpec& io);
  // Publish the SQ tail once for everything submitted since the last call.
  DoorbellUpdate ring_sq(uint16_t qid);
  // Consume completions while the phase tag matches (at most `max`),
  // writing them to `out`, then publish the CQ head once if any were
  // consumed (`*cq_update`, may be null). Returns the number consumed. A CQE
  // whose CID is not an outstanding tag is consumed but not reported
  // (invalid_completions()).
  unsigned reap(uint16_t qid, Completion* out, unsigned max, DoorbellUpdate* cq_update);
  // reap() in two steps, so the guest can finish each I/O between them
  // (nvme_poll_cq, then nvme_ring_cq_doorbell): consume without publishing,
  // then publish the CQ head once (no update when nothing was consumed).
  unsigned consume_completions(uint16_t qid, Completion* out, unsigned max);
  DoorbellUpdate update_cq_head(uint16_t qid);
  // True when CQ qid has a CQE whose phase tag matches.
  bool completion_ready(uint16_t qid) const;
  uint32_t outstanding(uint16_t qid) const;
  uint32_t queue_entries() const;
  uint32_t cq_entries() const;  // entries of each I/O CQ

  // ---- Introspection.
  bool dbbuf_active() const;
  // Where the buffers are carved (valid after bring_up(), active or not).
  uint64_t shadow_buffer_addr() const;
  uint64_t eventidx_buffer_addr() const;
  const QueueDoorbellCounters& sq_counters(uint16_t qid) const;
  const QueueDoorbellCounters& cq_counters(uint16_t qid) const;
  uint32_t dstrd() const { return dstrd_; }  // CAP.DSTRD, as read at bring-up
  stats::Group& stats() { return stats_; }
  uint16_t sq_tail(uint16_t qid) const;
  uint16_t cq_head(uint16_t qid) const;
  // Guest-physical address of the data buffer of tag (for tests that check data).
  uint64_t data_buffer(uint16_t qid, uint32_t tag) const;
  const DriverConfig& config() const { return config_; }

  // ---- Additions.
  const BringUpResult& last_bring_up() const { return result_; }
  const char* last_submit_error() const { return submit_error_; }
  uint32_t tags_per_queue() const { return tags_per_queue_; }
  uint64_t invalid_completions(uint16_t qid) const;
  // Guest memory bring_up() carves for `config` when the controller has
  // CAP.MQES = mqes (0's based) and CAP.DSTRD = dstrd; size
  // DriverConfig::memory_bytes with it (plus up to a page if memory_base is
  // not page aligned).
  static uint64_t memory_needed(const DriverConfig& config, uint16_t mqes = 0xFFFF,
                                uint32_t dstrd = 0);

 private:
  static constexpr uint32_t PAGE = 4096;  // CC.MPS = 0

  // One queue pair as the driver sees it (qid 0: admin).
  struct Queue {
    uint64_t sq_gpa = 0, cq_gpa = 0;
    uint32_t entries = 0;        // SQ entries
    uint32_t cq_entries = 0;
    uint16_t sq_tail = 0;        // local tail (next free slot)
    uint16_t sq_tail_published = 0;
    uint16_t sq_head = 0;        // from the last CQE's SQHD
    uint16_t cq_head = 0;
    uint16_t cq_head_published = 0;
    bool cq_phase = true;        // phase expected at cq_head
    std::vector<uint32_t> free_tags;  // stack of free tag indices
    std::vector<uint8_t> tag_busy;
    // Held apart: statistics stay where the "driver" group found them.
    std::unique_ptr<QueueDoorbellCounters> sq_counters = std::make_unique<QueueDoorbellCounters>();
    std::unique_ptr<CqDoorbellCounters> cq_counters = std::make_unique<CqDoorbellCounters>();
  };

  // Addresses carved from the guest region.
  struct Layout {
    uint64_t admin_sq = 0, admin_cq = 0, identify = 0, shadow = 0, eventidx = 0;
    uint64_t dbbuf_bytes = 0;
    std::vector<uint64_t> io_sq, io_cq, data, prp;  // index qid - 1
    uint64_t end = 0;
  };
  // Computes the layout; false (*error set) when the configuration is
  // invalid or the region too small.
  static bool plan_layout(const DriverConfig& c, uint32_t io_entries, uint32_t cq_entries,
                          uint32_t tags, uint32_t dstrd, Layout& out, std::string* error);
  static uint32_t io_cq_entries_for(const DriverConfig& c, uint32_t io_entries, uint16_t mqes);
  static uint32_t data_buffer_stride(const DriverConfig& c);
  static bool needs_prp_list(const DriverConfig& c);
  // PRP list pages per tag: 512 entries a page, the last one of a full page
  // chaining to the next when more follow (NVMe 1.3 section 4.3).
  static uint32_t prp_list_pages(const DriverConfig& c);

  BringUpResult fail(std::string message);
  void reset_state();
  bool wait_ready(bool ready);
  // Runs one admin command to completion; false (error_ set) on a timeout
  // or a malformed completion. *status gets the status field.
  bool admin_command(nvme::SubmissionEntry cmd, const char* name, uint16_t* status,
                     uint32_t* dw0);
  bool configure_dbbuf(BringUpResult& r);
  bool create_io_queue(uint16_t qid);
  bool uses_shadow(uint16_t qid) const;
  // Publishes queue qid's SQ tail (sq) or CQ head (!sq) if it changed.
  DoorbellUpdate publish(uint16_t qid, bool sq);
  uint8_t* mem(uint64_t gpa, uint32_t len) const { return cpu(0).guest_memory(gpa, len); }
  DriverEnv& cpu(uint16_t qid) const;  // the CPU queue qid's work runs on
  Queue* io_queue(uint16_t qid);
  const Queue* queue(uint16_t qid) const;

  DriverConfig config_;
  std::vector<DriverEnv*> cpus_;  // by queue id
  stats::Group stats_;  // "driver": sqN and cqN per queue
  uint64_t cap_ = 0;
  uint32_t dstrd_ = 0;
  uint32_t cc_ = 0;               // last CC value written (EN aside)
  Layout layout_;
  std::vector<Queue> queues_;     // [0] admin, [1..io_queues] I/O
  uint16_t io_queues_ = 0;
  uint32_t io_entries_ = 0;
  uint32_t io_cq_entries_ = 0;
  uint32_t tags_per_queue_ = 0;
  uint32_t lba_bytes_ = 0;
  bool dbbuf_active_ = false;
  bool dbbuf_configured_once_ = false;  // survives resets: later configs reuse the buffers
  uint16_t admin_cid_ = 0;
  BringUpResult result_;
  std::string error_;             // storage for result_.error
  const char* submit_error_ = "";
};

}  // namespace nvmesim::fw
