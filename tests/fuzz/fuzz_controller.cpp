// libFuzzer harness for fw::Controller: the fuzz input is a controller
// configuration followed by a stream of guest actions (BAR0 register and
// doorbell writes, the model's entry points, guest-memory stores, backend
// completions). Built with clang -fsanitize=fuzzer by scripts/fuzz.sh, and
// with g++ + tests/fuzz/replay_main.cpp as the ctest corpus replay.
// Besides the sanitizers, invariants a hostile guest must never break are
// checked after every action; a violation aborts (a finding).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "nvmesim/firmware/nvme/controller.h"
#include "nvmesim/firmware/nvme/eventidx.h"
#include "nvmesim/firmware/nvme/nvme_spec.h"

namespace {

using namespace nvmesim;
using namespace nvmesim::fw;

#define FUZZ_CHECK(cond)                                                         \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__, \
                   __LINE__);                                                    \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

constexpr uint64_t MEM_BYTES = 64 * 1024;  // 16 pages: small, so random addresses hit it
constexpr size_t MAX_ACTIONS = 4096;

// Reads the fuzz input front to back; 0 once exhausted.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : p_(data), n_(size) {}
  bool empty() const { return n_ == 0; }
  uint8_t u8() {
    if (n_ == 0) return 0;
    --n_;
    return *p_++;
  }
  uint16_t u16() { return uint16_t(u8() | (uint16_t(u8()) << 8)); }
  uint32_t u32() { return uint32_t(u16()) | (uint32_t(u16()) << 16); }
  uint64_t u64() { return uint64_t(u32()) | (uint64_t(u32()) << 32); }
  // A guest-physical address: mostly inside the 64 KiB memory, page aligned
  // or not, sometimes just past it or anywhere in 64 bits.
  uint64_t addr() {
    const uint8_t kind = u8();
    switch (kind & 3) {
      case 0: return uint64_t(kind >> 2) * 4096;                       // page 0..63
      case 1: return uint64_t((kind >> 2) & 15) * 4096 + (u16() & 0xFFF);  // inside, any offset
      case 2: return MEM_BYTES - (u8() & 0x3F);                        // straddles the end
      default: return u64();
    }
  }

 private:
  const uint8_t* p_;
  size_t n_;
};

class FuzzEnv : public ControllerEnv {
 public:
  FuzzEnv() : mem(MEM_BYTES, 0) {}
  bool dma_read(nvmesim::fw::DmaPurpose, uint64_t addr, void* dst, uint32_t len) override {
    if (addr > mem.size() || mem.size() - addr < len) return false;
    std::memcpy(dst, mem.data() + addr, len);
    return true;
  }
  bool dma_write(nvmesim::fw::DmaPurpose, uint64_t addr, const void* src, uint32_t len) override {
    if (addr > mem.size() || mem.size() - addr < len) return false;
    std::memcpy(mem.data() + addr, src, len);
    return true;
  }
  void device_barrier() override {}
  void msix(uint16_t vector) override {
    FUZZ_CHECK(vector < msix_vectors);
    ++interrupts;
  }
  // The backend: moves the data like models/block/storage_backend (a segment
  // outside memory is a Data Transfer Error), then completes at once or later.
  void backend_submit(const IoRequest& req) override {
    FUZZ_CHECK(req.segment_count == req.segments.size());
    uint64_t total = 0;
    uint16_t status = 0;
    for (unsigned i = 0; i < req.segment_count; ++i) {
      const auto& s = req.segments[i];
      total += s.len;
      std::vector<uint8_t>& buf = scratch;
      buf.assign(s.len, 0xA5);
      const bool ok = req.opcode == nvme::io::WRITE ? dma_read(fw::DmaPurpose::Data, s.addr, buf.data(), s.len)
                                                    : dma_write(fw::DmaPurpose::Data, s.addr, buf.data(), s.len);
      if (!ok) status = nvme::status_generic(nvme::sc::DATA_TRANSFER_ERROR);
    }
    FUZZ_CHECK(total == req.bytes);
    if (ctrl != nullptr && complete_inline) {
      ctrl->complete_io(req.tag, status);
    } else {
      tags.push_back(req.tag);
    }
  }

