// The NVMe controller's queue-processing logic, with no notion of time:
// BAR0 register file, admin commands, I/O submission and completion queues,
// PRP walking, the doorbell buffer (shadow doorbells + EventIdx). The
// SystemC model (models/nvme/nvme_controller) decides when each entry point runs
// and what each DMA costs.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "nvmesim/firmware/nvme/arbitration.h"
#include "nvmesim/firmware/nvme/controller_env.h"
#include "nvmesim/firmware/nvme/controller_tag.h"
#include "nvmesim/firmware/nvme/dbbuf_device_steps.h"
#include "nvmesim/firmware/nvme/dbbuf_policy.h"
#include "nvmesim/firmware/nvme/nvme_spec.h"
#include "nvmesim/firmware/sim/statistics.h"

namespace nvmesim::fw {

struct ControllerConfig {
  uint16_t mqes = 4095;            // CAP.MQES: largest queue, 0's based (4096 entries)
  uint8_t dstrd = 0;               // CAP.DSTRD: doorbell stride 4 << DSTRD
  uint8_t cap_timeout = 20;        // CAP.TO, 500 ms units
  uint8_t mpsmin = 0;              // CAP.MPSMIN: 4 KiB
  uint8_t mpsmax = 4;              // CAP.MPSMAX: 64 KiB
  uint16_t max_io_queues = 64;     // I/O SQs (and CQs) supported, qid 1..max_io_queues
  uint16_t msix_vectors = 65;      // MSI-X table size
  uint8_t mdts = 5;                // Maximum Data Transfer Size: 2^MDTS min pages
  uint32_t lba_bytes = 512;
  uint64_t namespace_lbas = 2097152;  // 1 GiB of 512-byte LBAs
  uint16_t pci_vendor_id = nvme::PCI_VENDOR_QEMU;
  DbbufMode dbbuf = DbbufMode::Spec;
  EventIdxPolicy sq_eventidx = EventIdxPolicy::Echo;
  EventIdxPolicy cq_eventidx = EventIdxPolicy::Echo;
  MmioDoorbellValue mmio_doorbell_value = MmioDoorbellValue::Use;
  // The shadow and EventIdx accesses around each command and CQE
  // (dbbuf_device_steps.h): QEMU's by default; tests and `nvmesim verify`
  // mutate it to show what each access is for.
  DbbufDeviceOrder dbbuf_order;
  // Test seam: the code of the shadow loads and EventIdx stores
  // (dbbuf_device_steps.h); nullptr: the firmware's, fw::kDbbufStepCode.
  const DbbufStepCode* dbbuf_step_code = nullptr;
  uint64_t guest_memory_bytes = 0;  // doorbell-buffer and data-buffer range checks (0: none)
  // CAP.AMS bit 17: Weighted Round Robin with Urgent Priority Class offered
  // (CC.AMS 001b accepted). Off by default, as QEMU's controller, which
  // arbitrates round robin only and reports CAP.AMS 0.
  bool wrr_urgent = false;
};

// What a BAR0 write asked of the model.
struct Bar0WriteEffect {
  enum Kind : uint8_t {
    None,            // plain register write (or ignored)
    SqDoorbell,      // new work may be in SQ `qid`: schedule process_sq(qid)
    CqDoorbell,      // CQ `qid` has room again: schedule post_completions(qid)
    EnableRequested, // CC.EN 0 -> 1: call complete_enable() after the enable latency
    Reset,           // CC.EN 1 -> 0: queues dropped, outstanding I/O abandoned
    Shutdown,        // CC.SHN written: shutdown completed (CSTS.SHST)
  };
  Kind kind = None;
  uint16_t qid = 0;
};

// Counters the controller keeps (platform/system/system.cpp resets them when
// measurement starts; the model adds its own to the same "nvme" group).
struct ControllerCounters : stats::Group {
  using Scalar = stats::Scalar;
  static constexpr stats::Unit COUNT = stats::Unit::Count;
  Scalar commands_fetched{*this, "commands_fetched", COUNT, "SQEs read from SQs (admin and I/O)"};
  Scalar admin_commands{*this, "admin_commands", COUNT, "admin commands executed"};
  Scalar io_commands{*this, "io_commands", COUNT, "I/O commands fetched and checked"};
  Scalar completions_posted{*this, "completions_posted", COUNT, "CQEs written to CQs (admin and I/O)"};
  Scalar interrupts_raised{*this, "interrupts_raised", COUNT,
                           "interrupts the controller raised (after INTMS, before the MSI-X mask and coalescing)"};
  Scalar shadow_reads{*this, "shadow_reads", COUNT, "DMA reads of shadow doorbell entries"};
  Scalar eventidx_writes{*this, "eventidx_writes", COUNT, "DMA writes of EventIdx entries"};
  Scalar invalid_doorbell_writes{*this, "invalid_doorbell_writes", COUNT,
                                 "doorbell writes to a missing queue or with an invalid value (AER Invalid Doorbell Register / Write Value)"};
  Scalar async_events{*this, "async_events", COUNT, "asynchronous events raised"};
  Scalar cq_full_waits{*this, "cq_full_waits", COUNT, "times posting stopped because the CQ was full"};
};

// Who posts which completions, and when (posting = writing CQEs into the CQ
// in guest memory, then one MSI-X per batch):
//  - process_sq(0, ...) executes admin commands at once and posts the admin
//    CQ at the end of the burst (AERs stay held until an event arrives);
//  - process_sq(io, ...) posts its CQ at the end of the burst only if it
//    completed commands itself (a failed check: Invalid Opcode, LBA Out of
//    Range, PRP errors...);
//  - complete_io() only enqueues the completion; the model then calls
//    post_completions(cq of the SQ) (sq_state(req.sqid).cqid) when it wants
//    the batch written;
//  - an asynchronous event that completes a held AER posts the admin CQ at
//    once (from bar0_write, process_sq or post_completions), except inside
//    an admin burst, whose end posts it;
//  - a full CQ keeps completions pending; a CQ doorbell that finds pending
//    completions returns CqDoorbell and the model calls post_completions().
// A command holds a slot (its tag) until its CQE is posted; an SQ stops
// fetching while it holds as many slots as it has entries (as QEMU's
// req_list), and sq_has_work() stays true meanwhile.
// Guest input never throws or asserts: bad values give NVMe statuses,
// asynchronous events or CSTS.CFS.
class Controller {
 public:
  Controller(const ControllerConfig& config, ControllerEnv& env);

