#include "models/nvme_controller.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "models/address_map.h"
#include "traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

NvmeControllerModel::NvmeControllerModel(sc_module_name name, const Params& params,
                                         std::vector<HostThread*> threads, const PcieLink& link)
    : sc_module(name),
      bar0_target("bar0_target"),
      msix_target("msix_target"),
      config_target("config_target"),
      dma_initiator("dma_initiator"),
      params_(params),
      link_(link) {
  firmware_ = std::make_unique<fw::Controller>(params_.firmware, *this);
  backend_ = std::make_unique<StorageBackend>("backend", params_.backend, *this);
  backend_->set_completion_callback(
      [this](uint32_t tag, uint16_t status) { on_backend_complete(tag, status); });
  ctx_.resize(threads.size());
  for (size_t i = 0; i < threads.size(); ++i) {
    Context& c = ctx_[i];
    c.thread = threads[i];
    c.done.resize(65536);
    c.sq_list.reserve(params_.firmware.max_io_queues + 1u);
    c.thread->set_work([this, &c](sc_time& local) { emulate(c, local); });
  }
  queue_ctx_.assign(params_.firmware.max_io_queues + 1u, 0);
  for (size_t q = 1; q < queue_ctx_.size() && q < params_.queue_thread.size(); ++q)
    queue_ctx_[q] = uint8_t(params_.queue_thread[q] < ctx_.size() ? params_.queue_thread[q] : 0);
  slot_sq_.assign(4096, 0);
  // Doorbell entries, SQEs and CQEs are small: their DMA times are looked up.
  for (unsigned n = 0; n < small_read_time_.size(); ++n) {
    small_read_time_[n] = link_.read_time(n);
    small_write_time_[n] = link_.write_time(n);
  }

  const unsigned queues = params_.firmware.max_io_queues + 1u;
  sq_marked_.assign(queues, 0);
  cq_marked_.assign(queues, 0);
  cq_notified_.assign(queues, 0);
  sq_deadline_.assign(queues, SC_ZERO_TIME);
  cq_deadline_.assign(queues, SC_ZERO_TIME);
  cq_fired_.assign(queues, 0);
  eventfd_set_.assign(2u * queues, 0);
  coalesced_.assign(params_.firmware.msix_vectors, 0);
  coalesce_deadline_.assign(params_.firmware.msix_vectors, SC_ZERO_TIME);
  msix_table_.resize(params_.firmware.msix_vectors);
  msix_pending_.assign(params_.firmware.msix_vectors, 0);

  // PCI configuration space header (type 0): identity and class code of an
  // NVM Express controller (01h/08h/02h).
  auto put16 = [this](unsigned off, uint16_t v) { std::memcpy(&config_space_[off], &v, 2); };
  put16(0x00, params_.firmware.pci_vendor_id);
  put16(0x02, params_.pci_device_id);
  config_space_[0x09] = 0x02;
  config_space_[0x0A] = 0x08;
  config_space_[0x0B] = 0x01;
  const uint32_t bar0 = uint32_t(kBar0Base) | 0x4;  // 64-bit memory BAR
  std::memcpy(&config_space_[0x10], &bar0, 4);

  bar0_target.register_b_transport(this, &NvmeControllerModel::bar0_b_transport);
  msix_target.register_b_transport(this, &NvmeControllerModel::msix_b_transport);
  config_target.register_b_transport(this, &NvmeControllerModel::config_b_transport);

  SC_HAS_PROCESS(NvmeControllerModel);
  SC_METHOD(complete_enable);
  sensitive << enable_event_;
  dont_initialize();
  SC_METHOD(coalescing_timeout);
  sensitive << coalesce_event_;
  dont_initialize();
}

void NvmeControllerModel::end_of_elaboration() {
  tlm::tlm_generic_payload p;
  tlm::tlm_dmi dmi;
  p.set_address(0);
  p.set_command(tlm::TLM_READ_COMMAND);
  if (dma_initiator->get_direct_mem_ptr(p, dmi) && dmi.is_read_write_allowed()) {
    dmi_base_ = dmi.get_dmi_ptr();
    dmi_read_latency_ = dmi.get_read_latency();
    dmi_write_latency_ = dmi.get_write_latency();
    dmi_start_ = dmi.get_start_address();
    dmi_end_ = dmi.get_end_address();
  }
}

