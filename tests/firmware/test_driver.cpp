// Guest driver logic against a scripted fake controller: bring-up order,
// SQE/PRP contents, the shadow-doorbell decision, phase tags, tags.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "nvmesim/firmware/guest/driver.h"

using namespace nvmesim;
using fw::Driver;

namespace {

constexpr uint64_t kBase = 0x40000000;  // guest-physical base of the fake's memory
constexpr uint64_t kPage = 4096;

std::string fmt(const char* f, unsigned long long a, unsigned long long b = 0) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

// A DriverEnv over a byte vector with a scripted NVMe register file. Admin
// commands run synchronously when the admin SQ doorbell is written; I/O
// completions are posted by the test with post().
class FakeNvme : public fw::DriverEnv {
 public:
  explicit FakeNvme(uint64_t bytes = 8u << 20) : mem_(bytes, 0) {}
  uint64_t size() const { return mem_.size(); }

  // ---- Knobs.
  uint16_t mqes = 1023;
  uint8_t dstrd = 0, cap_to = 20, mpsmin = 0;
  uint16_t vid = nvme::PCI_VENDOR_QEMU;
  uint16_t oacs = nvme::id_ctrl::OACS_DOORBELL_BUFFER_CONFIG;
  uint8_t mdts = 5;
  uint64_t nsze = 2097152;
  uint16_t nsqa = 63, ncqa = 63;  // Set Features reply, 0's based
  uint16_t dbbuf_status = 0;
  int fail_opcode = -1;           // an admin opcode that fails with fail_status
  uint16_t fail_status = 0;
  unsigned rdy_delay = 0;         // CSTS reads before RDY follows CC.EN=1
  bool never_ready = false, fatal_on_enable = false;
  bool trace_memory = false;

  // ---- Records.
  std::vector<std::pair<uint32_t, uint64_t>> writes;  // BAR0 writes
  std::vector<nvme::SubmissionEntry> admin;            // admin commands executed
  std::vector<std::string> log;                        // ordered env calls
  std::vector<std::pair<uint64_t, uint32_t>> accesses; // guest_memory calls (trace_memory)
  std::vector<bool> dbbuf_pages_zero;                  // per dbbuf config: both pages zero?
  unsigned waits = 0;
  uint64_t waited_ns = 0;

  // ---- Guest memory helpers.
  uint8_t* at(uint64_t gpa, uint64_t len) {
    if (gpa < kBase || gpa + len > kBase + mem_.size()) throw std::runtime_error("gpa out of range");
    return &mem_[gpa - kBase];
  }
  uint64_t rd(uint64_t gpa, unsigned n) {
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;) v = (v << 8) | at(gpa + i, 1)[0];
    return v;
  }
  void wr(uint64_t gpa, uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; ++i) at(gpa + i, 1)[0] = uint8_t(v >> (8 * i));
  }
  nvme::SubmissionEntry sqe(uint64_t gpa) {
    nvme::SubmissionEntry e;
    std::memcpy(&e, at(gpa, 64), 64);
    return e;
  }
  uint64_t shadow() const { return shadow_; }
  uint64_t eventidx() const { return eventidx_; }

  // Device posts a completion on I/O CQ qid.
  void post(uint16_t qid, uint16_t cid, uint16_t sqhd, uint16_t status = 0) {
    Cq& cq = cqs_.at(qid);
    const uint64_t e = cq.base + uint64_t(cq.tail) * 16;
    wr(e, 0, 8);
    wr(e + 8, sqhd, 2);
    wr(e + 10, qid, 2);
    wr(e + 12, cid, 2);
    wr(e + 14, nvme::cqe_status_word(status, cq.phase), 2);  // phase last
    if (++cq.tail == cq.size) {
      cq.tail = 0;
      cq.phase = !cq.phase;
    }
  }

  // ---- DriverEnv.
  uint8_t* guest_memory(uint64_t gpa, uint32_t len) override {
    if (trace_memory) accesses.emplace_back(gpa, len);
    return at(gpa, len);
  }
  uint32_t mmio_read32(uint32_t off) override {
    if (off != nvme::reg::CSTS) return 0;
    if ((cc_ & 1) && !(csts_ & nvme::csts::RDY)) {
      if (fatal_on_enable) return nvme::csts::CFS;
      if (never_ready) return 0;
      if (countdown_ > 0) --countdown_;
      else csts_ |= nvme::csts::RDY;
    }
    return csts_;
  }
  uint64_t mmio_read64(uint32_t off) override {
    if (off != nvme::reg::CAP) return 0;
    return nvme::cap::make(mqes, true, cap_to, dstrd, mpsmin, 4);
  }
  void mmio_write32(uint32_t off, uint32_t v) override {
    writes.emplace_back(off, v);
    if (off == nvme::reg::CC) {
      if ((v & 1) && !(cc_ & 1)) {
        countdown_ = rdy_delay;
        asq_head_ = 0;
        acq_tail_ = 0;
        acq_phase_ = true;
      }
      if (!(v & 1)) {
        csts_ &= ~nvme::csts::RDY;
        cqs_.clear();
        dbbuf_on_ = false;
      }
      cc_ = v;
    } else if (off == nvme::reg::AQA) {
      aqa_ = v;
    } else if (off >= nvme::reg::DOORBELL_BASE) {
      log.push_back(fmt("mmio 0x%llx=%llu", off, v));
      const uint32_t idx = (off - nvme::reg::DOORBELL_BASE) / (4u << dstrd);
      if (idx == 0) run_admin(v);
    }
  }
  void mmio_write64(uint32_t off, uint64_t v) override {
    writes.emplace_back(off, v);
    if (off == nvme::reg::ASQ) asq_ = v;
    if (off == nvme::reg::ACQ) acq_ = v;
  }
  void write_barrier() override { log.push_back("wmb"); }
  void full_barrier() override { log.push_back("mb"); }
  uint32_t load_shadow(uint64_t gpa) override {
    log.push_back(fmt("load_shadow 0x%llx", gpa - shadow_));
    return uint32_t(rd(gpa, 4));
  }
  void store_shadow(uint64_t gpa, uint32_t v) override {
    log.push_back(fmt("store_shadow 0x%llx=%llu", gpa - shadow_, v));
    wr(gpa, v, 4);
  }
  uint32_t load_eventidx(uint64_t gpa) override {
    log.push_back(fmt("load_ei 0x%llx", gpa - eventidx_));
    return uint32_t(rd(gpa, 4));
  }
  void wait_ns(uint64_t ns) override {
    ++waits;
    waited_ns += ns;
  }

 private:
  struct Cq {
    uint64_t base;
    uint32_t size, tail;
    bool phase;
  };

  void run_admin(uint32_t tail) {
    const uint32_t sq_size = (aqa_ & 0xFFF) + 1, cq_size = ((aqa_ >> 16) & 0xFFF) + 1;
    while (asq_head_ != tail) {
      nvme::SubmissionEntry c = sqe(asq_ + uint64_t(asq_head_) * 64);
      asq_head_ = (asq_head_ + 1) % sq_size;
      admin.push_back(c);
      log.push_back(fmt("admin 0x%llx", c.opcode));
      uint16_t status = 0;
      uint32_t dw0 = 0;
      if (c.opcode == fail_opcode) {
        status = fail_status;
      } else if (c.opcode == nvme::admin::IDENTIFY && (c.cdw10 & 0xFF) == nvme::cns::CONTROLLER) {
        std::memset(at(c.prp1, kPage), 0, kPage);
        wr(c.prp1 + nvme::id_ctrl::VID, vid, 2);
        wr(c.prp1 + nvme::id_ctrl::MDTS, mdts, 1);
        wr(c.prp1 + nvme::id_ctrl::OACS, oacs, 2);
        wr(c.prp1 + nvme::id_ctrl::NN, 1, 4);
      } else if (c.opcode == nvme::admin::IDENTIFY && (c.cdw10 & 0xFF) == nvme::cns::NAMESPACE) {
        std::memset(at(c.prp1, kPage), 0, kPage);
        wr(c.prp1 + nvme::id_ns::NSZE, nsze, 8);
        wr(c.prp1 + nvme::id_ns::NLBAF, 1, 1);
        wr(c.prp1 + nvme::id_ns::FLBAS, 1, 1);                 // format 1 in use
        wr(c.prp1 + nvme::id_ns::LBAF0, 12u << 16, 4);          // decoy: 4 KiB
        wr(c.prp1 + nvme::id_ns::LBAF0 + 4, 9u << 16, 4);       // 512 B
      } else if (c.opcode == nvme::admin::SET_FEATURES) {
        dw0 = nsqa | (uint32_t(ncqa) << 16);
      } else if (c.opcode == nvme::admin::DOORBELL_BUFFER_CONFIG ||
                 c.opcode == nvme::admin::VENDOR_DOORBELL_BUFFER_CONFIG) {
        bool zero = true;
        for (uint64_t i = 0; i < kPage; ++i)
          zero = zero && at(c.prp1 + i, 1)[0] == 0 && at(c.prp2 + i, 1)[0] == 0;
        dbbuf_pages_zero.push_back(zero);
        status = dbbuf_status;
        if (!status) {
          shadow_ = c.prp1;
          eventidx_ = c.prp2;
          dbbuf_on_ = true;
        }
      } else if (c.opcode == nvme::admin::CREATE_IO_CQ) {
        cqs_[nvme::create_queue::qid(c.cdw10)] =
            Cq{c.prp1, nvme::create_queue::entries(c.cdw10), 0, true};
      }
      // QEMU-like echo for the admin SQ so a shadow-using admin queue keeps ringing.
      if (dbbuf_on_) wr(eventidx_, asq_head_, 4);
      const uint64_t e = acq_ + uint64_t(acq_tail_) * 16;
      wr(e, dw0, 4);
      wr(e + 4, 0, 4);
      wr(e + 8, asq_head_, 2);
      wr(e + 10, 0, 2);
      wr(e + 12, c.cid, 2);
      wr(e + 14, nvme::cqe_status_word(status, acq_phase_), 2);
      if (++acq_tail_ == cq_size) {
        acq_tail_ = 0;
        acq_phase_ = !acq_phase_;
      }
    }
  }

  std::vector<uint8_t> mem_;
  uint32_t cc_ = 0, csts_ = 0, aqa_ = 0;
  uint64_t asq_ = 0, acq_ = 0;
  unsigned countdown_ = 0;
  uint32_t asq_head_ = 0, acq_tail_ = 0;
  bool acq_phase_ = true;
  bool dbbuf_on_ = false;
  uint64_t shadow_ = 0, eventidx_ = 0;
  std::map<uint16_t, Cq> cqs_;
};

