// NvmeControllerModel driven through the root complex like a guest driver
// would: registers, admin and I/O queues in guest memory, MSI-X, notify
// modes, DMA timing and the backends. Each test case builds its own small
// system (one SystemC elaboration per process) and derives every expected
// time from the parameters and the PcieLink functions.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "nvmesim/firmware/nvme/eventidx.h"
#include "nvmesim/firmware/nvme/nvme_spec.h"
#include "nvmesim/models/mem/address_map.h"
#include "nvmesim/models/mem/guest_memory.h"
#include "nvmesim/models/host/host_thread.h"
#include "nvmesim/models/nvme/nvme_controller.h"
#include "nvmesim/models/pcie/pcie_link.h"
#include "nvmesim/models/pcie/pcie_root_complex.h"
#include "nvmesim/platform/config/visitors.h"

using namespace nvmesim;
using namespace nvmesim::models;
using sc_core::SC_NS;
using sc_core::SC_PS;
using sc_core::SC_US;
using sc_core::SC_ZERO_TIME;
using sc_core::sc_time;

namespace {

// Guest-physical layout used by every test (page aligned).
constexpr uint64_t kAsq = 0x10000, kAcq = 0x11000, kIdBuf = 0x20000;
constexpr uint64_t kIoSq = 0x30000, kIoCq = 0x31000, kData = 0x40000, kData2 = 0x42000;
constexpr uint64_t kShadow = 0x50000, kEventIdx = 0x51000;
constexpr uint32_t kAdminEntries = 8, kIoEntries = 16;
constexpr uint32_t kAdminApic = 2, kAdminVector = 0x41, kIoApic = 3, kIoVector = 0x52;

sc_time ns(double v) { return sc_time(v, SC_NS); }

struct Msi {
  uint32_t apic, vector;
  sc_time at;  // absolute arrival time (kernel time + annotated delay)
};

struct RecordingSink : MsiSink {
  std::vector<Msi> msgs;
  void deliver_msi(uint32_t apic_id, uint32_t vector, const sc_time& delay) override {
    msgs.push_back({apic_id, vector, sc_core::sc_time_stamp() + delay});
  }
};

// The CPU side: one thread issuing MMIO through the root complex. Accesses
// start at the thread's present time (delay 0) and return the annotated
// delay without waiting; the body decides when time passes. Catch macros
// stay outside the thread: bodies record, test cases assert after sc_start.
struct Cpu : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Cpu> socket{"socket"};
  std::function<void()> body;
  bool done = false;

  SC_HAS_PROCESS(Cpu);
  explicit Cpu(sc_core::sc_module_name n) : sc_core::sc_module(n) { SC_THREAD(run); }
  void run() {
    if (body) body();
    done = true;
  }

  sc_time access(tlm::tlm_command cmd, uint64_t addr, void* data, unsigned len,
                 tlm::tlm_response_status* status = nullptr) {
    tlm::tlm_generic_payload p;
    p.set_command(cmd);
    p.set_address(addr);
    p.set_data_ptr(static_cast<unsigned char*>(data));
    p.set_data_length(len);
    p.set_streaming_width(len);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time delay = SC_ZERO_TIME;
    socket->b_transport(p, delay);
    if (status) *status = p.get_response_status();
    return delay;
  }
  uint32_t read32(uint64_t addr, sc_time* delay = nullptr) {
    uint32_t v = 0;
    const sc_time d = access(tlm::TLM_READ_COMMAND, addr, &v, 4);
    if (delay) *delay = d;
    return v;
  }
  uint64_t read64(uint64_t addr, sc_time* delay = nullptr) {
    uint64_t v = 0;
    const sc_time d = access(tlm::TLM_READ_COMMAND, addr, &v, 8);
    if (delay) *delay = d;
    return v;
  }
  sc_time write32(uint64_t addr, uint32_t v) { return access(tlm::TLM_WRITE_COMMAND, addr, &v, 4); }
  sc_time write64(uint64_t addr, uint64_t v) { return access(tlm::TLM_WRITE_COMMAND, addr, &v, 8); }
};

struct BenchParams {
  PcieLinkParams link = nvmesim::platform::default_params<PcieLinkParams>();
  HostThread::Params thread;
  NvmeControllerModel::Params nvme = nvmesim::platform::default_params<NvmeControllerModel::Params>();
  sc_time memory_latency = SC_ZERO_TIME;
  BenchParams() {
    link.mode = PcieMode::Emulated;
    link.host_copy_gbps = 10.0;
    link.host_access_overhead_ns = 20.0;
    thread.dispatch_latency = ns(2000);
    thread.dispatch_cost = ns(300);
    nvme.firmware.mqes = 1023;
    nvme.firmware.max_io_queues = 4;
    nvme.firmware.msix_vectors = 5;
    nvme.firmware.dbbuf = fw::DbbufMode::Spec;
    nvme.firmware.guest_memory_bytes = 16u << 20;
    nvme.cmd_cost = ns(700);
    nvme.cqe_cost = SC_ZERO_TIME;
    nvme.enable_latency = ns(1500);
  }
};

