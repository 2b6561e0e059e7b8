// The NVMe controller as a PCIe endpoint: BAR0 (registers and doorbells),
// BAR2 (MSI-X table and PBA) and configuration space as TLM targets, a DMA
// initiator towards the root complex, and the emulation that runs the
// firmware's queue processing on a host thread (or inside the vCPU's exit).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "firmware/controller.h"
#include "models/host_thread.h"
#include "models/param_visit.h"
#include "models/pcie_link.h"
#include "models/storage_backend.h"

namespace nvmesim::models {

// Where a doorbell's processing runs (hv.notify).
enum class NotifyMode {
  Sync,       // inside the vCPU's exit, on the vCPU's time
  Deferred,   // the exit schedules it on a host thread (QEMU's main loop)
  Ioeventfd,  // an ioeventfd wakes the host thread; the value is not passed
  Timer,      // QEMU 2.x hw/block/nvme.c: the exit arms a timer; SQs and CQs are processed when it fires
};
inline constexpr EnumEntry<NotifyMode> notify_modes[] = {
    {NotifyMode::Sync, "sync"}, {NotifyMode::Deferred, "deferred"},
    {NotifyMode::Ioeventfd, "ioeventfd"}, {NotifyMode::Timer, "timer"}};
inline const char* to_string(NotifyMode mode) { return enum_name(notify_modes, mode); }

class NvmeControllerModel : public sc_core::sc_module, public fw::ControllerEnv {
 public:
  // The controller's parameters, nvme.* (see models/param_visit.h); hv.notify,
  // hv.timer_delay and hv.fault come from the hypervisor's (HvParams).
  struct Params {
    fw::ControllerConfig firmware;
    StorageBackend::Params backend;
    // nvme.cq_eventidx and nvme.mmio_doorbell_value; empty: auto, which
    // resolve_auto() turns into the firmware's setting for nvme.dbbuf.
    std::optional<fw::EventIdxPolicy> cq_eventidx;
    std::optional<fw::MmioDoorbellValue> mmio_doorbell_value;
    NotifyMode notify = NotifyMode::Deferred;
    sc_core::sc_time cmd_cost;        // host CPU per command fetched and executed
    sc_core::sc_time cqe_cost;        // host CPU per completion posted
    sc_core::sc_time enable_latency;  // CC.EN=1 to CSTS.RDY=1
    unsigned sq_budget = 64;          // commands per SQ per pass (fairness between queues)
    uint16_t pci_device_id = 0x5845;
    sc_core::sc_time timer_delay;     // NotifyMode::Timer: timer_mod(now + delay) per doorbell / completion
    // Ming Lin's ioeventfd bug (qemu-devel, Google vendor-extension thread):
    // a handler that never reads (clears) its eventfd, in two readings:
    // LostWakeups (later signals wake nobody) or Spin (QEMU's level-triggered poll: the fd stays readable,
    // so the thread never sleeps and re-runs the handler every iteration).
    enum class EventfdFault : uint8_t { None, LostWakeups, Spin };
    EventfdFault eventfd_fault = EventfdFault::None;
    // Host thread of each queue id (0: the main loop, which always owns the
    // admin queue); empty: everything on thread 0.
    std::vector<uint8_t> queue_thread;

    static constexpr const char* param_prefix = "nvme";
    static constexpr unsigned lba_sizes[] = {512, 4096};
    template <class V>
    void visit(V& v) {
      using namespace param_units;
      v.integer(firmware.mqes, "mqes", "4095", "entries", 1, 65535,
                "CAP.MQES, maximum queue entries (0's based)");
      v.integer(firmware.dstrd, "dstrd", "0", "", 0, 3, "CAP.DSTRD, doorbell stride (4 << dstrd bytes)");
      v.integer(firmware.max_io_queues, "max_io_queues", "64", "queues", 1, 1024,
                "I/O queue pairs the controller offers");
      v.choice(firmware.dbbuf, "dbbuf", "spec", fw::dbbuf_modes, "",
               "doorbell buffer: off, NVMe 1.3 (admin 0x7C), or vendor extension (admin 0xC0)");
      v.choice(firmware.sq_eventidx, "sq_eventidx", "echo", fw::eventidx_policies, "",
               "controller's SQ EventIdx update policy");
      v.choice_or_auto(cq_eventidx, "cq_eventidx", "auto", fw::eventidx_policies, AutoChoice::Last, "",
                       "controller's CQ EventIdx update policy (auto: echo for spec, never for vendor)");
      v.choice_or_auto(mmio_doorbell_value, "mmio_doorbell_value", "auto", fw::mmio_doorbell_values,
                       AutoChoice::First, "",
                       "take the value of an MMIO doorbell write (auto: use for spec, ignore for vendor)");
      v.time(cmd_cost, "cmd_cost", "1us", 0, 1 * MS, "host CPU time per command processed");
      v.time(cqe_cost, "cqe_cost", "300ns", 0, 1 * MS, "host CPU time per completion posted");
      v.time(enable_latency, "enable_latency", "1us", 0, 1 * S, "CC.EN=1 to CSTS.RDY=1");
      v.choice(backend.kind, "backend", "null", backend_kinds, "",
               "storage backend: null (instant), fixed latency, or RAM disk");
      v.time(backend.latency, "backend_latency", "10us", 0, 1 * S, "backend service time per I/O");
      v.integer(backend.concurrency, "backend_concurrency", "0", "I/Os", 0, 65536,
                "I/Os the backend serves at once (0 = unlimited)");
      v.size(backend.capacity, "capacity", "1g", 1 * MiB, 16 * TiB, "namespace size");
      v.choice(firmware.lba_bytes, "lba_bytes", "512", lba_sizes, "bytes", "logical block size");
      v.integer(firmware.mdts, "mdts", "5", "", 0, 10,
                "maximum data transfer size, 2^mdts memory pages (0 = no limit)");
    }

