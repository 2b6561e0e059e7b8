// A modern virtio-blk PCI function (virtio 1.x section 4.1) as a PCIe
// endpoint (models/pcie/pcie_endpoint: configuration space, MSI-X, bus-master
// DMA): its BAR0 holds the common config, ISR, device config and notify
// regions (firmware/virtio/virtio_blk_device). It is a QueueDevice (its
// pass: the virtqueues kicked, the backend's completions) run by QEMU's
// engine on host threads (models/engine/emulation_engine.h, as the NVMe
// model's emulated controller is: hv.notify in the exit, deferred to the
// main loop or an iothread, ioeventfd), as QEMU's virtio_blk_handle_output
// runs it; the requests go to its own StorageBackend (virtio.backend,
// virtio.capacity, ...: the NVMe controller's are nvme.*).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "nvmesim/firmware/nvme/controller.h"
#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/firmware/virtio/virtio_blk_device.h"
#include "nvmesim/firmware/virtio/virtqueue_busy_poll.h"
#include "nvmesim/models/engine/device_engine.h"
#include "nvmesim/models/engine/dma_timing.h"
#include "nvmesim/models/host/doorbell_notifier.h"
#include "nvmesim/models/host/host_thread.h"
#include "nvmesim/models/pcie/pcie_endpoint.h"
#include "nvmesim/models/pcie/pcie_link.h"
#include "nvmesim/models/pcie/pcie_link_traffic.h"
#include "nvmesim/models/sim/stat_time.h"
#include "nvmesim/models/block/storage_backend.h"

namespace nvmesim::models {

class VirtioBlkModel : public PcieEndpoint, public fw::VirtioDeviceEnv, private QueueDevice {
 public:
  struct Params {
    fw::VirtioBlkDeviceConfig firmware;
    StorageBackend::Params backend;
    NotifierParams notifier;       // QEMU's engine: hv.notify, hv.timer_delay (its `queues` the device sets)
    sc_core::sc_time req_cost;     // host CPU per request popped and started
    sc_core::sc_time done_cost;    // host CPU per request completed
    std::vector<uint8_t> queue_thread;  // host thread of each virtqueue (empty: all on 0)
    uint32_t queues = 0;  // virtio.queues as given (0: one per job); System sets firmware.num_queues
    sc_core::sc_time busy_poll;  // vhost-style busy-poll window (0: off); firmware.vhost_notify follows it

    Params() { set_param_defaults(*this); }  // the visit lines' defaults

    static constexpr const char* param_prefix = "virtio";
    template <class V>
    void visit(V& v) {
      v.flag(firmware.event_idx, "event_idx", "on",
             "offer VIRTIO_RING_F_EVENT_IDX (avail_event / used_event suppress kicks and interrupts)");
      v.flag(firmware.indirect_desc, "indirect_desc", "on",
             "offer VIRTIO_RING_F_INDIRECT_DESC (a request takes one ring descriptor naming a table; QEMU's "
             "indirect_desc, on by default)");
      v.integer(firmware.queue_size_max, "queue_size", "256", "entries", 2, 32768,
                "descriptors per virtqueue, a power of 2 (QEMU's queue-size)");
      v.integer(queues, "queues", "0", "queues", 0, 64,
                "virtqueues the device offers (0 = one per job; fewer than numjobs: job j on queue j % queues, "
                "as blk_mq_map_queues maps CPUs)");
      // QEMU's virtio_blk_handle_request and virtio_blk_req_complete: the
      // device's own costs, on the thread that runs its queue pass.
      v.time(req_cost, "req_cost", "1us", 0, param_units::MS,
             "host CPU time per request popped and started (virtio_blk_handle_request)");
      v.time(done_cost, "done_cost", "300ns", 0, param_units::MS,
             "host CPU time per request completed (virtio_blk_req_complete)");
      // virtio.backend, backend_latency, backend_concurrency, backend_bandwidth,
      // capacity: the device's own backend (the NVMe controller's is nvme.*).
      backend.visit(v);
      v.time(busy_poll, "busy_poll", "0ns", 0, param_units::S,
             "vhost-style busy polling (Linux vhost_net_busy_poll; QEMU's tap poll-us): a drained queue keeps "
             "guest notifications off and its host thread spins on the avail ring this long (0 = off)");
    }
  };
  // Virtio PCI ids (section 4.1.2): vendor 0x1AF4, device 0x1040 + 2 (block).
  static constexpr uint16_t kVendorId = 0x1AF4;
  static constexpr uint16_t kDeviceId = 0x1042;

  tlm_utils::simple_target_socket<VirtioBlkModel> bar0_target;

  VirtioBlkModel(sc_core::sc_module_name name, const Params& params, std::vector<HostThread*> threads,
                 const PcieLink& link);
  ~VirtioBlkModel() override;

  // ioeventfd on the notify region (QEMU registers one per queue once
  // DRIVER_OK is set): a kick without an exit to userspace.
  bool ioeventfd_notify(uint32_t bar0_offset, const sc_core::sc_time& delay);

  fw::VirtioBlkDevice& firmware() { return *firmware_; }
  StorageBackend& backend() { return *backend_; }
  DeviceEngine& engine() { return *engine_; }