// GuestMemory + PcieRootComplex + HostThread + NvmeControllerModel + CPU.
// `prefix` lets two benches live in one elaboration.
struct Bench {
  BenchParams params;
  GuestMemory mem;
  PcieRootComplex rc;
  HostThread thread;
  NvmeControllerModel nvme;
  Cpu cpu;
  RecordingSink sink;
  uint16_t admin_tail = 0, admin_cq_head = 0, io_tail = 0, io_cq_head = 0;
  bool admin_phase = true, io_phase = true;
  uint16_t next_cid = 1;

  explicit Bench(const BenchParams& p, const std::string& prefix = "")
      : params(p),
        mem((prefix + "mem").c_str(), 16u << 20, p.memory_latency),
        rc((prefix + "rc").c_str(), PcieLink(p.link)),
        thread((prefix + "thread").c_str(), p.thread),
        nvme((prefix + "nvme").c_str(), p.nvme, {&thread}, rc.link()),
        cpu((prefix + "cpu").c_str()) {
    cpu.socket.bind(rc.cpu_target);
    rc.bar0_initiator.bind(nvme.bar0_target);
    rc.msix_bar_initiator.bind(nvme.msix_target);
    rc.config_initiator.bind(nvme.config_target);
    rc.mem_initiator.bind(mem.socket);
    nvme.dma_initiator.bind(rc.dma_target);
    rc.bind_msi_sink(sink);
    nvme.program_msix_vector(0, msi_address(kAdminApic), kAdminVector);
    nvme.program_msix_vector(1, msi_address(kIoApic), kIoVector);
  }

  const PcieLink& link() const { return rc.link(); }
  uint32_t dstrd() const { return params.nvme.firmware.dstrd; }
  uint64_t sq_db(uint16_t q) const { return kBar0Base + nvme::sq_tail_doorbell(q, dstrd()); }
  uint64_t cq_db(uint16_t q) const { return kBar0Base + nvme::cq_head_doorbell(q, dstrd()); }

  // CC.EN handshake; returns when RDY is (or should be) set.
  void enable() {
    cpu.write32(kBar0Base + nvme::reg::AQA, nvme::aqa::make(kAdminEntries, kAdminEntries));
    cpu.write64(kBar0Base + nvme::reg::ASQ, kAsq);
    cpu.write64(kBar0Base + nvme::reg::ACQ, kAcq);
    const sc_time d = cpu.write32(kBar0Base + nvme::reg::CC, nvme::cc::make(true, 0));
    sc_core::wait(d + params.nvme.enable_latency);
    sc_core::wait(SC_ZERO_TIME);  // the enable method runs in the same time step
  }