// ---------------------------------------------------------------- BAR0
void NvmeControllerModel::bar0_b_transport(tlm::tlm_generic_payload& p, sc_time& delay) {
  const uint32_t offset = uint32_t(p.get_address());
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
      request_processing(effect.qid, true, delay);
      break;
    case fw::Bar0WriteEffect::CqDoorbell:
      mark_cq(effect.qid);
      request_processing(effect.qid, false, delay);
      break;
    case fw::Bar0WriteEffect::EnableRequested:
      enable_event_.notify(delay + params_.enable_latency);
      break;
    case fw::Bar0WriteEffect::Reset:
      backend_->reset();
      for (Context& c : ctx_) {
        c.done_count = 0;
        c.sq_list.clear();
      }
      std::fill(sq_marked_.begin(), sq_marked_.end(), 0);
      std::fill(cq_marked_.begin(), cq_marked_.end(), 0);
      std::fill(cq_notified_.begin(), cq_notified_.end(), 0);
      std::fill(eventfd_set_.begin(), eventfd_set_.end(), 0);
      for (Context& c : ctx_) {
        c.stuck_eventfds.clear();  // the eventfds are torn down with the queues
        c.thread->set_spinning(false);
      }
      break;
    case fw::Bar0WriteEffect::None:
    case fw::Bar0WriteEffect::Shutdown:
      break;
  }
}

void NvmeControllerModel::complete_enable() { firmware_->complete_enable(); }

bool NvmeControllerModel::ioeventfd_notify(uint32_t offset, const sc_time& delay) {
  if (params_.notify != NotifyMode::Ioeventfd || !firmware_->dbbuf_active()) return false;
  const uint32_t stride = nvme::doorbell_stride(params_.firmware.dstrd);
  if (offset < nvme::reg::DOORBELL_BASE) return false;
  const uint32_t index = (offset - nvme::reg::DOORBELL_BASE) / stride;
  const uint16_t qid = uint16_t(index / 2);
  if (qid == 0 || qid > params_.firmware.max_io_queues) return false;  // admin: plain MMIO
  ++counters_.ioeventfd_notifications;
  if (index % 2 == 0) {
    mark_sq(qid);
  } else {
    mark_cq(qid);
    cq_notified_[qid] = 1;
  }
  using Fault = Params::EventfdFault;
  // Ming Lin's ioeventfd bug: the handler never read (cleared) the eventfd.
  if (params_.eventfd_fault == Fault::LostWakeups) {
    // The lost-wake-up reading: once set, later writes do not make it readable
    // again, so the work waits until something else wakes the thread.
    if (eventfd_set_[index]) {
      ++counters_.lost_notifications;
      return true;
    }
    eventfd_set_[index] = 1;
  } else if (params_.eventfd_fault == Fault::Spin && !eventfd_set_[index]) {
    // QEMU's reading: the fd stays readable, so every loop iteration of
    // its thread runs the handler again and the thread never sleeps.
    eventfd_set_[index] = 1;
    Context& ctx = context_of(qid);
    ctx.stuck_eventfds.push_back(index);
    ctx.thread->set_spinning(true);
  }
  context_of(qid).thread->kick(delay);
  return true;
}

void NvmeControllerModel::mark_sq(uint16_t qid) {
  if (qid < sq_marked_.size() && !sq_marked_[qid]) {
    sq_marked_[qid] = 1;
    context_of(qid).sq_list.push_back(qid);
  }
}

void NvmeControllerModel::mark_cq(uint16_t qid) {
  if (qid < cq_marked_.size() && qid >= cq_scan_limit_) cq_scan_limit_ = uint16_t(qid + 1);
  if (qid < cq_marked_.size()) cq_marked_[qid] = 1;
}

