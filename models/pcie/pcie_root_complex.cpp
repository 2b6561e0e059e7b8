#include "nvmesim/models/pcie/pcie_root_complex.h"

#include <cstring>
#include <utility>

namespace nvmesim::models {

namespace {

// Saturating add for address ranges translated back to bus addresses.
uint64_t sat_add(uint64_t a, uint64_t b) {
  return a > ~0ULL - b ? ~0ULL : a + b;
}

// Restores a payload's address when the forwarding scope ends.
class AddressRestore {
 public:
  explicit AddressRestore(tlm::tlm_generic_payload& t)
      : t_(t), addr_(t.get_address()) {}
  ~AddressRestore() { t_.set_address(addr_); }
  AddressRestore(const AddressRestore&) = delete;
  AddressRestore& operator=(const AddressRestore&) = delete;

 private:
  tlm::tlm_generic_payload& t_;
  uint64_t addr_;
};

}  // namespace

PcieRootComplex::PcieRootComplex(sc_core::sc_module_name name, PcieLink link)
    : sc_core::sc_module(name),
      cpu_target("cpu_target"),
      dma_target("dma_target"),
      bar0_initiator("bar0_initiator"),
      msix_bar_initiator("msix_bar_initiator"),
      config_initiator("config_initiator"),
      mem_initiator("mem_initiator"),
      link_(std::move(link)) {
  cpu_target.register_b_transport(this, &PcieRootComplex::cpu_b_transport);
  cpu_target.register_transport_dbg(this, &PcieRootComplex::cpu_transport_dbg);
  cpu_target.register_get_direct_mem_ptr(
      this, &PcieRootComplex::cpu_get_direct_mem_ptr);

  dma_target.register_b_transport(this, &PcieRootComplex::dma_b_transport);
  dma_target.register_transport_dbg(this, &PcieRootComplex::dma_transport_dbg);
  dma_target.register_get_direct_mem_ptr(
      this, &PcieRootComplex::dma_get_direct_mem_ptr);

  mem_initiator.register_invalidate_direct_mem_ptr(
      this, &PcieRootComplex::mem_invalidate_direct_mem_ptr);
}

// ---------------------------------------------------------------- CPU MMIO

tlm_utils::simple_initiator_socket<PcieRootComplex>* PcieRootComplex::cpu_route(
    uint64_t addr, uint64_t len, uint64_t& base) {
  if (in_window(addr, len, kBar0Base, kBar0Size)) {
    base = kBar0Base;
    return &bar0_initiator;
  }
  if (in_window(addr, len, kBar2Base, kBar2Size)) {
    base = kBar2Base;
    return &msix_bar_initiator;
  }
  if (in_window(addr, len, kEcamBase, kEcamSize)) {
    base = kEcamBase;
    return &config_initiator;
  }
  return nullptr;
}

void PcieRootComplex::cpu_b_transport(tlm::tlm_generic_payload& trans,
                                      sc_core::sc_time& delay) {
  uint64_t base = 0;
  auto* out = cpu_route(trans.get_address(), trans.get_data_length(), base);
  if (out == nullptr) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    ++counters_.mmio_errors;
    return;
  }
  const bool write = trans.is_write();
  if (write) {
    ++counters_.mmio_writes;
  } else if (trans.is_read()) {
    ++counters_.mmio_reads;
  }
  delay += link_.mmio_time(write, trans.get_data_length());
  {
    AddressRestore restore(trans);
    trans.set_address(trans.get_address() - base);
    (*out)->b_transport(trans, delay);
  }
  // The BAR targets are register files: no DMI through the root complex.
  trans.set_dmi_allowed(false);
  if (!trans.is_response_ok()) ++counters_.mmio_errors;
}

unsigned int PcieRootComplex::cpu_transport_dbg(
    tlm::tlm_generic_payload& trans) {
  uint64_t base = 0;
  auto* out = cpu_route(trans.get_address(), trans.get_data_length(), base);
  if (out == nullptr) return 0;
  AddressRestore restore(trans);
  trans.set_address(trans.get_address() - base);
  return (*out)->transport_dbg(trans);
}

bool PcieRootComplex::cpu_get_direct_mem_ptr(tlm::tlm_generic_payload& trans,
                                             tlm::tlm_dmi& dmi) {
  (void)trans;
  dmi.allow_none();
  dmi.set_start_address(kEcamBase);  // the whole MMIO hole
  dmi.set_end_address(~0ULL);
  return false;
}

// ---------------------------------------------------------------- device DMA

