// The engine interface (models/engine/device_engine.h): QEMU's engine
// driving a QueueDevice of the test's own (which SQs a pass visits, how
// many commands each, what the commands cost on the thread), and one NVMe
// controller model driven by each engine (QEMU's on a host thread, the
// hardware engine alone) completing the same writes and reads with the
// same data.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tests/models/test_cpu.h"
#include "nvmesim/firmware/nvme/nvme_spec.h"
#include "nvmesim/models/engine/emulation_engine.h"
#include "nvmesim/models/host/host_thread.h"
#include "nvmesim/models/mem/guest_memory.h"
#include "nvmesim/models/nvme/nvme_controller.h"

using namespace nvmesim;
using namespace nvmesim::models;
using sc_core::SC_NS;
using sc_core::SC_ZERO_TIME;
using sc_core::sc_time;

namespace {

sc_time ns(double v) { return sc_time(v, SC_NS); }

// SQs holding `left` commands each; a pass's visit takes up to its budget
// and charges each command to the engine.
struct FakeQueues : QueueDevice {
  DeviceEngine* engine = nullptr;
  std::vector<unsigned> left = std::vector<unsigned>(4, 0);
  std::vector<std::pair<uint16_t, unsigned>> served;  // (SQ, commands) in order
  unsigned passes = 0, passes_with_work = 0;
  unsigned serve_sq(uint16_t qid, unsigned budget) override {
    const unsigned n = std::min(budget, left[qid]);
    left[qid] -= n;
    for (unsigned i = 0; i < n; ++i) engine->charge(EngineOp::Command);
    served.emplace_back(qid, n);
    return n;
  }
  bool sq_has_work(uint16_t qid) const override { return left[qid] != 0; }
  unsigned finish_pass(unsigned, bool&) override { return 0; }
  uint16_t completion_queue_limit() const override { return 4; }
  void pass_ended(unsigned, const sc_time&, const sc_time&, bool progress, unsigned, unsigned) override {
    ++passes;
    passes_with_work += progress;
  }
};

struct Ringer : sc_core::sc_module {
  std::function<void()> body;
  SC_HAS_PROCESS(Ringer);
  explicit Ringer(sc_core::sc_module_name n) : sc_module(n) { SC_THREAD(run); }
  void run() { body(); }
};

}  // namespace

TEST_CASE("device engine: QEMU's engine visits the rung SQs round robin, sq_budget each, charging its thread",
          "[device_engine]") {
  HostThread::Params tp;
  tp.dispatch_latency = ns(1000);
  HostThread thread("mainloop", tp);
  FakeQueues dev;
  EmulationEngine::Params ep;
  ep.notifier.mode = NotifyMode::Deferred;
  ep.notifier.queues = 4;
  ep.command_cost = ns(100);
  ep.sq_budget = 2;
  EmulationEngine engine(dev, ep, {&thread});
  dev.engine = &engine;
  dev.left[1] = 3;
  dev.left[2] = 1;
  Ringer vcpu("vcpu");
  vcpu.body = [&] {
    for (uint16_t q : {1, 2}) {
      sc_time delay = SC_ZERO_TIME;
      engine.mark_sq(q);
      engine.doorbell_written(q, true, delay);
    }
  };
  sc_core::sc_start();
  // Pass 1: SQ 1 (its budget of 2), SQ 2 (its one); pass 2: SQ 1's last;
  // pass 3 finds nothing.
  CHECK(dev.served == std::vector<std::pair<uint16_t, unsigned>>{{1, 2}, {2, 1}, {1, 1}});
  CHECK(dev.passes == 3);
  CHECK(dev.passes_with_work == 2);
  CHECK(thread.dispatches() == 1);
  CHECK(thread.busy_time() == ns(400));  // four commands of 100 ns on the thread
  CHECK(sc_core::sc_time_stamp() == ns(1400));
  CHECK_FALSE(engine.sqs_marked(0));
}