void NvmeControllerModel::request_processing(uint16_t qid, bool sq, sc_time& delay) {
  Context& ctx = context_of(qid);
  if (params_.notify == NotifyMode::Sync && !ctx.in_emulation &&
      sc_get_current_process_handle().proc_kind() == SC_THREAD_PROC_) {
    // Processing inside the exit: the vCPU waits for it; `delay` stays an
    // offset from the (possibly advanced) present.
    emulate(ctx, delay);
    return;
  }
  if (params_.notify == NotifyMode::Timer && qid != 0) {
    arm_queue_timer(qid, sq, delay + params_.timer_delay);
    return;
  }
  ctx.thread->kick(delay);
}

// QEMU's timer_mod: each arming replaces the deadline, even with a later one.
void NvmeControllerModel::set_queue_deadline(uint16_t qid, bool sq, const sc_time& delay) {
  (sq ? sq_deadline_ : cq_deadline_)[qid] = sc_time_stamp() + delay;
}

void NvmeControllerModel::arm_queue_timer(uint16_t qid, bool sq, const sc_time& delay) {
  set_queue_deadline(qid, sq, delay);
  rearm_thread_timer(context_of(qid));
}

// The thread's single timer wakes it at the earliest deadline of its queues.
void NvmeControllerModel::rearm_thread_timer(Context& ctx) {
  bool any = false;
  sc_time earliest;
  for (uint16_t q = 1; q < sq_deadline_.size(); ++q) {
    if (&context_of(q) != &ctx) continue;
    for (const sc_time& d : {sq_deadline_[q], cq_deadline_[q]})
      if (d != SC_ZERO_TIME && (!any || d < earliest)) {
        earliest = d;
        any = true;
      }
  }
  if (any)
    ctx.thread->arm_timer(earliest > sc_time_stamp() ? earliest - sc_time_stamp() : SC_ZERO_TIME);
  else
    ctx.thread->cancel_timer();  // every deadline was served: no empty wake-up
}

bool NvmeControllerModel::timer_due(std::vector<sc_time>& deadline, uint16_t qid) {
  if (params_.notify != NotifyMode::Timer || qid == 0) return true;
  if (deadline[qid] == SC_ZERO_TIME || deadline[qid] > sc_time_stamp()) return false;
  deadline[qid] = SC_ZERO_TIME;
  return true;
}

