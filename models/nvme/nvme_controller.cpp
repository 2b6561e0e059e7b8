#include "nvmesim/models/nvme/nvme_controller.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "nvmesim/firmware/nvme/controller_tag.h"
#include "nvmesim/firmware/nvme/eventidx.h"
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

NotifierParams notifier_params(const NvmeControllerModel::Params& params) {
  using Fault = NvmeControllerModel::Params::EventfdFault;
  NotifierParams n;
  n.mode = params.notify;
  n.queues = uint16_t(params.firmware.max_io_queues + 1u);
  n.timer_delay = params.timer_delay;
  n.eventfd_fault = params.eventfd_fault == Fault::LostWakeups ? EventfdFault::LostWakeups
                    : params.eventfd_fault == Fault::Spin      ? EventfdFault::Spin
                                                               : EventfdFault::None;
  return n;
}

// The hardware engine's doorbell path: a doorbell write wakes the engine
// after its decode cycles (the write's own delay first).
class HwDoorbellNotifier : public DoorbellNotifier {
 public:
  explicit HwDoorbellNotifier(NvmeHwEngine& engine) : engine_(engine) {}
  // Not a hv.notify mode; the nearest: the write schedules the processing.
  NotifyMode mode() const override { return NotifyMode::Deferred; }
  void doorbell_written(uint16_t, bool, sc_time& delay) override {
    engine_.kick(delay + engine_.doorbell_stage());
  }

 private:
  NvmeHwEngine& engine_;
};

}  // namespace

NvmeControllerModel::NvmeControllerModel(sc_module_name name, const Params& params,
                                         std::vector<HostThread*> threads, const PcieLink& link)
    : PcieEndpoint(name, nvme_identity(params, link.params()), params.firmware.msix_vectors),
      bar0_target("bar0_target"),
      params_(params),
      link_(link),
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
  ctx_.resize(threads.empty() ? 1 : threads.size());
  if (threads.empty()) engine_ = std::make_unique<NvmeHwEngine>("engine", params_.engine);
  for (size_t i = 0; i < ctx_.size(); ++i) {
    Context& c = ctx_[i];
    c.thread = threads.empty() ? nullptr : threads[i];
    c.index = unsigned(i);
    c.done.resize(65536);
    c.sq_list.reserve(params_.firmware.max_io_queues + 1u);
    auto work = [this, &c](sc_time& local) { emulate(c, local); };
    if (c.thread)
      c.thread->set_work(work);
    else
      engine_->set_work(work);
  }
  queue_ctx_.assign(params_.firmware.max_io_queues + 1u, 0);
  held_back_.reserve(params_.firmware.max_io_queues + 1u);
  for (size_t q = 1; q < queue_ctx_.size() && q < params_.queue_thread.size(); ++q)
    queue_ctx_[q] = uint8_t(params_.queue_thread[q] < ctx_.size() ? params_.queue_thread[q] : 0);
  slot_sq_.assign(4096, 0);
  if (link_.mode() == PcieMode::Link) {
    traffic_ = std::make_unique<PcieLinkTraffic>(link_, link_purposes());
    attach_link_traffic(*traffic_, kMsixPurpose, kRegisterMmioPurpose);
  }
  // Doorbell entries, SQEs and CQEs are small: their DMA times are looked up.
  for (unsigned n = 0; n < small_read_time_.size(); ++n) {
    small_read_time_[n] = link_.read_time(n);
    small_write_time_[n] = link_.write_time(n);
  }
  if (engine_)
    notifier_ = std::make_unique<HwDoorbellNotifier>(*engine_);
  else
    notifier_ = make_doorbell_notifier(notifier_params(params_), *this);

  const unsigned queues = params_.firmware.max_io_queues + 1u;
  sq_marked_.assign(queues, 0);
  sqe_bursts_.assign(queues, SqeBurst{});
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
      mark_sq(effect.qid);
      notifier_->doorbell_written(effect.qid, true, delay);
      break;
    case fw::Bar0WriteEffect::CqDoorbell:
      mark_cq(effect.qid, false);
      notifier_->doorbell_written(effect.qid, false, delay);
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
  std::fill(sqe_bursts_.begin(), sqe_bursts_.end(), SqeBurst{});  // the queues go; new ones may reuse the memory
  backend_->reset();
  for (Context& c : ctx_) {
    c.done_count = 0;
    c.sq_list.clear();
  }
  std::fill(sq_marked_.begin(), sq_marked_.end(), 0);
  std::fill(cq_marked_.begin(), cq_marked_.end(), 0);
  std::fill(cq_notified_.begin(), cq_notified_.end(), 0);
  notifier_->on_controller_reset();
}