  const ControllerConfig& config() const { return config_; }

  // ---- BAR0 (register file and doorbells); size is 4 or 8 bytes.
  uint64_t bar0_read(uint32_t offset, unsigned size) const;
  // A 64-bit access is two 32-bit accesses (low dword first). Doorbell
  // writes: SqDoorbell(qid) for every accepted SQ tail write (also when the
  // value is ignored because the buffer is on and mmio_doorbell_value is
  // Ignore); CqDoorbell(qid) only when completions wait on that CQ, else
  // None. Writes to missing queues or bad values (>= the queue size, a CQ
  // head beyond the posted entries, an SQ tail behind the fetch head, i.e.
  // more new entries than free ones) raise an asynchronous event and return
  // None; writes while not ready are ignored. CC.EN 1 -> 0 with
  // CC.SHN set in the same write returns Reset (CSTS.SHST shows the shutdown).
  Bar0WriteEffect bar0_write(uint32_t offset, uint64_t value, unsigned size);
  // CC.EN 0 -> 1 finishes: CSTS.RDY = 1 (admin queue from AQA/ASQ/ACQ).
  // An invalid configuration (AQA sizes 0, ASQ/ACQ zero or not page aligned,
  // CC.MPS outside CAP.MPSMIN..MPSMAX, CC.CSS not 0, CC.AMS not one CAP.AMS
  // offers: 000b always, 001b with config.wrr_urgent) sets CSTS.CFS and
  // leaves RDY 0. CC.IOSQES/IOCQES are checked at Create I/O SQ/CQ time.
  // The arbiter takes CC.AMS and the Arbitration feature.
  void complete_enable();