namespace {

constexpr uint64_t kRam = 1u << 20, kBar0 = 0x1000'0000, kMsi = 0x2000'0000;
constexpr uint64_t kAsq = 0x1000, kAcq = 0x2000, kIoSq = 0x4000, kIoCq = 0x5000, kData = 0x10000;
constexpr uint16_t kEntries = 8;

// RAM below kRam, BAR0 at kBar0, MSI writes at kMsi; no DMI.
struct Router : sc_core::sc_module {
  tlm_utils::simple_target_socket<Router> in{"in"}, dma{"dma"};
  tlm_utils::simple_initiator_socket<Router> ram{"ram"}, bar0{"bar0"};
  unsigned msis = 0;
  explicit Router(sc_core::sc_module_name n) : sc_module(n) {
    in.register_b_transport(this, &Router::route);
    dma.register_b_transport(this, &Router::route);
  }
  void route(tlm::tlm_generic_payload& p, sc_time& d) {
    const uint64_t a = p.get_address();
    if (a < kRam) return ram->b_transport(p, d);
    if (a >= kBar0 && a < kBar0 + 0x4000) {
      p.set_address(a - kBar0);
      bar0->b_transport(p, d);
      return p.set_address(a);
    }
    if (a == kMsi) {
      ++msis;
      return p.set_response_status(tlm::TLM_OK_RESPONSE);
    }
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  }
};

using Cpu = nvmesim::test::TestCpu;

NvmeControllerModel::Params ram_controller() {
  NvmeControllerModel::Params p;
  p.backend.kind = BackendKind::Ram;
  p.backend.capacity = 1u << 20;
  p.firmware.max_io_queues = 2;
  p.firmware.dbbuf = fw::DbbufMode::Off;
  p.resolve_auto();
  return p;
}

// One controller, its memory and a CPU; with `thread`, on QEMU's engine.
struct Bench {
  PcieLink link{PcieLinkParams{}};
  GuestMemory mem;
  std::unique_ptr<NvmeControllerModel> nvme;
  Router router;
  Cpu cpu;
  uint16_t tail[2] = {0, 0}, head[2] = {0, 0}, cid = 0;
  bool phase[2] = {true, true};
  std::vector<int> statuses;