  // Place an admin command in the SQ (no doorbell).
  void put_admin(nvme::SubmissionEntry c) {
    c.cid = next_cid++;
    std::memcpy(mem.ptr(kAsq + admin_tail * 64u, 64), &c, 64);
    admin_tail = uint16_t((admin_tail + 1) % kAdminEntries);
  }
  nvme::CompletionEntry cqe_at(uint64_t base, uint32_t index) {
    nvme::CompletionEntry e;
    std::memcpy(&e, mem.ptr(base + index * 16u, 16), 16);
    return e;
  }
  // Submit, ring, let the controller work, consume the CQE and ring the CQ
  // head. Returns the CQE (status field 0xFFFF when none arrived).
  nvme::CompletionEntry admin(const nvme::SubmissionEntry& c) {
    put_admin(c);
    sc_core::wait(cpu.write32(sq_db(0), admin_tail));
    sc_core::wait(sc_time(100, SC_US));
    nvme::CompletionEntry e = cqe_at(kAcq, admin_cq_head);
    if (bool(e.status & 1) != admin_phase) {
      e.status = 0xFFFF;
      return e;
    }
    admin_cq_head = uint16_t((admin_cq_head + 1) % kAdminEntries);
    if (admin_cq_head == 0) admin_phase = !admin_phase;
    sc_core::wait(cpu.write32(cq_db(0), admin_cq_head));
    return e;
  }
  nvme::CompletionEntry create_io_queues(bool ien = true) {
    nvme::SubmissionEntry c{};
    c.opcode = nvme::admin::CREATE_IO_CQ;
    c.prp1 = kIoCq;
    c.cdw10 = nvme::create_queue::cdw10(1, kIoEntries);
    c.cdw11 = nvme::create_queue::cq_cdw11(1, ien);
    const auto e = admin(c);
    if (e.status >> 1) return e;
    c = {};
    c.opcode = nvme::admin::CREATE_IO_SQ;
    c.prp1 = kIoSq;
    c.cdw10 = nvme::create_queue::cdw10(1, kIoEntries);
    c.cdw11 = nvme::create_queue::sq_cdw11(1);
    return admin(c);
  }
  nvme::CompletionEntry dbbuf_config() {
    nvme::SubmissionEntry c{};
    c.opcode = nvme::admin::DOORBELL_BUFFER_CONFIG;
    c.prp1 = kShadow;
    c.prp2 = kEventIdx;
    return admin(c);
  }
  // An I/O command in SQ 1 (no doorbell).
  void put_io(uint8_t opcode, uint64_t slba, uint32_t nlb, uint64_t buffer) {
    nvme::SubmissionEntry c{};
    c.opcode = opcode;
    c.cid = next_cid++;
    c.nsid = 1;
    c.prp1 = buffer;
    c.cdw10 = uint32_t(slba);
    c.cdw11 = uint32_t(slba >> 32);
    c.cdw12 = nlb - 1;
    std::memcpy(mem.ptr(kIoSq + io_tail * 64u, 64), &c, 64);
    io_tail = uint16_t((io_tail + 1) % kIoEntries);
  }
  // Consume one I/O CQE if its phase matches; returns its status field or -1.
  int take_io_cqe() {
    const nvme::CompletionEntry e = cqe_at(kIoCq, io_cq_head);
    if (bool(e.status & 1) != io_phase) return -1;
    io_cq_head = uint16_t((io_cq_head + 1) % kIoEntries);
    if (io_cq_head == 0) io_phase = !io_phase;
    return e.status >> 1;
  }
};

void run(Cpu& cpu) {
  sc_core::sc_start();
  REQUIRE(cpu.done);
}

nvme::SubmissionEntry identify_controller() {
  nvme::SubmissionEntry c{};
  c.opcode = nvme::admin::IDENTIFY;
  c.prp1 = kIdBuf;
  c.cdw10 = nvme::cns::CONTROLLER;
  return c;
}

}  // namespace

TEST_CASE("nvme model: registers through the root complex, CSTS.RDY after the enable latency",
          "[nvme_model]") {
  BenchParams p;
  p.link.mode = PcieMode::Link;  // a read costs the link's round trip
  p.nvme.firmware.mqes = 255;
  p.nvme.firmware.dstrd = 2;
  p.nvme.enable_latency = ns(1234);
  Bench b(p);
  uint64_t cap = 0;
  uint32_t vs = 0, csts_before = 0, csts_at = 0, csts_idle = 0;
  sc_time cap_delay, cc_delay, cc_time, rdy_time;
  b.cpu.body = [&] {
    cap = b.cpu.read64(kBar0Base + nvme::reg::CAP, &cap_delay);
    vs = b.cpu.read32(kBar0Base + nvme::reg::VS);
    b.cpu.write32(kBar0Base + nvme::reg::AQA, nvme::aqa::make(kAdminEntries, kAdminEntries));
    b.cpu.write64(kBar0Base + nvme::reg::ASQ, kAsq);
    b.cpu.write64(kBar0Base + nvme::reg::ACQ, kAcq);
    csts_idle = b.cpu.read32(kBar0Base + nvme::reg::CSTS);
    sc_core::wait(ns(1000));
    cc_time = sc_core::sc_time_stamp();
    cc_delay = b.cpu.write32(kBar0Base + nvme::reg::CC, nvme::cc::make(true, 0));
    // The write reaches the controller cc_delay after it was issued; RDY
    // follows enable_latency later.
    rdy_time = cc_time + cc_delay + p.nvme.enable_latency;
    sc_core::wait(rdy_time - sc_time(1, SC_PS) - sc_core::sc_time_stamp());
    csts_before = b.cpu.read32(kBar0Base + nvme::reg::CSTS);
    sc_core::wait(sc_time(1, SC_PS));
    sc_core::wait(SC_ZERO_TIME);  // the enable method shares the time step
    csts_at = b.cpu.read32(kBar0Base + nvme::reg::CSTS);
  };
  run(b.cpu);
  CHECK(nvme::cap::mqes(cap) == 255);
  CHECK(nvme::cap::dstrd(cap) == 2);
  CHECK(nvme::cap::cqr(cap) == 1);
  CHECK(vs == 0x00010300);  // 1.3.0
  CHECK(cap_delay == b.link().mmio_time(false, 8));
  CHECK(cap_delay == ns(700));  // the read round trip
  CHECK(cc_delay == b.link().mmio_time(true, 4));
  CHECK(csts_idle == 0);
  CHECK((csts_before & nvme::csts::RDY) == 0);
  CHECK((csts_at & nvme::csts::RDY) == 1);
  CHECK(b.nvme.firmware().enabled());
  CHECK(rdy_time == ns(1000) + b.link().mmio_time(true, 4) + ns(1234));
}

