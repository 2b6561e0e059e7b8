// Two nvmesim NVMe controllers on one out-of-tree platform, each with its
// own parameters set by name under its instance prefix (nvme0.*, nvme1.*:
// models/sim/param_settings.h applies them through the Params' visit
// lines, with their ranges), each named by its module's instance name in
// the statistics tree. One driver thread per controller brings it up
// (admin queues, CC.EN, Identify, an I/O queue pair) and does I/O; the
// RAM-backed one's data is read back and checked. Extra arguments are more
// settings ("nvme1.backend_latency=50us"). Exit status 0 when both worked.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <nvmesim/firmware/nvme/nvme_spec.h>
#include <nvmesim/firmware/sim/statistics.h>
#include <nvmesim/models/mem/guest_memory.h>
#include <nvmesim/models/nvme/nvme_controller.h>
#include <nvmesim/models/sim/param_settings.h>

using namespace sc_core;
namespace nvme = nvmesim::nvme;
namespace models = nvmesim::models;
namespace stats = nvmesim::stats;

// This platform's address map: RAM, then each controller's BAR0 and BAR2
// (the MSI-X table) in a window of its own, and the MSI doorbell.
constexpr uint64_t kRamSize = 16u << 20;
constexpr uint64_t kWindow = 0xF000'0000, kWindowSize = 0x10'0000, kBar2Offset = 0x1'0000, kBarSize = 0x4000;
constexpr uint64_t kMsi = 0xFEE0'0000, kMsiSize = 0x1000;
constexpr unsigned kControllers = 2;
constexpr uint16_t kQueueEntries = 16;
constexpr unsigned kBlocks = 4, kBlockBytes = 4096;

// Routes the drivers' accesses and the controllers' DMA (each side several
// initiators: multi-passthrough sockets). No DMI.
struct Router : sc_module {
  tlm_utils::multi_passthrough_target_socket<Router> cpu_in{"cpu_in"}, dma_in{"dma_in"};
  tlm_utils::simple_initiator_socket<Router> ram{"ram"};
  tlm_utils::simple_initiator_socket<Router> bar0_0{"bar0_0"}, bar0_1{"bar0_1"}, bar2_0{"bar2_0"}, bar2_1{"bar2_1"};
  tlm_utils::simple_initiator_socket<Router>* bar0[kControllers] = {&bar0_0, &bar0_1};  // by controller
  tlm_utils::simple_initiator_socket<Router>* bar2[kControllers] = {&bar2_0, &bar2_1};
  sc_event msi;  // an MSI write arrived (the drivers look at their CQs)

  explicit Router(sc_module_name n) : sc_module(n) {
    cpu_in.register_b_transport(this, &Router::route);
    dma_in.register_b_transport(this, &Router::route);
  }
  void route(int, tlm::tlm_generic_payload& p, sc_time& delay) {
    const uint64_t a = p.get_address();
    if (a < kRamSize) return ram->b_transport(p, delay);
    if (a >= kMsi && a < kMsi + kMsiSize && p.is_write()) {
      msi.notify(delay);
      return p.set_response_status(tlm::TLM_OK_RESPONSE);
    }
    const uint64_t c = (a - kWindow) / kWindowSize, base = kWindow + c * kWindowSize;
    if (a >= kWindow && c < kControllers) {
      if (a - base < kBarSize) return forward(*bar0[c], p, delay, base);
      if (a - base >= kBar2Offset && a - base < kBar2Offset + kBarSize)
        return forward(*bar2[c], p, delay, base + kBar2Offset);
    }
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  }
  static void forward(tlm_utils::simple_initiator_socket<Router>& s, tlm::tlm_generic_payload& p, sc_time& delay,
                      uint64_t base) {
    p.set_address(p.get_address() - base);
    s->b_transport(p, delay);
    p.set_address(p.get_address() + base);
  }
};

// A driver for controller `index`: its registers in the index's window,
// its queues and data buffer in its own MiB of RAM.
struct Driver : sc_module {
  tlm_utils::simple_initiator_socket<Driver> socket{"socket"};
  Router& router;
  const unsigned index;
  const bool check_data;  // a RAM backend keeps what was written
  const uint64_t bar0, bar2, asq, acq, id, io_sq, io_cq, data;
  bool ok = false;
  std::string failure;
  uint16_t admin_tail = 0, admin_head = 0, io_tail = 0, io_head = 0, cid = 0;
  bool admin_phase = true, io_phase = true;

  SC_HAS_PROCESS(Driver);
  Driver(sc_module_name n, Router& r, unsigned i, bool check)
      : sc_module(n), router(r), index(i), check_data(check), bar0(kWindow + i * kWindowSize),
        bar2(bar0 + kBar2Offset), asq((i + 1) << 20), acq(asq + 0x1000), id(asq + 0x2000), io_sq(asq + 0x3000),
        io_cq(asq + 0x4000), data(asq + 0x10000) {
    SC_THREAD(run);
  }

