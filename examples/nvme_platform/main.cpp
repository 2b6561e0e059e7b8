// An out-of-tree virtual platform around nvmesim's NVMe controller: its own
// CPU-side driver (a tlm_utils::simple_initiator_socket), its own router
// and address map, nvmesim's guest memory and controller (hardware engine,
// RAM backend). The driver brings the controller up as an OS driver does
// (CAP, admin queues, CC.EN / CSTS.RDY, Identify Controller, MSI-X through
// BAR2, an I/O queue pair, Doorbell Buffer Config when OACS bit 8 says so),
// writes a few blocks, reads them back through shadow doorbells and checks
// the data. Exit status 0 when every step worked, 1 otherwise.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <nvmesim/firmware/nvme/nvme_spec.h>
#include <nvmesim/models/mem/guest_memory.h>
#include <nvmesim/models/nvme/nvme_controller.h>

using namespace sc_core;
namespace nvme = nvmesim::nvme;
namespace models = nvmesim::models;

// This platform's address map (not nvmesim's).
constexpr uint64_t kRamSize = 16u << 20;
constexpr uint64_t kBar0 = 0xF000'0000, kBar0Size = 0x4000;
constexpr uint64_t kBar2 = 0xF001'0000, kBar2Size = 0x4000;
constexpr uint64_t kMsi = 0xFEE0'0000, kMsiSize = 0x1000;
// Guest memory layout.
constexpr uint64_t kAsq = 0x10000, kAcq = 0x11000, kIdentify = 0x12000;
constexpr uint64_t kIoSq = 0x20000, kIoCq = 0x21000, kShadow = 0x22000, kEventIdx = 0x23000;
constexpr uint64_t kData = 0x100000;
constexpr uint16_t kQueueEntries = 16;
constexpr unsigned kBlocks = 4, kBlockBytes = 4096;

// Routes the driver's accesses (RAM, BAR0, BAR2) and the controller's DMA
// (RAM, MSI writes). No DMI: every access goes through b_transport.
struct Router : sc_module {
  tlm_utils::simple_target_socket<Router> cpu_in{"cpu_in"}, dma_in{"dma_in"};
  tlm_utils::simple_initiator_socket<Router> ram{"ram"}, bar0{"bar0"}, bar2{"bar2"};
  sc_event msi;             // an MSI write arrived
  std::vector<uint32_t> msi_data;

  explicit Router(sc_module_name n) : sc_module(n) {
    cpu_in.register_b_transport(this, &Router::route);
    dma_in.register_b_transport(this, &Router::route);
  }
  void route(tlm::tlm_generic_payload& p, sc_time& delay) {
    const uint64_t a = p.get_address();
    if (a < kRamSize) return ram->b_transport(p, delay);
    if (a >= kBar0 && a < kBar0 + kBar0Size) return forward(bar0, p, delay, kBar0);
    if (a >= kBar2 && a < kBar2 + kBar2Size) return forward(bar2, p, delay, kBar2);
    if (a >= kMsi && a < kMsi + kMsiSize && p.is_write() && p.get_data_length() == 4) {
      uint32_t data;
      std::memcpy(&data, p.get_data_ptr(), 4);
      msi_data.push_back(data);
      msi.notify(delay);
      p.set_response_status(tlm::TLM_OK_RESPONSE);
      return;
    }
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  }
  static void forward(tlm_utils::simple_initiator_socket<Router>& s, tlm::tlm_generic_payload& p,
                      sc_time& delay, uint64_t base) {
    p.set_address(p.get_address() - base);
    s->b_transport(p, delay);
    p.set_address(p.get_address() + base);
  }
};

// The CPU: a driver thread with its own initiator socket.
struct Driver : sc_module {
  tlm_utils::simple_initiator_socket<Driver> socket{"socket"};
  Router& router;
  bool ok = false;
  std::string failure;
  uint16_t admin_tail = 0, admin_head = 0, io_tail = 0, io_head = 0, cid = 0;
  bool admin_phase = true, io_phase = true, shadow = false;