TEST_CASE("nvme model: PCI config space identity and class code", "[nvme_model]") {
  BenchParams p;
  Bench b(p);
  uint32_t id = 0, class_rev = 0, bar0 = 0;
  b.cpu.body = [&] {
    id = b.cpu.read32(kEcamBase + 0x00);
    class_rev = b.cpu.read32(kEcamBase + 0x08);
    bar0 = b.cpu.read32(kEcamBase + 0x10);
  };
  run(b.cpu);
  CHECK((id & 0xFFFF) == 0x1B36);  // QEMU's vendor id by default
  CHECK((id >> 16) == 0x5845);
  CHECK((class_rev >> 8) == 0x010802);  // mass storage / NVM / NVMe
  CHECK((bar0 & ~0xFu) == uint32_t(kBar0Base));
}

TEST_CASE("nvme model: vendor dbbuf device shows vendor id 0x1AE0 in config space and Identify",
          "[nvme_model]") {
  BenchParams p;
  // The platform pairs the vendor extension with Google's vendor id (the qemu-devel
  // thread 'nvme: support Google vendor extension'; platform/system/system.cpp); the model shows whatever the firmware config says.
  p.nvme.firmware.dbbuf = fw::DbbufMode::Vendor;
  p.nvme.firmware.pci_vendor_id = nvme::PCI_VENDOR_VENDOR_EXT;
  Bench b(p);
  uint32_t id = 0;
  nvme::CompletionEntry e{};
  b.cpu.body = [&] {
    id = b.cpu.read32(kEcamBase + 0x00);
    b.enable();
    e = b.admin(identify_controller());
  };
  run(b.cpu);
  CHECK((id & 0xFFFF) == 0x1AE0);
  REQUIRE((e.status >> 1) == 0);
  uint16_t vid = 0, oacs = 0;
  std::memcpy(&vid, b.mem.ptr(kIdBuf + nvme::id_ctrl::VID, 2), 2);
  std::memcpy(&oacs, b.mem.ptr(kIdBuf + nvme::id_ctrl::OACS, 2), 2);
  CHECK(vid == 0x1AE0);
  CHECK(oacs == 0);  // no standard Doorbell Buffer Config in vendor mode
}

TEST_CASE("nvme model: Identify through the admin queue, deferred: CQE, data and MSI-X timing",
          "[nvme_model]") {
  BenchParams p;
  p.nvme.firmware.dstrd = 1;
  // cmd_cost/cqe_cost 0 here: where the model charges them is covered by
  // the timing cases at the end of this file.
  p.nvme.cmd_cost = SC_ZERO_TIME;
  Bench b(p);
  sc_time t_doorbell, before_dispatch;
  size_t msgs_before_dispatch = 1;
  uint16_t phase_early = 0;
  b.cpu.body = [&] {
    b.enable();
    b.put_admin(identify_controller());
    t_doorbell = sc_core::sc_time_stamp();
    b.cpu.write32(b.sq_db(0), b.admin_tail);
    // Nothing happens before the host thread is dispatched.
    sc_core::wait(p.thread.dispatch_latency);
    before_dispatch = sc_core::sc_time_stamp();
    msgs_before_dispatch = b.sink.msgs.size();
    phase_early = b.cqe_at(kAcq, 0).status & 1;
    sc_core::wait(sc_time(50, SC_US));
  };
  run(b.cpu);
  CHECK(msgs_before_dispatch == 0);
  CHECK(phase_early == 0);
  const nvme::CompletionEntry e = b.cqe_at(kAcq, 0);
  CHECK(e.status == 1);  // phase 1, success
  CHECK(e.cid == 1);
  CHECK(e.sq_id == 0);
  CHECK(e.sq_head == 1);
  uint16_t vid = 0;
  uint32_t ver = 0;
  std::memcpy(&vid, b.mem.ptr(kIdBuf + nvme::id_ctrl::VID, 2), 2);
  std::memcpy(&ver, b.mem.ptr(kIdBuf + nvme::id_ctrl::VER, 4), 4);
  CHECK(vid == 0x1B36);
  CHECK(ver == 0x00010300);
  REQUIRE(b.sink.msgs.size() == 1);
  CHECK(b.sink.msgs[0].apic == kAdminApic);
  CHECK(b.sink.msgs[0].vector == kAdminVector);
  // Doorbell write reaches BAR0 after the posted MMIO; the host thread wakes
  // dispatch_latency later and spends dispatch_cost; then: SQE fetch (64 B
  // read), Identify data (4 KiB write), CQE (16 B write), MSI-X (4 B write).
  const PcieLink& l = b.link();
  const sc_time expected = t_doorbell + l.mmio_time(true, 4) + p.thread.dispatch_latency +
                           p.thread.dispatch_cost + l.read_time(64) + l.write_time(4096) +
                           l.write_time(16) + l.write_time(4);
  CHECK(b.sink.msgs[0].at == expected);
  CHECK(b.sink.msgs[0].at == t_doorbell + ns(20 + 2000 + 300 + 26.4 + 429.6 + 21.6 + 20.4));
  CHECK(b.thread.dispatches() == 1);
  CHECK(b.nvme.counters().msix_sent == 1);
  CHECK(b.nvme.counters().dma_reads == 1);
  CHECK(b.nvme.counters().dma_writes == 2);
}

