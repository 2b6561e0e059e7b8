#include "nvmesim/models/pcie/pcie_endpoint.h"

#include <algorithm>
#include <cstring>

#include "nvmesim/models/pcie/pcie_link_traffic.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

namespace {

// The configuration space of an endpoint with `identity` and `msix_vectors`
// vectors, its MSI-X table and PBA in BAR2 (models/mem/address_map.h).
fw::pci::EndpointConfig endpoint_config(const PcieEndpoint::Identity& identity, uint16_t msix_vectors) {
  fw::pci::EndpointConfig c;
  c.vendor_id = identity.vendor_id;
  c.device_id = identity.device_id;
  c.revision_id = identity.revision_id;
  c.base_class = identity.base_class;
  c.sub_class = identity.sub_class;
  c.prog_if = identity.prog_if;
  c.subsystem_vendor_id = identity.subsystem_vendor_id;
  c.subsystem_id = identity.subsystem_id;
  c.interrupt_pin = identity.interrupt_pin;
  c.bar0_base = identity.bar0 & ~0xFu;
  c.bar0_size = identity.bar0_size;
  c.bar0_64bit = (identity.bar0 & 0x6) == fw::pci::cfg::BAR_MEM_64;
  if (msix_vectors) {
    c.bar2_base = kBar2Base;
    c.bar2_size = kBar2Size;
  }
  c.msix_vectors = msix_vectors;
  c.msix_table_bir = c.msix_pba_bir = 2;
  c.msix_table_offset = 0;
  c.msix_pba_offset = PcieEndpoint::kPbaOffset;
  c.max_payload_size = identity.link.max_payload_size;
  c.max_read_request_size = identity.link.max_read_request_size;
  c.link_generation = identity.link.generation;
  c.link_lanes = identity.link.lanes;
  return c;
}

}  // namespace

PcieEndpoint::PcieEndpoint(sc_module_name name, const Identity& identity, uint16_t msix_vectors)
    : sc_module(name),
      msix_target("msix_target"),
      config_target("config_target"),
      dma_initiator("dma_initiator"),
      config_space_(endpoint_config(identity, msix_vectors)) {
  msix_table_.resize(msix_vectors);
  msix_pending_.assign(msix_vectors, 0);

  msix_target.register_b_transport(this, &PcieEndpoint::msix_b_transport);
  msix_target.register_transport_dbg(this, &PcieEndpoint::msix_transport_dbg);
  config_target.register_b_transport(this, &PcieEndpoint::config_b_transport);
  config_target.register_transport_dbg(this, &PcieEndpoint::config_transport_dbg);
}

void PcieEndpoint::msix_in_bar0(uint32_t table_offset, uint32_t pba_offset) {
  msix_in_bar2_ = false;
  config_space_.set_msix_location(0, table_offset, 0, pba_offset);
  config_space_.clear_bar(2);
}

void PcieEndpoint::program_msix_vector(uint16_t vector, uint64_t address, uint32_t data) {
  MsixEntry& e = msix_table_.at(vector);
  e.address = address;
  e.data = data;
  e.control = 0;
}

PcieEndpoint::MsixOutcome PcieEndpoint::send_msix(uint16_t vector, sc_time& delay) {
  const MsixEntry& e = msix_table_.at(vector);
  if (e.control & kVectorMasked) {  // remembered in the PBA
    msix_pending_[vector] = 1;
    return MsixOutcome::Masked;
  }
  if (auto* t = traces::active()) t->msix(vector, (kernel_now() + delay).value());
  uint32_t data = e.data;
  tlm::tlm_generic_payload& p = msi_payload_;
  p.set_command(tlm::TLM_WRITE_COMMAND);
  p.set_address(e.address);
  p.set_data_ptr(reinterpret_cast<unsigned char*>(&data));
  p.set_data_length(4);
  p.set_streaming_width(4);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  // On a link the message is a posted write that leaves when upstream is
  // free (the root complex leaves the link's time to the device).
  if (link_traffic_) delay += link_traffic_->device_write(msix_purpose_, e.address, 4, kernel_now() + delay);
  dma_initiator->b_transport(p, delay);
  msix_arrival_ = std::max(msix_arrival_, kernel_now() + delay);
  return MsixOutcome::Sent;
}

bool PcieEndpoint::msix_in_flight() const { return kernel_now() <= msix_arrival_ && msix_arrival_ != sc_core::SC_ZERO_TIME; }

void PcieEndpoint::attach_link_traffic(PcieLinkTraffic& traffic, unsigned msix_purpose, unsigned register_purpose) {
  link_traffic_ = &traffic;
  msix_purpose_ = msix_purpose;
  register_purpose_ = register_purpose;
}

void PcieEndpoint::count_mmio(unsigned purpose, const tlm::tlm_generic_payload& p, const sc_time& delay) {
  if (!link_traffic_) return;
  const sc_time at = kernel_now() + delay;
  if (p.is_read())
    link_traffic_->host_read(purpose, p.get_address(), p.get_data_length(), at);
  else if (p.is_write())
    link_traffic_->host_write(purpose, p.get_address(), p.get_data_length(), at);
}

void PcieEndpoint::send_pending_msix(uint16_t vector, const sc_time& delay) {
  sc_time t = delay;
  send_msix(vector, t);
}

