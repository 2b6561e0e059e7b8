// The configuration space of the platform's PCIe functions (the NVMe
// controller model, the virtio-blk model) read and written through the root
// complex's ECAM window as an operating system enumerates them: the
// capability list walked from 0x34, every BAR sized by writing all ones
// (Linux's __pci_read_base), read-only fields, the PCI Express capability's
// link fields from pcie.*, the MSI-X capability against where the endpoint
// keeps its table, and the access sizes ECAM takes.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <set>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "nvmesim/firmware/pcie/config_space.h"
#include "nvmesim/models/host/host_thread.h"
#include "nvmesim/models/mem/address_map.h"
#include "nvmesim/models/mem/guest_memory.h"
#include "nvmesim/models/nvme/nvme_controller.h"
#include "nvmesim/models/pcie/pcie_link.h"
#include "nvmesim/models/pcie/pcie_root_complex.h"
#include "nvmesim/models/virtio/virtio_blk_model.h"
#include "nvmesim/platform/config/visitors.h"

using namespace nvmesim;
using namespace nvmesim::models;
namespace cfg = nvmesim::fw::pci::cfg;
using sc_core::SC_ZERO_TIME;
using sc_core::sc_time;

namespace {

// Configuration accesses need no process: nothing on the path waits, so a
// test reads and writes after elaboration (sc_start(SC_ZERO_TIME)).
struct Cpu : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Cpu> socket{"socket"};
  explicit Cpu(sc_core::sc_module_name n) : sc_core::sc_module(n) {}
  tlm::tlm_response_status access(bool write, uint64_t offset, uint32_t* value, unsigned len) {
    tlm::tlm_generic_payload p;
    uint8_t data[8] = {};
    std::memcpy(data, value, len < 4 ? len : 4);
    p.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    p.set_address(kEcamBase + offset);
    p.set_data_ptr(data);
    p.set_data_length(len);
    p.set_streaming_width(len);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time delay = SC_ZERO_TIME;
    socket->b_transport(p, delay);
    if (!write) {
      *value = 0;
      std::memcpy(value, data, len < 4 ? len : 4);
    }
    return p.get_response_status();
  }
  uint32_t read(uint64_t offset, unsigned len = 4) {
    uint32_t v = 0;
    REQUIRE(access(false, offset, &v, len) == tlm::TLM_OK_RESPONSE);
    return v;
  }
  void write(uint64_t offset, uint32_t v, unsigned len = 4) {
    REQUIRE(access(true, offset, &v, len) == tlm::TLM_OK_RESPONSE);
  }
};

struct NullSink : MsiSink {
  void deliver_msi(uint32_t, uint32_t, const sc_time&) override {}
};

PcieLinkParams link_params() {
  auto l = nvmesim::platform::default_params<PcieLinkParams>();
  l.mode = PcieMode::Link;
  l.generation = 4;
  l.lanes = 8;
  l.max_payload_size = 512;
  l.max_read_request_size = 1024;
  return l;
}

// Memory, the root complex, a CPU; the device is the test's.
struct Platform {
  GuestMemory mem{"mem", 1u << 20, SC_ZERO_TIME};
  PcieRootComplex rc{"rc", PcieLink(link_params())};
  Cpu cpu{"cpu"};
  NullSink sink;
  template <class Device>
  void attach(Device& dev) {
    cpu.socket.bind(rc.cpu_target);
    rc.bar0_initiator.bind(dev.bar0_target);
    rc.msix_bar_initiator.bind(dev.msix_target);
    rc.config_initiator.bind(dev.config_target);
    rc.mem_initiator.bind(mem.socket);
    dev.dma_initiator.bind(rc.dma_target);
    rc.bind_msi_sink(sink);
    sc_core::sc_start(SC_ZERO_TIME);
  }
};