  void access(tlm::tlm_command cmd, uint64_t addr, void* p_data, unsigned len) {
    tlm::tlm_generic_payload p;
    p.set_command(cmd);
    p.set_address(addr);
    p.set_data_ptr(static_cast<unsigned char*>(p_data));
    p.set_data_length(len);
    p.set_streaming_width(len);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time delay = SC_ZERO_TIME;
    socket->b_transport(p, delay);
    wait(delay);
    if (!p.is_response_ok()) throw std::runtime_error("bus error at " + std::to_string(addr));
  }
  uint32_t rd32(uint64_t a) { uint32_t v; access(tlm::TLM_READ_COMMAND, a, &v, 4); return v; }
  uint64_t rd64(uint64_t a) { uint64_t v; access(tlm::TLM_READ_COMMAND, a, &v, 8); return v; }
  void wr32(uint64_t a, uint32_t v) { access(tlm::TLM_WRITE_COMMAND, a, &v, 4); }
  void wr64(uint64_t a, uint64_t v) { access(tlm::TLM_WRITE_COMMAND, a, &v, 8); }

  nvme::CompletionEntry submit(nvme::SubmissionEntry c, bool admin) {
    c.cid = ++cid;
    uint16_t& tail = admin ? admin_tail : io_tail;
    access(tlm::TLM_WRITE_COMMAND, (admin ? asq : io_sq) + tail * 64u, &c, 64);
    tail = uint16_t((tail + 1) % kQueueEntries);
    wr32(bar0 + nvme::reg::DOORBELL_BASE + (admin ? 0u : 8u), tail);
    return reap(admin, c.cid);
  }
  nvme::CompletionEntry reap(bool admin, uint16_t want) {
    uint16_t& head = admin ? admin_head : io_head;
    bool& phase = admin ? admin_phase : io_phase;
    for (int tries = 0; tries < 1000; ++tries) {
      nvme::CompletionEntry e;
      access(tlm::TLM_READ_COMMAND, (admin ? acq : io_cq) + head * 16u, &e, 16);
      if (bool(e.status & 1) == phase) {
        head = uint16_t((head + 1) % kQueueEntries);
        if (head == 0) phase = !phase;
        wr32(bar0 + nvme::reg::DOORBELL_BASE + (admin ? 4u : 12u), head);
        if (e.cid != want) throw std::runtime_error("completion for cid " + std::to_string(e.cid));
        return e;
      }
      wait(sc_time(100, SC_US), router.msi);  // an interrupt (either controller's) or look again
    }
    throw std::runtime_error("no completion for cid " + std::to_string(want));
  }
  void check(const nvme::CompletionEntry& e, const char* what) {
    if (e.status >> 1) throw std::runtime_error(std::string(what) + " failed, status " + std::to_string(e.status >> 1));
  }