  // ---- Queue processing (called by the model's emulation thread).
  // Fetches and executes up to `budget` commands from SQ `sqid`: admin
  // commands complete at once, I/O commands go to the backend. With the
  // doorbell buffer on it reads the shadow tail first and after each command
  // makes the accesses of config.dbbuf_order.sq (by default the SQ EventIdx
  // policy's store, e.g. echo: EventIdx = consumed tail; device_barrier();
  // the shadow tail re-read). Returns commands consumed.
  // A shadow value >= the queue size or behind the fetch head (as for the
  // MMIO doorbell) is not trusted: ignored, with an
  // Invalid Doorbell Write Value event. The buffer covers every queue in
  // Spec mode (the admin queue too, as QEMU: its MMIO values are always
  // used and mirrored into the shadow, since Linux never writes the admin
  // shadow) and the I/O queues only in Vendor mode (as the Google vendor-extension device).
  // No-op while not ready or after CSTS.CFS; an unreadable SQE sets CFS.
  unsigned process_sq(uint16_t sqid, unsigned budget);
  // True when SQ `sqid` exists and holds commands the device knows of
  // (tail from the last doorbell value or shadow read != head).
  bool sq_has_work(uint16_t sqid) const;
  // A notification that carries no value (ioeventfd, or the MMIO value
  // ignored): refresh SQ `sqid`'s tail from the shadow buffer. Returns
  // sq_has_work(sqid) afterwards.
  bool refresh_sq_tail_from_shadow(uint16_t sqid);
  // AioContext polling of an SQ, as Jinhao Fan's unmerged "hw/nvme: add
  // polling support" (qemu-devel, Aug 2022, v3 4/4) does it:
  // nvme_sq_notifier_aio_poll_begin writes the SQ EventIdx (the tail known)
  // and then stops updating it while the thread polls (sq->suppress_db), so
  // once the guest has passed it, it skips the MMIO doorbell;
  // nvme_sq_notifier_aio_poll_end writes it again and resumes. poll_end
  // returns the io_poll that follows it (nvme_sq_notifier_aio_poll: the
  // shadow tail read): true when the SQ has commands to fetch. No-ops for a
  // queue the buffer does not cover.
  void sq_poll_begin(uint16_t sqid);
  bool sq_poll_end(uint16_t sqid);
  // The CQ doorbell's eventfd fired (it carries no value): read the head
  // from the shadow doorbell (QEMU hw/nvme/ctrl.c nvme_cq_notifier ->
  // nvme_update_cq_head). False if the buffer does not cover the queue.
  bool refresh_cq_head_from_shadow(uint16_t cqid);
  // The backend finished command `tag` (status: the 15-bit Status Field).
  // Enqueues the completion only. A tag abandoned by a reset or an SQ
  // deletion (its commands are dropped without CQEs, as QEMU) is ignored.
  void complete_io(uint32_t tag, uint16_t status);
  // Post completions that waited for room in CQ `cqid` (re-reading the
  // shadow head when the buffer is on). Returns completions posted.
  unsigned post_completions(uint16_t cqid);
  bool cq_has_pending(uint16_t cqid) const;

  // ---- Introspection (traces, watchdog, tests).
  struct SqState {
    bool exists = false;
    uint64_t base = 0;
    uint32_t size = 0;
    uint32_t head = 0;  // next entry the device fetches
    uint32_t tail = 0;  // tail as the device knows it
    uint16_t cqid = 0;
  };
  struct CqState {
    bool exists = false;
    uint64_t base = 0;
    uint32_t size = 0;
    uint32_t head = 0;  // head as the device knows it
    uint32_t tail = 0;  // next entry the device posts
    bool phase = true;
    bool interrupts_enabled = false;
    uint16_t vector = 0;
    uint32_t pending = 0;  // completions waiting for room
  };
  SqState sq_state(uint16_t qid) const;
  CqState cq_state(uint16_t qid) const;
  bool enabled() const;  // CSTS.RDY
  bool fatal() const;    // CSTS.CFS
  bool dbbuf_active() const;
  uint64_t shadow_buffer_addr() const;
  uint64_t eventidx_buffer_addr() const;
  uint32_t outstanding_io() const;  // commands handed to the backend, not yet completed
  const ControllerCounters& counters() const { return counters_; }
  ControllerCounters& counters() { return counters_; }
  uint16_t interrupt_coalescing_threshold() const;  // Set Features 0x08 THR (0's based)
  uint8_t interrupt_coalescing_time_100us() const;
  // Command arbitration (firmware/nvme/arbitration.h): configured by the
  // controller (CC.AMS at enable, Set Features 0x01, each I/O SQ's QPRIO at
  // its creation, SQ deletion and reset), driven by an engine that arbitrates
  // (the hardware engine: set_ready / next / consumed around process_sq).
  Arbiter& arbiter() { return arbiter_; }
  const Arbiter& arbiter() const { return arbiter_; }
  const ArbitrationFeature& arbitration_feature() const { return arb_feature_; }  // Feature 0x01