// The capability IDs from 0x34 in list order, and their offsets; fails on
// a pointer outside 0x40..0xFF, not DWORD aligned, or seen before.
std::vector<uint8_t> walk_capabilities(Cpu& cpu, std::map<uint8_t, unsigned>* first = nullptr) {
  std::vector<uint8_t> ids;
  std::set<unsigned> seen;
  REQUIRE((cpu.read(cfg::STATUS, 2) & cfg::STS_CAPABILITIES_LIST) != 0);
  for (unsigned at = cpu.read(cfg::CAPABILITIES_POINTER, 1); at != 0; at = cpu.read(at + 1, 1)) {
    REQUIRE(at >= 0x40);
    REQUIRE(at <= 0xFC);
    REQUIRE(at % 4 == 0);
    REQUIRE(seen.insert(at).second);
    REQUIRE(ids.size() < 48);
    const uint8_t id = uint8_t(cpu.read(at, 1));
    ids.push_back(id);
    if (first && !first->count(id)) (*first)[id] = at;
  }
  return ids;
}

struct BarInfo {
  uint64_t base = 0, size = 0;
  bool is64 = false;
};

// Linux's __pci_read_base: save, write all ones, read the mask back,
// restore; a 64-bit BAR takes the next BAR as its upper half.
BarInfo size_bar(Cpu& cpu, unsigned index) {
  const unsigned at = cfg::BAR0 + 4 * index;
  BarInfo b;
  const uint32_t lo = cpu.read(at);
  b.is64 = (lo & 0x7) == cfg::BAR_MEM_64;
  const uint32_t hi = b.is64 ? cpu.read(at + 4) : 0;
  cpu.write(at, ~0u);
  if (b.is64) cpu.write(at + 4, ~0u);
  const uint32_t sz_lo = cpu.read(at);
  const uint32_t sz_hi = b.is64 ? cpu.read(at + 4) : 0;
  cpu.write(at, lo);
  if (b.is64) cpu.write(at + 4, hi);
  CHECK(cpu.read(at) == lo);  // restored
  b.base = (uint64_t(hi) << 32) | (lo & ~0xFu);
  uint64_t mask = (uint64_t(sz_hi) << 32) | (sz_lo & ~0xFu);
  if (!b.is64) mask |= 0xFFFFFFFF00000000ull;
  b.size = (sz_lo & ~0xFu) == 0 && sz_hi == 0 ? 0 : ~mask + 1;
  CHECK((sz_lo & 0xF) == (lo & 0xF));  // the type bits stay
  return b;
}