  void run() {
    try {
      bring_up();
      io();
      ok = true;
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  void bring_up() {
    const uint64_t cap = rd64(bar0 + nvme::reg::CAP);
    for (uint32_t v = 0; v < 2; ++v) {  // MSI-X vectors 0 (admin) and 1 (I/O), unmasked
      wr32(bar2 + v * 16, uint32_t(kMsi));
      wr32(bar2 + v * 16 + 4, 0);
      wr32(bar2 + v * 16 + 8, 0x40 + 2 * index + v);
      wr32(bar2 + v * 16 + 12, 0);
    }
    wr32(bar0 + nvme::reg::AQA, uint32_t(kQueueEntries - 1) << 16 | (kQueueEntries - 1));
    wr64(bar0 + nvme::reg::ASQ, asq);
    wr64(bar0 + nvme::reg::ACQ, acq);
    wr32(bar0 + nvme::reg::CC, 1u | 6u << 16 | 4u << 20);  // EN, IOSQES 64 B, IOCQES 16 B
    while (!(rd32(bar0 + nvme::reg::CSTS) & 1)) wait(sc_time(100, SC_NS));
    nvme::SubmissionEntry c{};
    c.opcode = nvme::admin::IDENTIFY;
    c.prp1 = id;
    c.cdw10 = 1;  // Identify Controller
    check(submit(c, true), "Identify Controller");
    uint8_t mdts;
    access(tlm::TLM_READ_COMMAND, id + 77, &mdts, 1);
    std::printf("nvme%u: CAP.MQES %u entries, MDTS %u (%u KiB), ready at %s\n", index, unsigned(cap & 0xFFFF) + 1,
                mdts, mdts ? 4u << mdts : 0u, sc_time_stamp().to_string().c_str());
    c = {};
    c.opcode = nvme::admin::CREATE_IO_CQ;
    c.prp1 = io_cq;
    c.cdw10 = uint32_t(kQueueEntries - 1) << 16 | 1;
    c.cdw11 = 1u << 16 | 2u | 1u;  // vector 1, IEN, physically contiguous
    check(submit(c, true), "Create I/O CQ 1");
    c = {};
    c.opcode = nvme::admin::CREATE_IO_SQ;
    c.prp1 = io_sq;
    c.cdw10 = uint32_t(kQueueEntries - 1) << 16 | 1;
    c.cdw11 = 1u << 16 | 1u;  // CQ 1, physically contiguous
    check(submit(c, true), "Create I/O SQ 1");
  }
  void io() {
    std::vector<uint8_t> block(kBlockBytes);
    const sc_time start = sc_time_stamp();
    for (unsigned b = 0; b < kBlocks; ++b) {
      for (unsigned i = 0; i < kBlockBytes; ++i) block[i] = uint8_t(b * 31 + i + index);
      access(tlm::TLM_WRITE_COMMAND, data, block.data(), kBlockBytes);
      check(submit(rw(nvme::io::WRITE, b), false), "Write");
    }
    for (unsigned b = 0; b < kBlocks; ++b) {
      std::vector<uint8_t> zero(kBlockBytes, 0);
      access(tlm::TLM_WRITE_COMMAND, data, zero.data(), kBlockBytes);
      check(submit(rw(nvme::io::READ, b), false), "Read");
      access(tlm::TLM_READ_COMMAND, data, block.data(), kBlockBytes);
      for (unsigned i = 0; check_data && i < kBlockBytes; ++i)
        if (block[i] != uint8_t(b * 31 + i + index)) throw std::runtime_error("read data differs from written");
    }
    std::printf("nvme%u: %u writes and %u reads in %s%s\n", index, kBlocks, kBlocks,
                (sc_time_stamp() - start).to_string().c_str(), check_data ? ", data verified" : "");
  }
  nvme::SubmissionEntry rw(uint8_t opcode, unsigned block) const {
    nvme::SubmissionEntry c{};
    c.opcode = opcode;
    c.nsid = 1;
    c.prp1 = data;  // one 4 KiB page: PRP1 alone
    c.cdw10 = block * (kBlockBytes / 512);
    c.cdw12 = kBlockBytes / 512 - 1;
    return c;
  }
};

void print_group(const stats::GroupValues& g, const std::string& path) {
  for (const stats::StatValue& s : g.stats)
    for (const auto& [sub, value] : s.entries)
      if (value) std::printf("  %s.%s%s%s = %llu\n", path.c_str(), s.name.c_str(), sub.empty() ? "" : ".",
                             sub.c_str(), (unsigned long long)value);
  for (const stats::GroupValues& child : g.groups) print_group(child, path + "." + child.name);
}

int sc_main(int argc, char* argv[]) {
  // Each controller's settings under its instance name; the command line adds more.
  std::vector<std::string> settings = {
      "nvme0.backend=ram",     "nvme0.capacity=16m", "nvme0.mqes=63",           "nvme0.mdts=2",
      "nvme1.backend=latency", "nvme1.mqes=15",      "nvme1.backend_latency=20us", "nvme1.mdts=5",
      "nvme1.clock=0.5"};
  for (int i = 1; i < argc; ++i) settings.emplace_back(argv[i]);
  models::NvmeControllerModel::Params params[kControllers];
  try {
    for (unsigned c = 0; c < kControllers; ++c) {
      models::NvmeControllerModel::Params& p = params[c];
      models::apply_param_settings("nvme" + std::to_string(c), settings, p, p.engine);
      p.resolve_auto();  // the namespace follows the capacity
    }
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "two_controllers: %s\n", e.what());
    return 2;
  }

  models::GuestMemory ram("ram", kRamSize, sc_time(50, SC_NS));
  Router router("router");
  router.ram.bind(ram.socket);
  models::NvmeControllerModel nvme0("nvme0", params[0]), nvme1("nvme1", params[1]);  // hardware engines
  models::NvmeControllerModel* ctrl[kControllers] = {&nvme0, &nvme1};
  std::vector<std::unique_ptr<Driver>> drivers;
  stats::Group tree;
  for (unsigned c = 0; c < kControllers; ++c) {
    router.bar0[c]->bind(ctrl[c]->bar0_target);
    router.bar2[c]->bind(ctrl[c]->msix_target);
    ctrl[c]->dma_initiator.bind(router.dma_in);
    const bool ram_backend = params[c].backend.kind == models::BackendKind::Ram;
    drivers.push_back(std::make_unique<Driver>(("driver" + std::to_string(c)).c_str(), router, c, ram_backend));
    drivers.back()->socket.bind(router.cpu_in);
    tree.add_group(ctrl[c]->basename(), ctrl[c]->counters());  // "nvme0", "nvme1"
  }
  sc_start(sc_time(10, SC_MS));
  bool ok = true;
  for (const auto& d : drivers)
    if (!d->ok) {
      std::printf("nvme%u FAILED: %s\n", d->index, d->failure.empty() ? "did not finish" : d->failure.c_str());
      ok = false;
    }
  const stats::GroupValues v = tree.values();
  for (const stats::GroupValues& g : v.groups) {
    std::printf("%s statistics (non-zero):\n", g.name.c_str());
    print_group(g, g.name);
  }
  return ok ? 0 : 1;
}
