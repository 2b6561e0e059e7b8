// PcieEndpoint: its configuration space header, the MSI-X table through
// BAR2 (per-vector masking, the Pending Bit Array, a pending message sent
// on unmasking) and the messages it writes through its bus-master socket.
#include <catch2/catch.hpp>

#include <cstring>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "nvmesim/models/pcie/pcie_endpoint.h"

using namespace sc_core;
using nvmesim::models::PcieEndpoint;

namespace {

// Upstream of the endpoint: records every memory write (MSI-X messages).
struct Upstream : sc_module {
  tlm_utils::simple_target_socket<Upstream> socket{"socket"};
  struct Write { uint64_t address; uint32_t data; sc_time at; };
  std::vector<Write> writes;
  explicit Upstream(sc_module_name n) : sc_module(n) {
    socket.register_b_transport(this, &Upstream::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& p, sc_time& delay) {
    uint32_t v = 0;
    std::memcpy(&v, p.get_data_ptr(), 4);
    writes.push_back({p.get_address(), v, sc_time_stamp() + delay});
    delay += sc_time(10, SC_NS);
    p.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

// A device on the endpoint that counts the pending messages it sends.
struct Device : PcieEndpoint {
  unsigned pending_sent = 0;
  Device(sc_module_name n, const Identity& id, uint16_t vectors) : PcieEndpoint(n, id, vectors) {}
  void send_pending_msix(uint16_t vector, const sc_time& delay) override {
    ++pending_sent;
    PcieEndpoint::send_pending_msix(vector, delay);
  }
};

struct Bench : sc_module {
  tlm_utils::simple_initiator_socket<Bench> bar2{"bar2"}, config{"config"};
  Device dev;
  Upstream up{"up"};
  static PcieEndpoint::Identity identity() {
    PcieEndpoint::Identity id;
    id.vendor_id = 0x1B36;
    id.device_id = 0x0010;
    id.base_class = 0x01;
    id.sub_class = 0x08;
    id.prog_if = 0x02;
    id.bar0 = 0xFE000004u;
    return id;
  }
  explicit Bench(sc_module_name n) : sc_module(n), dev("dev", identity(), 40) {
    bar2.bind(dev.msix_target);
    config.bind(dev.config_target);
    dev.dma_initiator.bind(up.socket);
  }
  tlm::tlm_response_status access(tlm_utils::simple_initiator_socket<Bench>& s, bool write,
                                  uint64_t offset, void* data, unsigned len,
                                  sc_time delay = SC_ZERO_TIME) {
    tlm::tlm_generic_payload p;
    p.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    p.set_address(offset);
    p.set_data_ptr(static_cast<unsigned char*>(data));
    p.set_data_length(len);
    p.set_streaming_width(len);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    s->b_transport(p, delay);
    return p.get_response_status();
  }
  uint32_t read32(uint64_t offset) {
    uint32_t v = 0;
    access(bar2, false, offset, &v, 4);
    return v;
  }
  void write32(uint64_t offset, uint32_t v, sc_time delay = SC_ZERO_TIME) {
    access(bar2, true, offset, &v, 4, delay);
  }
};

constexpr uint32_t kEntry = PcieEndpoint::kMsixEntryBytes;
constexpr uint32_t kPba = PcieEndpoint::kPbaOffset;

}  // namespace

TEST_CASE("pcie endpoint: the header carries identity and class code and BAR0, ids are read-only, Command writable",
          "[pcie_endpoint]") {
  Bench b("b");
  uint8_t h[0x14] = {};
  for (unsigned off = 0; off < sizeof h; off += 4)
    REQUIRE(b.access(b.config, false, off, &h[off], 4) == tlm::TLM_OK_RESPONSE);
  CHECK((h[0] | h[1] << 8) == 0x1B36);
  CHECK((h[2] | h[3] << 8) == 0x0010);
  CHECK(h[0x09] == 0x02);
  CHECK(h[0x0A] == 0x08);
  CHECK(h[0x0B] == 0x01);
  uint32_t bar0 = 0;
  std::memcpy(&bar0, &h[0x10], 4);
  CHECK(bar0 == 0xFE000004u);
  uint16_t cmd = 0x0006, vendor = 0xFFFF;
  b.access(b.config, true, 0x04, &cmd, 2);
  b.access(b.config, true, 0x00, &vendor, 2);  // read-only
  uint16_t v = 0;
  b.access(b.config, false, 0x04, &v, 2);
  CHECK(v == 0x0006);
  b.access(b.config, false, 0x00, &v, 2);
  CHECK(v == 0x1B36);
  uint32_t x = 0;
  CHECK(b.access(b.config, false, 4094, &x, 4) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
  CHECK(b.access(b.config, false, 0, h, sizeof h) == tlm::TLM_BURST_ERROR_RESPONSE);  // not 1, 2 or 4 bytes
  CHECK(b.access(b.config, false, 2, &x, 4) == tlm::TLM_BURST_ERROR_RESPONSE);        // misaligned
}

TEST_CASE("pcie endpoint: every vector starts masked and a masked message sets its PBA bit only",
          "[pcie_endpoint]") {
  Bench b("b");
  for (uint16_t v : {0, 1, 33, 39}) CHECK(b.dev.msix_masked(v));
  CHECK(b.read32(3 * kEntry + 12) == 1);  // Vector Control: masked
  sc_time t = SC_ZERO_TIME;
  CHECK(b.dev.send_msix(33, t) == PcieEndpoint::MsixOutcome::Masked);
  CHECK(b.up.writes.empty());
  CHECK(b.dev.msix_pending(33));
  CHECK(b.read32(kPba) == 0);            // vectors 0..31
  CHECK(b.read32(kPba + 4) == 1u << 1);  // vectors 32..63: bit 1 is vector 33
  b.write32(kPba + 4, 0);                // the PBA is read-only
  CHECK(b.read32(kPba + 4) == 1u << 1);
}

TEST_CASE("pcie endpoint: unmasking a vector with a pending message sends it at the write's time",
          "[pcie_endpoint]") {
  Bench b("b");
  b.write32(5 * kEntry + 0, 0xFEE03000u);
  b.write32(5 * kEntry + 4, 0);
  b.write32(5 * kEntry + 8, 0x45);
  CHECK(b.read32(5 * kEntry + 0) == 0xFEE03000u);
  CHECK(b.read32(5 * kEntry + 8) == 0x45);
  sc_time t = SC_ZERO_TIME;
  REQUIRE(b.dev.send_msix(5, t) == PcieEndpoint::MsixOutcome::Masked);
  b.write32(5 * kEntry + 12, 0, sc_time(70, SC_NS));  // unmask
  REQUIRE(b.up.writes.size() == 1);
  CHECK(b.up.writes[0].address == 0xFEE03000u);
  CHECK(b.up.writes[0].data == 0x45);
  CHECK(b.up.writes[0].at == sc_time(70, SC_NS));
  CHECK(b.dev.pending_sent == 1);
  CHECK_FALSE(b.dev.msix_pending(5));
  CHECK(b.read32(kPba) == 0);
  // Unmasked: the next message goes at once and advances the caller's time.
  sc_time d(5, SC_NS);
  CHECK(b.dev.send_msix(5, d) == PcieEndpoint::MsixOutcome::Sent);
  CHECK(d == sc_time(15, SC_NS));
  CHECK(b.up.writes.size() == 2);
  // Masking again, then unmasking without a pending message, sends nothing.
  b.write32(5 * kEntry + 12, 1);
  b.write32(5 * kEntry + 12, 0);
  CHECK(b.up.writes.size() == 2);
  CHECK(b.dev.pending_sent == 1);
}

TEST_CASE("pcie endpoint: debug writes program the table but never send a message",
          "[pcie_endpoint]") {
  Bench b("b");
  sc_time t = SC_ZERO_TIME;
  b.dev.send_msix(2, t);  // pending
  uint32_t unmask = 0;
  tlm::tlm_generic_payload p;
  p.set_command(tlm::TLM_WRITE_COMMAND);
  p.set_address(2 * kEntry + 12);
  p.set_data_ptr(reinterpret_cast<unsigned char*>(&unmask));
  p.set_data_length(4);
  p.set_streaming_width(4);
  CHECK(b.bar2->transport_dbg(p) == 4);
  CHECK_FALSE(b.dev.msix_masked(2));
  CHECK(b.dev.msix_pending(2));  // still pending: a debug access has no side effects
  CHECK(b.up.writes.empty());
  uint64_t wide = 0;
  p.set_data_ptr(reinterpret_cast<unsigned char*>(&wide));
  p.set_data_length(8);
  CHECK(b.bar2->transport_dbg(p) == 0);  // DWORD accesses only
  CHECK(b.access(b.bar2, true, 0, &wide, 8) == tlm::TLM_BURST_ERROR_RESPONSE);
}

TEST_CASE("pcie endpoint: program_msix_vector fills and unmasks an entry", "[pcie_endpoint]") {
  Bench b("b");
  b.dev.program_msix_vector(39, 0xFEE01000u, 0x67);
  CHECK_FALSE(b.dev.msix_masked(39));
  CHECK(b.read32(39 * kEntry + 0) == 0xFEE01000u);
  CHECK(b.read32(39 * kEntry + 4) == 0);
  CHECK(b.read32(39 * kEntry + 8) == 0x67);
  CHECK(b.read32(39 * kEntry + 12) == 0);
  sc_time t = SC_ZERO_TIME;
  CHECK(b.dev.send_msix(39, t) == PcieEndpoint::MsixOutcome::Sent);
  REQUIRE(b.up.writes.size() == 1);
  CHECK(b.up.writes[0].data == 0x67);
}
