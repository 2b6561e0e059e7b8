#include "nvmesim/models/nvme/nvme_controller.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "nvmesim/firmware/nvme/controller_tag.h"
#include "nvmesim/firmware/nvme/eventidx.h"
#include "nvmesim/models/engine/emulation_engine.h"
#include "nvmesim/models/sim/activations.h"
#include "nvmesim/models/mem/address_map.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

namespace {

PcieEndpoint::Identity nvme_identity(const NvmeControllerModel::Params& params, const PcieLinkParams& link) {
  PcieEndpoint::Identity id;
  id.vendor_id = params.firmware.pci_vendor_id;
  id.device_id = params.pci_device_id;
  // QEMU's subsystem ids for a device that sets none (hw/pci/pci.c):
  // Red Hat / Qumranet, QEMU.
  id.subsystem_vendor_id = 0x1AF4;
  id.subsystem_id = 0x1100;
  // Class code of an NVM Express controller: mass storage, NVM, NVMe (01h/08h/02h).
  id.base_class = 0x01;
  id.sub_class = 0x08;
  id.prog_if = 0x02;
  id.bar0 = uint32_t(kBar0Base) | 0x4;  // 64-bit memory BAR
  id.bar0_size = kBar0Size;              // registers, doorbells (and MSI-X with nvme.msix_table=bar0)
  id.link = link;
  return id;
}

// QEMU's engine for the controller: hv.notify's policy over every queue id,
// the queues on their threads (the admin queue on the main loop),
// nvme.cmd_cost and nvme.cqe_cost, nvme.sq_budget per SQ visit.
EmulationEngine::Params emulation_params(const NvmeControllerModel::Params& params) {
  EmulationEngine::Params e;
  e.notifier = params.notifier;
  e.notifier.queues = uint16_t(params.firmware.max_io_queues + 1u);
  e.queue_context.assign(params.firmware.max_io_queues + 1u, 0);
  for (size_t q = 1; q < e.queue_context.size() && q < params.queue_thread.size(); ++q)
    e.queue_context[q] = params.queue_thread[q];
  e.command_cost = params.cmd_cost;
  e.completion_cost = params.cqe_cost;
  e.msix_cost = params.msi.cost();
  e.backend_submit_cost = params.backend_submit_cost;
  e.backend_complete_cost = params.backend_complete_cost;
  e.sq_budget = params.sq_budget;
  e.sync_lookahead = true;
  return e;
}

}  // namespace

NvmeControllerModel::NvmeControllerModel(sc_module_name name, const Params& params,
                                         std::vector<HostThread*> threads, const PcieLink& link)
    : PcieEndpoint(name, nvme_identity(params, link.params()), params.firmware.msix_vectors),
      bar0_target("bar0_target"),
      params_(params),
      link_(link),
      dma_(link_),
      coalescer_(params.firmware.msix_vectors) {
  init(std::move(threads));
}

NvmeControllerModel::NvmeControllerModel(sc_module_name name, const Params& params,
                                         const PcieLinkParams& link)
    : PcieEndpoint(name, nvme_identity(params, link), params.firmware.msix_vectors),
      bar0_target("bar0_target"),
      params_(params),
      own_link_(std::make_unique<PcieLink>(link)),
      link_(*own_link_),
      dma_(link_),
      coalescer_(params.firmware.msix_vectors) {
  init({});
}

void NvmeControllerModel::init(std::vector<HostThread*> threads) {
  firmware_ = std::make_unique<fw::Controller>(params_.firmware, *this);
  backend_ = std::make_unique<StorageBackend>("backend", params_.backend, *this);
  backend_->set_completion_callback(
      [this](uint32_t tag, uint16_t status) { on_backend_complete(tag, status); });
  // QEMU's engine: a context per host thread. The hardware engine: one
  // context, every queue's, run by the engine's process.
  QueueDevice& device = *this;
  if (threads.empty()) {
    auto hw = std::make_unique<NvmeHwEngine>("engine", params_.engine, device, *firmware_, dma_, params_.sq_budget);
    hw_engine_ = hw.get();
    engine_ = std::move(hw);
  } else {
    engine_ = std::make_unique<EmulationEngine>(device, emulation_params(params_), std::move(threads));
    if (params_.sq_poll) add_sq_poll_handlers();
  }
  work_.resize(engine_->context_count());
  for (ContextWork& w : work_) w.done.resize(65536);
  slot_sq_.assign(4096, 0);
  if (link_.mode() == PcieMode::Link) {
    traffic_ = std::make_unique<PcieLinkTraffic>(link_, link_purposes());
    attach_link_traffic(*traffic_, kMsixPurpose, kRegisterMmioPurpose);
    dma_.set_traffic(traffic_.get());
  }
  // Its "nvme" group holds the firmware's counters as its own, then the
  // backend's, the link's and the hardware engine's (hv.passthrough; QEMU's
  // engine has its threads' groups instead), so a controller built alone
  // reports everything a System's does.
  counters_.merge(firmware_->counters());
  counters_.add_group("backend", backend_->stats());
  if (traffic_) counters_.add_group("pcie", *traffic_);
  if (stats::Group* engine = engine_->stats()) counters_.add_group(hw_engine_ ? "engine" : "host_ops", *engine);
  const unsigned queues = params_.firmware.max_io_queues + 1u;
  cq_marked_.assign(queues, 0);
  cq_notified_.assign(queues, 0);

  bar0_target.register_b_transport(this, &NvmeControllerModel::bar0_b_transport);
  bar0_target.register_transport_dbg(this, &NvmeControllerModel::bar0_transport_dbg);
  if (params_.msix_table == MsixPlacement::Bar0) msix_in_bar0(kBar0MsixTableOffset, kBar0PbaOffset);

  SC_HAS_PROCESS(NvmeControllerModel);
  SC_METHOD(complete_enable);
  sensitive << enable_event_;
  dont_initialize();
  SC_METHOD(coalescing_timeout);
  sensitive << coalesce_event_;
  dont_initialize();
}