    // The firmware settings that follow from the visited ones: the auto
    // choices (the Google vendor-extension device updates only the SQ
    // EventIdx and takes an MMIO doorbell write as a wake-up), its PCI
    // vendor id, one MSI-X vector per queue, the namespace in LBAs.
    void resolve_auto() {
      const bool vendor = firmware.dbbuf == fw::DbbufMode::Vendor;
      firmware.cq_eventidx =
          cq_eventidx.value_or(vendor ? fw::EventIdxPolicy::Never : fw::EventIdxPolicy::Echo);
      firmware.mmio_doorbell_value = mmio_doorbell_value.value_or(
          vendor ? fw::MmioDoorbellValue::Ignore : fw::MmioDoorbellValue::Use);
      firmware.pci_vendor_id = vendor ? nvme::PCI_VENDOR_VENDOR_EXT : nvme::PCI_VENDOR_QEMU;
      firmware.msix_vectors = uint16_t(firmware.max_io_queues + 1);
      firmware.namespace_lbas = backend.capacity / firmware.lba_bytes;
    }
  };
  // hv.fault's names.
  static constexpr EnumEntry<Params::EventfdFault> eventfd_faults[] = {
      {Params::EventfdFault::None, "none"},
      {Params::EventfdFault::LostWakeups, "eventfd_not_cleared"},
      {Params::EventfdFault::Spin, "eventfd_spin"}};

  tlm_utils::simple_target_socket<NvmeControllerModel> bar0_target;
  tlm_utils::simple_target_socket<NvmeControllerModel> msix_target;
  tlm_utils::simple_target_socket<NvmeControllerModel> config_target;
  tlm_utils::simple_initiator_socket<NvmeControllerModel> dma_initiator;

  // `threads` run the emulation (thread 0 is the main loop); `link` times DMA.
  NvmeControllerModel(sc_core::sc_module_name name, const Params& params,
                      std::vector<HostThread*> threads, const PcieLink& link);

  // The guest's PCI core programs the MSI-X table (address, data).
  void program_msix_vector(uint16_t vector, uint64_t address, uint32_t data);
  // ioeventfd: a doorbell write without its value. Returns false when no
  // ioeventfd is registered for that doorbell (QEMU registers them for the
  // I/O queues while the doorbell buffer is active).
  bool ioeventfd_notify(uint32_t bar0_offset, const sc_core::sc_time& delay);

  fw::Controller& firmware() { return *firmware_; }
  const fw::Controller& firmware() const { return *firmware_; }
  StorageBackend& backend() { return *backend_; }

  struct Counters {
    uint64_t dma_reads = 0, dma_writes = 0, dma_read_bytes = 0, dma_write_bytes = 0;
    uint64_t msix_sent = 0, msix_masked = 0;
    uint64_t bursts = 0;  // emulation passes that found work
    uint64_t ioeventfd_notifications = 0;
    uint64_t lost_notifications = 0;     // ioeventfd signals that woke nobody (fault)
    uint64_t stuck_handler_runs = 0;     // handlers re-run for a still-readable eventfd (Spin)
    uint64_t coalesced_completions = 0;  // completions whose interrupt was held back
  };
  const Counters& counters() const { return counters_; }
  // Something the device will do as time passes by itself: commands at the
  // backend, completions not yet handed to a thread, a held interrupt's
  // coalescing deadline. (Its threads answer for themselves.)
  bool work_pending() const;

  // ControllerEnv (called by the firmware).
  bool dma_read(uint64_t addr, void* dst, uint32_t len) override;
  bool dma_write(uint64_t addr, const void* src, uint32_t len) override;
  void device_barrier() override;
  void msix(uint16_t vector) override;
  void backend_submit(const fw::IoRequest& req) override;
  void on_command_fetched() override;
  void on_completion_posting() override;