// ---------------------------------------------------------------- BAR2: MSI-X
bool PcieEndpoint::msix_access(tlm::tlm_generic_payload& p, int* unmasked_pending) {
  const uint64_t offset = p.get_address();
  if (p.get_data_length() != 4) return false;
  uint32_t v = 0;
  if (offset < msix_table_.size() * kMsixEntryBytes) {
    MsixEntry& e = msix_table_[offset / kMsixEntryBytes];
    const unsigned field = (offset % kMsixEntryBytes) / 4;
    if (p.is_read()) {
      v = field == 0 ? uint32_t(e.address) : field == 1 ? uint32_t(e.address >> 32)
                                           : field == 2 ? e.data : e.control;
      std::memcpy(p.get_data_ptr(), &v, 4);
      return true;
    }
    std::memcpy(&v, p.get_data_ptr(), 4);
    switch (field) {
      case 0: e.address = (e.address & ~0xFFFFFFFFull) | v; break;
      case 1: e.address = (e.address & 0xFFFFFFFFull) | (uint64_t(v) << 32); break;
      case 2: e.data = v; break;
      case 3: {
        e.control = v & kVectorMasked;
        const uint16_t vector = uint16_t(offset / kMsixEntryBytes);
        if (!e.control && msix_pending_[vector] && unmasked_pending) *unmasked_pending = vector;
        break;
      }
    }
    return true;
  }
  if (offset >= kPbaOffset && offset < kPbaOffset + pba_bytes()) {
    if (p.is_read()) {  // Pending Bit Array
      const unsigned base = unsigned(offset - kPbaOffset) * 8;
      for (unsigned b = 0; b < 32 && base + b < msix_pending_.size(); ++b)
        if (msix_pending_[base + b]) v |= 1u << b;
      std::memcpy(p.get_data_ptr(), &v, 4);
    }
    return true;  // PBA writes are ignored (read-only)
  }
  if (p.is_read()) std::memcpy(p.get_data_ptr(), &v, 4);
  return true;
}

void PcieEndpoint::msix_b_transport(tlm::tlm_generic_payload& p, sc_time& delay) {
  count_mmio(register_purpose_, p, delay);
  if (!msix_in_bar2_) {  // an empty BAR2: reads 0, writes dropped
    if (p.get_data_length() != 4) return p.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    if (p.is_read()) std::memset(p.get_data_ptr(), 0, 4);
    return p.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  msix_space_b_transport(p, delay);
}

void PcieEndpoint::msix_space_b_transport(tlm::tlm_generic_payload& p, sc_time& delay) {
  int unmasked = -1;
  if (!msix_access(p, &unmasked)) {
    p.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  p.set_response_status(tlm::TLM_OK_RESPONSE);
  if (unmasked >= 0) {  // unmasked with a message pending: it goes now
    msix_pending_[unmasked] = 0;
    send_pending_msix(uint16_t(unmasked), delay);
  }
}

unsigned PcieEndpoint::msix_transport_dbg(tlm::tlm_generic_payload& p) {
  if (!msix_in_bar2_) return 0;
  if (!msix_access(p, nullptr)) return 0;
  return p.get_data_length();
}

// The same accesses, reached through BAR0: the payload's address is the
// MSI-X space offset while they run, then the caller's again.
void PcieEndpoint::msix_space_transport(tlm::tlm_generic_payload& p, sc_time& delay, uint64_t msix_offset) {
  const uint64_t address = p.get_address();
  p.set_address(msix_offset);
  msix_space_b_transport(p, delay);
  p.set_address(address);
}

unsigned PcieEndpoint::msix_space_dbg(tlm::tlm_generic_payload& p, uint64_t msix_offset) {
  const uint64_t address = p.get_address();
  p.set_address(msix_offset);
  const unsigned done = msix_access(p, nullptr) ? p.get_data_length() : 0;
  p.set_address(address);
  return done;
}

// ---------------------------------------------------------------- config space
// 1, 2 or 4 bytes, naturally aligned (ECAM, PCI Express Base 4.0 section
// 7.2.2), inside the function's 4 KiB.
tlm::tlm_response_status PcieEndpoint::config_access(tlm::tlm_generic_payload& p) {
  const uint64_t offset = p.get_address();
  const unsigned len = p.get_data_length();
  if (offset >= fw::pci::ConfigSpace::kBytes || len > fw::pci::ConfigSpace::kBytes - offset)
    return tlm::TLM_ADDRESS_ERROR_RESPONSE;
  if (!fw::pci::ConfigSpace::access_ok(offset, len))
    return tlm::TLM_BURST_ERROR_RESPONSE;
  if (p.get_byte_enable_ptr()) return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
  uint32_t v = 0;
  if (p.is_read()) {
    config_space_.read(offset, len, &v);
    std::memcpy(p.get_data_ptr(), &v, len);  // little-endian, as on the wire (and the host)
  } else if (p.is_write()) {
    std::memcpy(&v, p.get_data_ptr(), len);
    config_space_.write(offset, len, v);
  }
  return tlm::TLM_OK_RESPONSE;
}

void PcieEndpoint::config_b_transport(tlm::tlm_generic_payload& p, sc_time&) {
  p.set_response_status(config_access(p));
}

unsigned PcieEndpoint::config_transport_dbg(tlm::tlm_generic_payload& p) {
  return config_access(p) == tlm::TLM_OK_RESPONSE ? p.get_data_length() : 0;
}

void PcieEndpoint::end_of_elaboration() {
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

}  // namespace nvmesim::models