// What every endpoint shows: BARs, read-only fields, the PCI Express
// capability for link_params(), the MSI-X capability for `vectors`
// vectors with the table and PBA at the given BIR and offsets.
void check_endpoint(Cpu& cpu, unsigned vectors, unsigned table_bir, uint32_t table_offset, unsigned pba_bir,
                    uint32_t pba_offset) {
  CHECK(cpu.read(cfg::HEADER_TYPE, 1) == 0x00);
  CHECK(cpu.read(cfg::INTERRUPT_PIN, 1) == 1);
  CHECK(cpu.read(cfg::SUBSYSTEM_VENDOR_ID, 2) == 0x1AF4);

  // BARs: BAR0+BAR1 the 64-bit BAR0 window; BAR2 the MSI-X window or unused.
  const BarInfo bar0 = size_bar(cpu, 0);
  CHECK(bar0.is64);
  CHECK(bar0.base == kBar0Base);
  CHECK(bar0.size == kBar0Size);
  const BarInfo bar2 = size_bar(cpu, 2);
  if (table_bir == 2) {
    CHECK_FALSE(bar2.is64);
    CHECK(bar2.base == kBar2Base);
    CHECK(bar2.size == kBar2Size);
  } else {
    CHECK(bar2.size == 0);
    CHECK(cpu.read(cfg::BAR0 + 8) == 0);
  }
  for (unsigned i : {3u, 4u, 5u}) {
    CHECK(size_bar(cpu, i).size == 0);
    CHECK(cpu.read(cfg::BAR0 + 4 * i) == 0);
  }
  cpu.write(cfg::EXPANSION_ROM, ~0u);
  CHECK(cpu.read(cfg::EXPANSION_ROM) == 0);

  // Read-only: ids, revision and class, header type, subsystem ids,
  // Capabilities Pointer, Interrupt Pin.
  const uint32_t id = cpu.read(cfg::VENDOR_ID), cls = cpu.read(cfg::REVISION_ID),
                 sub = cpu.read(cfg::SUBSYSTEM_VENDOR_ID), capptr = cpu.read(cfg::CAPABILITIES_POINTER);
  for (unsigned off : {cfg::VENDOR_ID, cfg::REVISION_ID, cfg::SUBSYSTEM_VENDOR_ID, cfg::CAPABILITIES_POINTER})
    cpu.write(off, 0x5A5A5A5A);
  cpu.write(cfg::HEADER_TYPE, 0x80, 1);
  cpu.write(cfg::INTERRUPT_PIN, 0x04, 1);
  CHECK(cpu.read(cfg::VENDOR_ID) == id);
  CHECK(cpu.read(cfg::REVISION_ID) == cls);
  CHECK(cpu.read(cfg::SUBSYSTEM_VENDOR_ID) == sub);
  CHECK(cpu.read(cfg::CAPABILITIES_POINTER) == capptr);
  CHECK(cpu.read(cfg::HEADER_TYPE, 1) == 0x00);
  CHECK(cpu.read(cfg::INTERRUPT_PIN, 1) == 1);
  cpu.write(cfg::STATUS, 0xFFFF, 2);  // RW1C error bits, none set; Capabilities List stays
  CHECK(cpu.read(cfg::STATUS, 2) == cfg::STS_CAPABILITIES_LIST);

  // Command: Memory Space, Bus Master, Interrupt Disable writable.
  cpu.write(cfg::COMMAND, cfg::CMD_MEMORY_SPACE | cfg::CMD_BUS_MASTER | cfg::CMD_INTX_DISABLE | cfg::CMD_IO_SPACE, 2);
  CHECK(cpu.read(cfg::COMMAND, 2) == (cfg::CMD_MEMORY_SPACE | cfg::CMD_BUS_MASTER | cfg::CMD_INTX_DISABLE));

  std::map<uint8_t, unsigned> at;
  walk_capabilities(cpu, &at);
  REQUIRE(at.count(cfg::CAP_PM));
  REQUIRE(at.count(cfg::CAP_MSIX));
  REQUIRE(at.count(cfg::CAP_EXPRESS));

  // Power Management 1.2: D3hot and back to D0; D2 dropped.
  const unsigned pm = at[cfg::CAP_PM];
  CHECK((cpu.read(pm + cfg::PM_PMC, 2) & 0x7) == 3);
  cpu.write(pm + cfg::PM_PMCSR, cfg::POWER_D3HOT, 2);
  CHECK((cpu.read(pm + cfg::PM_PMCSR, 2) & 3) == cfg::POWER_D3HOT);
  cpu.write(pm + cfg::PM_PMCSR, 2 /* D2 */, 2);
  CHECK((cpu.read(pm + cfg::PM_PMCSR, 2) & 3) == cfg::POWER_D3HOT);
  cpu.write(pm + cfg::PM_PMCSR, cfg::POWER_D0, 2);
  CHECK((cpu.read(pm + cfg::PM_PMCSR, 2) & 3) == cfg::POWER_D0);

  // MSI-X: Table Size = vectors - 1 (read-only), Enable and Function Mask
  // writable, the table and PBA where the endpoint keeps them.
  const unsigned msix = at[cfg::CAP_MSIX];
  CHECK((cpu.read(msix + cfg::MSIX_CONTROL, 2) & cfg::MSIX_TABLE_SIZE) == vectors - 1);
  CHECK(cpu.read(msix + cfg::MSIX_TABLE) == (table_offset | table_bir));
  CHECK(cpu.read(msix + cfg::MSIX_PBA) == (pba_offset | pba_bir));
  cpu.write(msix + cfg::MSIX_CONTROL, 0xFFFF, 2);
  CHECK(cpu.read(msix + cfg::MSIX_CONTROL, 2) == (cfg::MSIX_ENABLE | cfg::MSIX_FUNCTION_MASK | (vectors - 1)));
  cpu.write(msix + cfg::MSIX_CONTROL, cfg::MSIX_ENABLE, 2);
  cpu.write(msix + cfg::MSIX_TABLE, 0);
  CHECK(cpu.read(msix + cfg::MSIX_TABLE) == (table_offset | table_bir));

  // PCI Express: version 2, an endpoint; MPS 512 (010b), MRRS 1024 (011b);
  // gen4 (16 GT/s: 4) x8, trained at that.
  const unsigned e = at[cfg::CAP_EXPRESS];
  CHECK(cpu.read(e + cfg::EXP_CAPS, 2) == 0x0002);
  CHECK((cpu.read(e + cfg::EXP_DEVCAP) & cfg::DEVCAP_MPSS) == 2);
  const uint32_t devctl = cpu.read(e + cfg::EXP_DEVCTL, 2);
  CHECK(((devctl >> 5) & 7) == 2);
  CHECK(((devctl >> 12) & 7) == 3);
  const uint32_t lnkcap = cpu.read(e + cfg::EXP_LNKCAP);
  CHECK((lnkcap & 0xF) == 4);
  CHECK(((lnkcap >> 4) & 0x3F) == 8);
  const uint32_t lnksta = cpu.read(e + cfg::EXP_LNKSTA, 2);
  CHECK((lnksta & 0xF) == 4);
  CHECK(((lnksta >> 4) & 0x3F) == 8);
  cpu.write(e + cfg::EXP_LNKCAP, 0);
  cpu.write(e + cfg::EXP_DEVCAP, 0);
  CHECK(cpu.read(e + cfg::EXP_LNKCAP) == lnkcap);
  CHECK((cpu.read(e + cfg::EXP_DEVCAP) & cfg::DEVCAP_MPSS) == 2);
  // Device Control's MPS and MRRS are software's to set.
  cpu.write(e + cfg::EXP_DEVCTL, (devctl & ~0x70E0u) | (1u << 5) | (5u << 12), 2);
  CHECK(((cpu.read(e + cfg::EXP_DEVCTL, 2) >> 5) & 7) == 1);
  CHECK(((cpu.read(e + cfg::EXP_DEVCTL, 2) >> 12) & 7) == 5);
}