fw::DriverConfig small_config(const FakeNvme& f) {
  fw::DriverConfig c;
  c.io_queues = 1;
  c.io_queue_entries = 64;
  c.admin_queue_entries = 32;
  c.max_outstanding_per_queue = 16;
  c.max_transfer_bytes = 65536;
  c.memory_base = kBase;
  c.memory_bytes = f.size();
  c.bringup_poll_ns = 1000;
  c.bringup_timeout_ns = 1'000'000;
  return c;
}

// The layout small_config() yields (1 queue), page by page.
constexpr uint64_t kAdminSq = kBase, kAdminCq = kBase + 0x1000, kIdentify = kBase + 0x2000,
                   kShadow = kBase + 0x3000, kEventIdx = kBase + 0x4000,
                   kIoSq1 = kBase + 0x5000, kIoCq1 = kBase + 0x6000, kData1 = kBase + 0x7000,
                   kPrp1 = kData1 + 16 * 0x10000;

std::vector<uint8_t> opcodes(const FakeNvme& f) {
  std::vector<uint8_t> v;
  for (const auto& c : f.admin) v.push_back(c.opcode);
  return v;
}

bool log_mentions(const FakeNvme& f, const std::string& what) {
  for (const auto& s : f.log)
    if (s.find(what) != std::string::npos) return true;
  return false;
}

std::vector<std::string> doorbell_path_calls(const FakeNvme& f) {
  std::vector<std::string> v;
  for (const auto& s : f.log)
    if (s.rfind("admin", 0) != 0) v.push_back(s);
  return v;
}

}  // namespace