TEST_CASE("nvme model: a masked MSI-X vector is held in the PBA and sent when unmasked",
          "[nvme_model]") {
  BenchParams p;
  p.nvme.cmd_cost = SC_ZERO_TIME;
  Bench b(p);
  uint32_t control_masked = 0, pba_pending = 0, pba_after = 0, data_read = 0;
  size_t msgs_while_masked = 1;
  sc_time t_unmask, unmask_delay;
  b.cpu.body = [&] {
    b.enable();
    // Mask vector 0 through BAR2: entry 0's Vector Control word at +12.
    sc_core::wait(b.cpu.write32(kBar2Base + 12, 1));
    control_masked = b.cpu.read32(kBar2Base + 12);
    data_read = b.cpu.read32(kBar2Base + 8);
    b.admin(identify_controller());
    msgs_while_masked = b.sink.msgs.size();
    pba_pending = b.cpu.read32(kBar2Base + 0x2000);
    t_unmask = sc_core::sc_time_stamp();
    unmask_delay = b.cpu.write32(kBar2Base + 12, 0);
    pba_after = b.cpu.read32(kBar2Base + 0x2000);
  };
  run(b.cpu);
  CHECK(control_masked == 1);
  CHECK(data_read == kAdminVector);
  CHECK(msgs_while_masked == 0);
  CHECK(pba_pending == 1);
  CHECK(b.nvme.counters().msix_masked == 1);
  CHECK(pba_after == 0);
  REQUIRE(b.sink.msgs.size() == 1);
  CHECK(b.sink.msgs[0].vector == kAdminVector);
  CHECK(b.sink.msgs[0].apic == kAdminApic);
  // Sent from the unmasking write: it reaches BAR2 after the posted MMIO,
  // the message then crosses the link.
  CHECK(b.sink.msgs[0].at == t_unmask + b.link().mmio_time(true, 4) + b.link().write_time(4));
  // The message is the device's: the CPU's posted write does not wait for it.
  CHECK(unmask_delay == b.link().mmio_time(true, 4));
}

namespace {
// One 4 KiB Read on SQ 1 of the null backend, deferred notify. Returns the
// MSI-X arrival and the doorbell time through the out parameters.
struct NullReadRun {
  sc_time t_doorbell;
  int status = -2;
};
void null_read(Bench& b, NullReadRun& r) {
  b.cpu.body = [&b, &r] {
    b.enable();
    b.create_io_queues();
    b.put_io(nvme::io::READ, 8, 8, kData);
    r.t_doorbell = sc_core::sc_time_stamp();
    b.cpu.write32(b.sq_db(1), b.io_tail);
    sc_core::wait(sc_time(50, SC_US));
    r.status = b.take_io_cqe();
  };
}
// The expected MSI-X arrival of null_read: doorbell MMIO, dispatch latency
// and cost, SQE fetch, data to the host (Link mode only: an emulated device
// moves no data for the null backend), the command's CPU time, CQE write,
// MSI-X write.
sc_time null_read_msi(const Bench& b, const NullReadRun& r) {
  const PcieLink& l = b.link();
  const auto& p = b.params;
  return r.t_doorbell + l.mmio_time(true, 4) + p.thread.dispatch_latency +
         p.thread.dispatch_cost + l.read_time(64) + l.write_time(4096) + p.nvme.cmd_cost +
         l.write_time(16) + l.write_time(4);  // the 4 KiB moves in either mode
}
}  // namespace