NvmeControllerModel::Params nvme_params(MsixPlacement placement) {
  auto p = nvmesim::platform::default_params<NvmeControllerModel::Params>();
  p.firmware.max_io_queues = 4;
  p.firmware.msix_vectors = 5;
  p.firmware.guest_memory_bytes = 1u << 20;
  p.msix_table = placement;
  return p;
}

}  // namespace

TEST_CASE("pcie config space: the NVMe controller enumerates, MSI-X in BAR2", "[pcie_config]") {
  Platform plat;
  NvmeControllerModel nvme("nvme", nvme_params(MsixPlacement::Bar2), link_params());
  plat.attach(nvme);
  Cpu& cpu = plat.cpu;
  CHECK(cpu.read(cfg::VENDOR_ID) == (0x5845u << 16 | 0x1B36u));
  CHECK(cpu.read(cfg::REVISION_ID) >> 8 == 0x010802u);
  const std::vector<uint8_t> ids = walk_capabilities(cpu);
  CHECK(ids == std::vector<uint8_t>{cfg::CAP_PM, cfg::CAP_MSIX, cfg::CAP_EXPRESS});
  check_endpoint(cpu, 5, 2, 0, 2, PcieEndpoint::kPbaOffset);
  // Stored and reported to the model (not enforced).
  const auto& cs = nvme.config_space();
  CHECK(cs.bus_master_enabled());
  CHECK(cs.memory_space_enabled());
  CHECK(cs.msix_enabled());
  CHECK_FALSE(cs.msix_function_masked());
  CHECK(cs.max_payload_size() == 256);
  CHECK(cs.max_read_request_size() == 4096);
}

TEST_CASE("pcie config space: the NVMe controller with nvme.msix_table=bar0 points MSI-X at BAR0, BAR2 unused",
          "[pcie_config]") {
  Platform plat;
  NvmeControllerModel nvme("nvme", nvme_params(MsixPlacement::Bar0), link_params());
  plat.attach(nvme);
  check_endpoint(plat.cpu, 5, 0, NvmeControllerModel::kBar0MsixTableOffset, 0, NvmeControllerModel::kBar0PbaOffset);
}