 private:
  void bar0_b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  void msix_b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  void config_b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  void end_of_elaboration() override;
  void complete_enable();
  void on_backend_complete(uint32_t tag, uint16_t status);
  struct Context;
  // Run the firmware for the queues of `ctx` until no work is left,
  // spending time in *local.
  void emulate(Context& ctx, sc_core::sc_time& local);
  void request_processing(uint16_t qid, bool sq, sc_core::sc_time& delay);
  void mark_sq(uint16_t qid);
  void mark_cq(uint16_t qid);
  Context* running_ = nullptr;  // the context whose emulation is running (for its thread's CPU share)
  Context& context_of(uint16_t qid) { return ctx_[qid < queue_ctx_.size() ? queue_ctx_[qid] : 0]; }
  void set_queue_deadline(uint16_t qid, bool sq, const sc_core::sc_time& delay);
  void arm_queue_timer(uint16_t qid, bool sq, const sc_core::sc_time& delay);
  void rearm_thread_timer(Context& ctx);
  bool timer_due(std::vector<sc_core::sc_time>& deadline, uint16_t qid);
  void send_msix(uint16_t vector);
  void coalescing_timeout();
  void trace_eventidx_write(uint64_t addr, const void* src);

  Params params_;
  const PcieLink& link_;
  struct Done { uint32_t tag; uint16_t status; };
  struct Context {
    HostThread* thread = nullptr;
    bool in_emulation = false;
    std::vector<uint16_t> sq_list;  // SQs rung or still holding work
    std::vector<uint32_t> stuck_eventfds;  // doorbell indexes whose eventfd stays readable (Spin)
    std::vector<Done> done;         // backend completions to hand to the firmware
    size_t done_count = 0;
    // The command this thread hands to the backend. The firmware's request
    // is one scratch for all threads, and a ram backend's DMA lets another
    // thread run (and overwrite it) in the middle of the transfer.
    fw::IoRequest request;
  };
  std::vector<Context> ctx_;
  std::vector<uint8_t> queue_ctx_;  // by queue id
  std::vector<uint16_t> slot_sq_;   // by command slot: its SQ (routes backend completions)
  std::unique_ptr<fw::Controller> firmware_;
  std::unique_ptr<StorageBackend> backend_;
  Counters counters_;

  // The context the firmware runs in: its time offset, and whether it may wait.
  sc_core::sc_time* local_ = nullptr;
  bool in_emulation_ = false;

  // Guest memory through DMI.
  uint8_t* dmi_base_ = nullptr;
  sc_core::sc_time dmi_read_latency_, dmi_write_latency_;  // guest memory's access latency
  uint64_t dmi_start_ = 0, dmi_end_ = 0;  // inclusive end

  // Work the emulation has to look at; fixed-size, no allocation per I/O.
  std::vector<uint8_t> sq_marked_, cq_marked_;
  std::vector<uint8_t> cq_notified_;  // CQ eventfd fired: read the shadow head (nvme_cq_notifier)
  uint16_t cq_scan_limit_ = 1;  // CQ ids below this may hold completions
  // NotifyMode::Timer: per-queue deadlines (zero: not armed).
  std::vector<sc_core::sc_time> sq_deadline_, cq_deadline_;
  std::vector<uint8_t> cq_fired_;  // CQ timers that expired before the current pass
  // ioeventfd fault: an eventfd still set after its handler ran.
  std::vector<uint8_t> eventfd_set_;
  // Interrupt coalescing (Set Features 0x08), per vector.
  std::vector<uint32_t> coalesced_;
  std::vector<sc_core::sc_time> coalesce_deadline_;
  sc_core::sc_event coalesce_event_;
  uint64_t posted_before_ = 0;  // firmware's completions_posted before a post_completions call

  struct MsixEntry { uint64_t address = 0; uint32_t data = 0; uint32_t control = 1; };
  std::vector<MsixEntry> msix_table_;
  std::vector<uint8_t> msix_pending_;
  sc_core::sc_event enable_event_;
  std::array<uint8_t, 4096> config_space_{};
  std::array<sc_core::sc_time, 65> small_read_time_, small_write_time_;
  // pcie.mode=link: the link is one resource for every device thread. Each
  // direction is busy until these times (downstream carries the read
  // completions of device DMA reads, upstream the device's posted writes).
  sc_core::sc_time downstream_free_, upstream_free_;
  // The time a DMA of `len` bytes adds to *local_: its link time, plus any
  // wait for the direction it needs (link mode; one thread never waits).
  sc_core::sc_time dma_time(bool device_reads, uint32_t len);
  tlm::tlm_generic_payload msi_payload_;
};

}  // namespace nvmesim::models
