#include "models/nvme_controller.h"

#include <cstring>
#include <stdexcept>

#include "models/address_map.h"

using namespace sc_core;

namespace nvmesim::models {

NotifyMode parse_notify(const std::string& text) {
  if (text == "sync") return NotifyMode::Sync;
  if (text == "deferred") return NotifyMode::Deferred;
  if (text == "ioeventfd") return NotifyMode::Ioeventfd;
  throw std::invalid_argument("hv.notify: '" + text + "' is not one of sync, deferred, ioeventfd");
}

const char* to_string(NotifyMode mode) {
  switch (mode) {
    case NotifyMode::Sync: return "sync";
    case NotifyMode::Deferred: return "deferred";
    case NotifyMode::Ioeventfd: return "ioeventfd";
  }
  return "?";
}

NvmeControllerModel::NvmeControllerModel(sc_module_name name, const Params& params,
                                         HostThread& thread, const PcieLink& link)
    : sc_module(name),
      bar0_target("bar0_target"),
      msix_target("msix_target"),
      config_target("config_target"),
      dma_initiator("dma_initiator"),
      params_(params),
      thread_(thread),
      link_(link) {
  firmware_ = std::make_unique<fw::Controller>(params_.firmware, *this);
  backend_ = std::make_unique<StorageBackend>("backend", params_.backend, *this);
  backend_->set_completion_callback(
      [this](uint32_t tag, uint16_t status) { on_backend_complete(tag, status); });
  thread_.set_work([this](sc_time& local) { emulate(local); });

  const unsigned queues = params_.firmware.max_io_queues + 1u;
  sq_marked_.assign(queues, 0);
  cq_marked_.assign(queues, 0);
  sq_list_.reserve(queues);
  cq_list_.reserve(queues);
  done_.resize(65536);
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
}

void NvmeControllerModel::end_of_elaboration() {
  tlm::tlm_generic_payload p;
  tlm::tlm_dmi dmi;
  p.set_address(0);
  p.set_command(tlm::TLM_READ_COMMAND);
  if (dma_initiator->get_direct_mem_ptr(p, dmi) && dmi.is_read_write_allowed()) {
    dmi_base_ = dmi.get_dmi_ptr();
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
      request_processing(delay);
      break;
    case fw::Bar0WriteEffect::CqDoorbell:
      mark_cq(effect.qid);
      request_processing(delay);
      break;
    case fw::Bar0WriteEffect::EnableRequested:
      enable_event_.notify(delay + params_.enable_latency);
      break;
    case fw::Bar0WriteEffect::Reset:
      backend_->reset();
      done_count_ = 0;
      std::fill(sq_marked_.begin(), sq_marked_.end(), 0);
      std::fill(cq_marked_.begin(), cq_marked_.end(), 0);
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
  }
  thread_.kick(delay);
  return true;
}

void NvmeControllerModel::mark_sq(uint16_t qid) {
  if (qid < sq_marked_.size() && !sq_marked_[qid]) {
    sq_marked_[qid] = 1;
    sq_list_.push_back(qid);
  }
}

void NvmeControllerModel::mark_cq(uint16_t qid) {
  if (qid < cq_marked_.size() && !cq_marked_[qid]) {
    cq_marked_[qid] = 1;
    cq_list_.push_back(qid);
  }
}

void NvmeControllerModel::request_processing(sc_time& delay) {
  if (params_.notify == NotifyMode::Sync && !in_emulation_ &&
      sc_get_current_process_handle().proc_kind() == SC_THREAD_PROC_) {
    // Processing inside the exit: the vCPU waits for it; `delay` stays an
    // offset from the (possibly advanced) present.
    emulate(delay);
    return;
  }
  thread_.kick(delay);
}

// ---------------------------------------------------------------- emulation
void NvmeControllerModel::emulate(sc_time& local) {
  in_emulation_ = true;
  local_ = &local;
  bool progress = true;
  while (progress) {
    progress = false;
    // Submission queues that were rung (or still hold work).
    for (size_t i = 0; i < sq_list_.size(); ++i) {
      const uint16_t qid = sq_list_[i];
      sq_marked_[qid] = 0;
      const unsigned n = firmware_->process_sq(qid, params_.sq_budget);
      local += params_.cmd_cost * double(n);
      if (n) progress = true;
      if (firmware_->sq_has_work(qid)) {
        sq_marked_[qid] = 1;  // keep it in the list
      }
    }
    // Drop the unmarked, keep order (deterministic round robin).
    size_t kept = 0;
    for (size_t i = 0; i < sq_list_.size(); ++i)
      if (sq_marked_[sq_list_[i]]) sq_list_[kept++] = sq_list_[i];
    sq_list_.resize(kept);

    // Backend completions.
    for (size_t i = 0; i < done_count_; ++i) firmware_->complete_io(done_[i].tag, done_[i].status);
    if (done_count_) progress = true;
    done_count_ = 0;

    // Completion queues with completions to post.
    for (uint16_t cqid = 0; cqid < cq_marked_.size(); ++cqid) {
      if (!cq_marked_[cqid] && !firmware_->cq_has_pending(cqid)) continue;
      cq_marked_[cqid] = 0;
      const unsigned n = firmware_->post_completions(cqid);
      local += params_.cqe_cost * double(n);
      if (n) progress = true;
    }
    cq_list_.clear();
    if (progress) ++counters_.bursts;
  }
  local_ = nullptr;
  in_emulation_ = false;
}

// ---------------------------------------------------------------- ControllerEnv
bool NvmeControllerModel::dma_read(uint64_t addr, void* dst, uint32_t len) {
  if (len == 0) return true;
  ++counters_.dma_reads;
  counters_.dma_read_bytes += len;
  const uint64_t last = addr + len - 1;
  if (dmi_base_ && last >= addr && addr >= dmi_start_ && last <= dmi_end_) {
    std::memcpy(dst, dmi_base_ + (addr - dmi_start_), len);
    if (local_) *local_ += link_.read_time(len);
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
    std::memcpy(dmi_base_ + (addr - dmi_start_), src, len);
    if (local_) *local_ += link_.write_time(len);
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

void NvmeControllerModel::device_barrier() {
  // Everything before is globally visible before anything after: let the
  // time spent so far pass, so the host can act in between.
  if (local_ && sc_get_current_process_handle().proc_kind() == SC_THREAD_PROC_)
    HostThread::sync(*local_);
}

void NvmeControllerModel::msix(uint16_t vector) {
  if (vector >= msix_table_.size()) return;
  const MsixEntry& e = msix_table_[vector];
  if (e.control & 1) {  // masked: remember it in the PBA
    msix_pending_[vector] = 1;
    ++counters_.msix_masked;
    return;
  }
  ++counters_.msix_sent;
  uint32_t data = e.data;
  tlm::tlm_generic_payload p;
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

void NvmeControllerModel::backend_submit(const fw::IoRequest& req) {
  const sc_time zero = SC_ZERO_TIME;
  const sc_time& now = local_ ? *local_ : zero;
  // A real device moves the data over the link whatever the medium; an
  // emulated one only when the backend touches guest memory (ram).
  if (link_.mode() == PcieMode::Link && params_.backend.kind != BackendKind::Ram && local_) {
    if (req.opcode == nvme::io::READ) *local_ += link_.write_time(req.bytes);
    if (req.opcode == nvme::io::WRITE) *local_ += link_.read_time(req.bytes);
  }
  uint16_t status = 0;
  if (backend_->submit(req, now, &status)) {
    if (done_count_ < done_.size()) done_[done_count_++] = Done{req.tag, status};
  }
}

void NvmeControllerModel::on_backend_complete(uint32_t tag, uint16_t status) {
  if (done_count_ < done_.size()) done_[done_count_++] = Done{tag, status};
  thread_.kick(SC_ZERO_TIME);
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
          msix(vector);
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
