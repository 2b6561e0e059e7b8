// NvmeControllerModel's DMA: guest memory through DMI where it can (the
// time a transfer takes is charged to the running emulation), through the
// root complex otherwise; the device's memory barrier; the backend's data
// movement and command routing.
#include <algorithm>
#include <cstring>

#include "nvmesim/firmware/nvme/controller_tag.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/models/sim/lookahead.h"
#include "nvmesim/models/nvme/nvme_controller.h"
#include "nvmesim/traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

namespace {
// The controller's own transfers have fixed sizes (a doorbell entry, a CQE,
// an SQE): copied inline, not through a library call per access.
inline void copy_bytes(void* dst, const void* src, uint32_t len) {
  switch (len) {
    case 4: std::memcpy(dst, src, 4); break;
    case 16: std::memcpy(dst, src, 16); break;
    case 64: std::memcpy(dst, src, 64); break;
    default: std::memcpy(dst, src, len); break;
  }
}
}  // namespace

std::vector<std::string> NvmeControllerModel::link_purposes() {
  std::vector<std::string> names;
  for (unsigned p = 0; p < fw::kDmaPurposes; ++p) names.push_back(fw::dma_purpose_name(fw::DmaPurpose(p)));
  names.insert(names.end(), {"msix", "doorbell_mmio", "register_mmio"});
  return names;
}

bool NvmeControllerModel::dma_transport(tlm::tlm_command command, uint64_t addr, void* data, uint32_t len,
                                        sc_time& delay) {
  tlm::tlm_generic_payload p;
  p.set_command(command);
  p.set_address(addr);
  p.set_data_ptr(static_cast<unsigned char*>(data));
  p.set_data_length(len);
  p.set_streaming_width(len);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  dma_initiator->b_transport(p, delay);
  return p.is_response_ok();
}

bool NvmeControllerModel::dma_read(fw::DmaPurpose purpose, uint64_t addr, void* dst, uint32_t len) {
  if (len == 0) return true;
  ++counters_.dma_reads;
  counters_.dma_read_bytes += len;
  sc_time* local = engine_->offset();
  const uint64_t last = addr + len - 1;
  const bool dmi = dmi_base_ && last >= addr && addr >= dmi_start_ && last <= dmi_end_;
  // The device times its transfers: through DMI, and on a link any (the
  // root complex leaves the link's time to the device's link model,
  // models/pcie/pcie_root_complex.h); an emulated transported one is the
  // interconnect's to time. An SQE an engine fetches in bursts (the
  // hardware engine's) is timed by its burst, and its access below is then
  // untimed.
  const bool burst = purpose == fw::DmaPurpose::SqeFetch && engine_->fetches_in_bursts() && (dmi || traffic_);
  if (burst) {
    const sc_time arrival = engine_->sq_fetch_arrival(addr, len);
    if (local && arrival > kernel_now() + *local) *local = arrival - kernel_now();
  }
  sc_time t = local ? *local : SC_ZERO_TIME;
  bool ok = true;
  if (dmi) {
    copy_bytes(dst, dmi_base_ + (addr - dmi_start_), len);
    if (!burst) t += dma_.time(true, unsigned(purpose), addr, len, t);
    t += dmi_read_latency_;
  } else {
    ok = dma_transport(tlm::TLM_READ_COMMAND, addr, dst, len, t);
    // A failed read is on the wire too: its request, and the completion
    // that reports the error.
    if (traffic_ && !burst) t += dma_.time(true, unsigned(purpose), addr, len, t);
  }
  if (local) *local = t;
  return ok;
}

bool NvmeControllerModel::dma_write(fw::DmaPurpose purpose, uint64_t addr, const void* src, uint32_t len) {
  if (len == 0) return true;
  ++counters_.dma_writes;
  counters_.dma_write_bytes += len;
  sc_time* local = engine_->offset();
  const uint64_t last = addr + len - 1;
  const bool dmi = dmi_base_ && last >= addr && addr >= dmi_start_ && last <= dmi_end_;
  sc_time t = local ? *local : SC_ZERO_TIME;
  // The write leaves, then lands (device-timed as a read is).
  if (dmi || traffic_) t += dma_.time(false, unsigned(purpose), addr, len, t);
  if (!dmi) {
    const bool ok = dma_transport(tlm::TLM_WRITE_COMMAND, addr, const_cast<void*>(src), len, t);
    if (local) *local = t;
    return ok;
  }
  if (local) {
    *local = t + dmi_write_latency_;
    // The write lands when its time has passed: a polling guest must not
    // see it earlier.
    engine_->sync();
  }
  copy_bytes(dmi_base_ + (addr - dmi_start_), src, len);
  if (len == 4 && traces::active()) trace_eventidx_write(addr, src);
  return true;
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
                 (kernel_now() + (engine_->offset() ? *engine_->offset() : SC_ZERO_TIME)).value(), value);
}

// Everything before is globally visible before anything after: let the
// time spent so far pass, so the host can act in between.
void NvmeControllerModel::device_barrier() { engine_->sync(); }

void NvmeControllerModel::backend_submit(const fw::IoRequest& shared_req) {
  // A backend that moves the data itself can let another thread run (and
  // overwrite the firmware's request) before this call returns: it alone
  // needs its own copy; the others read the request before anything waits.
  const fw::IoRequest* request = &shared_req;
  if (backend_->moves_data()) {
    ContextWork& own = work_[engine_->running() ? engine_->running_context() : engine_->context_of(shared_req.sqid)];
    own.request = shared_req;  // reuses its capacity: no allocation per I/O
    request = &own.request;
  }
  const fw::IoRequest& req = *request;
  const sc_time zero = SC_ZERO_TIME;
  sc_time* local = engine_->offset();
  engine_->charge(EngineOp::BackendHandoff, local);
  const sc_time& now = local ? *local : zero;
  // The data moves whatever the medium: over the link for a real device,
  // as a host memcpy into or out of guest memory for an emulated one (QEMU
  // copies to or from the guest's pages even for null-co with read-zeroes,
  // which zero-fills them). The ram backend moves it itself, segment by
  // segment through dma_read/dma_write; the others are charged the same here.
  if (!backend_->moves_data() && local &&
      (req.opcode == nvme::io::READ || req.opcode == nvme::io::WRITE)) {
    const bool to_guest = req.opcode == nvme::io::READ;
    if (traffic_) {
      // The segments go back to back; each queues behind the one before.
      sc_time done = SC_ZERO_TIME;
      for (uint32_t i = 0; i < req.segment_count; ++i)
        done = std::max(done, dma_.time(!to_guest, unsigned(fw::DmaPurpose::Data), req.segments[i].addr,
                                        req.segments[i].len, *local));
      *local += done;
    } else {
      for (uint32_t i = 0; i < req.segment_count; ++i) {
        const uint32_t len = req.segments[i].len;
        *local += to_guest ? link_.write_time(len) : link_.read_time(len);
      }
    }
  }
  const uint32_t slot = fw::tag_slot(req.tag);
  if (slot >= slot_sq_.size()) slot_sq_.resize(slot + 1024);  // grows with queues, not per I/O
  slot_sq_[slot] = req.sqid;
  uint16_t status = 0;
  if (backend_->submit(req, now, &status)) {
    ContextWork& w = work_[engine_->context_of(req.sqid)];
    if (w.done_count < w.done.size()) w.done[w.done_count++] = Done{req.tag, status};
  }
}

}  // namespace nvmesim::models
