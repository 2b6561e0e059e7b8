#include "nvmesim/models/virtio/virtio_blk_model.h"

#include <algorithm>
#include <cstring>

#include "nvmesim/models/engine/emulation_engine.h"
#include "nvmesim/models/mem/address_map.h"

using namespace sc_core;

namespace nvmesim::models {

namespace {

PcieEndpoint::Identity virtio_identity(const PcieLinkParams& link) {
  PcieEndpoint::Identity id;
  id.vendor_id = VirtioBlkModel::kVendorId;
  id.device_id = VirtioBlkModel::kDeviceId;
  id.revision_id = 1;  // a modern (non-transitional) device (virtio 1.1 section 4.1.2.1)
  // QEMU's subsystem ids, which a non-transitional virtio-pci function
  // keeps (hw/pci/pci.c): Red Hat / Qumranet, QEMU.
  id.subsystem_vendor_id = 0x1AF4;
  id.subsystem_id = 0x1100;
  // QEMU's virtio-blk-pci class: mass storage, SCSI (01h/00h).
  id.base_class = 0x01;
  id.sub_class = 0x00;
  id.bar0 = uint32_t(kBar0Base) | 0x4;  // 64-bit memory BAR holding the four regions
  id.bar0_size = kBar0Size;
  id.link = link;
  return id;
}

// QEMU's engine for the device: hv.notify's policy over the virtqueues,
// each on its thread, virtio's request costs. Every sync of the emulation
// waits (the busy poll reads memory the guest writes meanwhile).
EmulationEngine::Params emulation_params(const VirtioBlkModel::Params& p) {
  EmulationEngine::Params e;
  e.notifier = p.notifier;
  e.notifier.queues = p.firmware.num_queues;
  // hv.fault is Ming Lin's bug in QEMU's NVMe eventfd handler; virtio-blk's
  // handler clears its eventfd.
  e.notifier.eventfd_fault = EventfdFault::None;
  e.queue_context.assign(p.firmware.num_queues, 0);
  for (uint16_t q = 0; q < p.firmware.num_queues && q < p.queue_thread.size(); ++q)
    e.queue_context[q] = p.queue_thread[q];
  e.command_cost = p.req_cost;
  e.completion_cost = p.done_cost;
  e.sync_lookahead = false;
  return e;
}

}  // namespace

// The backend moves ram data through the device's DMA; nothing else of
// fw::ControllerEnv is asked of it.
class VirtioBlkModel::BackendData : public fw::ControllerEnv {
 public:
  explicit BackendData(VirtioBlkModel& m) : m_(m) {}
  bool dma_read(fw::DmaPurpose, uint64_t a, void* d, uint32_t n) override {
    return m_.dma(true, kDataPurpose, a, d, n);
  }
  bool dma_write(fw::DmaPurpose, uint64_t a, const void* s, uint32_t n) override {
    return m_.dma(false, kDataPurpose, a, const_cast<void*>(s), n);
  }
  void device_barrier() override { m_.device_barrier(); }
  void msix(uint16_t) override {}
  void backend_submit(const fw::IoRequest&) override {}