TEST_CASE("nvme model: null backend Read, emulated vs link DMA timing", "[nvme_model]") {
  BenchParams pe, pl;
  pl.link.mode = PcieMode::Link;
  Bench emu(pe, "emu_"), lnk(pl, "lnk_");
  NullReadRun re, rl;
  null_read(emu, re);
  null_read(lnk, rl);
  sc_core::sc_start();
  REQUIRE(emu.cpu.done);
  REQUIRE(lnk.cpu.done);
  CHECK(re.status == 0);
  CHECK(rl.status == 0);
  // Create I/O CQ, Create I/O SQ, then the Read.
  REQUIRE(emu.sink.msgs.size() == 3);
  REQUIRE(lnk.sink.msgs.size() == 3);
  CHECK(emu.sink.msgs[2].apic == kIoApic);
  CHECK(emu.sink.msgs[2].vector == kIoVector);
  CHECK(emu.sink.msgs[2].at == null_read_msi(emu, re));
  CHECK(lnk.sink.msgs[2].at == null_read_msi(lnk, rl));
  // Emulated: 20 ns doorbell, 2000 + 300 dispatch, 26.4 SQE, 700 cmd, 429.6 data
  // (20 + 4096 B / 10 GB/s), 21.6 CQE, 20.4 MSI.
  CHECK(emu.sink.msgs[2].at - re.t_doorbell ==
        ns(20 + 2000 + 300 + 26.4 + 700 + 429.6 + 21.6 + 20.4));
  // The two modes differ by exactly the link functions of each transfer.
  const PcieLink &e = emu.link(), &l = lnk.link();
  const sc_time emu_path = emu.sink.msgs[2].at - re.t_doorbell;
  const sc_time lnk_path = lnk.sink.msgs[2].at - rl.t_doorbell;
  CHECK(lnk_path + e.mmio_time(true, 4) + e.read_time(64) + e.write_time(4096) +
            e.write_time(16) + e.write_time(4) ==
        emu_path + l.mmio_time(true, 4) + l.read_time(64) + l.write_time(4096) +
            l.write_time(16) + l.write_time(4));
  CHECK(l.read_time(64) > e.read_time(64));  // the round trip dominates a link read
}

TEST_CASE("nvme model: sync notify processes inside the doorbell write", "[nvme_model]") {
  BenchParams p;
  p.nvme.notifier.mode = NotifyMode::Sync;
  Bench b(p);
  sc_time t_doorbell, doorbell_delay, t_return;
  int status_in_exit = -2;
  b.cpu.body = [&] {
    b.enable();
    b.create_io_queues();
    b.put_io(nvme::io::READ, 0, 8, kData);
    t_doorbell = sc_core::sc_time_stamp();
    const uint64_t dispatches = b.thread.dispatches();
    doorbell_delay = b.cpu.write32(b.sq_db(1), b.io_tail);
    t_return = sc_core::sc_time_stamp();  // writes land at their time: the exit may wait
    // When the exit returns the CQE is already in memory.
    status_in_exit = b.take_io_cqe();
    if (b.thread.dispatches() != dispatches) status_in_exit = -3;
  };
  run(b.cpu);
  CHECK(status_in_exit == 0);
  const PcieLink& l = b.link();
  // No dispatch latency nor dispatch cost: the vCPU's exit runs the device.
  const sc_time work = l.mmio_time(true, 4) + l.read_time(64) + p.nvme.cmd_cost +
                       l.write_time(4096) + l.write_time(16) + l.write_time(4);
  CHECK((t_return - t_doorbell) + doorbell_delay == work);
  REQUIRE(b.sink.msgs.size() == 3);
  CHECK(b.sink.msgs[2].at == t_doorbell + work);
}

TEST_CASE("nvme model: latency backend completes its latency after the submission",
          "[nvme_model]") {
  BenchParams p;
  p.nvme.backend.kind = BackendKind::Latency;
  p.nvme.backend.latency = ns(10000);
  p.nvme.cmd_cost = SC_ZERO_TIME;  // keep the completion time to the backend's latency alone
  Bench b(p);
  sc_time t_doorbell;
  int status = -2;
  uint32_t in_flight_mid = 0;
  b.cpu.body = [&] {
    b.enable();
    b.create_io_queues();
    b.put_io(nvme::io::READ, 0, 8, kData);
    t_doorbell = sc_core::sc_time_stamp();
    b.cpu.write32(b.sq_db(1), b.io_tail);
    sc_core::wait(ns(8000));
    in_flight_mid = b.nvme.backend().in_flight();
    sc_core::wait(sc_time(50, SC_US));
    status = b.take_io_cqe();
  };
  run(b.cpu);
  CHECK(status == 0);
  CHECK(in_flight_mid == 1);
  CHECK(b.nvme.backend().completed() == 1);
  const PcieLink& l = b.link();
  // Submitted after the SQE fetch and the data copy; done `latency` later;
  // the backend's completion wakes the sleeping host thread (another
  // dispatch latency and cost), which writes the CQE and the MSI-X.
  const sc_time submit = t_doorbell + l.mmio_time(true, 4) + p.thread.dispatch_latency +
                         p.thread.dispatch_cost + l.read_time(64) + l.write_time(4096);
  const sc_time expected = submit + p.nvme.backend.latency + p.thread.dispatch_latency +
                           p.thread.dispatch_cost + l.write_time(16) + l.write_time(4);
  REQUIRE(b.sink.msgs.size() == 3);
  CHECK(b.sink.msgs[2].at == expected);
  CHECK(b.thread.dispatches() == 4);  // 2 admin commands, submission, completion
}