  std::vector<uint8_t> mem;
  std::vector<uint8_t> scratch;
  std::vector<uint32_t> tags;  // handed to the backend, not completed yet
  Controller* ctrl = nullptr;
  bool complete_inline = false;
  uint16_t msix_vectors = 1;
  uint64_t interrupts = 0;
};

// Register offsets the guest may write (the rest via raw offsets).
constexpr uint32_t REGS[] = {nvme::reg::CAP,   nvme::reg::CAP + 4, nvme::reg::VS,
                             nvme::reg::INTMS, nvme::reg::INTMC,   nvme::reg::CC,
                             nvme::reg::CSTS,  nvme::reg::NSSR,    nvme::reg::AQA,
                             nvme::reg::ASQ,   nvme::reg::ASQ + 4, nvme::reg::ACQ,
                             nvme::reg::ACQ + 4};
// Opcodes worth aiming at (admin and NVM I/O), plus whatever byte comes.
constexpr uint8_t OPCODES[] = {0x00, 0x01, 0x02, 0x04, 0x05, 0x06, 0x08,
                               0x09, 0x0A, 0x0C, 0x7C, 0xC0, 0x7F, 0xFF};

void check_invariants(const Controller& c, const FuzzEnv& env) {
  const ControllerConfig& cfg = c.config();
  uint64_t sq_entries = 0;
  for (uint32_t q = 0; q <= uint32_t(cfg.max_io_queues) + 1u; ++q) {
    const auto sq = c.sq_state(uint16_t(q));
    const auto cq = c.cq_state(uint16_t(q));
    if (q > cfg.max_io_queues) {
      FUZZ_CHECK(!sq.exists && !cq.exists);
      continue;
    }
    if (sq.exists) {
      FUZZ_CHECK(sq.size >= 2 && sq.size <= (q == 0 ? 4096u : uint32_t(cfg.mqes) + 1u));
      FUZZ_CHECK(sq.head < sq.size && sq.tail < sq.size);
      FUZZ_CHECK(c.cq_state(sq.cqid).exists);
      sq_entries += sq.size;
    }
    if (cq.exists) {
      FUZZ_CHECK(cq.size >= 2 && cq.size <= (q == 0 ? 4096u : uint32_t(cfg.mqes) + 1u));
      FUZZ_CHECK(cq.head < cq.size && cq.tail < cq.size);
      FUZZ_CHECK(cq.vector < cfg.msix_vectors);
    }
    FUZZ_CHECK(c.sq_has_work(uint16_t(q)) == (sq.exists && sq.head != sq.tail));
  }
  // Every outstanding command holds a slot of an existing SQ.
  FUZZ_CHECK(c.outstanding_io() <= sq_entries);
  // Abandoned tags stay in env.tags, so this is an upper bound only.
  FUZZ_CHECK(c.outstanding_io() <= env.tags.size());
  const uint32_t csts = uint32_t(c.bar0_read(nvme::reg::CSTS, 4));
  FUZZ_CHECK(c.enabled() == ((csts & nvme::csts::RDY) != 0));
  if (c.enabled()) FUZZ_CHECK((c.bar0_read(nvme::reg::CC, 4) & nvme::cc::EN) != 0);
}

void write_sqe(FuzzEnv& env, Input& in, const Controller& c) {
  nvme::SubmissionEntry e{};
  const uint8_t pick = in.u8();
  e.opcode = (pick & 0x80) ? in.u8() : OPCODES[pick % sizeof(OPCODES)];
  e.flags = in.u8() & 0x03 ? 0 : in.u8();
  e.cid = in.u16();
  const uint8_t ns = in.u8();
  e.nsid = ns < 200 ? 1 : (ns < 230 ? 0 : (ns < 250 ? 0xFFFFFFFFu : in.u32()));
  e.prp1 = in.addr();
  e.prp2 = in.addr();
  e.cdw10 = in.u32();
  e.cdw11 = in.u32();
  e.cdw12 = in.u32();
  // Where: the next free slot of an existing SQ, or any address.
  const uint8_t where = in.u8();
  uint64_t at;
  const auto sq = c.sq_state(uint16_t(where & 0x0F));
  if (!(where & 0x80) && sq.exists) {
    at = sq.base + uint64_t((sq.tail + ((where >> 4) & 7)) % sq.size) * nvme::SQE_SIZE;
  } else {
    at = in.addr();
  }
  env.dma_write(fw::DmaPurpose::Data, at, &e, sizeof e);
}