 private:
  // ---- Command slots. Every fetched command holds one until its CQE is
  // posted (or it is abandoned); its tag is make_tag(generation, slot)
  // (firmware/nvme/controller_tag.h).
  static constexpr uint32_t NO_SLOT = 0xFFFFFFFFu;
  static constexpr unsigned AER_MAX = 4;         // AERL + 1 (AERL = 3, as QEMU)
  static constexpr unsigned AE_QUEUE_MAX = 8;    // events kept while no AER waits
  enum class SlotState : uint8_t { Free, Executing, Backend, Pending, AerWait };
  struct Slot {
    uint32_t next = NO_SLOT;  // free list, or the owning CQ's pending FIFO
    uint32_t dw0 = 0;
    uint16_t sqid = 0;
    uint16_t cid = 0;
    uint16_t status = 0;      // Status Field (without the phase tag)
    uint8_t gen = 0;
    SlotState state = SlotState::Free;
  };
  struct Sq {
    bool exists = false;
    bool eventidx_parked = false;  // Park policy: EventIdx already written
    bool suppress_eventidx = false;  // polled: EventIdx not updated (sq_poll_begin)
    uint64_t base = 0;
    uint32_t size = 0;
    uint32_t head = 0;
    uint32_t tail = 0;
    uint32_t in_use = 0;           // slots held; fetching stops at `size` (as QEMU's req_list)
    uint16_t cqid = 0;
  };
  struct Cq {
    bool exists = false;
    bool phase = true;
    bool ien = false;
    bool stalled = false;          // full with completions waiting (counted once)
    bool posting = false;          // re-entrancy guard for post_completions
    bool eventidx_parked = false;
    uint16_t vector = 0;
    uint16_t attached_sqs = 0;
    uint64_t base = 0;
    uint32_t size = 0;
    uint32_t head = 0;
    uint32_t tail = 0;
    uint32_t pend_first = NO_SLOT;  // FIFO of Pending slots
    uint32_t pend_last = NO_SLOT;
    uint32_t pending = 0;
  };

  // registers (controller_registers.cpp)
  uint32_t read32(uint32_t offset) const;
  Bar0WriteEffect write32(uint32_t offset, uint32_t value);
  Bar0WriteEffect write_cc(uint32_t value);
  Bar0WriteEffect write_doorbell(uint32_t offset, uint32_t value);
  void controller_reset();
  void set_fatal();
  void raise_interrupt(uint16_t vector);
  // slots (controller.cpp)
  void reserve_slots(uint32_t count);
  uint32_t alloc_slot(uint16_t sqid, uint16_t cid);
  void release_slot(uint32_t index);
  void enqueue_completion(uint32_t index, uint16_t status, uint32_t dw0);
  void abandon_sq_commands(uint16_t sqid);
  // asynchronous events (controller.cpp)
  void async_event(uint8_t type, uint8_t info, uint8_t log_page);
  void invalid_doorbell(uint8_t info);
  void complete_aer(uint32_t slot, uint32_t dw0);
  // admin (controller_admin.cpp): returns the Status Field; dw0 out
  uint16_t execute_admin(const nvme::SubmissionEntry& cmd, uint32_t slot, uint32_t& dw0,
                         bool& held);
  uint16_t admin_identify(const nvme::SubmissionEntry& cmd);
  uint16_t admin_get_log_page(const nvme::SubmissionEntry& cmd);
  uint16_t admin_features(const nvme::SubmissionEntry& cmd, bool set, uint32_t& dw0);
  uint16_t admin_create_cq(const nvme::SubmissionEntry& cmd);
  uint16_t admin_create_sq(const nvme::SubmissionEntry& cmd);
  uint16_t admin_delete_sq(const nvme::SubmissionEntry& cmd);
  uint16_t admin_delete_cq(const nvme::SubmissionEntry& cmd);
  uint16_t admin_dbbuf_config(const nvme::SubmissionEntry& cmd);
  uint16_t write_page_to_host(const nvme::SubmissionEntry& cmd, uint32_t len);
  // I/O (controller_io.cpp)
  bool fetch_command(uint16_t sqid, unsigned& consumed, bool& enqueued);
  uint16_t execute_io(const nvme::SubmissionEntry& cmd, uint16_t sqid, uint32_t slot,
                      bool& submitted);
  bool write_cqe(Cq& cq);
  // doorbell buffer (controller_dbbuf.cpp)
  class DbbufAccess;  // the step code's memory: the buffer's entries through env_
  const DbbufStepCode& step_code() const;
  bool dbbuf_covers(uint16_t qid) const;
  void shadow_read_sq_tail(uint16_t sqid);
  void shadow_read_cq_head(uint16_t cqid);
  void apply_sq_eventidx(uint16_t sqid);
  void apply_cq_eventidx(uint16_t cqid);
  void write_eventidx(uint32_t offset, uint32_t value);
  void mirror_to_shadow(uint32_t offset, uint32_t value);
  bool cq_head_valid(const Cq& cq, uint32_t new_head) const;
  bool sq_tail_valid(const Sq& sq, uint32_t new_tail) const;