TEST_CASE("pcie config space: the link's defaults encode MPS 256 (001b) and MRRS 512 (010b), gen3 x4",
          "[pcie_config]") {
  // A component user who gives the controller nothing but Params{}.
  NvmeControllerModel::Params p;
  p.firmware.guest_memory_bytes = 1u << 20;
  NvmeControllerModel nvme("nvme", p);
  const auto& cs = nvme.config_space();
  const unsigned e = cs.express_capability();
  REQUIRE(e != 0);
  CHECK(cs.find_capability(cfg::CAP_EXPRESS) == e);
  const uint16_t devctl = cs.get16(e + cfg::EXP_DEVCTL);
  CHECK(((devctl >> 5) & 7) == 1);
  CHECK(((devctl >> 12) & 7) == 2);
  CHECK((cs.get32(e + cfg::EXP_LNKCAP) & 0x3FF) == (3u | 4u << 4));
  CHECK((cs.get16(cs.msix_capability() + cfg::MSIX_CONTROL) & cfg::MSIX_TABLE_SIZE) ==
        p.firmware.msix_vectors - 1u);
}

TEST_CASE("pcie config space: ECAM takes 1, 2 and 4-byte naturally aligned accesses only", "[pcie_config]") {
  Platform plat;
  NvmeControllerModel nvme("nvme", nvme_params(MsixPlacement::Bar2), link_params());
  plat.attach(nvme);
  Cpu& cpu = plat.cpu;
  CHECK(cpu.read(0x00, 1) == 0x36);
  CHECK(cpu.read(0x01, 1) == 0x1B);
  CHECK(cpu.read(0x02, 2) == 0x5845);
  CHECK(cpu.read(0xFFC) == 0);
  uint32_t v = 0;
  CHECK(cpu.access(false, 0x01, &v, 2) == tlm::TLM_BURST_ERROR_RESPONSE);
  CHECK(cpu.access(false, 0x02, &v, 4) == tlm::TLM_BURST_ERROR_RESPONSE);
  CHECK(cpu.access(false, 0x00, &v, 3) == tlm::TLM_BURST_ERROR_RESPONSE);
  CHECK(cpu.access(false, 0x00, &v, 8) == tlm::TLM_BURST_ERROR_RESPONSE);
  v = 0xFFFF;
  CHECK(cpu.access(true, 0x05, &v, 2) == tlm::TLM_BURST_ERROR_RESPONSE);
  CHECK(cpu.read(cfg::COMMAND, 2) == 0);  // the refused write did nothing
  // Byte writes of Command.
  cpu.write(cfg::COMMAND, cfg::CMD_BUS_MASTER, 1);
  cpu.write(cfg::COMMAND + 1, cfg::CMD_INTX_DISABLE >> 8, 1);
  CHECK(cpu.read(cfg::COMMAND, 2) == (cfg::CMD_BUS_MASTER | cfg::CMD_INTX_DISABLE));
}

TEST_CASE("pcie config space: virtio-blk keeps its ids and vendor capabilities after the endpoint's",
          "[pcie_config]") {
  Platform plat;
  HostThread thread("thread", HostThread::Params{});
  VirtioBlkModel::Params p;
  p.firmware.num_queues = 2;
  p.firmware.queue_size_max = 64;
  p.firmware.capacity_sectors = (1u << 20) / 512;
  p.backend.kind = BackendKind::Null;
  p.backend.capacity = 1u << 20;
  VirtioBlkModel dev("virtio", p, {&thread}, plat.rc.link());
  plat.attach(dev);
  Cpu& cpu = plat.cpu;
  CHECK(cpu.read(cfg::VENDOR_ID) == 0x10421AF4u);
  CHECK(cpu.read(cfg::REVISION_ID, 1) == 1);
  CHECK(cpu.read(cfg::CLASS_SUB, 2) == 0x0100);
  std::map<uint8_t, unsigned> first;
  const std::vector<uint8_t> ids = walk_capabilities(cpu, &first);
  CHECK(ids == std::vector<uint8_t>{cfg::CAP_PM, cfg::CAP_MSIX, cfg::CAP_EXPRESS, cfg::CAP_VENDOR, cfg::CAP_VENDOR,
                                    cfg::CAP_VENDOR, cfg::CAP_VENDOR});
  // The vendor capabilities' cfg_types in order: common, ISR, device, notify.
  std::vector<uint32_t> types;
  for (unsigned at = first[cfg::CAP_VENDOR]; at; at = cpu.read(at + 1, 1)) types.push_back(cpu.read(at + 3, 1));
  CHECK(types == std::vector<uint32_t>{1, 3, 4, 2});
  check_endpoint(cpu, 3, 2, 0, 2, PcieEndpoint::kPbaOffset);  // a vector per queue and the configuration vector
}