  Bench(const std::string& prefix, HostThread* thread, const NvmeControllerModel::Params& params = ram_controller())
      : mem((prefix + "mem").c_str(), kRam, SC_ZERO_TIME),
        router((prefix + "router").c_str()),
        cpu((prefix + "cpu").c_str()) {
    const std::string name = prefix + "nvme";
    if (thread)
      nvme = std::make_unique<NvmeControllerModel>(name.c_str(), params, std::vector<HostThread*>{thread}, link);
    else
      nvme = std::make_unique<NvmeControllerModel>(name.c_str(), params);
    cpu.socket.bind(router.in);
    router.ram.bind(mem.socket);
    router.bar0.bind(nvme->bar0_target);
    nvme->dma_initiator.bind(router.dma);
    nvme->program_msix_vector(0, kMsi, 0x40);
    nvme->program_msix_vector(1, kMsi, 0x41);
  }
  uint64_t db(uint16_t q, bool cq) const { return kBar0 + nvme::reg::DOORBELL_BASE + (2u * q + cq) * 4u; }
  void put(uint16_t q, nvme::SubmissionEntry c) {
    c.cid = ++cid;
    std::memcpy(mem.ptr((q ? kIoSq : kAsq) + tail[q] * 64u, 64), &c, 64);
    tail[q] = uint16_t((tail[q] + 1) % kEntries);
  }
  int take(uint16_t q) {
    nvme::CompletionEntry e;
    std::memcpy(&e, mem.ptr((q ? kIoCq : kAcq) + head[q] * 16u, 16), 16);
    if (bool(e.status & 1) != phase[q]) return -1;
    head[q] = uint16_t((head[q] + 1) % kEntries);
    if (!head[q]) phase[q] = !phase[q];
    return e.status >> 1;
  }
  // Rings queue q's SQ tail, waits, takes what completed.
  void ring(uint16_t q, unsigned expected) {
    cpu.wr32(db(q, false), tail[q]);
    sc_core::wait(sc_time(50, sc_core::SC_US));
    for (unsigned i = 0; i < expected; ++i) statuses.push_back(take(q));
    cpu.wr32(db(q, true), head[q]);
  }
  void bring_up() {
    cpu.wr32(kBar0 + nvme::reg::AQA, nvme::aqa::make(kEntries, kEntries));
    cpu.wr64(kBar0 + nvme::reg::ASQ, kAsq);
    cpu.wr64(kBar0 + nvme::reg::ACQ, kAcq);
    cpu.wr32(kBar0 + nvme::reg::CC, nvme::cc::make(true, 0));
    while (!(cpu.rd32(kBar0 + nvme::reg::CSTS) & nvme::csts::RDY)) sc_core::wait(sc_time(100, SC_NS));
    nvme::SubmissionEntry c{};
    c.opcode = nvme::admin::CREATE_IO_CQ;
    c.prp1 = kIoCq;
    c.cdw10 = nvme::create_queue::cdw10(1, kEntries);
    c.cdw11 = nvme::create_queue::cq_cdw11(1, true);
    put(0, c);
    c = {};
    c.opcode = nvme::admin::CREATE_IO_SQ;
    c.prp1 = kIoSq;
    c.cdw10 = nvme::create_queue::cdw10(1, kEntries);
    c.cdw11 = nvme::create_queue::sq_cdw11(1);
    put(0, c);
    ring(0, 2);
  }
  // 4 KiB (8 LBAs) at LBA slba from or to buffer `index`.
  void io(uint8_t opcode, uint64_t slba, unsigned index) {
    nvme::SubmissionEntry c{};
    c.opcode = opcode;
    c.nsid = 1;
    c.prp1 = kData + index * 4096u;
    c.cdw10 = uint32_t(slba);
    c.cdw12 = 7;
    put(1, c);
  }
  // Writes four 4 KiB patterns, reads them back into four other buffers.
  void write_then_read() {
    bring_up();
    for (unsigned i = 0; i < 4; ++i) {
      std::memset(mem.ptr(kData + i * 4096u, 4096), int(0xA0 + i), 4096);
      io(nvme::io::WRITE, 8 * i, i);
    }
    ring(1, 4);
    for (unsigned i = 0; i < 4; ++i) io(nvme::io::READ, 8 * i, 4 + i);
    ring(1, 4);
  }
  bool read_back() {
    for (unsigned i = 0; i < 4; ++i)
      if (std::memcmp(mem.ptr(kData + i * 4096u, 4096), mem.ptr(kData + (4 + i) * 4096u, 4096), 4096)) return false;
    return true;
  }
};

}  // namespace

TEST_CASE("device engine: one NVMe controller on either engine completes the same writes and reads",
          "[device_engine]") {
  HostThread::Params tp;
  tp.dispatch_latency = ns(2000);
  HostThread thread("mainloop", tp);
  Bench qemu("qemu_", &thread), hw("hw_", nullptr);
  qemu.cpu.body = [&] { qemu.write_then_read(); };
  hw.cpu.body = [&] { hw.write_then_read(); };
  sc_core::sc_start();
  REQUIRE(qemu.cpu.done);
  REQUIRE(hw.cpu.done);
  const std::vector<int> all_ok(10, 0);  // two admin commands, eight I/Os
  CHECK(qemu.statuses == all_ok);
  CHECK(hw.statuses == all_ok);
  CHECK(qemu.read_back());
  CHECK(hw.read_back());
  CHECK(qemu.nvme->firmware().counters().io_commands == 8);
  CHECK(hw.nvme->firmware().counters().io_commands == 8);
  // Each ran on its own engine: the host thread's dispatches, the hardware
  // engine's stage counters (ten commands, ten CQEs, eight hand-offs).
  CHECK(qemu.nvme->hw_engine() == nullptr);
  CHECK(qemu.nvme->engine().host_thread(0) == &thread);
  CHECK(thread.dispatches() >= 3);
  REQUIRE(hw.nvme->hw_engine() != nullptr);
  CHECK(hw.nvme->engine().host_thread(0) == nullptr);
  const stats::GroupValues v = hw.nvme->engine().stats()->values();
  CHECK(v.at("commands") == 10);
  CHECK(v.at("cqes") == 10);
  CHECK(v.at("backend_handoffs") == 8);
  CHECK(qemu.router.msis == hw.router.msis);
}