TEST_CASE("nvme model: ram backend returns the bytes written", "[nvme_model]") {
  BenchParams p;
  p.nvme.backend.kind = BackendKind::Ram;
  p.nvme.backend.capacity = 1u << 20;
  p.nvme.firmware.namespace_lbas = (1u << 20) / 512;
  Bench b(p);
  int write_status = -2, read_status = -2, oob_status = -2;
  b.cpu.body = [&] {
    b.enable();
    b.create_io_queues();
    uint8_t* src = b.mem.ptr(kData, 4096);
    for (unsigned i = 0; i < 4096; ++i) src[i] = uint8_t(i * 7 + 3);
    std::memset(b.mem.ptr(kData2, 4096), 0, 4096);
    b.put_io(nvme::io::WRITE, 16, 8, kData);
    b.cpu.write32(b.sq_db(1), b.io_tail);
    sc_core::wait(sc_time(50, SC_US));
    write_status = b.take_io_cqe();
    b.put_io(nvme::io::READ, 16, 8, kData2);
    b.cpu.write32(b.sq_db(1), b.io_tail);
    sc_core::wait(sc_time(50, SC_US));
    read_status = b.take_io_cqe();
    b.put_io(nvme::io::READ, (1u << 20) / 512 - 4, 8, kData2 + 8192);
    b.cpu.write32(b.sq_db(1), b.io_tail);
    sc_core::wait(sc_time(50, SC_US));
    oob_status = b.take_io_cqe();
  };
  run(b.cpu);
  CHECK(write_status == 0);
  CHECK(read_status == 0);
  CHECK(std::memcmp(b.mem.ptr(kData, 4096), b.mem.ptr(kData2, 4096), 4096) == 0);
  CHECK(b.mem.ptr(kData2, 4096)[4095] == uint8_t(4095 * 7 + 3));
  CHECK(oob_status == nvme::status_generic(nvme::sc::LBA_OUT_OF_RANGE));
}

TEST_CASE("nvme model: ioeventfd notifications need the ioeventfd mode, the buffer, an I/O queue",
          "[nvme_model]") {
  BenchParams p;
  p.nvme.notifier.mode = NotifyMode::Ioeventfd;
  Bench b(p);
  bool before_dbbuf = true, admin_sq = true, beyond = true, reg_offset = true;
  bool io_sq = false;
  uint16_t dbbuf_status = 0xFFFF;
  sc_time t_notify;
  int status = -2;
  uint32_t shadow_sq = 0, eventidx_sq = 0, eventidx_cq = 0;
  b.cpu.body = [&] {
    b.enable();
    b.create_io_queues();
    before_dbbuf = b.nvme.ioeventfd_notify(nvme::sq_tail_doorbell(1, 0), SC_ZERO_TIME);
    dbbuf_status = b.dbbuf_config().status >> 1;
    admin_sq = b.nvme.ioeventfd_notify(nvme::sq_tail_doorbell(0, 0), SC_ZERO_TIME);
    beyond = b.nvme.ioeventfd_notify(nvme::sq_tail_doorbell(5, 0), SC_ZERO_TIME);
    reg_offset = b.nvme.ioeventfd_notify(nvme::reg::CC, SC_ZERO_TIME);
    sc_core::wait(sc_time(10, SC_US));
    // The driver's side of the buffer: the command, then the shadow tail;
    // the ioeventfd carries no value.
    b.put_io(nvme::io::READ, 0, 8, kData);
    uint32_t tail = b.io_tail;
    std::memcpy(b.mem.ptr(kShadow + fw::dbbuf_sq_offset(1, 0), 4), &tail, 4);
    t_notify = sc_core::sc_time_stamp();
    io_sq = b.nvme.ioeventfd_notify(nvme::sq_tail_doorbell(1, 0), SC_ZERO_TIME);
    sc_core::wait(sc_time(50, SC_US));
    status = b.take_io_cqe();
    std::memcpy(&shadow_sq, b.mem.ptr(kShadow + fw::dbbuf_sq_offset(1, 0), 4), 4);
    std::memcpy(&eventidx_sq, b.mem.ptr(kEventIdx + fw::dbbuf_sq_offset(1, 0), 4), 4);
    std::memcpy(&eventidx_cq, b.mem.ptr(kEventIdx + fw::dbbuf_cq_offset(1, 0), 4), 4);
  };
  run(b.cpu);
  CHECK(dbbuf_status == 0);
  CHECK_FALSE(before_dbbuf);
  CHECK_FALSE(admin_sq);
  CHECK_FALSE(beyond);
  CHECK_FALSE(reg_offset);
  CHECK(io_sq);
  CHECK(b.nvme.counters().ioeventfd_notifications == 1);
  CHECK(status == 0);
  CHECK(shadow_sq == 1);
  CHECK(eventidx_sq == 1);  // echo: the tail consumed
  CHECK(eventidx_cq == 0);  // echo: the head seen before the CQE
  const PcieLink& l = b.link();
  // Dispatch; shadow tail read (4 B); SQE fetch; SQ EventIdx write and
  // shadow re-read; command cost; the 4 KiB data copy; CQ EventIdx write and
  // shadow head read; CQE; MSI-X.
  const sc_time expected = t_notify + p.thread.dispatch_latency + p.thread.dispatch_cost +
                           l.read_time(4) + l.read_time(64) + l.write_time(4) + l.read_time(4) +
                           p.nvme.cmd_cost + l.write_time(4096) + l.write_time(4) + l.read_time(4) +
                           l.write_time(16) + l.write_time(4);
  REQUIRE(b.sink.msgs.size() == 4);
  CHECK(b.sink.msgs[3].at == expected);
}