void run(const uint8_t* data, size_t size) {
  Input in(data, size);
  ControllerConfig cfg;
  const uint8_t b0 = in.u8();
  cfg.dbbuf = DbbufMode(b0 % 3);
  cfg.dstrd = uint8_t((b0 >> 2) & 3);
  cfg.sq_eventidx = EventIdxPolicy((b0 >> 4) & 3);
  cfg.cq_eventidx = EventIdxPolicy((b0 >> 6) & 3);
  const uint8_t b1 = in.u8();
  cfg.mqes = uint16_t(b1 & 0x3F);  // 0: the controller makes it 1
  cfg.mmio_doorbell_value = (b1 & 0x40) ? MmioDoorbellValue::Ignore : MmioDoorbellValue::Use;
  const bool inline_completion = (b1 & 0x80) != 0;
  const uint8_t b2 = in.u8();
  cfg.max_io_queues = uint16_t(b2 & 7);  // 0: the controller makes it 1
  cfg.msix_vectors = uint16_t((b2 >> 3) & 7);
  cfg.guest_memory_bytes = (b2 & 0x40) ? MEM_BYTES : 0;
  cfg.lba_bytes = (b2 & 0x80) ? 4096 : 512;
  const uint8_t b3 = in.u8();
  cfg.mdts = uint8_t(b3 & 7);
  cfg.mpsmin = 0;
  cfg.mpsmax = uint8_t((b3 >> 3) & 3);
  cfg.namespace_lbas = 1 + (uint64_t(in.u16()) << (b3 >> 6));
  if (cfg.dbbuf == DbbufMode::Vendor) cfg.pci_vendor_id = nvme::PCI_VENDOR_VENDOR_EXT;

  FuzzEnv env;
  Controller c(cfg, env);
  env.ctrl = &c;
  env.complete_inline = inline_completion;
  env.msix_vectors = c.config().msix_vectors;
  const uint16_t maxq = c.config().max_io_queues;
  const uint32_t stride = nvme::doorbell_stride(cfg.dstrd);

  for (size_t n = 0; n < MAX_ACTIONS && !in.empty(); ++n) {
    const uint8_t op = in.u8();
    switch (op % 16) {
      case 0: {  // register write
        const uint32_t off = REGS[in.u8() % (sizeof REGS / sizeof REGS[0])];
        const bool wide = in.u8() & 1;
        c.bar0_write(off, wide ? in.u64() : in.u32(), wide ? 8 : 4);
        break;
      }
      case 1: {  // raw BAR0 write, any offset and access size
        const uint32_t off = in.u16();
        const unsigned sz = in.u8() % 10;
        c.bar0_write(off, in.u64(), sz);
        break;
      }
      case 2: {
        const uint32_t off = in.u16();
        (void)c.bar0_read(off, in.u8() % 10);
        break;
      }
      case 3: {  // doorbell register k with a raw value
        const uint32_t k = in.u8() % (2u * (maxq + 3u));
        const uint32_t pad = (in.u8() & 1) ? 4 : 0;  // stride padding, for DSTRD > 0
        c.bar0_write(nvme::reg::DOORBELL_BASE + k * stride + pad, in.u16(), 4);
        break;
      }
      case 4: {  // doorbell that moves a queue's index by a small delta (mostly valid)
        const uint16_t qid = uint16_t(in.u8() % (maxq + 2u));
        const bool cq = in.u8() & 1;
        const uint32_t delta = in.u8();
        if (cq) {
          const auto s = c.cq_state(qid);
          const uint32_t v = s.exists ? (s.head + delta) % s.size : delta;
          c.bar0_write(nvme::cq_head_doorbell(qid, cfg.dstrd), v, 4);
        } else {
          const auto s = c.sq_state(qid);
          const uint32_t v = s.exists ? (s.tail + delta) % s.size : delta;
          c.bar0_write(nvme::sq_tail_doorbell(qid, cfg.dstrd), v, 4);
        }
        break;
      }
      case 5: c.complete_enable(); break;
      case 6: {  // bring-up: AQA, ASQ, ACQ, CC.EN = 1, then the enable completes
        const uint32_t sq_n = 2 + in.u8() % 31, cq_n = 2 + in.u8() % 31;
        c.bar0_write(nvme::reg::AQA, nvme::aqa::make(sq_n, cq_n), 4);
        c.bar0_write(nvme::reg::ASQ, uint64_t(in.u8() % 20) * 4096, 8);
        c.bar0_write(nvme::reg::ACQ, uint64_t(in.u8() % 20) * 4096, 8);
        const uint8_t mps = in.u8() % 3;
        c.bar0_write(nvme::reg::CC, nvme::cc::make(true, mps), 4);
        c.complete_enable();
        break;
      }
      case 7: {
        const uint16_t qid = uint16_t(in.u8() % (maxq + 2u));
        c.process_sq(qid, 1 + in.u8() % 64);
        break;
      }
      case 8: c.post_completions(uint16_t(in.u8() % (maxq + 2u))); break;
      case 9: {  // backend completion: a pending tag, or any tag
        const uint8_t pick = in.u8();
        const uint16_t status = in.u16();
        if (!env.tags.empty() && pick < 0xF0) {
          const size_t i = pick % env.tags.size();
          const uint32_t tag = env.tags[i];
          env.tags.erase(env.tags.begin() + long(i));
          c.complete_io(tag, status);
        } else {
          c.complete_io(in.u32(), status);
        }
        break;
      }
      case 10: c.refresh_sq_tail_from_shadow(uint16_t(in.u8() % (maxq + 2u))); break;
      case 11: {  // guest store: up to 64 bytes anywhere
        const uint64_t a = in.addr();
        const uint32_t len = in.u8() % 65;
        uint8_t buf[64];
        for (uint32_t i = 0; i < len; ++i) buf[i] = in.u8();
        env.dma_write(fw::DmaPurpose::Data, a, buf, len);
        break;
      }
      case 12: write_sqe(env, in, c); break;
      case 13: {  // the backend finishes everything, then the model posts
        std::vector<uint32_t> tags;
        tags.swap(env.tags);
        for (uint32_t t : tags) c.complete_io(t, 0);
        for (uint16_t q = 0; q <= maxq; ++q) c.post_completions(q);
        break;
      }
      case 14: {  // a shadow doorbell or EventIdx entry (the buffer's live address)
        const uint16_t qid = uint16_t(in.u8() % (maxq + 2u));
        const uint8_t which = in.u8();
        const uint64_t base =
            (which & 2) ? c.eventidx_buffer_addr() : c.shadow_buffer_addr();
        const uint32_t off = (which & 1) ? dbbuf_cq_offset(qid, cfg.dstrd)
                                         : dbbuf_sq_offset(qid, cfg.dstrd);
        const uint32_t v = (which & 4) ? in.u32() : in.u8();
        if (base != 0) env.dma_write(fw::DmaPurpose::Data, base + off, &v, 4);
        break;
      }
      case 15: {  // PRP list entries (8 bytes each) at an address
        const uint64_t a = in.addr();
        const unsigned count = 1 + in.u8() % 8;
        for (unsigned i = 0; i < count; ++i) {
          const uint64_t e = in.addr();
          env.dma_write(fw::DmaPurpose::Data, a + 8 * i, &e, 8);
        }
        break;
      }
    }
    check_invariants(c, env);
  }
  // A reset abandons everything: late completions are ignored, nothing posts.
  c.bar0_write(nvme::reg::CC, 0, 4);
  for (uint32_t t : env.tags) c.complete_io(t, 0);
  FUZZ_CHECK(c.outstanding_io() == 0);
  FUZZ_CHECK(!c.enabled() && !c.sq_state(0).exists);
  for (uint16_t q = 0; q <= maxq; ++q) FUZZ_CHECK(!c.cq_has_pending(q));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  run(data, size);
  return 0;
}