TEST_CASE("driver: bring-up register writes and admin commands in Linux's order", "[driver]") {
  FakeNvme f;
  Driver d(small_config(f), f);
  const fw::BringUpResult r = d.bring_up();
  REQUIRE(r.ok);
  CHECK(std::string(r.error).empty());

  std::vector<std::pair<uint32_t, uint64_t>> want = {
      {0x14, 0x0},               // CC.EN = 0
      {0x24, 0x001F001F},        // AQA: 32 / 32 entries, 0's based
      {0x28, kAdminSq},          // ASQ
      {0x30, kAdminCq},          // ACQ
      {0x14, 0x00460001},        // CC: EN, MPS 0, IOSQES 6, IOCQES 4, CSS 0
  };
  for (uint64_t i = 1; i <= 6; ++i) {  // six admin commands: SQ0 tail, then CQ0 head
    want.push_back({0x1000, i});
    want.push_back({0x1004, i});
  }
  CHECK(f.writes == want);

  CHECK(opcodes(f) == std::vector<uint8_t>{0x06, 0x06, 0x09, 0x7C, 0x05, 0x01});
  const auto& a = f.admin;
  CHECK(a[0].cdw10 == 1);  // CNS 1: controller
  CHECK(a[0].nsid == 0);
  CHECK(a[0].prp1 == kIdentify);
  CHECK(a[1].cdw10 == 0);  // CNS 0: namespace
  CHECK(a[1].nsid == 1);
  CHECK(a[2].cdw10 == 0x07);
  CHECK(a[2].cdw11 == 0x00000000);  // one SQ, one CQ (0's based)
  CHECK(a[3].prp1 == kShadow);
  CHECK(a[3].prp2 == kEventIdx);
  CHECK(a[4].prp1 == kIoCq1);
  CHECK(a[4].cdw10 == 0x003F0001);  // qid 1, 64 entries
  CHECK(a[4].cdw11 == 0x00010003);  // PC | IEN, vector 1
  CHECK(a[5].prp1 == kIoSq1);
  CHECK(a[5].cdw10 == 0x003F0001);
  CHECK(a[5].cdw11 == 0x00010001);  // PC, CQID 1
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i].cid == i);

  CHECK(r.dbbuf_active);
  CHECK(r.dbbuf_opcode == 0x7C);
  CHECK(r.dbbuf_status == 0);
  CHECK(r.io_queues == 1);
  CHECK(r.io_queue_entries == 64);
  CHECK(r.vendor_id == 0x1B36);
  CHECK(r.namespace_lbas == 2097152);
  CHECK(r.lba_bytes == 512);  // FLBAS selects format 1, not the 4 KiB format 0
  CHECK(r.tags_per_queue == 16);
  CHECK(d.dbbuf_active());
  CHECK(d.shadow_buffer_addr() == kShadow);
  CHECK(d.eventidx_buffer_addr() == kEventIdx);
  CHECK(d.queue_entries() == 64);
  CHECK(d.data_buffer(1, 0) == kData1);
  CHECK(d.data_buffer(1, 15) == kData1 + 15 * 0x10000);
  CHECK(f.dbbuf_pages_zero == std::vector<bool>{true});
  // The admin queue never went through the shadow.
  CHECK_FALSE(log_mentions(f, "shadow"));
  CHECK_FALSE(log_mentions(f, "wmb"));
  CHECK(d.sq_counters(0).updates == 6);
  CHECK(d.sq_counters(0).mmio == 6);
  CHECK(d.sq_counters(0).updates_with_dbbuf == 0);
}

TEST_CASE("driver: doorbell buffer opcode follows vendor id and OACS", "[driver]") {
  struct Row {
    uint16_t vid, oacs;
    bool use_dbbuf;
    std::vector<uint8_t> ops;
    uint8_t opcode;
  };
  const std::vector<Row> rows = {
      {0x1B36, 0x0100, true, {0x06, 0x06, 0x09, 0x7C, 0x05, 0x01}, 0x7C},
      {0x1AE0, 0x0000, true, {0x06, 0x06, 0x09, 0xC0, 0x05, 0x01}, 0xC0},
      {0x1AE0, 0x0100, true, {0x06, 0x06, 0x09, 0xC0, 0x05, 0x01}, 0xC0},
      {0x1B36, 0x00FF, true, {0x06, 0x06, 0x09, 0x05, 0x01}, 0x00},
      {0x1B36, 0x0100, false, {0x06, 0x06, 0x09, 0x05, 0x01}, 0x00},
  };
  for (const Row& row : rows) {
    FakeNvme f;
    f.vid = row.vid;
    f.oacs = row.oacs;
    fw::DriverConfig c = small_config(f);
    c.use_dbbuf = row.use_dbbuf;
    Driver d(c, f);
    const auto r = d.bring_up();
    REQUIRE(r.ok);
    CHECK(opcodes(f) == row.ops);
    CHECK(r.dbbuf_opcode == row.opcode);
    CHECK(r.dbbuf_active == (row.opcode != 0));
  }
}

TEST_CASE("driver: Linux's placement puts Doorbell Buffer Config after the queues", "[driver]") {
  FakeNvme f;
  fw::DriverConfig c = small_config(f);
  c.dbbuf_config_after_queues = true;
  Driver d(c, f);
  REQUIRE(d.bring_up().ok);
  CHECK(opcodes(f) == std::vector<uint8_t>{0x06, 0x06, 0x09, 0x05, 0x01, 0x7C});
  CHECK(d.dbbuf_active());
}

TEST_CASE("driver: granted queue count, MQES clamp, polled CQs, doorbell stride", "[driver]") {
  FakeNvme f;
  f.nsqa = 1;  // 2 SQs
  f.ncqa = 2;  // 3 CQs
  f.mqes = 15; // 16 entries at most
  f.dstrd = 1; // 8-byte doorbell stride
  fw::DriverConfig c = small_config(f);
  c.io_queues = 4;
  c.interrupts = false;
  Driver d(c, f);
  const auto r = d.bring_up();
  REQUIRE(r.ok);
  CHECK(r.io_queues == 2);
  CHECK(r.io_queue_entries == 16);
  CHECK(r.tags_per_queue == 15);
  CHECK(opcodes(f) == std::vector<uint8_t>{0x06, 0x06, 0x09, 0x7C, 0x05, 0x01, 0x05, 0x01});
  CHECK(f.admin[2].cdw11 == 0x00030003);  // asked for 4 + 4
  CHECK(f.admin[4].cdw10 == 0x000F0001);
  CHECK(f.admin[4].cdw11 == 0x00000001);  // PC only: IEN clear, vector 0
  CHECK(f.admin[6].cdw10 == 0x000F0002);
  CHECK(f.admin[7].cdw11 == 0x00020001);  // SQ 2 on CQ 2
  // Admin doorbells at the 8-byte stride.
  CHECK(f.writes[5] == std::make_pair(uint32_t(0x1000), uint64_t(1)));
  CHECK(f.writes[6] == std::make_pair(uint32_t(0x1008), uint64_t(1)));
  CHECK(d.submit(3, fw::IoSpec{}) == -1);
  CHECK(std::string(d.last_submit_error()) != "");

  // qid 2: SQ doorbell 0x1000 + 4*8, shadow/EventIdx entries at 4*8 and 5*8.
  f.log.clear();
  REQUIRE(d.submit(2, fw::IoSpec{}) == 0);
  const auto u = d.ring_sq(2);
  CHECK(u.mmio);
  CHECK(f.log == std::vector<std::string>{"wmb", "load_shadow 0x20", "store_shadow 0x20=1", "mb",
                                          "load_ei 0x20", "mmio 0x1020=1"});
  f.post(2, 0, 1);
  fw::Completion out[4];
  fw::DoorbellUpdate cu;
  f.log.clear();
  CHECK(d.reap(2, out, 4, &cu) == 1);
  CHECK(f.log == std::vector<std::string>{"wmb", "load_shadow 0x28", "store_shadow 0x28=1", "mb",
                                          "load_ei 0x28", "mmio 0x1028=1"});
}