bool NvmeControllerModel::ioeventfd_notify(uint32_t offset, const sc_time& delay) {
  if (!notifier_->accepts_ioeventfd() || !firmware_->dbbuf_active()) return false;
  const uint32_t stride = nvme::doorbell_stride(params_.firmware.dstrd);
  if (offset < nvme::reg::DOORBELL_BASE) return false;
  const uint32_t index = (offset - nvme::reg::DOORBELL_BASE) / stride;
  const uint16_t qid = uint16_t(index / 2);
  if (qid == 0 || qid > params_.firmware.max_io_queues) return false;  // admin: plain MMIO
  ++counters_.ioeventfd_notifications;
  if (traffic_) traffic_->host_write(kDoorbellMmioPurpose, offset, 4, kernel_now() + delay);  // the guest's write
  if (index % 2 == 0)
    mark_sq(qid);
  else
    mark_cq(qid, true);
  if (!notifier_->eventfd_signalled(index, qid, delay)) ++counters_.lost_notifications;
  return true;
}

void NvmeControllerModel::mark_sq(uint16_t qid) {
  if (engine_) {  // the hardware engine's arbiter keeps the SQs that were rung
    firmware_->arbiter().set_ready(qid, true);
    return;
  }
  if (qid < sq_marked_.size() && !sq_marked_[qid]) {
    sq_marked_[qid] = 1;
    context_of(qid).sq_list.push_back(qid);
  }
}

void NvmeControllerModel::mark_cq(uint16_t qid, bool read_shadow_head) {
  if (qid < cq_marked_.size() && qid >= cq_scan_limit_) cq_scan_limit_ = uint16_t(qid + 1);
  if (qid < cq_marked_.size()) cq_marked_[qid] = 1;
  if (read_shadow_head) cq_notified_[qid] = 1;
}

// ---------------------------------------------------------------- emulation
void NvmeControllerModel::emulate(Context& ctx, sc_time& local) {
  ctx.in_emulation = true;
  running_ = Running{&local, &ctx};
  // Device bursts are traced on the track of the host thread or of the
  // hardware engine that runs them.
  const unsigned trace_id = ctx.thread ? ctx.thread->params().trace_id : NvmeHwEngine::kTraceId;
  auto burst_tracer = [] { return traces::active(); };
  counters_.stuck_handler_runs += notifier_->on_emulation_start(ctx.index);
  bool progress = true;
  while (progress) {
    progress = false;
    const sc_time burst_start = kernel_now() + local;
    unsigned commands = 0, completions = 0;
    if (auto* t = burst_tracer()) t->hold_begin(traces::Hold::DeviceBurst, trace_id, burst_start.value());
    notifier_->on_pass_start(ctx.index, cq_scan_limit_);
    if (engine_) {
      // The hardware engine: the arbiter chooses the SQs and their bursts.
      const unsigned n = arbitrate_sqs(local);
      commands += n;
      if (n) progress = true;
    } else {
      // Submission queues that were rung (or still hold work).
      for (size_t i = 0; i < ctx.sq_list.size(); ++i) {
        const uint16_t qid = ctx.sq_list[i];
        if (!notifier_->sq_due(qid)) continue;  // its timer has not fired yet
        sq_marked_[qid] = 0;
        // cmd_cost and cqe_cost are charged as each command is fetched and each
        // CQE posted (on_command_fetched / on_completion_posting).
        const unsigned n = firmware_->process_sq(qid, params_.sq_budget);
        commands += n;
        if (n) {
          progress = true;
          const uint16_t cqid = firmware_->sq_state(qid).cqid;
          if (cqid >= cq_scan_limit_) cq_scan_limit_ = uint16_t(cqid + 1);
        }
        if (auto* t = traces::active())
          t->queue_value(qid, traces::QueueSignal::DeviceSqHead, (kernel_now() + local).value(),
                         firmware_->sq_state(qid).head);
        if (firmware_->sq_has_work(qid)) {
          sq_marked_[qid] = 1;  // keep it in the list
          notifier_->sq_work_left(qid, local);
        }
      }
      // Drop the unmarked, keep order (deterministic round robin).
      size_t kept = 0;
      for (size_t i = 0; i < ctx.sq_list.size(); ++i)
        if (sq_marked_[ctx.sq_list[i]]) ctx.sq_list[kept++] = ctx.sq_list[i];
      ctx.sq_list.resize(kept);
    }

    // Backend completions of this thread's queues.
    const bool post_each = params_.cqe_post == CqePost::Each ||
                           (params_.cqe_post == CqePost::EachWithIoeventfd && params_.notify == NotifyMode::Ioeventfd);
    for (size_t i = 0; i < ctx.done_count; ++i) {
      firmware_->complete_io(ctx.done[i].tag, ctx.done[i].status);
      const uint16_t sqid = slot_sq_[fw::tag_slot(ctx.done[i].tag)];
      const uint16_t cqid = firmware_->sq_state(sqid).cqid;
      notifier_->completion_queued(cqid, local);
      if (post_each) {  // nvme_enqueue_req_completion -> nvme_post_cqes at once
        posted_before_ = firmware_->counters().completions_posted;
        completions += firmware_->post_completions(cqid);
      }
    }
    if (ctx.done_count) progress = true;
    ctx.done_count = 0;

    // Completion queues with completions to post. Only CQs that commands
    // went to (or that were rung) can hold completions.
    for (uint16_t cqid = 0; cqid < cq_scan_limit_; ++cqid) {
      if (thread_of(cqid) != ctx.index || !notifier_->cq_due(cqid)) continue;
      if (!cq_marked_[cqid] && !firmware_->cq_has_pending(cqid)) continue;
      cq_marked_[cqid] = 0;
      if (cq_notified_[cqid]) {  // QEMU's nvme_cq_notifier reads the shadow head first
        cq_notified_[cqid] = 0;
        firmware_->refresh_cq_head_from_shadow(cqid);
      }
      posted_before_ = firmware_->counters().completions_posted;
      const unsigned n = firmware_->post_completions(cqid);
      completions += n;
      if (n) progress = true;
    }
    if (progress) {
      ++counters_.bursts;
      if (auto* t = burst_tracer())
        t->device_burst(trace_id, burst_start.value(), (kernel_now() + local).value(), commands,
                        completions);
    }
    if (auto* t = burst_tracer()) t->hold_end(traces::Hold::DeviceBurst, trace_id);
  }
  notifier_->on_emulation_end(ctx.index);
  running_ = Running{};
  ctx.in_emulation = false;
}

