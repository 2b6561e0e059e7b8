// The NVMe controller as a PCIe endpoint (models/pcie/pcie_endpoint: configuration
// space, MSI-X, the bus-master initiator) with BAR0 (registers and
// doorbells) as a TLM target. It is a QueueDevice (its pass: the SQs a turn
// or visit gives it, backend completions, CQs to post) run by a DeviceEngine
// (models/engine/device_engine.h) chosen when it is built: the controller's
// own hardware engine (models/nvme/nvme_hw_engine.h: a clocked process, the
// firmware's arbiter turns, SQE bursts, stage cycles; the default, with no
// host threads, and the application's passed-through SSD), or QEMU's
// emulation on host threads (models/engine/emulation_engine.h: hv.notify's
// policy, nvme.cmd_cost and nvme.cqe_cost). When its interrupts go: its
// InterruptCoalescer.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "nvmesim/firmware/nvme/controller.h"
#include "nvmesim/firmware/pcie/msix_page.h"
#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/models/engine/device_engine.h"
#include "nvmesim/models/engine/dma_timing.h"
#include "nvmesim/models/engine/msi_params.h"
#include "nvmesim/models/host/doorbell_notifier.h"
#include "nvmesim/models/host/host_thread.h"
#include "nvmesim/models/nvme/nvme_hw_engine.h"
#include "nvmesim/models/sim/param_defaults.h"
#include "nvmesim/models/sim/param_visit.h"
#include "nvmesim/models/nvme/interrupt_coalescer.h"
#include "nvmesim/models/pcie/pcie_endpoint.h"
#include "nvmesim/models/pcie/pcie_link.h"
#include "nvmesim/models/pcie/pcie_link_traffic.h"
#include "nvmesim/models/block/storage_backend.h"

namespace nvmesim::models {

// Where the controller's MSI-X table and PBA live (nvme.msix_table).
enum class MsixPlacement : uint8_t { Bar2, Bar0 };
inline constexpr EnumEntry<MsixPlacement> msix_placements[] = {{MsixPlacement::Bar2, "bar2"},
                                                               {MsixPlacement::Bar0, "bar0"}};

// When completions are posted (nvme.cqe_post): in the emulation's pass, all
// that are ready with one MSI-X message (QEMU's nvme_post_cqes from its
// timer or bottom half); each as its backend completes, with its own
// message; or each so only when the doorbell reached the device through an
// ioeventfd (QEMU 7.1: "hw/nvme: Use ioeventfd to handle doorbell updates",
// 2e53b0b45024, posted every CQE at once on that path until "hw/nvme:
// reenable cqe batching", d38cc6fd, QEMU 7.2).
enum class CqePost : uint8_t { Pass, Each, EachWithIoeventfd };
inline constexpr EnumEntry<CqePost> cqe_posts[] = {
    {CqePost::Pass, "pass"}, {CqePost::Each, "each"}, {CqePost::EachWithIoeventfd, "each_ioeventfd"}};

class NvmeControllerModel : public PcieEndpoint, public fw::ControllerEnv, private QueueDevice {
 public:
  // nvme.msix_table=bar0: the table and the PBA after the doorbells, each on
  // its own 4 KiB page of the 16 KiB BAR0 (PCI Local Bus 3.0 section 6.8.2
  // keeps other registers out of their 4 KiB ranges), as SSDs that report
  // "Vector table: BAR=0" in lspci place them.
  static constexpr uint32_t kBar0MsixTableOffset = 0x2000;
  static constexpr uint32_t kBar0PbaOffset = 0x3000;