  SC_HAS_PROCESS(Driver);
  Driver(sc_module_name n, Router& r) : sc_module(n), router(r) { SC_THREAD(run); }

  void access(tlm::tlm_command cmd, uint64_t addr, void* data, unsigned len) {
    tlm::tlm_generic_payload p;
    p.set_command(cmd);
    p.set_address(addr);
    p.set_data_ptr(static_cast<unsigned char*>(data));
    p.set_data_length(len);
    p.set_streaming_width(len);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time delay = SC_ZERO_TIME;
    socket->b_transport(p, delay);
    wait(delay);
    if (!p.is_response_ok()) throw std::runtime_error("bus error at 0x" + hex(addr));
  }
  static std::string hex(uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "%llx", (unsigned long long)v);
    return b;
  }
  uint32_t rd32(uint64_t a) { uint32_t v; access(tlm::TLM_READ_COMMAND, a, &v, 4); return v; }
  uint64_t rd64(uint64_t a) { uint64_t v; access(tlm::TLM_READ_COMMAND, a, &v, 8); return v; }
  void wr32(uint64_t a, uint32_t v) { access(tlm::TLM_WRITE_COMMAND, a, &v, 4); }
  void wr64(uint64_t a, uint64_t v) { access(tlm::TLM_WRITE_COMMAND, a, &v, 8); }

  // Submit on a queue: the SQE into memory, then the tail doorbell (with the
  // doorbell buffer: the shadow tail, and the MMIO write only if the
  // EventIdx asks for it, Linux's nvme_dbbuf_need_event).
  nvme::CompletionEntry submit(nvme::SubmissionEntry c, bool admin) {
    c.cid = ++cid;
    uint16_t& tail = admin ? admin_tail : io_tail;
    const uint16_t qid = admin ? 0 : 1;
    access(tlm::TLM_WRITE_COMMAND, (admin ? kAsq : kIoSq) + tail * 64u, &c, 64);
    const uint16_t old = tail;
    tail = uint16_t((tail + 1) % kQueueEntries);
    ring(qid, false, old, tail);
    return reap(admin, c.cid);
  }
  void ring(uint16_t qid, bool cq, uint16_t old, uint16_t now) {
    const uint64_t db = kBar0 + nvme::reg::DOORBELL_BASE + (2u * qid + (cq ? 1 : 0)) * 4u;
    if (!shadow || qid == 0) return wr32(db, now);
    const uint64_t slot = (2u * qid + (cq ? 1 : 0)) * 4u;
    wr32(kShadow + slot, now);
    const uint16_t event_idx = uint16_t(rd32(kEventIdx + slot));
    if (uint16_t(now - event_idx - 1) < uint16_t(now - old)) wr32(db, now);
  }
  // Wait for the completion of `want` (an MSI-X message on its vector).
  nvme::CompletionEntry reap(bool admin, uint16_t want) {
    uint16_t& head = admin ? admin_head : io_head;
    bool& phase = admin ? admin_phase : io_phase;
    for (int tries = 0; tries < 100; ++tries) {
      nvme::CompletionEntry e;
      access(tlm::TLM_READ_COMMAND, (admin ? kAcq : kIoCq) + head * 16u, &e, 16);
      if (bool(e.status & 1) == phase) {
        const uint16_t old = head;
        head = uint16_t((head + 1) % kQueueEntries);
        if (head == 0) phase = !phase;
        ring(admin ? 0 : 1, true, old, head);
        if (e.cid != want) throw std::runtime_error("completion for cid " + std::to_string(e.cid));
        return e;
      }
      wait(sc_time(100, SC_US), router.msi);  // the interrupt (or look again after 100 us)
    }
    throw std::runtime_error("no completion for cid " + std::to_string(want));
  }
  void check(const nvme::CompletionEntry& e, const char* what) {
    const unsigned status = e.status >> 1;
    std::printf("  %-34s status 0x%03x at %s\n", what, status, sc_time_stamp().to_string().c_str());
    if (status) throw std::runtime_error(std::string(what) + " failed");
  }

  void run() {
    try {
      bring_up();
      io();
      ok = true;
    } catch (const std::exception& e) {
      failure = e.what();
    }
    sc_stop();
  }

  void bring_up() {
    const uint64_t cap = rd64(kBar0 + nvme::reg::CAP);
    std::printf("CAP 0x%016llx: MQES %u, DSTRD %u; VS 0x%08x\n", (unsigned long long)cap,
                unsigned(cap & 0xFFFF) + 1, unsigned(cap >> 32) & 0xF, rd32(kBar0 + nvme::reg::VS));
    if ((cap >> 32 & 0xF) != 0) throw std::runtime_error("this driver assumes CAP.DSTRD 0");
    // MSI-X table in BAR2: vector 0 (admin) and 1 (I/O), unmasked.
    for (uint32_t v = 0; v < 2; ++v) {
      wr32(kBar2 + v * 16, uint32_t(kMsi));
      wr32(kBar2 + v * 16 + 4, 0);
      wr32(kBar2 + v * 16 + 8, 0x40 + v);
      wr32(kBar2 + v * 16 + 12, 0);
    }
    wr32(kBar0 + nvme::reg::AQA, uint32_t(kQueueEntries - 1) << 16 | (kQueueEntries - 1));
    wr64(kBar0 + nvme::reg::ASQ, kAsq);
    wr64(kBar0 + nvme::reg::ACQ, kAcq);
    wr32(kBar0 + nvme::reg::CC, 1u | 6u << 16 | 4u << 20);  // EN, IOSQES 64 B, IOCQES 16 B
    while (!(rd32(kBar0 + nvme::reg::CSTS) & 1)) wait(sc_time(100, SC_NS));
    std::printf("controller ready at %s\n", sc_time_stamp().to_string().c_str());

    nvme::SubmissionEntry c{};
    c.opcode = nvme::admin::IDENTIFY;
    c.prp1 = kIdentify;
    c.cdw10 = 1;  // CNS 1: Identify Controller
    check(submit(c, true), "Identify Controller");
    uint8_t id[4096];
    access(tlm::TLM_READ_COMMAND, kIdentify, id, sizeof id);
    uint16_t vid, oacs;
    std::memcpy(&vid, id, 2);
    std::memcpy(&oacs, id + 256, 2);
    std::printf("  vendor 0x%04x, model \"%.40s\", OACS 0x%04x\n", vid, reinterpret_cast<char*>(id + 24), oacs);

    c = {};
    c.opcode = nvme::admin::CREATE_IO_CQ;
    c.prp1 = kIoCq;
    c.cdw10 = uint32_t(kQueueEntries - 1) << 16 | 1;
    c.cdw11 = 1u << 16 | 2u | 1u;  // vector 1, IEN, physically contiguous
    check(submit(c, true), "Create I/O CQ 1");
    c = {};
    c.opcode = nvme::admin::CREATE_IO_SQ;
    c.prp1 = kIoSq;
    c.cdw10 = uint32_t(kQueueEntries - 1) << 16 | 1;
    c.cdw11 = 1u << 16 | 1u;  // CQ 1, physically contiguous
    check(submit(c, true), "Create I/O SQ 1");
    if (oacs & (1u << 8)) {  // Doorbell Buffer Config (NVMe 1.3)
      c = {};
      c.opcode = nvme::admin::DOORBELL_BUFFER_CONFIG;
      c.prp1 = kShadow;
      c.prp2 = kEventIdx;
      check(submit(c, true), "Doorbell Buffer Config");
      shadow = true;
    }
  }

  void io() {
    const unsigned lbas_per_block = kBlockBytes / 512;
    std::vector<uint8_t> block(kBlockBytes);
    for (unsigned b = 0; b < kBlocks; ++b) {  // write a pattern, block by block
      for (unsigned i = 0; i < kBlockBytes; ++i) block[i] = uint8_t(b * 31 + i);
      access(tlm::TLM_WRITE_COMMAND, kData, block.data(), kBlockBytes);
      check(submit(rw(nvme::io::WRITE, b * lbas_per_block, lbas_per_block), false),
            ("Write LBA " + std::to_string(b * lbas_per_block)).c_str());
    }
    for (unsigned b = 0; b < kBlocks; ++b) {  // read each back
      std::vector<uint8_t> zero(kBlockBytes, 0);
      access(tlm::TLM_WRITE_COMMAND, kData, zero.data(), kBlockBytes);
      check(submit(rw(nvme::io::READ, b * lbas_per_block, lbas_per_block), false),
            ("Read LBA " + std::to_string(b * lbas_per_block)).c_str());
      access(tlm::TLM_READ_COMMAND, kData, block.data(), kBlockBytes);
      for (unsigned i = 0; i < kBlockBytes; ++i)
        if (block[i] != uint8_t(b * 31 + i)) throw std::runtime_error("read data differs from written");
    }
    std::printf("%u writes and %u reads done, data verified; %zu MSI-X messages\n", kBlocks, kBlocks,
                router.msi_data.size());
  }
  static nvme::SubmissionEntry rw(uint8_t opcode, uint64_t slba, uint32_t nlb) {
    nvme::SubmissionEntry c{};
    c.opcode = opcode;
    c.nsid = 1;
    c.prp1 = kData;  // one 4 KiB page: PRP1 alone
    c.cdw10 = uint32_t(slba);
    c.cdw11 = uint32_t(slba >> 32);
    c.cdw12 = nlb - 1;
    return c;
  }
};