  uint32_t page_bytes() const { return page_bytes_; }
  // CDW0 FUSE (bits 9:8) and PSDT (15:14) must be 0: no fused operations
  // and no SGLs are offered (Identify FUSES = 0, SGLS = 0).
  static bool plain_prp_command(const nvme::SubmissionEntry& cmd) {
    return (cmd.flags & 0xC3) == 0;
  }
  bool inside_guest_memory(uint64_t addr, uint64_t len) const {
    const uint64_t mem = config_.guest_memory_bytes;
    return mem == 0 || (addr < mem && mem - addr >= len);
  }

  ControllerConfig config_;
  ControllerEnv& env_;
  ControllerCounters counters_;

  // BAR0
  uint64_t cap_ = 0;
  uint32_t cc_ = 0;
  uint32_t csts_ = 0;
  uint32_t aqa_ = 0;
  uint64_t asq_ = 0;
  uint64_t acq_ = 0;
  uint32_t int_mask_ = 0;     // INTMS/INTMC, vectors 0..31
  uint32_t int_pending_ = 0;  // masked vectors with an MSI-X held back
  uint32_t page_bytes_ = 4096;

  // queues, indexed by qid 0..max_io_queues (sized once at construction)
  std::vector<Sq> sqs_;
  std::vector<Cq> cqs_;

  // command slots: grown at Create I/O SQ time only, never per command
  std::vector<Slot> slots_;
  uint32_t free_slot_ = NO_SLOT;
  uint64_t slots_reserved_ = 0;  // sum of the sizes of the existing SQs
  uint32_t outstanding_io_ = 0;

  // features
  uint16_t nsq_allocated_ = 0;  // 0's based
  uint16_t ncq_allocated_ = 0;
  uint8_t ic_thr_ = 0;
  uint8_t ic_time_ = 0;
  ArbitrationFeature arb_feature_;  // Feature 0x01, at its default until Set Features
  Arbiter arbiter_;

  // doorbell buffer
  bool dbbuf_active_ = false;
  uint64_t dbbuf_shadow_ = 0;
  uint64_t dbbuf_eventidx_ = 0;

  // asynchronous events
  std::array<uint32_t, AER_MAX> aer_slots_{};
  unsigned aer_count_ = 0;
  std::array<uint32_t, AE_QUEUE_MAX> ae_queue_{};
  unsigned ae_first_ = 0;
  unsigned ae_count_ = 0;
  bool in_admin_burst_ = false;

  // scratch (no per-command heap allocation)
  IoRequest req_;
  std::vector<IoRequest::Segment> page_segments_;  // admin data pages (reused)
  std::array<uint8_t, 4096> page_buf_{};
};

}  // namespace nvmesim::fw