// The hardware engine's SQ phase of a pass: turns by the firmware's arbiter
// (NVMe 1.4 section 4.13: CC.AMS, the Arbitration feature, each SQ's
// QPRIO), each fetching up to its burst. A pass takes no further turn once
// it has fetched nvme.sq_budget commands for each SQ ready when it starts
// (what QEMU's engine's visit of the rung SQs fetches at most; a turn with
// no Arbitration Burst limit, AB 111b, may take all of an SQ's commands),
// then posts completions;
// the arbiter's rotation and round carry over to the next pass. An SQ that
// gives fewer commands than its turn allowed, or has none left, leaves the
// arbitration; one that stopped with commands left (all its command slots
// held) comes back for the next pass.
unsigned NvmeControllerModel::arbitrate_sqs(sc_time& local) {
  fw::Arbiter& arb = firmware_->arbiter();
  const uint64_t budget = uint64_t(params_.sq_budget) * std::max(1u, arb.ready_count());
  uint64_t fetched = 0;
  held_back_.clear();
  while (fetched < budget) {
    const fw::Arbiter::Grant g = arb.next();
    if (!g) break;
    fetching_sq_ = g.sqid;
    const unsigned n = firmware_->process_sq(g.sqid, g.commands);
    fetching_sq_ = -1;
    // Admin commands may delete and create SQs (in the same memory).
    if (g.sqid == 0) std::fill(sqe_bursts_.begin(), sqe_bursts_.end(), SqeBurst{});
    arb.consumed(g, n);
    fetched += n;
    if (n) {
      const uint16_t cqid = firmware_->sq_state(g.sqid).cqid;
      if (cqid >= cq_scan_limit_) cq_scan_limit_ = uint16_t(cqid + 1);
    }
    if (auto* t = traces::active())
      t->queue_value(g.sqid, traces::QueueSignal::DeviceSqHead, (kernel_now() + local).value(),
                     firmware_->sq_state(g.sqid).head);
    const bool left = firmware_->sq_has_work(g.sqid);
    if (n < g.commands || !left) {
      arb.set_ready(g.sqid, false);
      if (left) held_back_.push_back(g.sqid);
    }
  }
  for (const uint16_t q : held_back_)
    if (firmware_->sq_state(q).exists) arb.set_ready(q, true);  // an admin turn may have deleted it
  return unsigned(fetched);
}