int sc_main(int, char*[]) {
  models::NvmeControllerModel::Params params;  // the defaults: a working controller
  params.backend.kind = models::BackendKind::Ram;
  params.backend.capacity = 16u << 20;
  params.resolve_auto();  // the namespace follows the capacity
  models::PcieLinkParams link;
  link.mode = models::PcieMode::Link;  // gen3 x4 timing for the controller's DMA

  models::GuestMemory ram("ram", kRamSize, sc_time(50, SC_NS));
  models::NvmeControllerModel nvme_ctrl("nvme", params, link);  // the hardware engine
  Router router("router");
  Driver driver("driver", router);
  driver.socket.bind(router.cpu_in);
  router.ram.bind(ram.socket);
  router.bar0.bind(nvme_ctrl.bar0_target);
  router.bar2.bind(nvme_ctrl.msix_target);
  nvme_ctrl.dma_initiator.bind(router.dma_in);
  // nvme_ctrl.config_target stays unbound: this platform does not enumerate PCI.

  std::printf("nvmesim controller at 0x%llx, clock %.3g GHz, %s\n", (unsigned long long)kBar0,
              params.engine.clock_ghz, nvme_ctrl.link().describe().c_str());
  sc_start(sc_time(10, SC_MS));
  if (!driver.ok) {
    std::printf("FAILED: %s\n", driver.failure.empty() ? "the driver did not finish" : driver.failure.c_str());
    return 1;
  }
  std::printf("engine: %llu runs, busy %s; simulated %s\n",
              (unsigned long long)nvme_ctrl.hw_engine()->runs(),
              nvme_ctrl.hw_engine()->busy_time().to_string().c_str(), sc_time_stamp().to_string().c_str());
  // Every TLP the run put on the link, by purpose and kind (bring-up included).
  using nvmesim::fw::pcie::TlpKind;
  const auto& tally = nvme_ctrl.link_traffic()->tally();
  const std::vector<std::string> purposes = models::NvmeControllerModel::link_purposes();
  for (unsigned p = 0; p < purposes.size(); ++p) {
    const auto mrd = tally.tlps(p, TlpKind::MemoryRead), cpld = tally.tlps(p, TlpKind::Completion),
               mwr = tally.tlps(p, TlpKind::PostedWrite);
    if (mrd + cpld + mwr)
      std::printf("  PCIe %-14s MRd %4llu  CplD %4llu  MWr %4llu\n", purposes[p].c_str(), (unsigned long long)mrd,
                  (unsigned long long)cpld, (unsigned long long)mwr);
  }
  return 0;
}
