// The configuration space register file (firmware/pcie/config_space.h): the
// accesses it takes, per-bit write masks and RW1C bits, the capability list,
// and an endpoint's header and capabilities as an operating system reads them.
#include <catch2/catch.hpp>

#include <set>
#include <vector>

#include "nvmesim/firmware/pcie/config_space.h"

using namespace nvmesim::fw::pci;

namespace {

EndpointConfig nvme_like() {
  EndpointConfig c;
  c.vendor_id = 0x1B36;
  c.device_id = 0x0010;
  c.base_class = 0x01;
  c.sub_class = 0x08;
  c.prog_if = 0x02;
  c.subsystem_vendor_id = 0x1AF4;
  c.subsystem_id = 0x1100;
  c.bar0_base = 0xFE000000;
  c.bar0_size = 0x4000;
  c.bar2_base = 0xFE010000;
  c.bar2_size = 0x4000;
  c.msix_vectors = 65;
  c.msix_table_offset = 0;
  c.msix_pba_offset = 0x2000;
  return c;
}

uint32_t rd(const ConfigSpace& s, unsigned off, unsigned len = 4) {
  uint32_t v = 0xDEADBEEF;
  REQUIRE(s.read(off, len, &v));
  return v;
}

// The size of BAR `index` (and of its pair when 64-bit) as Linux's
// __pci_read_base finds it: write all ones, read back, restore.
uint64_t bar_size(ConfigSpace& s, unsigned index) {
  const unsigned at = cfg::BAR0 + 4 * index;
  const uint32_t lo = rd(s, at);
  const bool is64 = (lo & 0x7) == cfg::BAR_MEM_64;
  const uint32_t hi = is64 ? rd(s, at + 4) : 0;
  s.write(at, 4, ~0u);
  if (is64) s.write(at + 4, 4, ~0u);
  const uint32_t sz_lo = rd(s, at), sz_hi = is64 ? rd(s, at + 4) : 0xFFFFFFFF;
  s.write(at, 4, lo);
  if (is64) s.write(at + 4, 4, hi);
  const uint64_t mask = (uint64_t(sz_hi) << 32) | (sz_lo & ~0xFu);
  if ((sz_lo & ~0xFu) == 0 && !is64) return 0;
  return ~mask + 1;
}

}  // namespace

TEST_CASE("config space: 1, 2 and 4-byte naturally aligned accesses only", "[config_space]") {
  ConfigSpace s;
  s.set32(0x40, 0x11223344);
  uint32_t v = 0;
  CHECK(s.read(0x40, 1, &v));
  CHECK(v == 0x44);
  CHECK(s.read(0x42, 2, &v));
  CHECK(v == 0x1122);
  CHECK(s.read(0x40, 4, &v));
  CHECK(v == 0x11223344);
  CHECK(s.read(0xFFC, 4, &v));
  v = 7;
  CHECK_FALSE(s.read(0x41, 2, &v));  // misaligned
  CHECK_FALSE(s.read(0x42, 4, &v));
  CHECK_FALSE(s.read(0x40, 3, &v));  // not 1, 2 or 4
  CHECK_FALSE(s.read(0x40, 8, &v));
  CHECK_FALSE(s.read(0x1000, 1, &v));  // outside the 4 KiB
  CHECK_FALSE(s.write(0x41, 4, 0));
  CHECK(v == 7);  // untouched by a refused read
}

TEST_CASE("config space: writes go through the per-bit masks, RW1C bits clear on 1", "[config_space]") {
  ConfigSpace s;
  s.set16(0x50, 0x8001);
  s.set_writable(0x50, 2, 0x00F0);
  s.set_write_one_to_clear(0x50, 2, 0x8000);
  s.write(0x50, 2, 0x7FFF);  // bit 15 written 0: stays; low nibble read-only
  CHECK(rd(s, 0x50, 2) == 0x80F1);
  s.write(0x51, 1, 0x80);  // bit 15 written 1: cleared
  CHECK(rd(s, 0x50, 2) == 0x00F1);
  s.write(0x50, 1, 0x0F);
  CHECK(rd(s, 0x50, 2) == 0x0001);
}

TEST_CASE("config space: capabilities are appended DWORD aligned and found by ID", "[config_space]") {
  ConfigSpace s;
  CHECK(s.find_capability(0x05) == 0);
  const unsigned a = s.add_capability(0x05, 10);
  const unsigned b = s.add_capability(0x09, 6);
  CHECK(a == 0x40);
  CHECK(b == 0x4C);
  CHECK(rd(s, cfg::CAPABILITIES_POINTER, 1) == 0x40);
  CHECK((rd(s, cfg::STATUS, 2) & cfg::STS_CAPABILITIES_LIST) != 0);
  CHECK(rd(s, a + 1, 1) == b);
  CHECK(rd(s, b + 1, 1) == 0);
  CHECK(s.find_capability(0x09) == b);
  CHECK(s.find_capability(0x10) == 0);
  CHECK_THROWS_AS(s.add_capability(0x09, 0x100), std::length_error);
}

