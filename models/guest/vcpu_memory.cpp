// The vCPU as the drivers' environment (fw::DriverEnv, fw::VirtioDriverEnv):
// MMIO accesses, each an exit through the hypervisor's socket; guest memory;
// and the doorbell-buffer path's memory ordering: shadow stores through an
// x86 store buffer, drained at their time or by a full barrier.
#include <cstring>
#include <stdexcept>
#include <string>

#include "nvmesim/models/guest/guest.h"
#include "nvmesim/models/guest/vcpu.h"
#include "nvmesim/models/mem/address_map.h"
#include "nvmesim/models/pcie/pcie_endpoint.h"
#include "nvmesim/models/sim/activations.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/models/sim/lookahead.h"
#include "nvmesim/traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

// ---------------------------------------------------------------- MMIO
void Vcpu::mmio(tlm::tlm_command cmd, uint32_t offset, void* data, unsigned len) {
  tlm::tlm_generic_payload& p = mmio_payload_;
  p.set_command(cmd);
  p.set_address(kBar0Base + offset);
  p.set_data_ptr(static_cast<unsigned char*>(data));
  p.set_data_length(len);
  p.set_streaming_width(len);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  // An MMIO access is an exit: everything before it happened first. The
  // exit starts at the vCPU's present, handed on as the transaction's delay
  // when nothing else can run before it (models/sim/lookahead.h): the
  // hypervisor and the device take it as an offset from now. Waited for
  // with several vCPUs: their times often coincide (round guest costs), and
  // SystemC orders same-time events by its queue's history, which the wait
  // is part of; and with a trace, whose writer orders what it is handed by
  // the kernel's time at hand-over.
  const bool may_skip = guest_.vcpu_count() == 1 && !traces::active();
  sc_time delay = SC_ZERO_TIME;
  if (may_skip && !must_sync(qk_.local_time())) {
    arm_store_drain();  // nothing buffered: only clears the flag, as sync_local would
    delay = qk_.local_time();
  } else {
    sync_local();
  }
  qk_.set(SC_ZERO_TIME);
  mmio_socket->b_transport(p, delay);  // may wait (device work inside the exit)
  // The vCPU is back in the guest `delay` from now. Letting that pass is
  // needed only if something else can run first; else the guest goes on at
  // its own present as if it had waited.
  qk_.set(delay);
  if (!may_skip || must_sync(delay)) {
    sync_local();
  } else {
    arm_store_drain();  // nothing buffered: only clears the flag, as sync_local would
    qk_.skip_sync();
  }
}

uint32_t Vcpu::mmio_read32(uint32_t offset) {
  uint32_t v = 0;
  mmio(tlm::TLM_READ_COMMAND, offset, &v, 4);
  return v;
}
uint64_t Vcpu::mmio_read64(uint32_t offset) {
  uint64_t v = 0;
  mmio(tlm::TLM_READ_COMMAND, offset, &v, 8);
  return v;
}
void Vcpu::mmio_write32(uint32_t offset, uint32_t value) {
  mmio(tlm::TLM_WRITE_COMMAND, offset, &value, 4);
}
void Vcpu::mmio_write64(uint32_t offset, uint64_t value) {
  mmio(tlm::TLM_WRITE_COMMAND, offset, &value, 8);
}

uint32_t Vcpu::mmio_read(uint32_t offset, unsigned size) {
  uint32_t v = 0;
  mmio(tlm::TLM_READ_COMMAND, offset, &v, size);
  return v;
}
void Vcpu::mmio_write(uint32_t offset, unsigned size, uint32_t value) {
  mmio(tlm::TLM_WRITE_COMMAND, offset, &value, size);
}

void Vcpu::program_msix_vector(uint16_t vector, uint64_t address, uint32_t data) {
  const uint64_t entry = guest_.msix_table_address() + uint64_t(vector) * PcieEndpoint::kMsixEntryBytes;
  const uint32_t fields[4] = {uint32_t(address), uint32_t(address >> 32), data, 0 /* unmasked */};
  for (unsigned i = 0; i < 4; ++i) {
    uint32_t v = fields[i];
    tlm::tlm_generic_payload p;
    p.set_command(tlm::TLM_WRITE_COMMAND);
    p.set_address(entry + 4 * i);
    p.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
    p.set_data_length(4);
    p.set_streaming_width(4);
    if (mmio_socket->transport_dbg(p) != 4)
      throw std::logic_error(std::string(name()) + ": MSI-X table entry " + std::to_string(vector) +
                             " not writable");
  }
}

