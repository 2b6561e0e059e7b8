#include "nvmesim/models/mem/guest_memory.h"

#include <sys/mman.h>

#include <cstring>
#include <new>
#include <stdexcept>

namespace nvmesim::models {

GuestMemory::GuestMemory(sc_core::sc_module_name name, uint64_t size_bytes,
                         sc_core::sc_time latency)
    : sc_core::sc_module(name),
      socket("socket"),
      size_(size_bytes),
      latency_(latency) {
  if (size_bytes == 0) {
    throw std::invalid_argument(
        "guest memory size: 0 is not allowed (must be > 0 bytes)");
  }
  // Anonymous private mappings are zero-filled and populated on first touch.
  void* p = ::mmap(nullptr, static_cast<size_t>(size_bytes),
                   PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<uint8_t*>(p);

  socket.register_b_transport(this, &GuestMemory::b_transport);
  socket.register_get_direct_mem_ptr(this, &GuestMemory::get_direct_mem_ptr);
  socket.register_transport_dbg(this, &GuestMemory::transport_dbg);
}

GuestMemory::~GuestMemory() {
  if (data_ != nullptr) ::munmap(data_, static_cast<size_t>(size_));
}

void GuestMemory::invalidate_dmi(uint64_t start, uint64_t end) {
  socket->invalidate_direct_mem_ptr(start, end);
}

tlm::tlm_response_status GuestMemory::access(tlm::tlm_generic_payload& trans) {
  const tlm::tlm_command cmd = trans.get_command();
  const uint64_t addr = trans.get_address();
  const uint64_t len = trans.get_data_length();
  if (trans.get_byte_enable_ptr() != nullptr) {
    return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
  }
  if (addr >= size_ || len > size_ - addr) {
    return tlm::TLM_ADDRESS_ERROR_RESPONSE;
  }
  if (trans.get_streaming_width() < len) {
    return tlm::TLM_BURST_ERROR_RESPONSE;
  }
  if (len != 0 && trans.get_data_ptr() == nullptr) {
    return tlm::TLM_GENERIC_ERROR_RESPONSE;
  }
  switch (cmd) {
    case tlm::TLM_READ_COMMAND:
      if (len) std::memcpy(trans.get_data_ptr(), data_ + addr, len);
      break;
    case tlm::TLM_WRITE_COMMAND:
      if (len) std::memcpy(data_ + addr, trans.get_data_ptr(), len);
      break;
    case tlm::TLM_IGNORE_COMMAND:
      break;
  }
  return tlm::TLM_OK_RESPONSE;
}

void GuestMemory::b_transport(tlm::tlm_generic_payload& trans,
                              sc_core::sc_time& delay) {
  const tlm::tlm_response_status st = access(trans);
  trans.set_response_status(st);
  if (st != tlm::TLM_OK_RESPONSE) {
    ++counters_.errors;
    return;
  }
  delay += latency_;
  trans.set_dmi_allowed(true);
  if (trans.is_read()) {
    ++counters_.reads;
    counters_.read_bytes += trans.get_data_length();
  } else if (trans.is_write()) {
    ++counters_.writes;
    counters_.write_bytes += trans.get_data_length();
  }
}

bool GuestMemory::get_direct_mem_ptr(tlm::tlm_generic_payload& trans,
                                     tlm::tlm_dmi& dmi) {
  if (trans.get_address() >= size_) {
    // Deny the whole region above the memory so the initiator does not retry.
    dmi.set_start_address(size_);
    dmi.set_end_address(~0ULL);
    dmi.allow_none();
    return false;
  }
  dmi.set_dmi_ptr(data_);
  dmi.set_start_address(0);
  dmi.set_end_address(size_ - 1);
  dmi.allow_read_write();
  dmi.set_read_latency(latency_);
  dmi.set_write_latency(latency_);
  ++counters_.dmi_grants;
  return true;
}

unsigned int GuestMemory::transport_dbg(tlm::tlm_generic_payload& trans) {
  const uint64_t addr = trans.get_address();
  uint64_t len = trans.get_data_length();
  if (trans.get_data_ptr() == nullptr || addr >= size_) return 0;
  if (len > size_ - addr) len = size_ - addr;  // debug: partial transfer
  if (trans.is_read()) {
    std::memcpy(trans.get_data_ptr(), data_ + addr, len);
  } else if (trans.is_write()) {
    std::memcpy(data_ + addr, trans.get_data_ptr(), len);
  } else {
    return 0;
  }
  return static_cast<unsigned int>(len);
}

}  // namespace nvmesim::models