  // The "virtio_blk" group: the firmware's counters plus the transport's.
  struct Counters : stats::Group {
    using Scalar = stats::Scalar;
    Scalar dma_reads{*this, "dma_reads", stats::Unit::Count, "DMA reads the device issued"};
    Scalar dma_writes{*this, "dma_writes", stats::Unit::Count, "DMA writes the device issued"};
    Scalar msix_sent{*this, "msix_sent", stats::Unit::Count, "MSI-X messages sent to the root complex"};
    Scalar bursts{*this, "bursts", stats::Unit::Count, "emulation passes that found work"};
    Scalar ioeventfd_notifications{*this, "ioeventfd_notifications", stats::Unit::Count,
                                   "kicks that reached the device through an ioeventfd"};
  };
  Counters& counters() { return counters_; }
  // The "virtio_blk.busy_poll" group (virtio.busy_poll > 0 only).
  struct BusyPollCounters : stats::Group {
    using Scalar = stats::Scalar;
    TimeStat poll_time{*this, "poll_time", "host-thread time spent in busy-poll windows (virtio.busy_poll)"};
    Scalar windows{*this, "windows", stats::Unit::Count, "busy-poll windows, each counted when it ends"};
    Scalar windows_found{*this, "windows_found", stats::Unit::Count, "windows ended by new avail entries"};
    Scalar windows_interrupted{*this, "windows_interrupted", stats::Unit::Count,
                               "windows ended by other work on the thread (a completion, another queue's kick)"};
    Scalar windows_expired{*this, "windows_expired", stats::Unit::Count,
                           "windows that ran out with nothing new: notifications switched back on"};
    Scalar requests_found{*this, "requests_found", stats::Unit::Count,
                          "requests popped by polling (in a window or the re-check after it), not by a kick's handler"};
  };
  BusyPollCounters& busy_poll_counters() { return busy_poll_counters_; }
  // A vCPU published avail entries on queue q (`delay`: its offset from
  // now). The model has no memory watch; a spinning poller would see the
  // store when it lands, so the guest tells the device here.
  void avail_published(uint16_t q, const sc_core::sc_time& delay);
  bool work_pending() const;
  // pcie.mode=link: the link's traffic, every TLP counted and timed; null
  // in emulated mode. Its purposes: virtqueue DMA (descriptors, rings,
  // request headers and status bytes, not told apart), data, MSI-X, queue
  // notifications, other BAR0 accesses.
  PcieLinkTraffic* link_traffic() { return traffic_.get(); }
  enum LinkPurpose : unsigned { kVirtqueuePurpose, kDataPurpose, kMsixPurpose, kNotifyMmioPurpose, kRegisterMmioPurpose };
  static std::vector<std::string> link_purposes() {
    return {"virtqueue", "data", "msix", "notify_mmio", "register_mmio"};
  }

  // fw::VirtioDeviceEnv
  bool dma_read(uint64_t addr, void* dst, uint32_t len) override;
  bool dma_write(uint64_t addr, const void* src, uint32_t len) override;
  bool dma_mappable(uint64_t addr, uint32_t len) override;
  void device_barrier() override;
  void msix(uint16_t vector) override;

 private:
  // What each of the engine's contexts (host threads) keeps of its own.
  struct Context {
    std::vector<uint32_t> done;    // slots the backend finished
    // Scratch of one emulation pass, kept per thread (a pass may wait while
    // another thread's runs), so that a kick allocates nothing once grown.
    std::vector<fw::VirtioBlkRequest> popped;
    std::vector<uint32_t> finishing;
    // virtio.busy_poll: the queues this thread spins on, and what wakes the spin.
    fw::VirtqueueBusyPoll poll;
    std::unique_ptr<sc_core::sc_event> poll_wake;
    bool avail_published = false;  // a publish on a polled queue since the last look
    std::vector<uint16_t> expiring;  // scratch: the polled queues when a window expires
    // QEMU's AioContext polling (hv.poll_max on an iothread): its queues'
    // notifications are off between io_poll_begin and io_poll_end.
    std::vector<uint16_t> queues;  // the queues this thread serves
    bool aio_poll_started = false;   // io_poll_begin ran with the device live
  };
  // models/virtio/virtio_blk_busy_poll.cpp: QEMU's io_poll_begin / io_poll_end.
  void aio_poll_begin(Context& ctx);
  bool aio_poll_end(Context& ctx);
  struct Slot {
    bool busy = false;
    fw::VirtioBlkRequest req;
    uint8_t status = 0;
  };
  class BackendData;

  void bar0_b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  void add_virtio_capabilities();
  // models/virtio/virtio_blk_busy_poll.cpp: one window of the spin, and what it found.
  void busy_poll(Context& ctx, unsigned index);
  void handle_found(Context& ctx, uint16_t q);
  void wake_poller(uint16_t q, const sc_core::sc_time& delay);
  void start_request(Context& ctx, fw::VirtioBlkRequest&& req);
  void on_backend_complete(uint32_t tag, uint16_t status);

  // QueueDevice (what a pass of the engine does).
  unsigned serve_sq(uint16_t q, unsigned budget) override;
  bool sq_has_work(uint16_t) const override { return false; }  // a handler pops every available request
  unsigned finish_pass(unsigned index, bool& progress) override;
  uint16_t completion_queue_limit() const override { return params_.firmware.num_queues; }
  void pass_ended(unsigned, const sc_core::sc_time&, const sc_core::sc_time&, bool progress, unsigned,
                  unsigned) override {
    if (progress) ++counters_.bursts;
  }
  bool after_passes(unsigned index) override;

  bool dma(bool device_reads, unsigned purpose, uint64_t addr, void* buf, uint32_t len);

  Params params_;
  const PcieLink& link_;
  DmaTiming dma_;
  std::unique_ptr<PcieLinkTraffic> traffic_;
  std::unique_ptr<fw::VirtioBlkDevice> firmware_;
  std::unique_ptr<BackendData> backend_data_;
  std::unique_ptr<StorageBackend> backend_;
  std::unique_ptr<DeviceEngine> engine_;
  Counters counters_;
  BusyPollCounters busy_poll_counters_;
  std::vector<Context> ctx_;  // by engine context
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  fw::IoRequest io_;  // the backend's view of a request (reused)
};

}  // namespace nvmesim::models