// ---------------------------------------------------------------- BAR0
int64_t NvmeControllerModel::bar0_msix_offset(uint64_t offset) const {
  if (params_.msix_table != MsixPlacement::Bar0) return -1;
  if (offset >= kBar0MsixTableOffset && offset < kBar0PbaOffset) return int64_t(offset - kBar0MsixTableOffset);
  if (offset >= kBar0PbaOffset && offset < kBar0PbaOffset + 0x1000) return int64_t(kPbaOffset + offset - kBar0PbaOffset);
  return -1;
}

unsigned NvmeControllerModel::bar0_transport_dbg(tlm::tlm_generic_payload& p) {
  const int64_t msix = bar0_msix_offset(p.get_address());
  return msix < 0 ? 0 : msix_space_dbg(p, uint64_t(msix));
}

void NvmeControllerModel::bar0_b_transport(tlm::tlm_generic_payload& p, sc_time& delay) {
  const int64_t msix = bar0_msix_offset(p.get_address());
  const uint32_t offset = uint32_t(p.get_address());
  count_mmio(msix < 0 && offset >= nvme::reg::DOORBELL_BASE ? kDoorbellMmioPurpose : kRegisterMmioPurpose, p, delay);
  if (msix >= 0) return msix_space_transport(p, delay, uint64_t(msix));
  const unsigned len = p.get_data_length();
  if ((len != 4 && len != 8) || p.get_byte_enable_ptr()) {
    p.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  p.set_response_status(tlm::TLM_OK_RESPONSE);
  if (p.is_read()) {
    const uint64_t v = firmware_->bar0_read(offset, len);
    std::memcpy(p.get_data_ptr(), &v, len);
    return;
  }
  uint64_t value = 0;
  std::memcpy(&value, p.get_data_ptr(), len);
  const fw::Bar0WriteEffect effect = firmware_->bar0_write(offset, value, len);
  switch (effect.kind) {
    case fw::Bar0WriteEffect::SqDoorbell:
      engine_->mark_sq(effect.qid);
      engine_->doorbell_written(effect.qid, true, delay);
      break;
    case fw::Bar0WriteEffect::CqDoorbell:
      mark_cq(effect.qid, false);
      engine_->doorbell_written(effect.qid, false, delay);
      break;
    case fw::Bar0WriteEffect::EnableRequested:
      activations::notify(enable_event_, delay + params_.enable_latency);
      break;
    case fw::Bar0WriteEffect::Reset:
      reset_emulation();
      break;
    case fw::Bar0WriteEffect::None:
    case fw::Bar0WriteEffect::Shutdown:
      break;
  }
}

void NvmeControllerModel::complete_enable() {
  activations::begin(activations::ControllerMethod);
  firmware_->complete_enable();
}

// CC.EN 1 -> 0: the backend's commands and the emulation's marks go with the queues.
void NvmeControllerModel::reset_emulation() {
  backend_->reset();
  for (ContextWork& w : work_) w.done_count = 0;
  std::fill(cq_marked_.begin(), cq_marked_.end(), 0);
  std::fill(cq_notified_.begin(), cq_notified_.end(), 0);
  engine_->reset();  // its marks, its eventfds or SQE bursts
}

bool NvmeControllerModel::ioeventfd_notify(uint32_t offset, const sc_time& delay) {
  if (!engine_->accepts_ioeventfd() || !firmware_->dbbuf_active()) return false;
  const uint32_t stride = nvme::doorbell_stride(params_.firmware.dstrd);
  if (offset < nvme::reg::DOORBELL_BASE) return false;
  const uint32_t index = (offset - nvme::reg::DOORBELL_BASE) / stride;
  const uint16_t qid = uint16_t(index / 2);
  if (qid == 0 || qid > params_.firmware.max_io_queues) return false;  // admin: plain MMIO
  ++counters_.ioeventfd_notifications;
  if (traffic_) traffic_->host_write(kDoorbellMmioPurpose, offset, 4, kernel_now() + delay);  // the guest's write
  if (index % 2 == 0)
    engine_->mark_sq(qid);
  else
    mark_cq(qid, true);
  if (!engine_->eventfd_signalled(index, qid, delay)) ++counters_.lost_notifications;
  return true;
}

void NvmeControllerModel::mark_cq(uint16_t qid, bool read_shadow_head) {
  if (qid < cq_marked_.size() && qid >= cq_scan_limit_) cq_scan_limit_ = uint16_t(qid + 1);
  if (qid < cq_marked_.size()) cq_marked_[qid] = 1;
  if (read_shadow_head) cq_notified_[qid] = 1;
}

// ---------------------------------------------------------------- interrupts
void NvmeControllerModel::msix(uint16_t vector) {
  if (vector >= msix_vectors()) return;
  const uint64_t posted = firmware_->counters().completions_posted - posted_before_;
  const sc_time* local = engine_->offset();
  const sc_time at = kernel_now() + (local ? *local : SC_ZERO_TIME);
  const InterruptCoalescer::Decision d =
      coalescer_.on_completions(vector, posted, firmware_->interrupt_coalescing_threshold(),
                                firmware_->interrupt_coalescing_time_100us(), at);
  if (!d.hold) {
    send_msix(vector, engine_->offset());
    return;
  }
  counters_.coalesced_completions += posted ? posted : 1;
  if (d.deadline != SC_ZERO_TIME) activations::notify(coalesce_event_, d.deadline - kernel_now());
}

void NvmeControllerModel::coalescing_timeout() {
  activations::begin(activations::ControllerMethod);
  const sc_time now = kernel_now();
  const sc_time next = coalescer_.expire(now, [this](uint16_t v) { send_msix(v, engine_->offset()); });
  if (next != SC_ZERO_TIME) activations::notify(coalesce_event_, next - now);
}

// In QEMU a masked vector only sets its pending bit (msix_notify ->
// msix_set_pending): no message, so no KVM_SIGNAL_MSI and nothing charged.
// The hardware engine's MSI-X stage runs either way.
void NvmeControllerModel::send_msix(uint16_t vector, sc_time* offset) {
  coalescer_.on_sent(vector);
  if (hw_engine_ || !msix_masked(vector)) engine_->charge(EngineOp::Msix, offset);
  sc_time t = offset ? *offset : SC_ZERO_TIME;
  if (PcieEndpoint::send_msix(vector, t) == MsixOutcome::Masked) {
    ++counters_.msix_masked;
    return;
  }
  ++counters_.msix_sent;
  if (offset) *offset = t;
}

// Unmasked with its message pending: it goes at the unmasking write's time.
void NvmeControllerModel::send_pending_msix(uint16_t vector, const sc_time& delay) {
  sc_time t = delay;
  send_msix(vector, &t);
}

bool NvmeControllerModel::work_pending() const {
  if (backend_->in_flight() > 0) return true;
  if (engine_->work_pending()) return true;
  for (const ContextWork& w : work_)
    if (w.done_count) return true;
  return coalescer_.holding() || msix_in_flight();
}

void NvmeControllerModel::on_command_fetched() { engine_->charge(EngineOp::Command); }
void NvmeControllerModel::on_completion_posting() { engine_->charge(EngineOp::Completion); }

}  // namespace nvmesim::models