// ---------------------------------------------------------------- emulation
void NvmeControllerModel::emulate(Context& ctx, sc_time& local) {
  ctx.in_emulation = true;
  local_ = &local;
  running_ = &ctx;
  const unsigned trace_id = ctx.thread->params().trace_id;
  const bool timers = params_.notify == NotifyMode::Timer;
  // A still-readable eventfd: its handler runs again on this iteration.
  for (const uint32_t index : ctx.stuck_eventfds) {
    ++counters_.stuck_handler_runs;
    if (index % 2 == 0)
      mark_sq(uint16_t(index / 2));
    else {
      mark_cq(uint16_t(index / 2));
      cq_notified_[index / 2] = 1;
    }
  }
  bool progress = true;
  while (progress) {
    progress = false;
    const sc_time burst_start = sc_time_stamp() + local;
    unsigned commands = 0, completions = 0;
    if (auto* t = traces::active()) t->hold_begin(traces::Hold::DeviceBurst, trace_id, burst_start.value());
    // Timers fire in deadline order: a CQ timer that expired before this
    // pass posts even if this pass's completions re-arm it.
    if (timers)
      for (uint16_t cqid = 1; cqid < cq_scan_limit_; ++cqid)
        if (&context_of(cqid) == &ctx && timer_due(cq_deadline_, cqid)) cq_fired_[cqid] = 1;
    // Submission queues that were rung (or still hold work).
    for (size_t i = 0; i < ctx.sq_list.size(); ++i) {
      const uint16_t qid = ctx.sq_list[i];
      if (!timer_due(sq_deadline_, qid)) continue;  // its timer has not fired yet
      sq_marked_[qid] = 0;
      // cmd_cost and cqe_cost are charged as each command is fetched and each
      // CQE posted (on_command_fetched / on_completion_posting).
      const unsigned n = firmware_->process_sq(qid, params_.sq_budget);
      local_ = &local;  // another thread may have run during a barrier
      running_ = &ctx;
      commands += n;
      if (n) {
        progress = true;
        const uint16_t cqid = firmware_->sq_state(qid).cqid;
        if (cqid >= cq_scan_limit_) cq_scan_limit_ = uint16_t(cqid + 1);
      }
      if (auto* t = traces::active())
        t->queue_value(qid, traces::QueueSignal::DeviceSqHead, (sc_time_stamp() + local).value(),
                       firmware_->sq_state(qid).head);
      if (firmware_->sq_has_work(qid)) {
        sq_marked_[qid] = 1;  // keep it in the list
        if (timers && sq_deadline_[qid] == SC_ZERO_TIME)
          set_queue_deadline(qid, true, local + params_.timer_delay);
      }
    }
    // Drop the unmarked, keep order (deterministic round robin).
    size_t kept = 0;
    for (size_t i = 0; i < ctx.sq_list.size(); ++i)
      if (sq_marked_[ctx.sq_list[i]]) ctx.sq_list[kept++] = ctx.sq_list[i];
    ctx.sq_list.resize(kept);

    // Backend completions of this thread's queues.
    for (size_t i = 0; i < ctx.done_count; ++i) {
      firmware_->complete_io(ctx.done[i].tag, ctx.done[i].status);
      // QEMU 2.x posts completions from the CQ's own timer.
      const uint16_t cqid = firmware_->sq_state(slot_sq_[ctx.done[i].tag & 0xFFFFFF]).cqid;
      if (timers) set_queue_deadline(cqid, false, local + params_.timer_delay);
    }
    if (ctx.done_count) progress = true;
    ctx.done_count = 0;

    // Completion queues with completions to post. Only CQs that commands
    // went to (or that were rung) can hold completions.
    for (uint16_t cqid = 0; cqid < cq_scan_limit_; ++cqid) {
      if (&context_of(cqid) != &ctx) continue;
      if (timers && cqid != 0) {
        if (!cq_fired_[cqid]) continue;
        cq_fired_[cqid] = 0;
      }
      if (!cq_marked_[cqid] && !firmware_->cq_has_pending(cqid)) continue;
      cq_marked_[cqid] = 0;
      if (cq_notified_[cqid]) {  // QEMU's nvme_cq_notifier reads the shadow head first
        cq_notified_[cqid] = 0;
        firmware_->refresh_cq_head_from_shadow(cqid);
        local_ = &local;
        running_ = &ctx;
      }
      posted_before_ = firmware_->counters().completions_posted;
      const unsigned n = firmware_->post_completions(cqid);
      local_ = &local;
      running_ = &ctx;
      completions += n;
      if (n) progress = true;
    }
    if (progress) {
      ++counters_.bursts;
      if (auto* t = traces::active())
        t->device_burst(trace_id, burst_start.value(), (sc_time_stamp() + local).value(), commands,
                        completions);
    }
    if (auto* t = traces::active()) t->hold_end(traces::Hold::DeviceBurst, trace_id);
  }
  if (timers) rearm_thread_timer(ctx);  // once, for every deadline this pass set
  local_ = nullptr;
  running_ = nullptr;
  ctx.in_emulation = false;
}

// ---------------------------------------------------------------- ControllerEnv
sc_time NvmeControllerModel::dma_time(bool device_reads, uint32_t len) {
  const sc_time t = device_reads
                        ? (len < small_read_time_.size() ? small_read_time_[len] : link_.read_time(len))
                        : (len < small_write_time_.size() ? small_write_time_[len] : link_.write_time(len));
  if (link_.mode() != PcieMode::Link || !local_ || len == 0) return t;
  // A read's completions arrive a round trip after the request; its TLPs
  // then hold the downstream direction for the rest of its time, as a
  // write's hold the upstream one. Another thread's transfer queues behind.
  const sc_time at = sc_time_stamp() + *local_;
  const sc_time rtt = device_reads ? sc_time(link_.params().read_round_trip_ns, SC_NS) : SC_ZERO_TIME;
  sc_time& free = device_reads ? downstream_free_ : upstream_free_;
  const sc_time start = std::max(at + rtt, free);
  free = start + (t - rtt);
  return free - at;
}