void PcieRootComplex::deliver_msi(tlm::tlm_generic_payload& trans,
                                  sc_core::sc_time& delay) {
  const unsigned len = trans.get_data_length();
  if (!trans.is_write() || len == 0 || len > 4 ||
      trans.get_data_ptr() == nullptr) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    ++counters_.dma_errors;
    return;
  }
  if (trans.get_byte_enable_ptr() != nullptr) {
    trans.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    ++counters_.dma_errors;
    return;
  }
  if (msi_sink_ == nullptr) {
    SC_REPORT_WARNING(name(), "MSI write with no MsiSink bound: dropped");
    trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    ++counters_.dma_errors;
    return;
  }
  // Data is little-endian, as on the PCIe wire.
  uint32_t data = 0;
  const unsigned char* p = trans.get_data_ptr();
  for (unsigned i = 0; i < len; ++i) data |= static_cast<uint32_t>(p[i]) << (8 * i);

  if (link_.mode() == PcieMode::Emulated) delay += link_.write_time(len);
  ++counters_.msi_messages;
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
  msi_sink_->deliver_msi(msi_apic_id(trans.get_address()), msi_vector(data),
                         delay);
}

void PcieRootComplex::dma_b_transport(tlm::tlm_generic_payload& trans,
                                      sc_core::sc_time& delay) {
  const uint64_t addr = trans.get_address();
  const uint64_t len = trans.get_data_length();
  if (in_window(addr, len, kMsiBase, kMsiSize)) {
    deliver_msi(trans, delay);
    return;
  }
  if (!in_window(addr, len, kGuestRamBase, kGuestRamMaxSize)) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    ++counters_.dma_errors;
    return;
  }
  sc_core::sc_time mem_delay = delay;
  {
    AddressRestore restore(trans);
    trans.set_address(addr - kGuestRamBase);
    mem_initiator->b_transport(trans, mem_delay);
  }
  if (!trans.is_response_ok()) {
    ++counters_.dma_errors;  // e.g. beyond the configured RAM size
    return;
  }
  delay = mem_delay;
  if (trans.is_read()) {
    ++counters_.dma_reads;
    counters_.dma_read_bytes += len;
    if (link_.mode() == PcieMode::Emulated) delay += link_.read_time(len);
  } else if (trans.is_write()) {
    ++counters_.dma_writes;
    counters_.dma_write_bytes += len;
    if (link_.mode() == PcieMode::Emulated) delay += link_.write_time(len);
  }
}

unsigned int PcieRootComplex::dma_transport_dbg(
    tlm::tlm_generic_payload& trans) {
  const uint64_t addr = trans.get_address();
  if (!in_window(addr, 1, kGuestRamBase, kGuestRamMaxSize)) return 0;
  AddressRestore restore(trans);
  trans.set_address(addr - kGuestRamBase);
  return mem_initiator->transport_dbg(trans);
}

bool PcieRootComplex::dma_get_direct_mem_ptr(tlm::tlm_generic_payload& trans,
                                             tlm::tlm_dmi& dmi) {
  const uint64_t addr = trans.get_address();
  if (!in_window(addr, 1, kGuestRamBase, kGuestRamMaxSize)) {
    dmi.allow_none();
    if (addr < kGuestRamBase) {
      dmi.set_start_address(0);
      dmi.set_end_address(kGuestRamBase - 1);
    } else {
      dmi.set_start_address(kGuestRamBase + kGuestRamMaxSize);
      dmi.set_end_address(~0ULL);
    }
    return false;
  }
  bool ok = false;
  {
    AddressRestore restore(trans);
    trans.set_address(addr - kGuestRamBase);
    ok = mem_initiator->get_direct_mem_ptr(trans, dmi);
  }
  // Back to bus addresses, clipped to the RAM window.
  const uint64_t ram_end = kGuestRamBase + kGuestRamMaxSize - 1;
  uint64_t start = sat_add(dmi.get_start_address(), kGuestRamBase);
  uint64_t end = sat_add(dmi.get_end_address(), kGuestRamBase);
  if (end > ram_end) end = ram_end;
  if (start > end) start = end;
  dmi.set_start_address(start);
  dmi.set_end_address(end);
  return ok;
}

void PcieRootComplex::mem_invalidate_direct_mem_ptr(sc_dt::uint64 start,
                                                    sc_dt::uint64 end) {
  dma_target->invalidate_direct_mem_ptr(sat_add(start, kGuestRamBase),
                                        sat_add(end, kGuestRamBase));
}

}  // namespace nvmesim::models
