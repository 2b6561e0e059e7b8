// Test harness for firmware/nvme/controller: guest memory in a vector, recording
// MSI-X and backend, and helpers that play a minimal host driver.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "nvmesim/firmware/nvme/controller.h"
#include "nvmesim/firmware/nvme/eventidx.h"

namespace ctltest {

using namespace nvmesim;
using namespace nvmesim::fw;

class TestEnv : public ControllerEnv {
 public:
  explicit TestEnv(size_t bytes = 8u << 20) : mem(bytes, 0) {}
  bool dma_read(nvmesim::fw::DmaPurpose, uint64_t addr, void* dst, uint32_t len) override {
    if (addr > mem.size() || mem.size() - addr < len) return false;
    std::memcpy(dst, mem.data() + addr, len);
    dma_reads++;
    return true;
  }
  bool dma_write(nvmesim::fw::DmaPurpose, uint64_t addr, const void* src, uint32_t len) override {
    if (addr > mem.size() || mem.size() - addr < len) return false;
    std::memcpy(mem.data() + addr, src, len);
    dma_writes++;
    return true;
  }
  void device_barrier() override { barriers++; }
  void msix(uint16_t vector) override { msix_log.push_back(vector); }
  void backend_submit(const IoRequest& req) override { submitted.push_back(req); }

  uint32_t r32(uint64_t a) const {
    uint32_t v;
    std::memcpy(&v, mem.data() + a, 4);
    return v;
  }
  uint16_t r16(uint64_t a) const {
    uint16_t v;
    std::memcpy(&v, mem.data() + a, 2);
    return v;
  }
  uint64_t r64(uint64_t a) const {
    uint64_t v;
    std::memcpy(&v, mem.data() + a, 8);
    return v;
  }
  void w32(uint64_t a, uint32_t v) { std::memcpy(mem.data() + a, &v, 4); }
  void w64(uint64_t a, uint64_t v) { std::memcpy(mem.data() + a, &v, 8); }

  std::vector<uint8_t> mem;
  std::vector<uint16_t> msix_log;
  std::vector<IoRequest> submitted;
  uint64_t dma_reads = 0, dma_writes = 0, barriers = 0;
};

// Status Field helpers on a CQE status word.
inline uint16_t field(uint16_t status_word) { return uint16_t(status_word >> 1); }
inline uint8_t sct(uint16_t status_word) { return uint8_t((status_word >> 9) & 7); }
inline uint8_t scode(uint16_t status_word) { return uint8_t((status_word >> 1) & 0xFF); }
inline bool dnr(uint16_t status_word) { return (status_word >> 15) & 1; }
inline void check_status(uint16_t status_word, uint8_t want_sct, uint8_t want_sc, bool want_dnr) {
  CHECK(sct(status_word) == want_sct);
  CHECK(scode(status_word) == want_sc);
  CHECK(dnr(status_word) == want_dnr);
}
inline void check_status(const nvme::CompletionEntry& e, uint8_t want_sct, uint8_t want_sc,
                         bool want_dnr) {
  check_status(e.status, want_sct, want_sc, want_dnr);
}

// An Identify command (CNS in CDW10).
inline nvme::SubmissionEntry identify(uint8_t cns, uint32_t nsid, uint64_t prp1,
                                      uint64_t prp2 = 0) {
  nvme::SubmissionEntry c{};
  c.opcode = nvme::admin::IDENTIFY;
  c.nsid = nsid;
  c.prp1 = prp1;
  c.prp2 = prp2;
  c.cdw10 = cns;
  return c;
}

// Guest-physical layout used by the tests (all page aligned, 4 KiB pages).
constexpr uint64_t ASQ = 0x10000;
constexpr uint64_t ACQ = 0x20000;
constexpr uint32_t ADMIN_ENTRIES = 16;
constexpr uint64_t DATA = 0x200000;

struct Harness {
  explicit Harness(ControllerConfig c = ControllerConfig{}) : cfg(c), ctrl(cfg, env) {}

  void enable(uint8_t mps = 0) {
    ctrl.bar0_write(nvme::reg::AQA, nvme::aqa::make(ADMIN_ENTRIES, ADMIN_ENTRIES), 4);
    ctrl.bar0_write(nvme::reg::ASQ, ASQ, 8);
    ctrl.bar0_write(nvme::reg::ACQ, uint32_t(ACQ), 4);
    ctrl.bar0_write(nvme::reg::ACQ + 4, uint32_t(ACQ >> 32), 4);
    auto e = ctrl.bar0_write(nvme::reg::CC, nvme::cc::make(true, mps), 4);
    REQUIRE(e.kind == Bar0WriteEffect::EnableRequested);
    ctrl.complete_enable();
    REQUIRE(ctrl.enabled());
    asq_tail = 0;
    acq_head = 0;
    acq_phase = true;
  }

  uint32_t sq_db(uint16_t qid) const { return nvme::sq_tail_doorbell(qid, cfg.dstrd); }
  uint32_t cq_db(uint16_t qid) const { return nvme::cq_head_doorbell(qid, cfg.dstrd); }