bool NvmeControllerModel::dma_read(uint64_t addr, void* dst, uint32_t len) {
  if (len == 0) return true;
  ++counters_.dma_reads;
  counters_.dma_read_bytes += len;
  const uint64_t last = addr + len - 1;
  if (dmi_base_ && last >= addr && addr >= dmi_start_ && last <= dmi_end_) {
    std::memcpy(dst, dmi_base_ + (addr - dmi_start_), len);
    if (local_) *local_ += dmi_read_latency_ + dma_time(true, len);
    return true;
  }
  tlm::tlm_generic_payload p;
  sc_time t = local_ ? *local_ : SC_ZERO_TIME;
  p.set_command(tlm::TLM_READ_COMMAND);
  p.set_address(addr);
  p.set_data_ptr(static_cast<unsigned char*>(dst));
  p.set_data_length(len);
  p.set_streaming_width(len);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  dma_initiator->b_transport(p, t);
  if (local_) *local_ = t;
  return p.is_response_ok();
}

bool NvmeControllerModel::dma_write(uint64_t addr, const void* src, uint32_t len) {
  if (len == 0) return true;
  ++counters_.dma_writes;
  counters_.dma_write_bytes += len;
  const uint64_t last = addr + len - 1;
  if (dmi_base_ && last >= addr && addr >= dmi_start_ && last <= dmi_end_) {
    if (local_) {
      *local_ += dmi_write_latency_ + dma_time(false, len);
      // The write lands when its time has passed: a polling guest must not
      // see it earlier.
      if (sc_get_current_process_handle().proc_kind() == SC_THREAD_PROC_) {
        sc_time* mine = local_;
        Context* ctx = running_;
        HostThread::sync(*mine);
        local_ = mine;
        running_ = ctx;
      }
    }
    std::memcpy(dmi_base_ + (addr - dmi_start_), src, len);
    if (len == 4) trace_eventidx_write(addr, src);
    return true;
  }
  tlm::tlm_generic_payload p;
  sc_time t = local_ ? *local_ : SC_ZERO_TIME;
  p.set_command(tlm::TLM_WRITE_COMMAND);
  p.set_address(addr);
  p.set_data_ptr(static_cast<unsigned char*>(const_cast<void*>(src)));
  p.set_data_length(len);
  p.set_streaming_width(len);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  dma_initiator->b_transport(p, t);
  if (local_) *local_ = t;
  return p.is_response_ok();
}

void NvmeControllerModel::trace_eventidx_write(uint64_t addr, const void* src) {
  auto* t = traces::active();
  if (!t || !firmware_->dbbuf_active()) return;
  const uint64_t base = firmware_->eventidx_buffer_addr();
  if (addr < base || addr >= base + 4096) return;
  const uint64_t index = (addr - base) / nvme::doorbell_stride(params_.firmware.dstrd);
  uint32_t value;
  std::memcpy(&value, src, 4);
  t->queue_value(uint16_t(index / 2),
                 index % 2 ? traces::QueueSignal::CqEventIdx : traces::QueueSignal::SqEventIdx,
                 (sc_time_stamp() + (local_ ? *local_ : SC_ZERO_TIME)).value(), value);
}

void NvmeControllerModel::device_barrier() {
  // Everything before is globally visible before anything after: let the
  // time spent so far pass, so the host can act in between.
  if (local_ && sc_get_current_process_handle().proc_kind() == SC_THREAD_PROC_) {
    sc_time* mine = local_;
    Context* ctx = running_;
    HostThread::sync(*mine);
    local_ = mine;  // another emulation thread may have run meanwhile
    running_ = ctx;
  }
}