TEST_CASE("driver: polls CSTS.RDY with wait_ns and times out at the smaller limit", "[driver]") {
  SECTION("ready after three polls") {
    FakeNvme f;
    f.rdy_delay = 3;
    Driver d(small_config(f), f);
    REQUIRE(d.bring_up().ok);
    CHECK(f.waits == 3);
    CHECK(f.waited_ns == 3000);
  }
  SECTION("bringup_timeout_ns is the smaller") {
    FakeNvme f;
    f.never_ready = true;
    Driver d(small_config(f), f);  // 1 ms vs CAP.TO 20 * 500 ms
    const auto r = d.bring_up();
    CHECK_FALSE(r.ok);
    CHECK(std::string(r.error).find("CSTS.RDY=1") != std::string::npos);
    CHECK(f.waited_ns == 1'000'000);
    CHECK(f.admin.empty());
  }
  SECTION("CAP.TO is the smaller") {
    FakeNvme f;
    f.never_ready = true;
    f.cap_to = 1;  // 500 ms
    fw::DriverConfig c = small_config(f);
    c.bringup_timeout_ns = 10'000'000'000ull;
    c.bringup_poll_ns = 1'000'000;
    Driver d(c, f);
    CHECK_FALSE(d.bring_up().ok);
    CHECK(f.waits == 500);
  }
  SECTION("CSTS.CFS") {
    FakeNvme f;
    f.fatal_on_enable = true;
    Driver d(small_config(f), f);
    const auto r = d.bring_up();
    CHECK_FALSE(r.ok);
    CHECK(std::string(r.error).find("CFS") != std::string::npos);
  }
}

TEST_CASE("driver: bring-up failures name the cause", "[driver]") {
  SECTION("region too small: nothing touched") {
    FakeNvme f;
    fw::DriverConfig c = small_config(f);
    c.memory_bytes = 256 * 1024;
    Driver d(c, f);
    const auto r = d.bring_up();
    CHECK_FALSE(r.ok);
    CHECK(std::string(r.error).find("too small") != std::string::npos);
    CHECK(f.writes.empty());
    // What it needs: 5 pages + SQ + CQ + 16 x 64 KiB + 16 PRP pages.
    CHECK(Driver::memory_needed(c, 1023, 0) == (5 + 2 + 256 + 16) * kPage);
  }
  SECTION("Create I/O SQ fails") {
    FakeNvme f;
    f.fail_opcode = nvme::admin::CREATE_IO_SQ;
    f.fail_status = nvme::status_specific(nvme::sc_specific::INVALID_QUEUE_SIZE);
    Driver d(small_config(f), f);
    const auto r = d.bring_up();
    CHECK_FALSE(r.ok);
    CHECK(std::string(r.error).find("Create I/O SQ 1") != std::string::npos);
    CHECK(std::string(r.error).find("0x4102") != std::string::npos);
    CHECK(d.submit(1, fw::IoSpec{}) == -1);
  }
  SECTION("Identify Controller fails") {
    FakeNvme f;
    f.fail_opcode = nvme::admin::IDENTIFY;
    f.fail_status = nvme::status_generic(nvme::sc::INTERNAL_ERROR);
    Driver d(small_config(f), f);
    const auto r = d.bring_up();
    CHECK_FALSE(r.ok);
    CHECK(std::string(r.error).find("Identify Controller") != std::string::npos);
    CHECK(f.admin.size() == 1);
  }
  SECTION("MDTS smaller than max_transfer_bytes") {
    FakeNvme f;
    f.mdts = 3;  // 32 KiB
    Driver d(small_config(f), f);
    const auto r = d.bring_up();
    CHECK_FALSE(r.ok);
    CHECK(std::string(r.error).find("MDTS") != std::string::npos);
  }
}

TEST_CASE("driver: Doorbell Buffer Config failure falls back to MMIO on every queue", "[driver]") {
  FakeNvme f;
  f.dbbuf_status = nvme::status_generic(nvme::sc::INVALID_FIELD);
  fw::DriverConfig c = small_config(f);
  c.io_queues = 2;
  c.admin_shadow = true;  // even so: no buffer, no shadow
  Driver d(c, f);
  const auto r = d.bring_up();
  REQUIRE(r.ok);
  CHECK_FALSE(r.dbbuf_active);
  CHECK(r.dbbuf_opcode == 0x7C);
  CHECK(r.dbbuf_status == 0x4002);
  CHECK(r.io_queues == 2);
  CHECK_FALSE(d.dbbuf_active());
  for (uint16_t q = 1; q <= 2; ++q) {
    REQUIRE(d.submit(q, fw::IoSpec{}) == 0);
    const auto u = d.ring_sq(q);
    CHECK(u.updated);
    CHECK(u.mmio);
    CHECK_FALSE(u.via_shadow);
    CHECK(u.old_value == 0);
    CHECK(u.new_value == 1);
    f.post(q, 0, 1);
    fw::Completion out[2];
    fw::DoorbellUpdate cu;
    CHECK(d.reap(q, out, 2, &cu) == 1);
    CHECK(cu.mmio);
    CHECK_FALSE(cu.via_shadow);
    CHECK(d.sq_counters(q).updates_with_dbbuf == 0);
    CHECK(d.cq_counters(q).updates_with_dbbuf == 0);
  }
  CHECK(doorbell_path_calls(f) ==
        std::vector<std::string>{"mmio 0x1000=1", "mmio 0x1004=1", "mmio 0x1000=2",
                                 "mmio 0x1004=2", "mmio 0x1000=3", "mmio 0x1004=3",
                                 "mmio 0x1000=4", "mmio 0x1004=4", "mmio 0x1000=5",
                                 "mmio 0x1004=5", "mmio 0x1000=6", "mmio 0x1004=6",
                                 "mmio 0x1000=7", "mmio 0x1004=7", "mmio 0x1000=8",
                                 "mmio 0x1004=8", "mmio 0x1008=1", "mmio 0x100c=1",
                                 "mmio 0x1010=1", "mmio 0x1014=1"});
}