 private:
  VirtioBlkModel& m_;
};

VirtioBlkModel::VirtioBlkModel(sc_module_name name, const Params& params,
                               std::vector<HostThread*> threads, const PcieLink& link)
    : PcieEndpoint(name, virtio_identity(link.params()), uint16_t(params.firmware.num_queues + 1)),
      bar0_target("bar0_target"),
      params_(params),
      link_(link),
      dma_(link_) {
  firmware_ = std::make_unique<fw::VirtioBlkDevice>(params_.firmware, *this);
  counters_.merge(firmware_->counters());
  backend_data_ = std::make_unique<BackendData>(*this);
  backend_ = std::make_unique<StorageBackend>("backend", params_.backend, *backend_data_);
  backend_->set_completion_callback([this](uint32_t tag, uint16_t status) { on_backend_complete(tag, status); });
  QueueDevice& queues = *this;
  engine_ = std::make_unique<EmulationEngine>(queues, emulation_params(params_), std::move(threads));
  ctx_.resize(engine_->context_count());
  const bool busy_poll = params_.busy_poll != SC_ZERO_TIME;
  for (Context& c : ctx_) {
    if (busy_poll) {
      c.poll = fw::VirtqueueBusyPoll(params_.busy_poll.value());
      c.poll_wake = std::make_unique<sc_event>();
    }
  }
  if (busy_poll) counters_.add_group("busy_poll", busy_poll_counters_);
  // An iothread that polls (hv.poll_max) polls its virtqueues' avail rings
  // (virtio_queue_aio_attach_host_notifier registers the poll handlers);
  // vhost-style busy polling replaces them.
  bool aio_poll = false;
  for (unsigned i = 0; i < ctx_.size() && !busy_poll; ++i) {
    HostThread* t = engine_->host_thread(i);
    if (!t || t->params().poll_max == SC_ZERO_TIME) continue;
    for (uint16_t q = 0; q < params_.firmware.num_queues; ++q)
      if (engine_->context_of(q) == i) ctx_[i].queues.push_back(q);
    if (ctx_[i].queues.empty()) continue;
    aio_poll = true;
    Context* c = &ctx_[i];
    t->add_poll_handler([this, c] { aio_poll_begin(*c); }, [this, c] { return aio_poll_end(*c); });
  }
  if (aio_poll) counters_.add_group("aio_poll", firmware_->aio_poll_counters());
  const uint16_t nq = params_.firmware.num_queues;
  // A slot per descriptor: no queue holds more requests than its size.
  slots_.resize(size_t(nq) * params_.firmware.queue_size_max);
  for (uint32_t s = uint32_t(slots_.size()); s-- > 0;) free_slots_.push_back(s);
  io_.segments.reserve(64);
  if (link_.mode() == PcieMode::Link) {
    traffic_ = std::make_unique<PcieLinkTraffic>(link_, link_purposes());
    attach_link_traffic(*traffic_, kMsixPurpose, kRegisterMmioPurpose);
    dma_.set_traffic(traffic_.get());
  }
  // Its group, whole as a System reports it: the backend's and the link's too.
  counters_.add_group("backend", backend_->stats());
  if (traffic_) counters_.add_group("pcie", *traffic_);
  add_virtio_capabilities();
  bar0_target.register_b_transport(this, &VirtioBlkModel::bar0_b_transport);
}

VirtioBlkModel::~VirtioBlkModel() = default;

// Virtio PCI capabilities (section 4.1.4): vendor-specific (09h) entries
// naming, for each region, its cfg_type, BAR, offset and length; the notify
// one adds notify_off_multiplier. They follow the endpoint's Power
// Management, MSI-X and PCI Express capabilities in the list.
void VirtioBlkModel::add_virtio_capabilities() {
  fw::pci::EndpointConfigSpace& cs = device_config_space();
  struct Cap { uint8_t type; uint32_t offset; };
  const Cap caps[] = {{1, fw::VirtioBlkDevice::COMMON_OFFSET}, {3, fw::VirtioBlkDevice::ISR_OFFSET},
                      {4, fw::VirtioBlkDevice::DEVICE_OFFSET}, {2, fw::VirtioBlkDevice::NOTIFY_OFFSET}};
  for (const Cap& c : caps) {
    const bool notify = c.type == 2;
    const unsigned len = notify ? 20 : 16;
    const unsigned at = cs.add_capability(fw::pci::cfg::CAP_VENDOR, len);
    cs.set8(at + 2, uint8_t(len));  // cap_len
    cs.set8(at + 3, c.type);        // cfg_type
    cs.set8(at + 4, 0);             // BAR0
    cs.set32(at + 8, c.offset);
    cs.set32(at + 12, fw::VirtioBlkDevice::REGION_BYTES);
    if (notify) cs.set32(at + 16, fw::VirtioBlkDevice::NOTIFY_OFF_MULTIPLIER);
  }
}

// ---------------------------------------------------------------- BAR0
void VirtioBlkModel::bar0_b_transport(tlm::tlm_generic_payload& p, sc_time& delay) {
  const uint32_t offset = uint32_t(p.get_address());
  count_mmio(offset >= fw::VirtioBlkDevice::NOTIFY_OFFSET ? kNotifyMmioPurpose : kRegisterMmioPurpose, p, delay);
  const unsigned len = p.get_data_length();
  if ((len != 1 && len != 2 && len != 4) || p.get_byte_enable_ptr()) {
    p.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  p.set_response_status(tlm::TLM_OK_RESPONSE);
  if (p.is_read()) {
    const uint32_t v = firmware_->bar_read(offset, len);
    std::memcpy(p.get_data_ptr(), &v, len);
    return;
  }
  uint32_t value = 0;
  std::memcpy(&value, p.get_data_ptr(), len);
  const uint8_t status_before = firmware_->status();
  int q = -1;
  firmware_->bar_write(offset, len, value, &q);
  if (status_before != 0 && firmware_->status() == 0) {
    // virtio_reset: requests in flight are dropped with the queues.
    backend_->reset();
    for (Context& c : ctx_) {
      c.done.clear();
      c.poll.clear();  // the queues, and their notification state, start over
    }
    free_slots_.clear();
    for (uint32_t s = uint32_t(slots_.size()); s-- > 0;) {
      slots_[s].busy = false;
      free_slots_.push_back(s);
    }
    engine_->reset();  // its marks and eventfds
  }
  if (q >= 0) {
    engine_->mark_sq(uint16_t(q));
    wake_poller(uint16_t(q), delay);
    engine_->doorbell_written(uint16_t(q), true, delay);
  }
}

bool VirtioBlkModel::ioeventfd_notify(uint32_t offset, const sc_time& delay) {
  if (!engine_->accepts_ioeventfd()) return false;
  if (offset < fw::VirtioBlkDevice::NOTIFY_OFFSET || offset >= fw::VirtioBlkDevice::BAR_BYTES) return false;
  if (!(firmware_->status() & fw::virtio::STATUS_DRIVER_OK)) return false;
  int q = -1;
  firmware_->bar_write(offset, 2, 0, &q);  // counts the kick, names the queue
  if (q < 0) return false;
  ++counters_.ioeventfd_notifications;
  if (traffic_) traffic_->host_write(kNotifyMmioPurpose, offset, 2, kernel_now() + delay);  // the guest's write
  engine_->mark_sq(uint16_t(q));
  wake_poller(uint16_t(q), delay);
  engine_->eventfd_signalled(2u * uint32_t(q), uint16_t(q), delay);
  return true;
}

// ---------------------------------------------------------------- a pass
// virtio_blk_handle_vq for a queue kicked.
unsigned VirtioBlkModel::serve_sq(uint16_t q, unsigned) {
  Context& ctx = ctx_[engine_->context_of(q)];
  if (ctx.poll.enabled()) {
    firmware_->handle_polled(q, ctx.popped);  // notifications stay off: the queue is polled
    ctx.poll.add(q);
  } else {
    firmware_->handle_queue(q, ctx.popped);
  }
  const unsigned n = unsigned(ctx.popped.size());
  for (auto& r : ctx.popped) start_request(ctx, std::move(r));
  return n;
}

// virtio_blk_req_complete for what the backend finished.
unsigned VirtioBlkModel::finish_pass(unsigned index, bool& progress) {
  Context& ctx = ctx_[index];
  // Swapped with a kept vector, so neither side allocates once grown.
  std::vector<uint32_t>& done = ctx.finishing;
  done.clear();
  done.swap(ctx.done);
  for (const uint32_t s : done) {
    engine_->charge(EngineOp::Completion);
    firmware_->complete(slots_[s].req, slots_[s].status);
    slots_[s].busy = false;
    free_slots_.push_back(s);
    progress = true;
  }
  return unsigned(done.size());
}

// virtio.busy_poll: spin on the drained queues, then serve what the window
// brought, until a window expires with nothing left to poll.
bool VirtioBlkModel::after_passes(unsigned index) {
  Context& ctx = ctx_[index];
  if (ctx.poll.polled().empty()) return false;
  busy_poll(ctx, index);
  return true;
}

void VirtioBlkModel::start_request(Context& ctx, fw::VirtioBlkRequest&& req) {
  sc_time& local = *engine_->offset();  // runs in the engine's work
  engine_->charge(EngineOp::Command);
  if (free_slots_.empty()) {  // cannot happen: a queue never holds more than its size
    firmware_->complete(req, fw::virtio::BLK_S_IOERR);
    return;
  }
  const uint32_t s = free_slots_.back();
  free_slots_.pop_back();
  Slot& slot = slots_[s];
  slot.busy = true;
  slot.req = std::move(req);
  const fw::VirtioBlkRequest& r = slot.req;
  // The backend's view: data segments without the header and the status byte.
  io_.tag = s;
  io_.sqid = r.queue;
  io_.opcode = r.type == fw::virtio::BLK_T_IN    ? nvme::io::READ
               : r.type == fw::virtio::BLK_T_OUT ? nvme::io::WRITE
                                                 : nvme::io::FLUSH;
  io_.slba = r.sector;
  io_.bytes = r.data_bytes;
  io_.nlb = r.data_bytes / fw::virtio::BLK_SECTOR_BYTES;
  io_.segments.clear();
  if (r.type == fw::virtio::BLK_T_IN) {
    for (size_t i = 0; i < r.elem.in.size(); ++i) {
      uint32_t len = r.elem.in[i].len;
      if (i + 1 == r.elem.in.size()) --len;  // the status byte
      if (len) io_.segments.push_back({r.elem.in[i].addr, len});
    }
  } else if (r.type == fw::virtio::BLK_T_OUT) {
    uint32_t skip = 16;  // the header
    for (const auto& seg : r.elem.out) {
      const uint32_t cut = std::min(skip, seg.len);
      skip -= cut;
      if (seg.len > cut) io_.segments.push_back({seg.addr + cut, seg.len - cut});
    }
  }
  io_.segment_count = uint32_t(io_.segments.size());
  // The data moves as a host memcpy into or out of guest memory (ram moves it itself).
  if (!backend_->moves_data() && io_.opcode != nvme::io::FLUSH) {
    const bool to_guest = io_.opcode == nvme::io::READ;
    if (traffic_) {  // back to back, each segment queued behind the one before
      sc_time done = SC_ZERO_TIME;
      for (const auto& seg : io_.segments)
        done = std::max(done, dma_.time(!to_guest, kDataPurpose, seg.addr, seg.len, local));
      local += done;
    } else {
      for (const auto& seg : io_.segments) local += to_guest ? link_.write_time(seg.len) : link_.read_time(seg.len);
    }
  }
  uint16_t status = 0;
  if (backend_->submit(io_, local, &status)) {
    slot.status = status ? fw::virtio::BLK_S_IOERR : fw::virtio::BLK_S_OK;
    ctx.done.push_back(s);
  }
}

void VirtioBlkModel::on_backend_complete(uint32_t tag, uint16_t status) {
  if (tag >= slots_.size() || !slots_[tag].busy) return;
  slots_[tag].status = status ? fw::virtio::BLK_S_IOERR : fw::virtio::BLK_S_OK;
  const unsigned index = engine_->context_of(slots_[tag].req.queue);
  Context& c = ctx_[index];
  c.done.push_back(tag);
  engine_->work_arrived(index);  // the AIO completion wakes the queue's thread
  if (c.poll_wake && !c.poll.polled().empty()) c.poll_wake->notify(SC_ZERO_TIME);  // vhost_has_work
}

bool VirtioBlkModel::work_pending() const {
  if (backend_->in_flight() > 0 || engine_->work_pending()) return true;
  for (const Context& c : ctx_)
    if (!c.done.empty()) return true;
  return msix_in_flight();
}

// ---------------------------------------------------------------- DMA, MSI-X
bool VirtioBlkModel::dma(bool device_reads, unsigned purpose, uint64_t addr, void* buf, uint32_t len) {
  if (len == 0) return true;
  const uint64_t last = addr + len - 1;
  if (!dmi_base_ || last < addr || addr < dmi_start_ || last > dmi_end_) return false;
  sc_time* local = engine_->offset();
  const sc_time link = dma_.time(device_reads, purpose, addr, len, local ? *local : SC_ZERO_TIME);
  if (device_reads) {
    ++counters_.dma_reads;
    std::memcpy(buf, dmi_base_ + (addr - dmi_start_), len);
    if (local) *local += dmi_read_latency_ + link;
    return true;
  }
  ++counters_.dma_writes;
  if (local) {
    *local += dmi_write_latency_ + link;
    engine_->sync();  // the write lands when its time has passed
  }
  std::memcpy(dmi_base_ + (addr - dmi_start_), buf, len);
  return true;
}

// QEMU maps a buffer without reading it. In emulated mode the check keeps
// its cost of two 1-byte accesses (the mapping's work); on a link it is no
// transfer: no TLP, no link time.
bool VirtioBlkModel::dma_mappable(uint64_t addr, uint32_t len) {
  if (!traffic_) return fw::VirtioDeviceEnv::dma_mappable(addr, len);
  const uint64_t last = addr + len - 1;
  return dmi_base_ && last >= addr && addr >= dmi_start_ && last <= dmi_end_;
}

bool VirtioBlkModel::dma_read(uint64_t addr, void* dst, uint32_t len) {
  return dma(true, kVirtqueuePurpose, addr, dst, len);
}

bool VirtioBlkModel::dma_write(uint64_t addr, const void* src, uint32_t len) {
  return dma(false, kVirtqueuePurpose, addr, const_cast<void*>(src), len);
}

void VirtioBlkModel::device_barrier() { engine_->sync(); }

void VirtioBlkModel::msix(uint16_t vector) {
  if (vector >= msix_vectors()) return;
  sc_time* local = engine_->offset();
  sc_time t = local ? *local : SC_ZERO_TIME;
  if (send_msix(vector, t) == MsixOutcome::Sent) ++counters_.msix_sent;
  if (local) *local = t;
}

}  // namespace nvmesim::models
