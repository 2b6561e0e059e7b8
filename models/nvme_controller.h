// The NVMe controller as a PCIe endpoint: BAR0 (registers and doorbells),
// BAR2 (MSI-X table and PBA) and configuration space as TLM targets, a DMA
// initiator towards the root complex, and the emulation that runs the
// firmware's queue processing on a host thread (or inside the vCPU's exit).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "firmware/controller.h"
#include "firmware/statistics.h"
#include "models/host_thread.h"
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
NotifyMode parse_notify(const std::string& text);  // throws std::invalid_argument
const char* to_string(NotifyMode mode);

class NvmeControllerModel : public sc_core::sc_module, public fw::ControllerEnv {
 public:
  struct Params {
    fw::ControllerConfig firmware;
    StorageBackend::Params backend;
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
  };

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

  // The "nvme" statistics group (the firmware's ControllerCounters merge into it).
  struct Counters : stats::Group {
    using Scalar = stats::Scalar;
    static constexpr stats::Unit COUNT = stats::Unit::Count, BYTES = stats::Unit::Bytes;
    Scalar dma_reads{*this, "dma_reads", COUNT, "DMA reads the controller issued"};
    Scalar dma_writes{*this, "dma_writes", COUNT, "DMA writes the controller issued"};
    Scalar dma_read_bytes{*this, "dma_read_bytes", BYTES, "bytes the controller read by DMA"};
    Scalar dma_write_bytes{*this, "dma_write_bytes", BYTES, "bytes the controller wrote by DMA"};
    Scalar msix_sent{*this, "msix_sent", COUNT, "MSI-X messages sent to the root complex"};
    Scalar msix_masked{*this, "msix_masked", COUNT,
                       "MSI-X messages held because the vector was masked (PCI 3.0 6.8.2.9 Mask Bit)"};
    Scalar bursts{*this, "bursts", COUNT, "emulation passes that found work"};
    Scalar ioeventfd_notifications{*this, "ioeventfd_notifications", COUNT,
                                   "doorbell writes that reached the device through an ioeventfd"};
    Scalar lost_notifications{*this, "lost_notifications", COUNT,
                              "ioeventfd signals that woke nobody (hv.fault=eventfd_not_cleared)"};
    Scalar stuck_handler_runs{*this, "stuck_handler_runs", COUNT,
                              "handlers re-run for a still-readable eventfd (hv.fault=eventfd_spin)"};
    Scalar coalesced_completions{*this, "coalesced_completions", COUNT,
                                 "completions whose interrupt was held back by coalescing"};
  };
  Counters& counters() { return counters_; }
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