// Interrupt coalescing (Set Features 0x08, NVMe 1.4 section 5.21.1.8)
// holds back I/O queue interrupts until THR+1 completions are aggregated or
// TIME x 100 us has passed since the first held one, whichever comes first.
// TIME 0 "corresponds to no delay": nothing is held, whatever THR says (a
// held completion with no deadline would never be signalled). The admin
// queue's vector is never coalesced.
void NvmeControllerModel::msix(uint16_t vector) {
  if (vector >= msix_table_.size()) return;
  const uint16_t thr = firmware_->interrupt_coalescing_threshold();
  const uint8_t time = firmware_->interrupt_coalescing_time_100us();
  if (vector != 0 && time) {
    const uint64_t posted = firmware_->counters().completions_posted - posted_before_;
    coalesced_[vector] += uint32_t(posted ? posted : 1);
    if (coalesced_[vector] < uint32_t(thr) + 1u) {
      counters_.coalesced_completions += posted ? posted : 1;
      if (coalesce_deadline_[vector] == SC_ZERO_TIME) {
        const sc_time at = sc_time_stamp() + (local_ ? *local_ : SC_ZERO_TIME) +
                           sc_time(100.0 * time, SC_US);
        coalesce_deadline_[vector] = at;
        coalesce_event_.notify(at - sc_time_stamp());
      }
      return;
    }
  }
  send_msix(vector);
}

void NvmeControllerModel::coalescing_timeout() {
  const sc_time now = sc_time_stamp();
  sc_time next = SC_ZERO_TIME;
  for (uint16_t v = 0; v < coalesce_deadline_.size(); ++v) {
    const sc_time d = coalesce_deadline_[v];
    if (d == SC_ZERO_TIME) continue;
    if (d <= now) {
      if (coalesced_[v]) send_msix(v);
    } else if (next == SC_ZERO_TIME || d < next) {
      next = d;
    }
  }
  if (next != SC_ZERO_TIME) coalesce_event_.notify(next - now);
}

bool NvmeControllerModel::work_pending() const {
  if (backend_->in_flight() > 0) return true;
  for (const Context& c : ctx_)
    if (c.done_count) return true;
  for (const sc_time& d : coalesce_deadline_)
    if (d != SC_ZERO_TIME) return true;
  return false;
}

void NvmeControllerModel::send_msix(uint16_t vector) {
  coalesced_[vector] = 0;
  coalesce_deadline_[vector] = SC_ZERO_TIME;
  const MsixEntry& e = msix_table_[vector];
  if (e.control & 1) {  // masked: remember it in the PBA
    msix_pending_[vector] = 1;
    ++counters_.msix_masked;
    return;
  }
  ++counters_.msix_sent;
  if (auto* t = traces::active())
    t->msix(vector, (sc_time_stamp() + (local_ ? *local_ : SC_ZERO_TIME)).value());
  uint32_t data = e.data;
  tlm::tlm_generic_payload& p = msi_payload_;
  sc_time t = local_ ? *local_ : SC_ZERO_TIME;
  p.set_command(tlm::TLM_WRITE_COMMAND);
  p.set_address(e.address);
  p.set_data_ptr(reinterpret_cast<unsigned char*>(&data));
  p.set_data_length(4);
  p.set_streaming_width(4);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  dma_initiator->b_transport(p, t);
  if (local_) *local_ = t;
}

void NvmeControllerModel::on_command_fetched() {
  if (!local_) return;
  *local_ += running_ ? running_->thread->cpu(params_.cmd_cost) : params_.cmd_cost;
}

void NvmeControllerModel::on_completion_posting() {
  if (!local_) return;
  *local_ += running_ ? running_->thread->cpu(params_.cqe_cost) : params_.cqe_cost;
}

void NvmeControllerModel::backend_submit(const fw::IoRequest& shared_req) {
  Context& own = running_ ? *running_ : context_of(shared_req.sqid);
  own.request = shared_req;  // reuses its capacity: no allocation per I/O
  const fw::IoRequest& req = own.request;
  const sc_time zero = SC_ZERO_TIME;
  const sc_time& now = local_ ? *local_ : zero;
  // The data moves whatever the medium: over the link for a real device,
  // as a host memcpy into or out of guest memory for an emulated one (QEMU
  // copies to or from the guest's pages even for null-co with read-zeroes,
  // which zero-fills them). The ram backend moves it itself, segment by
  // segment through dma_read/dma_write; the others are charged the same here.
  if (params_.backend.kind != BackendKind::Ram && local_ &&
      (req.opcode == nvme::io::READ || req.opcode == nvme::io::WRITE)) {
    const bool to_guest = req.opcode == nvme::io::READ;
    if (link_.mode() == PcieMode::Link) {
      *local_ += dma_time(!to_guest, req.bytes);
    } else {
      for (uint32_t i = 0; i < req.segment_count; ++i) {
        const uint32_t len = req.segments[i].len;
        *local_ += to_guest ? link_.write_time(len) : link_.read_time(len);
      }
    }
  }
  const uint32_t slot = req.tag & 0xFFFFFF;  // fw tags: generation << 24 | slot
  if (slot >= slot_sq_.size()) slot_sq_.resize(slot + 1024);  // grows with queues, not per I/O
  slot_sq_[slot] = req.sqid;
  uint16_t status = 0;
  if (backend_->submit(req, now, &status)) {
    Context& c = context_of(req.sqid);
    if (c.done_count < c.done.size()) c.done[c.done_count++] = Done{req.tag, status};
  }
}