// QEMU's engine charges an MSI (per message actually sent, by hv.msi's
// path), a backend submission (per I/O handed to the backend) and a backend
// completion (per completion handled) on the thread that does the work. The
// bench's guest does not react to interrupts and the RAM backend completes
// at once, so the runs with and without the costs take the same passes:
// the thread's busy time differs by exactly the costs times their counts.
TEST_CASE("device engine: an MSI, a backend submission and a backend completion each cost the device thread "
          "exactly their setting",
          "[device_engine][host_ops]") {
  const sc_time ioctl = ns(2000), irqfd = ns(170), submit = ns(300), complete = ns(200);
  NvmeControllerModel::Params base = ram_controller();
  NvmeControllerModel::Params by_ioctl = base, by_irqfd = base;
  by_ioctl.msi.path = MsiPath::Ioctl;
  by_ioctl.msi.ioctl_cost = ioctl;
  by_ioctl.msi.irqfd_cost = ns(999);  // not its path: unused
  by_ioctl.backend_submit_cost = submit;
  by_ioctl.backend_complete_cost = complete;
  by_irqfd.msi.path = MsiPath::Irqfd;
  by_irqfd.msi.ioctl_cost = ns(999);
  by_irqfd.msi.irqfd_cost = irqfd;
  HostThread::Params tp;
  tp.dispatch_latency = ns(2000);
  HostThread t0("h0", tp), t1("h1", tp), t2("h2", tp);
  Bench free_("free_", &t0, base), io("ioctl_", &t1, by_ioctl), fd("irqfd_", &t2, by_irqfd);
  for (Bench* b : {&free_, &io, &fd}) b->cpu.body = [b] { b->write_then_read(); };
  sc_core::sc_start();
  for (Bench* b : {&free_, &io, &fd}) {
    REQUIRE(b->cpu.done);
    CHECK(b->statuses == std::vector<int>(10, 0));
    CHECK(b->read_back());
  }
  // The same work everywhere: ten commands (two admin, eight I/Os), as many
  // messages, no masked vector.
  const unsigned msis = free_.router.msis;
  REQUIRE(msis > 0);
  CHECK(io.router.msis == msis);
  CHECK(fd.router.msis == msis);
  CHECK(t0.dispatches() == t1.dispatches());
  // Without the costs the engine keeps no op statistics (the tree is as before).
  CHECK(free_.nvme->engine().stats() == nullptr);
  const sc_time io_extra = msis * ioctl + 8 * submit + 8 * complete;
  CHECK(t1.busy_time() - t0.busy_time() == io_extra);
  CHECK(t2.busy_time() - t0.busy_time() == msis * irqfd);
  // The per-op statistics say the same, count by count.
  REQUIRE(io.nvme->engine().stats() != nullptr);
  const stats::GroupValues v = io.nvme->engine().stats()->values();
  CHECK(v.at("msi") == msis);
  CHECK(v.at("msi_time") == (msis * ioctl).value());
  CHECK(v.at("backend_submits") == 8);
  CHECK(v.at("backend_submit_time") == (8 * submit).value());
  CHECK(v.at("backend_completions") == 8);
  CHECK(v.at("backend_completion_time") == (8 * complete).value());
  CHECK(v.at("commands") == 10);
  CHECK(v.at("command_time") == (10 * base.cmd_cost).value());
  const stats::GroupValues w = fd.nvme->engine().stats()->values();
  CHECK(w.at("msi") == msis);
  CHECK(w.at("msi_time") == (msis * irqfd).value());
  CHECK(w.at("backend_submit_time") == 0);
  // In the controller's own tree, as nvme.host_ops.
  CHECK(io.nvme->counters().values().at("host_ops.msi") == msis);
}