TEST_CASE("nvme model: no ioeventfd outside the ioeventfd mode", "[nvme_model]") {
  BenchParams p;
  p.nvme.notifier.mode = NotifyMode::Deferred;
  Bench b(p);
  bool io_sq = true, io_cq = true;
  uint16_t dbbuf_status = 0xFFFF;
  b.cpu.body = [&] {
    b.enable();
    b.create_io_queues();
    dbbuf_status = b.dbbuf_config().status >> 1;
    io_sq = b.nvme.ioeventfd_notify(nvme::sq_tail_doorbell(1, 0), SC_ZERO_TIME);
    io_cq = b.nvme.ioeventfd_notify(nvme::cq_head_doorbell(1, 0), SC_ZERO_TIME);
  };
  run(b.cpu);
  CHECK(dbbuf_status == 0);
  CHECK(b.nvme.firmware().dbbuf_active());
  CHECK_FALSE(io_sq);
  CHECK_FALSE(io_cq);
  CHECK(b.nvme.counters().ioeventfd_notifications == 0);
}

// ---------------------------------------------------------------- where costs land
// Device CPU time is charged as each command is fetched and each CQE posted,
// guest-memory latency applies to DMA, and writes land at their time.

TEST_CASE("nvme model: cqe_cost is charged for admin completions", "[nvme_model]") {
  BenchParams p;
  p.nvme.cmd_cost = ns(700);
  p.nvme.cqe_cost = ns(400);
  Bench b(p);
  sc_time busy_before;
  b.cpu.body = [&] {
    b.enable();
    busy_before = b.thread.busy_time();
    b.admin(identify_controller());
  };
  run(b.cpu);
  const PcieLink& l = b.link();
  // One dispatch: cost, SQE, 4 KiB data, command, CQE (+ its cost), MSI-X.
  CHECK(b.thread.busy_time() - busy_before ==
        p.thread.dispatch_cost + l.read_time(64) + l.write_time(4096) + p.nvme.cmd_cost +
            l.write_time(16) + p.nvme.cqe_cost + l.write_time(4));
}

TEST_CASE("nvme model: the MSI-X follows the command's and the CQE's CPU time",
          "[nvme_model]") {
  BenchParams p;
  p.nvme.cmd_cost = ns(700);
  p.nvme.cqe_cost = ns(400);
  Bench b(p);
  NullReadRun r;
  null_read(b, r);
  run(b.cpu);
  REQUIRE(b.sink.msgs.size() == 3);
  CHECK(b.sink.msgs[2].at == null_read_msi(b, r) + p.nvme.cqe_cost);
}

TEST_CASE("nvme model: DMA through DMI pays the guest memory latency", "[nvme_model]") {
  BenchParams p;
  p.memory_latency = ns(50);
  Bench b(p);
  NullReadRun r;
  null_read(b, r);
  run(b.cpu);
  REQUIRE(b.sink.msgs.size() == 3);
  // SQE fetch and CQE write each touch memory once (the MSI-X does not).
  CHECK(b.sink.msgs[2].at == null_read_msi(b, r) + 2 * p.memory_latency);
}