TEST_CASE("driver: SQE contents and PRPs", "[driver]") {
  FakeNvme f;
  Driver d(small_config(f), f);
  REQUIRE(d.bring_up().ok);
  // Sentinel in tag 2's PRP list page: only the entries used get written.
  std::memset(f.at(kPrp1 + 2 * kPage, kPage), 0xAB, kPage);

  fw::IoSpec rd4k{nvme::io::READ, 0x123456789ull, 8};
  fw::IoSpec rd8k{nvme::io::READ, 100, 16};
  fw::IoSpec rd64k{nvme::io::READ, 4096, 128};
  fw::IoSpec rd12k{nvme::io::WRITE, 7, 24};
  fw::IoSpec flush{nvme::io::FLUSH, 55, 9};
  REQUIRE(d.submit(1, rd4k) == 0);
  REQUIRE(d.submit(1, rd8k) == 1);
  REQUIRE(d.submit(1, rd64k) == 2);
  REQUIRE(d.submit(1, rd12k) == 3);
  REQUIRE(d.submit(1, flush) == 4);
  CHECK(d.sq_tail(1) == 5);
  CHECK(d.outstanding(1) == 5);

  auto e = f.sqe(kIoSq1 + 0 * 64);
  CHECK(e.opcode == 0x02);
  CHECK(e.flags == 0);
  CHECK(e.cid == 0);
  CHECK(e.nsid == 1);
  CHECK(e.prp1 == kData1);
  CHECK(e.prp2 == 0);
  CHECK(e.cdw10 == 0x23456789);
  CHECK(e.cdw11 == 0x1);
  CHECK(e.cdw12 == 7);

  e = f.sqe(kIoSq1 + 1 * 64);
  CHECK(e.cid == 1);
  CHECK(e.prp1 == kData1 + 0x10000);
  CHECK(e.prp2 == kData1 + 0x11000);  // second page
  CHECK(e.cdw10 == 100);
  CHECK(e.cdw11 == 0);
  CHECK(e.cdw12 == 15);

  e = f.sqe(kIoSq1 + 2 * 64);
  const uint64_t data2 = kData1 + 0x20000;
  CHECK(e.cid == 2);
  CHECK(e.prp1 == data2);
  CHECK(e.prp2 == kPrp1 + 2 * kPage);  // PRP list
  CHECK(e.cdw12 == 127);
  for (uint64_t i = 0; i < 15; ++i) CHECK(f.rd(kPrp1 + 2 * kPage + 8 * i, 8) == data2 + (i + 1) * kPage);
  CHECK(f.rd(kPrp1 + 2 * kPage + 8 * 15, 8) == 0xABABABABABABABABull);  // 16th untouched

  e = f.sqe(kIoSq1 + 3 * 64);
  const uint64_t data3 = kData1 + 0x30000;
  CHECK(e.opcode == 0x01);
  CHECK(e.prp2 == kPrp1 + 3 * kPage);
  CHECK(f.rd(kPrp1 + 3 * kPage, 8) == data3 + 0x1000);
  CHECK(f.rd(kPrp1 + 3 * kPage + 8, 8) == data3 + 0x2000);
  CHECK(e.cdw12 == 23);

  e = f.sqe(kIoSq1 + 4 * 64);
  CHECK(e.opcode == 0x00);
  CHECK(e.cid == 4);
  CHECK(e.nsid == 1);
  CHECK(e.prp1 == 0);
  CHECK(e.prp2 == 0);
  CHECK(e.cdw10 == 0);
  CHECK(e.cdw11 == 0);
  CHECK(e.cdw12 == 0);

  // Requests that can never go.
  CHECK(d.submit(1, fw::IoSpec{nvme::io::READ, 0, 129}) == -1);  // 64.5 KiB
  CHECK(std::string(d.last_submit_error()).find("max_transfer_bytes") != std::string::npos);
  CHECK(d.submit(1, fw::IoSpec{nvme::io::READ, 0, 0}) == -1);
  CHECK(d.submit(1, fw::IoSpec{0x80, 0, 1}) == -1);
  CHECK(d.sq_tail(1) == 5);
  CHECK(d.outstanding(1) == 5);
  // submit() does not publish.
  CHECK(f.writes.size() == 5 + 12);
}

TEST_CASE("driver: PRP lists chain across list pages for transfers past 2 MiB", "[driver][prp]") {
  FakeNvme f(24u << 20);
  f.mdts = 0;  // no limit
  fw::DriverConfig c = small_config(f);
  c.max_outstanding_per_queue = 2;
  c.max_transfer_bytes = (4u << 20) + 4096;  // 1025 pages: PRP1 + 1024 list entries
  Driver d(c, f);
  REQUIRE(d.bring_up().ok);
  // Each row: pages in the transfer; where the data pointers sit, by list
  // page, as NVMe 1.3 section 4.3 states it: 512 entries a page, the last
  // entry of a full page pointing to the next page when more entries follow.
  struct Row {
    uint32_t pages;
    std::vector<uint32_t> data_per_list_page;
  };
  const Row rows[] = {
      {513, {512}},            // 512 entries: one list page, no chain
      {514, {511, 2}},         // 513: chain after 511
      {1024, {511, 512}},      // 1023: the second page full, no chain
      {1025, {511, 511, 2}},   // 1024: two chains
  };
  for (const Row& row : rows) {
    INFO(row.pages << " pages");
    const int32_t tag = d.submit(1, fw::IoSpec{nvme::io::READ, 0, row.pages * 8});
    REQUIRE(tag >= 0);
    const auto e = f.sqe(kIoSq1 + uint64_t(d.sq_tail(1) + 63) % 64 * 64);
    const uint64_t data = e.prp1;
    CHECK(data % kPage == 0);
    uint64_t list = e.prp2;
    CHECK(list % kPage == 0);
    uint64_t next_page = 1;
    for (size_t k = 0; k < row.data_per_list_page.size(); ++k) {
      for (uint32_t i = 0; i < row.data_per_list_page[k]; ++i)
        CHECK(f.rd(list + 8 * i, 8) == data + next_page++ * kPage);
      if (k + 1 < row.data_per_list_page.size()) {
        CHECK(row.data_per_list_page[k] == 511);
        const uint64_t chained = f.rd(list + 8 * 511, 8);
        CHECK(chained % kPage == 0);
        CHECK(chained != list);
        list = chained;
      }
    }
    CHECK(next_page == row.pages);
    d.ring_sq(1);
    f.post(1, uint16_t(tag), d.sq_tail(1));
    fw::Completion out[1];
    REQUIRE(d.reap(1, out, 1, nullptr) == 1);
  }
}