namespace nvmesim::models {

// nvme.sq_poll (Jinhao Fan's "hw/nvme: add polling support", v3 4/4):
// nvme_sq_notifier_aio_poll_begin / _poll_end on each I/O SQ of a polling
// thread; the last io_poll after the end reads the shadow tail.
void NvmeControllerModel::add_sq_poll_handlers() {
  sq_poll_started_.assign(engine_->context_count(), 0);
  for (unsigned i = 0; i < engine_->context_count(); ++i) {
    HostThread* t = engine_->host_thread(i);
    if (!t || t->params().poll_max == sc_core::SC_ZERO_TIME) continue;
    auto each_sq = [this, i](auto&& f) {
      for (uint16_t q = 1; q <= params_.firmware.max_io_queues; ++q)
        if (engine_->context_of(q) == i) f(q);
    };
    t->add_poll_handler(
        [this, i, each_sq] {
          sq_poll_started_[i] = 1;
          each_sq([this](uint16_t q) { firmware_->sq_poll_begin(q); });
        },
        [this, i, each_sq] {
          sq_poll_started_[i] = 0;
          bool found = false;
          each_sq([&](uint16_t q) {
            if (firmware_->sq_poll_end(q)) {
              engine_->mark_sq(q);
              found = true;
            }
          });
          return found;
        });
  }
}

void NvmeControllerModel::sq_tail_published(uint16_t qid, const sc_core::sc_time& delay) {
  if (sq_poll_started_.empty() || qid == 0 || qid > params_.firmware.max_io_queues) return;
  const unsigned i = engine_->context_of(qid);
  if (!sq_poll_started_[i]) return;
  engine_->mark_sq(qid);  // nvme_sq_notifier_aio_poll saw the tail move; _poll_ready processes the SQ
  engine_->host_thread(i)->kick(delay);
}

}  // namespace nvmesim::models