TEST_CASE("config space: payload size codes of Device Control (PCI Express Base 4.0 section 7.5.3.4)",
          "[config_space]") {
  const uint32_t bytes[] = {128, 256, 512, 1024, 2048, 4096};
  for (uint16_t code = 0; code < 6; ++code) {
    CHECK(payload_size_code(bytes[code]) == code);
    CHECK(payload_size_bytes(code) == bytes[code]);
  }
}

TEST_CASE("config space: an endpoint's header, read-only fields and Command", "[config_space]") {
  EndpointConfigSpace s(nvme_like());
  CHECK(rd(s, cfg::VENDOR_ID, 2) == 0x1B36);
  CHECK(rd(s, cfg::DEVICE_ID, 2) == 0x0010);
  CHECK(rd(s, cfg::REVISION_ID) == 0x01080200);
  CHECK(rd(s, cfg::HEADER_TYPE, 1) == 0);
  CHECK(rd(s, cfg::SUBSYSTEM_VENDOR_ID) == 0x11001AF4);
  CHECK(rd(s, cfg::INTERRUPT_PIN, 1) == 1);
  CHECK((rd(s, cfg::STATUS, 2) & cfg::STS_CAPABILITIES_LIST) != 0);
  // Read-only: ids, class, revision, header type, Status' Capabilities
  // List, the Capabilities Pointer, Interrupt Pin, Subsystem ids.
  const unsigned ro[] = {0x00, 0x08, 0x0C /* header type byte: 0x0E */, 0x2C, 0x34};
  for (unsigned off : ro) {
    const uint32_t before = rd(s, off);
    s.write(off, 4, ~0u);
    s.write(off, 4, 0);
    const uint32_t after = rd(s, off);
    if (off == 0x0C)  // Cache Line Size is writable, the rest is not
      CHECK((after & 0xFFFFFF00) == (before & 0xFFFFFF00));
    else if (off == 0x34)
      CHECK((after & 0xFF) == (before & 0xFF));
    else
      CHECK(after == before);
  }
  s.write(cfg::STATUS, 2, 0xFFFF);
  CHECK((rd(s, cfg::STATUS, 2) & cfg::STS_CAPABILITIES_LIST) != 0);
  s.write(cfg::INTERRUPT_LINE, 1, 11);
  s.write(cfg::INTERRUPT_PIN, 1, 4);
  CHECK(rd(s, cfg::INTERRUPT_LINE, 2) == 0x010B);
  // Command: Memory Space, Bus Master and Interrupt Disable (and the error
  // enables); I/O Space has no BAR behind it.
  s.write(cfg::COMMAND, 2, 0xFFFF);
  CHECK(rd(s, cfg::COMMAND, 2) ==
        (cfg::CMD_MEMORY_SPACE | cfg::CMD_BUS_MASTER | cfg::CMD_PARITY_ERROR_RESPONSE | cfg::CMD_SERR_ENABLE |
         cfg::CMD_INTX_DISABLE));
  CHECK(s.memory_space_enabled());
  CHECK(s.bus_master_enabled());
  CHECK(s.intx_disabled());
  s.write(cfg::COMMAND, 2, cfg::CMD_MEMORY_SPACE);
  CHECK_FALSE(s.bus_master_enabled());
}

TEST_CASE("config space: BAR sizing with all ones, the 64-bit pair, unused BARs", "[config_space]") {
  EndpointConfigSpace s(nvme_like());
  CHECK(rd(s, cfg::BAR0) == 0xFE000004u);
  CHECK(rd(s, cfg::BAR0 + 4) == 0);
  s.write(cfg::BAR0, 4, ~0u);
  s.write(cfg::BAR0 + 4, 4, ~0u);
  CHECK(rd(s, cfg::BAR0) == (~(0x4000u - 1) | cfg::BAR_MEM_64));  // 0xFFFFC004
  CHECK(rd(s, cfg::BAR0 + 4) == 0xFFFFFFFFu);
  s.write(cfg::BAR0, 4, 0xFE000000);
  s.write(cfg::BAR0 + 4, 4, 0);
  CHECK(rd(s, cfg::BAR0) == 0xFE000004u);
  CHECK(bar_size(s, 0) == 0x4000);
  CHECK(bar_size(s, 2) == 0x4000);
  CHECK(rd(s, cfg::BAR0 + 8) == 0xFE010000u);  // 32-bit, non-prefetchable
  for (unsigned i : {3u, 4u, 5u}) {
    s.write(cfg::BAR0 + 4 * i, 4, ~0u);
    CHECK(rd(s, cfg::BAR0 + 4 * i) == 0);
  }
  s.write(cfg::EXPANSION_ROM, 4, ~0u);
  CHECK(rd(s, cfg::EXPANSION_ROM) == 0);
  s.clear_bar(2);
  CHECK(bar_size(s, 2) == 0);
  CHECK(rd(s, cfg::BAR0 + 8) == 0);
}