  // The controller's parameters, nvme.* (see models/sim/param_visit.h);
  // QEMU's engine's notification (hv.notify, hv.timer_delay, hv.fault) and
  // the hardware engine's clock and cycles have their own visit tables.
  struct Params {
    fw::ControllerConfig firmware;
    StorageBackend::Params backend;
    // nvme.cq_eventidx and nvme.mmio_doorbell_value; empty: auto, which
    // resolve_auto() turns into the firmware's setting for nvme.dbbuf.
    std::optional<fw::EventIdxPolicy> cq_eventidx;
    std::optional<fw::MmioDoorbellValue> mmio_doorbell_value;
    sc_core::sc_time cmd_cost;        // host CPU per command fetched and executed
    sc_core::sc_time cqe_cost;        // host CPU per completion posted
    sc_core::sc_time backend_submit_cost;    // host CPU per I/O submitted to the backend
    sc_core::sc_time backend_complete_cost;  // host CPU per backend completion handled
    sc_core::sc_time enable_latency;  // CC.EN=1 to CSTS.RDY=1
    // Commands per SQ per pass (fairness between queues). On the hardware
    // engine the arbiter shares the pass's sq_budget x (SQs ready) commands.
    unsigned sq_budget = 64;
    // Jinhao Fan's unmerged "hw/nvme: add polling support" (qemu-devel, Aug
    // 2022): an iothread that polls (hv.poll_max) polls its SQs' shadow
    // tails and stops updating their EventIdx while it polls. Off: mainline
    // QEMU, which has no NVMe poll handlers.
    bool sq_poll = false;
    CqePost cqe_post = CqePost::Pass;
    uint16_t pci_device_id = 0x5845;
    MsixPlacement msix_table{};
    // QEMU's engine: how a doorbell reaches its threads (hv.notify,
    // hv.timer_delay, hv.fault: NotifierParams' visit table; its `queues`
    // the controller sets).
    NotifierParams notifier;
    // QEMU's engine: how its MSIs reach KVM and what each costs the
    // sending thread (hv.msi, hv.msi_*_cost: MsiParams' visit table).
    MsiParams msi;
    // Host thread of each queue id (0: the main loop, which always owns the
    // admin queue); empty: everything on thread 0.
    std::vector<uint8_t> queue_thread;
    // The hardware engine's clock and stage costs: their own visit table
    // (NvmeHwEngineParams, nvme.clock and nvme.*_cycles), in the
    // application's parameter list beside this one; they apply when the
    // controller runs on its hardware engine (the application's
    // hv.passthrough=on), cmd_cost and cqe_cost when it runs on QEMU's.
    NvmeHwEngineParams engine;

    // Every visited field at its visit line's default, the auto choices
    // resolved: a working controller (after changing nvme.dbbuf, capacity,
    // max_io_queues or lba_bytes, call resolve_auto() again).
    Params() {
      set_param_defaults(*this);
      resolve_auto();
    }

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
      v.time(backend_submit_cost, "backend_submit_cost", "0ns", 0, 1 * MS,
             "host CPU time per I/O submitted to the backend (QEMU's blk_aio_preadv/pwritev and the "
             "AIO engine's submission), on the thread that submits it");
      v.time(backend_complete_cost, "backend_complete_cost", "0ns", 0, 1 * MS,
             "host CPU time per backend completion handled (the AIO completion and nvme_rw_cb), "
             "on the device's thread");
      v.time(enable_latency, "enable_latency", "1us", 0, 1 * S, "CC.EN=1 to CSTS.RDY=1");
      v.choice(cqe_post, "cqe_post", "pass", cqe_posts, "",
               "when completions are posted: pass (all ready ones in the emulation's pass, one "
               "MSI-X), each (each at once with its own MSI-X), each_ioeventfd (each at once with "
               "hv.notify=ioeventfd, per pass otherwise: QEMU 7.1)");
      // nvme.backend, backend_latency, backend_concurrency, backend_bandwidth,
      // capacity: the backend's own visit lines, under nvme.
      backend.visit(v);
      v.choice(firmware.lba_bytes, "lba_bytes", "512", lba_sizes, "bytes", "logical block size");
      v.integer(firmware.mdts, "mdts", "5", "", 0, 10,
                "maximum data transfer size, 2^mdts memory pages (0 = no limit)");
      v.flag(sq_poll, "sq_poll", "off",
             "poll the SQ shadow tails from a polling iothread (hv.device_thread=iothread, hv.poll_max > 0) "
             "and leave the SQ EventIdx where poll begin put it while polling, as Jinhao Fan's unmerged "
             "'hw/nvme: add polling support' (2022); off: mainline QEMU");
      v.choice(msix_table, "msix_table", "bar2", msix_placements, "",
               "where the MSI-X table and PBA live: BAR2, or BAR0 at 0x2000 and 0x3000 after the "
               "doorbells (many SSDs; with hv.passthrough and 64 KiB host pages they share a page)");
    }