// ---------------------------------------------------------------- interrupts
void NvmeControllerModel::msix(uint16_t vector) {
  if (vector >= msix_vectors()) return;
  const uint64_t posted = firmware_->counters().completions_posted - posted_before_;
  const sc_time at = kernel_now() + (running_.local ? *running_.local : SC_ZERO_TIME);
  const InterruptCoalescer::Decision d =
      coalescer_.on_completions(vector, posted, firmware_->interrupt_coalescing_threshold(),
                                firmware_->interrupt_coalescing_time_100us(), at);
  if (!d.hold) {
    send_msix(vector);
    return;
  }
  counters_.coalesced_completions += posted ? posted : 1;
  if (d.deadline != SC_ZERO_TIME) activations::notify(coalesce_event_, d.deadline - kernel_now());
}

void NvmeControllerModel::coalescing_timeout() {
  activations::begin(activations::ControllerMethod);
  const sc_time now = kernel_now();
  const sc_time next = coalescer_.expire(now, [this](uint16_t v) { send_msix(v); });
  if (next != SC_ZERO_TIME) activations::notify(coalesce_event_, next - now);
}

void NvmeControllerModel::send_msix(uint16_t vector) {
  coalescer_.on_sent(vector);
  if (engine_) {
    const sc_time t = engine_->msix_stage();
    if (running_.local) *running_.local += t;
  }
  sc_time t = running_.local ? *running_.local : SC_ZERO_TIME;
  if (PcieEndpoint::send_msix(vector, t) == MsixOutcome::Masked) {
    ++counters_.msix_masked;
    return;
  }
  ++counters_.msix_sent;
  if (running_.local) *running_.local = t;
}

// Unmasked with its message pending: it goes at the unmasking write's time.
void NvmeControllerModel::send_pending_msix(uint16_t vector, const sc_time& delay) {
  KeepRunning keep(*this);
  sc_time t = delay;
  running_.local = &t;
  send_msix(vector);
}

bool NvmeControllerModel::work_pending() const {
  if (backend_->in_flight() > 0) return true;
  if (engine_ && engine_->work_pending()) return true;
  for (const Context& c : ctx_)
    if (c.done_count) return true;
  return coalescer_.holding() || msix_in_flight();
}

// ---------------------------------------------------------------- backend
void NvmeControllerModel::on_backend_complete(uint32_t tag, uint16_t status) {
  Context& c = context_of(slot_sq_[fw::tag_slot(tag)]);
  if (c.done_count < c.done.size()) c.done[c.done_count++] = Done{tag, status};
  if (c.thread)
    c.thread->kick(SC_ZERO_TIME);  // the AIO completion wakes the queue's thread
  else
    engine_->kick(SC_ZERO_TIME);  // the backend's completion signal wakes the engine
}

void NvmeControllerModel::on_command_fetched() {
  if (engine_) {
    const sc_time t = engine_->command_stage();
    if (running_.local) *running_.local += t;
    return;
  }
  if (!running_.local) return;
  *running_.local += running_.ctx ? running_.ctx->thread->cpu(params_.cmd_cost) : params_.cmd_cost;
}

void NvmeControllerModel::on_completion_posting() {
  if (engine_) {
    const sc_time t = engine_->cqe_stage();
    if (running_.local) *running_.local += t;
    return;
  }
  if (!running_.local) return;
  *running_.local += running_.ctx ? running_.ctx->thread->cpu(params_.cqe_cost) : params_.cqe_cost;
}

// ---------------------------------------------------------------- stall reports
bool NvmeControllerModel::spin_will_fetch(uint16_t qid, uint16_t driver_tail) const {
  if (qid >= queue_ctx_.size()) return false;
  const Context& c = ctx_[thread_of(qid)];
  if (!c.thread || !c.thread->spinning()) return false;
  const auto sq = firmware_->sq_state(qid);
  if (sq.exists && sq.head != driver_tail) return true;  // commands to fetch
  // Completions to post, into a CQ with room (a full one waits for the guest).
  const auto cq = firmware_->cq_state(qid);
  return cq.exists && cq.pending && !fw::Ring{cq.size}.full(cq.head, cq.tail);
}

std::string NvmeControllerModel::describe_sq(uint16_t qid, uint16_t driver_tail) const {
  const auto sq = firmware_->sq_state(qid);
  std::ostringstream r;
  r << "device head " << sq.head << " tail " << sq.tail;
  if (sq.exists && sq.tail != driver_tail) r << " (the device never saw the driver's tail)";
  return r.str();
}

std::string NvmeControllerModel::describe_cq(uint16_t qid) const {
  const auto cq = firmware_->cq_state(qid);
  std::ostringstream r;
  r << "device head " << cq.head << " tail " << cq.tail << ", " << cq.pending
    << " completions waiting to be posted";
  if (cq.exists && cq.pending && fw::Ring{cq.size}.full(cq.head, cq.tail))
    r << " (CQ " << qid << " is full as the device sees it: it waits for a CQ head update)";
  return r.str();
}

}  // namespace nvmesim::models