// ---------------------------------------------------------------- memory ordering
uint8_t* Vcpu::guest_memory(uint64_t gpa, uint32_t len) {
  uint8_t* p = guest_.memory().ptr(gpa, len);
  if (!p) throw std::logic_error("driver touched memory outside guest RAM");
  return p;
}

// x86: stores are not reordered with stores, and the SQ entry was written
// before: wmb() costs nothing and orders nothing the model could reorder.
void Vcpu::write_barrier() {}

// A shadow store sits in the store buffer for store_visibility; loads of
// other addresses may pass it (x86 store->load reordering) unless a full
// barrier drains it first.
void Vcpu::store_shadow(uint64_t gpa, uint32_t value) {
  if (params_.store_visibility == SC_ZERO_TIME) {
    sync_local();  // visible at once: at the vCPU's own time
    std::memcpy(guest_memory(gpa, 4), &value, 4);
    guest_.trace_shadow_store(gpa, value, kernel_now());
    return;
  }
  // The store enters the store buffer at the vCPU's local time and becomes
  // visible store_visibility later; no need to synchronise to buffer it.
  const sc_time at = now() + params_.store_visibility;
  if (store_head_ == store_buffer_.size()) {
    store_buffer_.clear();
    store_head_ = 0;
  }
  store_buffer_.push_back(PendingStore{gpa, value, at});
  store_drain_owed_ = true;
}

void Vcpu::arm_store_drain() {
  if (!store_drain_owed_) return;
  store_drain_owed_ = false;
  if (store_head_ < store_buffer_.size())
    activations::notify(store_event_, store_buffer_[store_head_].visible_at - kernel_now());
}

void Vcpu::store_buffer_drain() {
  activations::begin(activations::VcpuStoreCommit);
  commit_stores();
}

void Vcpu::commit_stores() {
  const sc_time t = kernel_now();
  while (store_head_ < store_buffer_.size() && store_buffer_[store_head_].visible_at <= t) {
    const PendingStore& s = store_buffer_[store_head_++];
    std::memcpy(guest_memory(s.gpa, 4), &s.value, 4);
    guest_.trace_shadow_store(s.gpa, s.value, s.visible_at);
  }
  if (store_head_ < store_buffer_.size())
    activations::notify(store_event_, store_buffer_[store_head_].visible_at - t);
}

void Vcpu::full_barrier() {
  if (store_head_ < store_buffer_.size()) {
    // mfence stalls until the store buffer has drained: one wait to then.
    const sc_time last = store_buffer_.back().visible_at;
    const sc_time t = now();
    const sc_time until = last > t ? last - kernel_now() : qk_.local_time();
    if (store_drain_owed_ && !activity_due_within(until)) {
      // Nobody can look before the stores are visible: they land now (each
      // at its time), no drain event, no wait.
      if (last > t) results_.guest_time += last - t;  // the vCPU stalls in mfence
      qk_.set(until);
      store_drain_owed_ = false;
      while (store_head_ < store_buffer_.size()) {
        const PendingStore& s = store_buffer_[store_head_++];
        std::memcpy(guest_memory(s.gpa, 4), &s.value, 4);
        guest_.trace_shadow_store(s.gpa, s.value, s.visible_at);
      }
      return;
    }
    if (last > t) {
      results_.guest_time += last - t;  // the vCPU stalls in mfence
      qk_.set(last - kernel_now());
    }
    sync_local();
    commit_stores();
    return;
  }
  sync_local();
}

// Only this vCPU writes its queue's shadow entries (the device writes them
// only at configuration), so reading them needs no synchronisation.
uint32_t Vcpu::load_shadow(uint64_t gpa) {
  // Store-to-load forwarding: our own buffered store is seen first.
  for (size_t i = store_buffer_.size(); i > store_head_; --i)
    if (store_buffer_[i - 1].gpa == gpa) return store_buffer_[i - 1].value;
  uint32_t v;
  std::memcpy(&v, guest_memory(gpa, 4), 4);
  return v;
}

uint32_t Vcpu::load_eventidx(uint64_t gpa) {
  // The device's value as of the vCPU's present.
  if (must_sync(qk_.local_time())) sync_local();
  uint32_t v;
  std::memcpy(&v, guest_memory(gpa, 4), 4);
  return v;
}

void Vcpu::wait_ns(uint64_t ns) {
  qk_.inc(sc_time::from_value(ns * 1000));
  sync_local();
  take_admin_interrupts();
}

}  // namespace nvmesim::models