    // The BAR ranges of the doorbells (every queue id's pair) and the MSI-X
    // structures, for the host's page decisions (fw::vfio).
    fw::vfio::MsixLayout msix_layout() const {
      const uint32_t stride = 4u << firmware.dstrd;
      const uint32_t vectors = uint32_t(firmware.max_io_queues) + 1u;
      const unsigned bar = msix_table == MsixPlacement::Bar0 ? 0 : 2;
      fw::vfio::MsixLayout l;
      l.doorbells = {0, nvme::reg::DOORBELL_BASE, uint64_t(vectors) * 2 * stride};
      l.table = {bar, bar ? 0 : uint64_t(kBar0MsixTableOffset), uint64_t(vectors) * kMsixEntryBytes};
      l.pba = {bar, bar ? uint64_t(kPbaOffset) : uint64_t(kBar0PbaOffset), (vectors + 31) / 32 * 4ull};
      return l;
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

  tlm_utils::simple_target_socket<NvmeControllerModel> bar0_target;
  // msix_target, config_target and dma_initiator: PcieEndpoint's.

  // QEMU's engine: `threads` run the emulation (thread 0 is the main loop;
  // hv.notify, hv.fault and queue_thread in `params` apply). With no threads
  // the controller runs on its hardware engine. `link` times DMA and must
  // outlive the controller.
  NvmeControllerModel(sc_core::sc_module_name name, const Params& params,
                      std::vector<HostThread*> threads, const PcieLink& link);
  // The hardware engine, with its own link model: a controller for a
  // platform of one's own. Bind bar0_target and dma_initiator; msix_target
  // (BAR2) and config_target may stay unbound.
  explicit NvmeControllerModel(sc_core::sc_module_name name, const Params& params = Params{},
                               const PcieLinkParams& link = PcieLinkParams{});

  // Its engine; the hardware engine (null on QEMU's engine).
  DeviceEngine& engine() { return *engine_; }
  const DeviceEngine& engine() const { return *engine_; }
  NvmeHwEngine* hw_engine() { return hw_engine_; }
  const PcieLink& link() const { return link_; }
  // pcie.mode=link: the link's traffic, every TLP counted and timed (its
  // statistics group, "pcie"); null in emulated mode.
  PcieLinkTraffic* link_traffic() { return traffic_.get(); }
  // Its purposes: the DMA purposes (fw::DmaPurpose), then these.
  static constexpr unsigned kMsixPurpose = fw::kDmaPurposes, kDoorbellMmioPurpose = fw::kDmaPurposes + 1,
                            kRegisterMmioPurpose = fw::kDmaPurposes + 2;
  static std::vector<std::string> link_purposes();

  // ioeventfd: a doorbell write without its value. Returns false when no
  // ioeventfd is registered for that doorbell (QEMU registers them for the
  // I/O queues while the doorbell buffer is active).
  bool ioeventfd_notify(uint32_t bar0_offset, const sc_core::sc_time& delay);

  fw::Controller& firmware() { return *firmware_; }
  const fw::Controller& firmware() const { return *firmware_; }
  StorageBackend& backend() { return *backend_; }
  const InterruptCoalescer& coalescer() const { return coalescer_; }

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
  // nvme.sq_poll: the guest stored SQ `qid`'s shadow tail (`delay`: its
  // offset from now); a thread polling that SQ finds it without a doorbell.
  void sq_tail_published(uint16_t qid, const sc_core::sc_time& delay);
  // Queue qid's thread spins (hv.fault=eventfd_spin: its poll always
  // returns, each loop a pass) and its SQ holds commands the device has not
  // fetched (`driver_tail`: the tail the driver published) or completions
  // to post into a CQ with room: the next pass does it, so the queue makes
  // progress as time passes.
  bool spin_will_fetch(uint16_t qid, uint16_t driver_tail) const;
  // Queue pair qid as the device sees it, for a stall report: its SQ's head
  // and tail (against the tail the driver published), its CQ's head, tail
  // and completions waiting to be posted.
  std::string describe_sq(uint16_t qid, uint16_t driver_tail) const;
  std::string describe_cq(uint16_t qid) const;

  // ControllerEnv (called by the firmware).
  bool dma_read(fw::DmaPurpose purpose, uint64_t addr, void* dst, uint32_t len) override;
  bool dma_write(fw::DmaPurpose purpose, uint64_t addr, const void* src, uint32_t len) override;
  void device_barrier() override;
  void msix(uint16_t vector) override;
  void backend_submit(const fw::IoRequest& req) override;
  void on_command_fetched() override;
  void on_completion_posting() override;

 private:
  void bar0_b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  unsigned bar0_transport_dbg(tlm::tlm_generic_payload& p);
  // nvme.msix_table=bar0: the MSI-X space offset of BAR0 offset `offset`,
  // or -1 when it is a register or doorbell.
  int64_t bar0_msix_offset(uint64_t offset) const;
  void init(std::vector<HostThread*> threads);
  // nvme.sq_poll: each polling thread's io_poll_begin / io_poll_end over its SQs.
  void add_sq_poll_handlers();
  std::vector<uint8_t> sq_poll_started_;  // by context: between begin and end
  void complete_enable();
  void reset_emulation();
  void on_backend_complete(uint32_t tag, uint16_t status);
  // Sends `vector`'s message `*offset` after now (null: now), advancing it.
  void send_msix(uint16_t vector, sc_core::sc_time* offset);
  void send_pending_msix(uint16_t vector, const sc_core::sc_time& delay) override;
  void coalescing_timeout();
  void trace_eventidx_write(uint64_t addr, const void* src);
  // One DMA through dma_initiator (no DMI), `delay` advanced by the path.
  bool dma_transport(tlm::tlm_command command, uint64_t addr, void* data, uint32_t len, sc_core::sc_time& delay);

  // QueueDevice (models/nvme/nvme_controller_queues.cpp: what a pass does).
  unsigned serve_sq(uint16_t qid, unsigned budget) override;
  bool sq_has_work(uint16_t qid) const override { return firmware_->sq_has_work(qid); }
  bool sq_exists(uint16_t qid) const override { return firmware_->sq_state(qid).exists; }
  unsigned finish_pass(unsigned ctx, bool& progress) override;
  uint16_t completion_queue_limit() const override { return cq_scan_limit_; }
  void work_started(unsigned, unsigned rerun_handlers) override { counters_.stuck_handler_runs += rerun_handlers; }
  void pass_started(unsigned ctx, const sc_core::sc_time& start) override;
  void pass_ended(unsigned ctx, const sc_core::sc_time& start, const sc_core::sc_time& end, bool progress,
                  unsigned commands, unsigned completions) override;
  void mark_cq(uint16_t qid, bool read_shadow_head) override;

  Params params_;
  std::unique_ptr<PcieLink> own_link_;  // the hardware constructor's
  const PcieLink& link_;
  DmaTiming dma_;
  struct Done { uint32_t tag; uint16_t status; };
  // What each engine context hands between the backend and its passes.
  struct ContextWork {
    std::vector<Done> done;  // backend completions to hand to the firmware
    size_t done_count = 0;
    // The command this context hands to the backend. The firmware's request
    // is one scratch for all contexts, and a ram backend's DMA lets another
    // thread run (and overwrite it) in the middle of the transfer.
    fw::IoRequest request;
  };
  std::vector<ContextWork> work_;   // by engine context
  std::vector<uint16_t> slot_sq_;   // by command slot: its SQ (routes backend completions)
  std::unique_ptr<fw::Controller> firmware_;
  std::unique_ptr<StorageBackend> backend_;
  std::unique_ptr<DeviceEngine> engine_;
  NvmeHwEngine* hw_engine_ = nullptr;  // engine_, when it is the hardware engine
  Counters counters_;

  // CQs the passes have to look at; fixed-size, no allocation per I/O.
  std::vector<uint8_t> cq_marked_;
  std::vector<uint8_t> cq_notified_;  // CQ eventfd fired: read the shadow head (nvme_cq_notifier)
  uint16_t cq_scan_limit_ = 1;  // CQ ids below this may hold completions
  // Interrupt coalescing (Set Features 0x08), per vector.
  InterruptCoalescer coalescer_;
  sc_core::sc_event coalesce_event_;
  uint64_t posted_before_ = 0;  // firmware's completions_posted before a post_completions call

  sc_core::sc_event enable_event_;
  // pcie.mode=link: the link, one resource for every device thread.
  std::unique_ptr<PcieLinkTraffic> traffic_;
};

}  // namespace nvmesim::models