TEST_CASE("config space: the capability list, PM, MSI-X and PCI Express registers", "[config_space]") {
  EndpointConfig c = nvme_like();
  c.max_payload_size = 256;
  c.max_read_request_size = 1024;
  c.link_generation = 4;
  c.link_lanes = 8;
  EndpointConfigSpace s(c);
  // Walk as an OS does: from 0x34, every pointer DWORD aligned in 0x40..0xFF.
  std::vector<uint8_t> ids;
  std::set<unsigned> seen;
  for (unsigned at = rd(s, cfg::CAPABILITIES_POINTER, 1); at; at = rd(s, at + 1, 1)) {
    REQUIRE(at >= 0x40);
    REQUIRE(at < 0x100);
    REQUIRE(at % 4 == 0);
    REQUIRE(seen.insert(at).second);  // no loop
    ids.push_back(uint8_t(rd(s, at, 1)));
  }
  CHECK(ids == std::vector<uint8_t>{cfg::CAP_PM, cfg::CAP_MSIX, cfg::CAP_EXPRESS});

  const unsigned pm = s.pm_capability();
  CHECK((rd(s, pm + cfg::PM_PMC, 2) & 0x7) == 3);  // version 1.2
  s.write(pm + cfg::PM_PMCSR, 2, cfg::POWER_D3HOT);
  CHECK(s.power_state() == cfg::POWER_D3HOT);
  s.write(pm + cfg::PM_PMCSR, 2, 1);  // D1: not supported, dropped
  CHECK(s.power_state() == cfg::POWER_D3HOT);
  s.write(pm + cfg::PM_PMCSR, 1, cfg::POWER_D0);
  CHECK(s.power_state() == cfg::POWER_D0);
  CHECK((rd(s, pm + cfg::PM_PMCSR, 2) & cfg::PMCSR_NO_SOFT_RESET) != 0);

  const unsigned msix = s.msix_capability();
  CHECK((rd(s, msix + cfg::MSIX_CONTROL, 2) & cfg::MSIX_TABLE_SIZE) == 64);
  CHECK(rd(s, msix + cfg::MSIX_TABLE) == 2);  // BAR2, offset 0
  CHECK(rd(s, msix + cfg::MSIX_PBA) == (0x2000u | 2));
  s.write(msix + cfg::MSIX_CONTROL, 2, 0xFFFF);
  CHECK(rd(s, msix + cfg::MSIX_CONTROL, 2) == (0xC000 | 64));
  CHECK(s.msix_enabled());
  CHECK(s.msix_function_masked());
  s.write(msix + cfg::MSIX_TABLE, 4, 0x12345678);
  CHECK(rd(s, msix + cfg::MSIX_TABLE) == 2);
  s.set_msix_location(0, 0x2000, 0, 0x3000);
  CHECK(rd(s, msix + cfg::MSIX_TABLE) == 0x2000);
  CHECK(rd(s, msix + cfg::MSIX_PBA) == 0x3000);

  const unsigned e = s.express_capability();
  CHECK(rd(s, e + cfg::EXP_CAPS, 2) == 0x0002);  // version 2, PCI Express Endpoint
  CHECK((rd(s, e + cfg::EXP_DEVCAP) & cfg::DEVCAP_MPSS) == 1);  // 256
  const uint16_t devctl = uint16_t(rd(s, e + cfg::EXP_DEVCTL, 2));
  CHECK(((devctl >> 5) & 7) == 1);   // MPS 256: 001b
  CHECK(((devctl >> 12) & 7) == 3);  // MRRS 1024: 011b
  CHECK(s.max_payload_size() == 256);
  CHECK(s.max_read_request_size() == 1024);
  s.write(e + cfg::EXP_DEVCTL, 2, uint16_t((devctl & ~cfg::DEVCTL_MRRS) | (5 << 12)));
  CHECK(s.max_read_request_size() == 4096);
  const uint32_t lnkcap = rd(s, e + cfg::EXP_LNKCAP);
  CHECK((lnkcap & 0xF) == 4);
  CHECK(((lnkcap >> 4) & 0x3F) == 8);
  s.write(e + cfg::EXP_LNKCAP, 4, 0);
  CHECK(rd(s, e + cfg::EXP_LNKCAP) == lnkcap);
  const uint16_t lnksta = uint16_t(rd(s, e + cfg::EXP_LNKSTA, 2));
  CHECK((lnksta & 0xF) == 4);
  CHECK(((lnksta >> 4) & 0x3F) == 8);
  CHECK(rd(s, e + cfg::EXP_LNKCAP2) == 0x1E);  // 2.5, 5, 8 and 16 GT/s
}

TEST_CASE("config space: no MSI-X capability without vectors", "[config_space]") {
  EndpointConfig c = nvme_like();
  c.msix_vectors = 0;
  EndpointConfigSpace s(c);
  CHECK(s.msix_capability() == 0);
  CHECK(s.find_capability(cfg::CAP_MSIX) == 0);
  CHECK(s.find_capability(cfg::CAP_EXPRESS) == s.express_capability());
  CHECK_FALSE(s.msix_enabled());
}