namespace {

struct NeedEventRow {
  uint16_t old_value, new_value, eventidx;
  bool linux_rings, inclusive_rings;
};

// Independent statement of both forms: EventIdx in [old, new) resp. [old, new]
// counting mod 2^16.
bool in_window(uint16_t ei, uint16_t nw, uint16_t old, bool inclusive) {
  const uint32_t e = uint16_t(ei - old), d = uint16_t(nw - old);
  return inclusive ? e <= d : e < d;
}

const std::vector<NeedEventRow> kNeedEventRows = {
    {0, 1, 0, true, true},        {0, 1, 1, false, true},      {0, 5, 3, true, true},
    {0, 5, 5, false, true},       {0, 5, 6, false, false},     {4, 5, 3, false, false},
    {10, 20, 15, true, true},     {10, 20, 9, false, false},   {60, 3, 62, true, true},
    {60, 3, 10, false, false},    {60, 3, 3, false, true},     {60, 3, 2, true, true},
    {7, 7, 7, false, true},       {7, 7, 100, false, false},   {65535, 0, 65535, true, true},
    {100, 40, 50, false, false},  {30, 31, 0xFFFF, false, false},
};

// Brings SQ 1's tail to `target` - 1 with throw-away rounds, each completed.
void advance_sq_to(Driver& d, FakeNvme& f, uint16_t target) {
  const uint16_t want = uint16_t((target + 64 - 1) % 64);
  while (d.sq_tail(1) != want) {
    const int32_t tag = d.submit(1, fw::IoSpec{});
    REQUIRE(tag >= 0);
    d.ring_sq(1);
    f.post(1, uint16_t(tag), d.sq_tail(1));
    fw::Completion out[1];
    REQUIRE(d.reap(1, out, 1, nullptr) == 1);
  }
}

void run_need_event_table(fw::NeedEventForm form) {
  FakeNvme f;
  fw::DriverConfig c = small_config(f);
  c.need_event_form = form;
  Driver d(c, f);
  REQUIRE(d.bring_up().ok);
  const bool inclusive = form == fw::NeedEventForm::Inclusive;
  const uint64_t sq_entry_shadow = kShadow + 8, sq_entry_ei = kEventIdx + 8;
  for (const NeedEventRow& row : kNeedEventRows) {
    INFO("old " << row.old_value << " new " << row.new_value << " ei " << row.eventidx);
    const bool expect = inclusive ? row.inclusive_rings : row.linux_rings;
    REQUIRE(expect == in_window(row.eventidx, row.new_value, row.old_value, inclusive));
    advance_sq_to(d, f, row.new_value);
    // Plain values: the counters are a statistics group, not copyable.
    const uint64_t updates_before = d.sq_counters(1).updates, mmio_before = d.sq_counters(1).mmio,
                   suppressed_before = d.sq_counters(1).suppressed;
    f.wr(sq_entry_shadow, row.old_value, 4);
    f.wr(sq_entry_ei, row.eventidx, 4);
    const size_t writes_before = f.writes.size();
    const int32_t tag = d.submit(1, fw::IoSpec{});
    REQUIRE(tag >= 0);
    const auto u = d.ring_sq(1);
    CHECK(u.updated);
    CHECK(u.via_shadow);
    CHECK(u.old_value == row.old_value);  // from the shadow, not the driver
    CHECK(u.new_value == row.new_value);
    CHECK(u.eventidx == row.eventidx);
    CHECK(u.mmio == expect);
    CHECK(u.suppressed == !expect);
    CHECK(f.rd(sq_entry_shadow, 4) == row.new_value);
    if (expect) {
      REQUIRE(f.writes.size() == writes_before + 1);
      CHECK(f.writes.back() == std::make_pair(uint32_t(0x1008), uint64_t(row.new_value)));
    } else {
      CHECK(f.writes.size() == writes_before);
    }
    const auto& after = d.sq_counters(1);
    CHECK(after.updates == updates_before + 1);
    CHECK(after.mmio == mmio_before + (expect ? 1 : 0));
    CHECK(after.suppressed == suppressed_before + (expect ? 0 : 1));
    f.post(1, uint16_t(tag), row.new_value);
    fw::Completion out[1];
    REQUIRE(d.reap(1, out, 1, nullptr) == 1);
  }
  for (uint16_t q : {0, 1}) {
    const auto& sq = d.sq_counters(q);
    const auto& cq = d.cq_counters(q);
    CHECK(sq.updates == sq.mmio + sq.suppressed);
    CHECK(cq.updates == cq.mmio + cq.suppressed);
  }
  CHECK(d.sq_counters(1).updates_with_dbbuf == d.sq_counters(1).updates);
  CHECK(d.sq_counters(1).suppressed > 0);
}

}  // namespace

TEST_CASE("driver: SQ doorbell decision table, Linux form", "[driver]") {
  run_need_event_table(fw::NeedEventForm::Linux);
}

TEST_CASE("driver: SQ doorbell decision table, inclusive form", "[driver]") {
  run_need_event_table(fw::NeedEventForm::Inclusive);
}

TEST_CASE("driver: barrier order on the shadow path", "[driver]") {
  for (bool full : {true, false}) {
    FakeNvme f;
    fw::DriverConfig c = small_config(f);
    c.dbbuf_full_barrier = full;
    Driver d(c, f);
    REQUIRE(d.bring_up().ok);
    f.wr(kEventIdx + 8, 5, 4);  // EventIdx beyond the new tail: suppressed
    f.log.clear();
    REQUIRE(d.submit(1, fw::IoSpec{}) == 0);
    REQUIRE(d.submit(1, fw::IoSpec{}) == 1);
    const auto u = d.ring_sq(1);
    CHECK(u.suppressed);
    std::vector<std::string> sq = {"wmb", "load_shadow 0x8", "store_shadow 0x8=2", "mb",
                                   "load_ei 0x8"};
    if (!full) sq.erase(sq.begin() + 3);
    CHECK(f.log == sq);

    f.post(1, 0, 2);
    f.post(1, 1, 2);
    f.log.clear();
    fw::Completion out[4];
    fw::DoorbellUpdate cu;
    CHECK(d.reap(1, out, 4, &cu) == 2);
    std::vector<std::string> cq = {"wmb", "load_shadow 0xc", "store_shadow 0xc=2", "mb",
                                   "load_ei 0xc", "mmio 0x100c=2"};
    if (!full) cq.erase(cq.begin() + 3);
    CHECK(f.log == cq);
    CHECK(cu.mmio);
    CHECK(cu.old_value == 0);
    CHECK(cu.new_value == 2);
    CHECK(cu.eventidx == 0);
  }
}