void NvmeControllerModel::on_backend_complete(uint32_t tag, uint16_t status) {
  Context& c = context_of(slot_sq_[tag & 0xFFFFFF]);
  if (c.done_count < c.done.size()) c.done[c.done_count++] = Done{tag, status};
  c.thread->kick(SC_ZERO_TIME);  // the AIO completion wakes the queue's thread
}

void NvmeControllerModel::program_msix_vector(uint16_t vector, uint64_t address, uint32_t data) {
  MsixEntry& e = msix_table_.at(vector);
  e.address = address;
  e.data = data;
  e.control = 0;
}

// ---------------------------------------------------------------- BAR2: MSI-X
void NvmeControllerModel::msix_b_transport(tlm::tlm_generic_payload& p, sc_time& delay) {
  const uint64_t offset = p.get_address();
  const unsigned len = p.get_data_length();
  p.set_response_status(tlm::TLM_OK_RESPONSE);
  if (len != 4) {
    p.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  uint32_t v = 0;
  if (offset < msix_table_.size() * 16u) {
    MsixEntry& e = msix_table_[offset / 16];
    const unsigned field = (offset % 16) / 4;
    if (p.is_read()) {
      v = field == 0 ? uint32_t(e.address) : field == 1 ? uint32_t(e.address >> 32)
                                           : field == 2 ? e.data : e.control;
      std::memcpy(p.get_data_ptr(), &v, 4);
      return;
    }
    std::memcpy(&v, p.get_data_ptr(), 4);
    switch (field) {
      case 0: e.address = (e.address & ~0xFFFFFFFFull) | v; break;
      case 1: e.address = (e.address & 0xFFFFFFFFull) | (uint64_t(v) << 32); break;
      case 2: e.data = v; break;
      case 3: {
        e.control = v & 1;
        const uint16_t vector = uint16_t(offset / 16);
        if (!e.control && msix_pending_[vector]) {  // unmasked with a message pending
          msix_pending_[vector] = 0;
          sc_time* saved = local_;
          sc_time t = delay;
          local_ = &t;
          send_msix(vector);
          local_ = saved;
        }
        break;
      }
    }
    return;
  }
  if (offset >= 0x2000 && offset < 0x2000 + (msix_table_.size() + 31) / 32 * 4) {
    if (p.is_read()) {  // Pending Bit Array
      const unsigned base = unsigned(offset - 0x2000) * 8;
      for (unsigned b = 0; b < 32 && base + b < msix_pending_.size(); ++b)
        if (msix_pending_[base + b]) v |= 1u << b;
      std::memcpy(p.get_data_ptr(), &v, 4);
    }
    return;  // PBA writes are ignored (read-only)
  }
  if (p.is_read()) std::memcpy(p.get_data_ptr(), &v, 4);
}

// ---------------------------------------------------------------- config space
void NvmeControllerModel::config_b_transport(tlm::tlm_generic_payload& p, sc_time&) {
  const uint64_t offset = p.get_address();
  const unsigned len = p.get_data_length();
  if (offset + len > config_space_.size()) {
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  p.set_response_status(tlm::TLM_OK_RESPONSE);
  if (p.is_read()) {
    std::memcpy(p.get_data_ptr(), &config_space_[offset], len);
  } else if (offset >= 0x04 && offset + len <= 0x06) {  // Command register only
    std::memcpy(&config_space_[offset], p.get_data_ptr(), len);
  }
}

}  // namespace nvmesim::models