  // Places an admin command, rings, processes; returns the next admin CQE
  // (consumed, CQ head doorbell written) or fails the test if none.
  nvme::CompletionEntry admin(nvme::SubmissionEntry cmd) {
    cmd.cid = next_cid++;
    std::memcpy(env.mem.data() + ASQ + asq_tail * 64, &cmd, 64);
    asq_tail = (asq_tail + 1) % ADMIN_ENTRIES;
    ctrl.bar0_write(sq_db(0), asq_tail, 4);
    ctrl.process_sq(0, 64);
    nvme::CompletionEntry e{};
    REQUIRE(admin_cqe_ready());
    e = pop_admin_cqe();
    REQUIRE(e.cid == cmd.cid);
    return e;
  }
  bool admin_cqe_ready() const {
    return (env.r16(ACQ + acq_head * 16 + 14) & 1) == (acq_phase ? 1 : 0);
  }
  nvme::CompletionEntry pop_admin_cqe() {
    nvme::CompletionEntry e{};
    std::memcpy(&e, env.mem.data() + ACQ + acq_head * 16, 16);
    acq_head = (acq_head + 1) % ADMIN_ENTRIES;
    if (acq_head == 0) acq_phase = !acq_phase;
    ctrl.bar0_write(cq_db(0), acq_head, 4);
    return e;
  }
  // Submits an AER without expecting a completion.
  void submit_aer() {
    nvme::SubmissionEntry cmd{};
    cmd.opcode = nvme::admin::ASYNC_EVENT_REQUEST;
    cmd.cid = next_cid++;
    std::memcpy(env.mem.data() + ASQ + asq_tail * 64, &cmd, 64);
    asq_tail = (asq_tail + 1) % ADMIN_ENTRIES;
    ctrl.bar0_write(sq_db(0), asq_tail, 4);
    ctrl.process_sq(0, 64);
  }

  static nvme::SubmissionEntry create_cq_cmd(uint16_t qid, uint32_t entries, uint64_t base,
                                             uint16_t vector, bool ien = true) {
    nvme::SubmissionEntry c{};
    c.opcode = nvme::admin::CREATE_IO_CQ;
    c.prp1 = base;
    c.cdw10 = nvme::create_queue::cdw10(qid, entries);
    c.cdw11 = nvme::create_queue::cq_cdw11(vector, ien);
    return c;
  }
  static nvme::SubmissionEntry create_sq_cmd(uint16_t qid, uint32_t entries, uint64_t base,
                                             uint16_t cqid) {
    nvme::SubmissionEntry c{};
    c.opcode = nvme::admin::CREATE_IO_SQ;
    c.prp1 = base;
    c.cdw10 = nvme::create_queue::cdw10(qid, entries);
    c.cdw11 = nvme::create_queue::sq_cdw11(cqid);
    return c;
  }
  // I/O queue pair qid: CQ at 0x100000 + qid*0x4000, SQ at +0x2000.
  static uint64_t io_cq_base(uint16_t qid) { return 0x100000 + uint64_t(qid) * 0x4000; }
  static uint64_t io_sq_base(uint16_t qid) { return io_cq_base(qid) + 0x2000; }
  void create_pair(uint16_t qid, uint32_t cq_entries, uint32_t sq_entries, uint16_t vector = 1,
                   bool ien = true) {
    auto e = admin(create_cq_cmd(qid, cq_entries, io_cq_base(qid), vector, ien));
    REQUIRE(field(e.status) == 0);
    e = admin(create_sq_cmd(qid, sq_entries, io_sq_base(qid), qid));
    REQUIRE(field(e.status) == 0);
    io_tail[qid] = 0;
  }
  static nvme::SubmissionEntry read_cmd(uint64_t slba, uint32_t nlb, uint64_t prp1,
                                        uint64_t prp2 = 0) {
    nvme::SubmissionEntry c{};
    c.opcode = nvme::io::READ;
    c.nsid = 1;
    c.prp1 = prp1;
    c.prp2 = prp2;
    c.cdw10 = uint32_t(slba);
    c.cdw11 = uint32_t(slba >> 32);
    c.cdw12 = nlb - 1;
    return c;
  }
  // Writes an SQE at qid's tail (no doorbell); returns its CID.
  uint16_t place_io(uint16_t qid, nvme::SubmissionEntry cmd) {
    cmd.cid = next_cid++;
    const uint32_t size = ctrl.sq_state(qid).size;
    std::memcpy(env.mem.data() + io_sq_base(qid) + io_tail[qid] * 64, &cmd, 64);
    io_tail[qid] = (io_tail[qid] + 1) % size;
    return cmd.cid;
  }
  uint16_t submit_io(uint16_t qid, nvme::SubmissionEntry cmd) {
    const uint16_t cid = place_io(qid, cmd);
    if (shadow != 0) env.w32(shadow + dbbuf_sq_offset(qid, cfg.dstrd), io_tail[qid]);
    ctrl.bar0_write(sq_db(qid), io_tail[qid], 4);
    return cid;
  }
  nvme::CompletionEntry io_cqe(uint16_t qid, uint32_t index) const {
    nvme::CompletionEntry e{};
    std::memcpy(&e, env.mem.data() + io_cq_base(qid) + index * 16, 16);
    return e;
  }

  ControllerConfig cfg;
  TestEnv env;
  Controller ctrl;
  uint32_t asq_tail = 0;
  uint32_t acq_head = 0;
  bool acq_phase = true;
  uint16_t next_cid = 0x100;
  uint32_t io_tail[8] = {};
  uint64_t shadow = 0;  // non-zero: submit_io also stores the tail in the shadow buffer
};

inline nvme::SubmissionEntry dbbuf_cmd(uint64_t shadow, uint64_t eventidx,
                                       uint8_t opcode = nvme::admin::DOORBELL_BUFFER_CONFIG) {
  nvme::SubmissionEntry c{};
  c.opcode = opcode;
  c.prp1 = shadow;
  c.prp2 = eventidx;
  return c;
}

}  // namespace ctltest