TEST_CASE("driver: admin queue uses the shadow only with admin_shadow, after the config", "[driver]") {
  FakeNvme f;
  fw::DriverConfig c = small_config(f);
  c.admin_shadow = true;
  Driver d(c, f);
  REQUIRE(d.bring_up().ok);
  // First shadow access comes after Doorbell Buffer Config completed (and its
  // CQ head went out by MMIO).
  const auto it = std::find(f.log.begin(), f.log.end(), "admin 0x7c");
  REQUIRE(it != f.log.end());
  for (auto p = f.log.begin(); p != it; ++p) CHECK(p->find("shadow") == std::string::npos);
  const std::vector<std::string> after(it, f.log.end());
  CHECK(after == std::vector<std::string>{
                     "admin 0x7c", "mmio 0x1004=4",
                     // Create CQ 1: old 0, new 5, EventIdx 4 (device echo) -> ring
                     "wmb", "load_shadow 0x0", "store_shadow 0x0=5", "mb", "load_ei 0x0",
                     "mmio 0x1000=5", "admin 0x5",
                     // CQ0 head: EventIdx 0 in [0, 5) -> ring
                     "wmb", "load_shadow 0x4", "store_shadow 0x4=5", "mb", "load_ei 0x4",
                     "mmio 0x1004=5",
                     // Create SQ 1
                     "wmb", "load_shadow 0x0", "store_shadow 0x0=6", "mb", "load_ei 0x0",
                     "mmio 0x1000=6", "admin 0x1",
                     // CQ0 head: EventIdx 0 not in [5, 6) -> suppressed
                     "wmb", "load_shadow 0x4", "store_shadow 0x4=6", "mb", "load_ei 0x4"});
  CHECK(d.sq_counters(0).updates == 6);
  CHECK(d.sq_counters(0).updates_with_dbbuf == 2);
  CHECK(d.cq_counters(0).suppressed == 1);
}

TEST_CASE("driver: reap follows the phase tag over several laps", "[driver]") {
  FakeNvme f;
  fw::DriverConfig c = small_config(f);
  c.io_queue_entries = 8;
  c.use_dbbuf = false;
  Driver d(c, f);
  REQUIRE(d.bring_up().ok);
  REQUIRE(d.tags_per_queue() == 7);
  fw::Completion out[16];
  fw::DoorbellUpdate cu;

  CHECK_FALSE(d.completion_ready(1));
  CHECK(d.reap(1, out, 16, &cu) == 0);
  CHECK_FALSE(cu.updated);

  uint16_t head = 0;
  for (int round = 0; round < 5; ++round) {  // 25 CQEs on an 8-entry CQ: 3+ laps
    std::vector<int32_t> tags;
    for (int i = 0; i < 5; ++i) tags.push_back(d.submit(1, fw::IoSpec{}));
    d.ring_sq(1);
    for (int i = 4; i >= 0; --i) f.post(1, uint16_t(tags[i]), d.sq_tail(1), uint16_t(i));
    CHECK(d.completion_ready(1));
    const size_t writes_before = f.writes.size();
    REQUIRE(d.reap(1, out, 16, &cu) == 5);
    for (int i = 0; i < 5; ++i) {
      CHECK(out[i].tag == uint32_t(tags[4 - i]));
      CHECK(out[i].status == 4 - i);
      CHECK(out[i].qid == 1);
    }
    head = uint16_t((head + 5) % 8);
    CHECK(d.cq_head(1) == head);
    CHECK(cu.updated);
    CHECK(cu.new_value == head);
    // One CQ head write per reap call.
    REQUIRE(f.writes.size() == writes_before + 1);
    CHECK(f.writes.back() == std::make_pair(uint32_t(0x100C), uint64_t(head)));  // CQ1HDBL
    // Stale entries from the previous lap do not count.
    CHECK_FALSE(d.completion_ready(1));
    CHECK(d.reap(1, out, 16, &cu) == 0);
    CHECK_FALSE(cu.updated);
    CHECK(d.outstanding(1) == 0);
  }
  CHECK(d.cq_counters(1).updates == 5);
  CHECK(d.cq_counters(1).mmio == 5);

  // `max` bounds a reap; the rest waits for the next call.
  for (int i = 0; i < 4; ++i) d.submit(1, fw::IoSpec{});
  d.ring_sq(1);
  for (uint16_t t = 0; t < 4; ++t) f.post(1, t, d.sq_tail(1));
  CHECK(d.reap(1, out, 3, &cu) == 3);
  CHECK(cu.new_value == (head + 3) % 8);
  CHECK(d.reap(1, out, 3, &cu) == 1);
  CHECK(cu.new_value == (head + 4) % 8);

  // Status field, and a CID that is not outstanding.
  const int32_t t = d.submit(1, fw::IoSpec{});
  d.ring_sq(1);
  f.post(1, 99, d.sq_tail(1));
  f.post(1, uint16_t(t), d.sq_tail(1), 0x4080);
  CHECK(d.reap(1, out, 4, &cu) == 1);
  CHECK(out[0].tag == uint32_t(t));
  CHECK(out[0].status == 0x4080);
  CHECK(d.invalid_completions(1) == 1);
  CHECK(cu.new_value == (head + 6) % 8);
}

TEST_CASE("driver: CQE status word is read before the rest", "[driver]") {
  FakeNvme f;
  Driver d(small_config(f), f);
  REQUIRE(d.bring_up().ok);
  REQUIRE(d.submit(1, fw::IoSpec{}) == 0);
  d.ring_sq(1);
  f.post(1, 0, 1);
  f.trace_memory = true;
  fw::Completion out[2];
  REQUIRE(d.reap(1, out, 2, nullptr) == 1);
  REQUIRE(f.accesses.size() >= 3);
  CHECK(f.accesses[0] == std::make_pair(kIoCq1 + 14, uint32_t(2)));  // phase of CQE 0
  CHECK(f.accesses[1].first == kIoCq1);                               // then its body
  CHECK(f.accesses[2] == std::make_pair(kIoCq1 + 16 + 14, uint32_t(2)));  // phase of CQE 1
}

TEST_CASE("driver: tags recycle and a full SQ or tag set refuses", "[driver]") {
  SECTION("many more I/Os than entries") {
    FakeNvme f;
    fw::DriverConfig c = small_config(f);
    c.io_queue_entries = 8;
    Driver d(c, f);
    REQUIRE(d.bring_up().ok);
    fw::Completion out[8];
    for (int i = 0; i < 1000; ++i) {
      int32_t tags[3];
      for (int32_t& t : tags) {
        t = d.submit(1, fw::IoSpec{nvme::io::WRITE, uint64_t(i), 8});
        REQUIRE(t >= 0);
        REQUIRE(t < 7);
      }
      d.ring_sq(1);
      for (int32_t t : tags) f.post(1, uint16_t(t), d.sq_tail(1));
      REQUIRE(d.reap(1, out, 8, nullptr) == 3);
      REQUIRE(d.outstanding(1) == 0);
    }
    CHECK(d.sq_tail(1) == 3000 % 8);
    CHECK(d.cq_head(1) == 3000 % 8);
  }
  SECTION("SQ full: 7 of 8 slots, freed only by SQHD") {
    FakeNvme f;
    fw::DriverConfig c = small_config(f);
    c.io_queue_entries = 8;
    c.max_outstanding_per_queue = 1023;
    Driver d(c, f);
    REQUIRE(d.bring_up().ok);
    for (int i = 0; i < 7; ++i) REQUIRE(d.submit(1, fw::IoSpec{}) == i);
    CHECK(d.submit(1, fw::IoSpec{}) == -1);
    CHECK(std::string(d.last_submit_error()).empty());
    d.ring_sq(1);
    // Three completions that report SQ head 0: tags free, SQ still full.
    fw::Completion out[8];
    for (uint16_t t = 0; t < 3; ++t) f.post(1, t, 0);
    REQUIRE(d.reap(1, out, 8, nullptr) == 3);
    CHECK(d.outstanding(1) == 4);
    CHECK(d.submit(1, fw::IoSpec{}) == -1);
    f.post(1, 3, 4);  // the device has fetched 4
    REQUIRE(d.reap(1, out, 8, nullptr) == 1);
    CHECK(d.submit(1, fw::IoSpec{}) >= 0);
  }
  SECTION("tags full") {
    FakeNvme f;
    fw::DriverConfig c = small_config(f);
    c.max_outstanding_per_queue = 3;
    Driver d(c, f);
    REQUIRE(d.bring_up().ok);
    for (int i = 0; i < 3; ++i) REQUIRE(d.submit(1, fw::IoSpec{}) == i);
    CHECK(d.submit(1, fw::IoSpec{}) == -1);
    CHECK(d.outstanding(1) == 3);
    d.ring_sq(1);
    f.post(1, 1, 3);
    fw::Completion out[4];
    REQUIRE(d.reap(1, out, 4, nullptr) == 1);
    CHECK(d.submit(1, fw::IoSpec{}) == 1);  // the tag just freed
  }
}

TEST_CASE("driver: reset zeroes the doorbell buffers before configuring them again", "[driver]") {
  FakeNvme f;
  Driver d(small_config(f), f);
  REQUIRE(d.bring_up().ok);
  for (int i = 0; i < 3; ++i) d.submit(1, fw::IoSpec{});
  d.ring_sq(1);
  f.wr(kEventIdx + 8, 2, 4);  // the device moved the SQ EventIdx
  REQUIRE(f.rd(kShadow + 8, 4) == 3);
  REQUIRE(d.outstanding(1) == 3);

  const size_t writes_before = f.writes.size();
  const auto r = d.reset_and_bring_up();
  REQUIRE(r.ok);
  CHECK(r.dbbuf_active);
  CHECK(f.dbbuf_pages_zero == std::vector<bool>{true, true});
  CHECK(f.writes[writes_before] == std::make_pair(uint32_t(0x14), uint64_t(0x00460000)));
  CHECK(f.writes[writes_before + 1] == std::make_pair(uint32_t(0x14), uint64_t(0x00460000)));
  CHECK(f.writes[writes_before + 2] == std::make_pair(uint32_t(0x24), uint64_t(0x001F001F)));
  CHECK(f.writes[writes_before + 5] == std::make_pair(uint32_t(0x14), uint64_t(0x00460001)));
  CHECK(d.outstanding(1) == 0);
  CHECK(d.sq_tail(1) == 0);
  CHECK(d.sq_counters(1).updates == 0);
  // Admin queue restarted from slot 0.
  CHECK(f.writes[writes_before + 6] == std::make_pair(uint32_t(0x1000), uint64_t(1)));
  // And I/O works from a clean shadow.
  f.log.clear();
  REQUIRE(d.submit(1, fw::IoSpec{}) == 0);
  const auto u = d.ring_sq(1);
  CHECK(u.old_value == 0);
  CHECK(u.mmio);
}

namespace {
// One CPU of a guest: forwards to the shared machine and records which
// doorbell writes it made.
class Cpu : public fw::DriverEnv {
 public:
  explicit Cpu(FakeNvme& m) : m_(m) {}
  std::vector<uint32_t> mmio_writes;
  uint8_t* guest_memory(uint64_t gpa, uint32_t len) override { return m_.guest_memory(gpa, len); }
  uint32_t mmio_read32(uint32_t off) override { return m_.mmio_read32(off); }
  uint64_t mmio_read64(uint32_t off) override { return m_.mmio_read64(off); }
  void mmio_write32(uint32_t off, uint32_t v) override {
    mmio_writes.push_back(off);
    m_.mmio_write32(off, v);
  }
  void mmio_write64(uint32_t off, uint64_t v) override {
    mmio_writes.push_back(off);
    m_.mmio_write64(off, v);
  }
  void write_barrier() override { m_.write_barrier(); }
  void full_barrier() override { m_.full_barrier(); }
  uint32_t load_shadow(uint64_t gpa) override { return m_.load_shadow(gpa); }
  void store_shadow(uint64_t gpa, uint32_t v) override { m_.store_shadow(gpa, v); }
  uint32_t load_eventidx(uint64_t gpa) override { return m_.load_eventidx(gpa); }
  void wait_ns(uint64_t ns) override { m_.wait_ns(ns); }

 private:
  FakeNvme& m_;
};
}  // namespace

TEST_CASE("driver: each queue's doorbells go through the CPU attached to it", "[driver]") {
  FakeNvme f;
  fw::DriverConfig c = small_config(f);
  c.io_queues = 2;
  c.use_dbbuf = false;  // every update is an MMIO write
  Cpu boot(f), second(f);
  Driver d(c);
  CHECK_THROWS_AS(d.bring_up(), std::logic_error);  // no CPU for the admin queue yet
  d.attach_cpu(0, boot);
  d.attach_cpu(1, boot);
  d.attach_cpu(2, second);
  REQUIRE(d.bring_up().ok);
  CHECK_FALSE(boot.mmio_writes.empty());
  CHECK(second.mmio_writes.empty());  // bring-up runs on queue 0's CPU
  boot.mmio_writes.clear();
  REQUIRE(d.submit(2, fw::IoSpec{}) >= 0);
  CHECK(d.ring_sq(2).mmio);
  REQUIRE(d.submit(1, fw::IoSpec{}) >= 0);
  CHECK(d.ring_sq(1).mmio);
  CHECK(second.mmio_writes == std::vector<uint32_t>{nvme::sq_tail_doorbell(2, 0)});
  CHECK(boot.mmio_writes == std::vector<uint32_t>{nvme::sq_tail_doorbell(1, 0)});
  CHECK_THROWS_AS(d.attach_cpu(3, second), std::out_of_range);  // no queue 3
}
