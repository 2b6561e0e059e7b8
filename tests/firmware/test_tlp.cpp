// TLP counts of memory transactions against the PCI Express Base
// Specification's rules, each expected count worked out by hand in the
// comment beside it (firmware/pcie/tlp.h).
#include <catch2/catch.hpp>

#include "nvmesim/firmware/pcie/tlp.h"

using namespace nvmesim::fw::pcie;

namespace {

TlpRules rules(uint32_t mps, uint32_t mrrs) {
  TlpRules r;
  r.max_payload = mps;
  r.max_read_request = mrrs;
  r.read_completion_boundary = 64;
  r.overhead = 24;
  return r;
}

}  // namespace

TEST_CASE("tlp: posted writes carry at most MPS and never cross 4 KiB", "[tlp]") {
  // A 4 KiB read's data to the host at MPS 256: 4096 / 256 = 16 writes.
  auto s = posted_write_split(rules(256, 512), 0x10000, 4096);
  CHECK(s.tlps == 16);
  CHECK(s.payload == 4096);
  CHECK(s.wire_bytes(rules(256, 512)) == 4096 + 16 * 24);
  // MPS 128: 32 writes; MPS 4096: one.
  CHECK(posted_write_split(rules(128, 512), 0x10000, 4096).tlps == 32);
  CHECK(posted_write_split(rules(4096, 512), 0x10000, 4096).tlps == 1);
  // From 0x10010: 4080 bytes up to the 4 KiB boundary at 0x11000 take
  // ceil(4080 / 256) = 16 writes, the 16 bytes after it one more.
  CHECK(posted_write_split(rules(256, 512), 0x10010, 4096).tlps == 17);
  // Even at MPS 4096 the boundary cuts it in two.
  CHECK(posted_write_split(rules(4096, 512), 0x10010, 4096).tlps == 2);
  // A CQE (16 bytes), an EventIdx or an MSI-X message (4 bytes): one write each.
  CHECK(posted_write_split(rules(256, 512), 0x2000, 16).tlps == 1);
  CHECK(posted_write_split(rules(256, 512), 0x2004, 4).payload == 4);
  // Payloads are whole DWs: 2 bytes at 0x3 touch DW 0 and DW 1.
  CHECK(posted_write_split(rules(256, 512), 0x3, 2).payload == 8);
  CHECK(posted_write_split(rules(256, 512), 0x0, 0).tlps == 0);
  // Length counts DWs: 256 bytes from 0x2 span 65 DWs (0x0..0x104), more
  // than MPS's 64: two writes, 0x2..0x100 (64 DWs) and 0x100..0x102 (1 DW).
  CHECK(posted_write_split(rules(256, 512), 0x2, 256).tlps == 2);
  CHECK(posted_write_split(rules(256, 512), 0x2, 256).payload == 260);
}

TEST_CASE("tlp: reads ask at most MRRS a request and complete in MPS pieces on RCB boundaries", "[tlp]") {
  const TlpRules r = rules(256, 512);
  // An SQE fetch: 64 bytes, one request and one completion of 64 bytes.
  CHECK(read_request_split(r, 0x4000, 64).tlps == 1);
  auto c = read_completion_split(r, 0x4000, 64);
  CHECK(c.tlps == 1);
  CHECK(c.payload == 64);
  // A shadow doorbell: 4 bytes, one of each.
  CHECK(read_request_split(r, 0x5008, 4).tlps == 1);
  CHECK(read_completion_split(r, 0x5008, 4).tlps == 1);
  CHECK(read_completion_split(r, 0x5008, 4).payload == 4);
  // 4 KiB aligned: 4096 / 512 = 8 requests, each answered by 512 / 256 = 2
  // completions: 16.
  CHECK(read_request_split(r, 0x10000, 4096).tlps == 8);
  CHECK(read_completion_split(r, 0x10000, 4096).tlps == 16);
  CHECK(read_completion_split(r, 0x10000, 4096).payload == 4096);
  // The request is no TLP with data: it puts only its overhead on the wire.
  CHECK(read_request_split(r, 0x10000, 4096).wire_bytes(r) == 8 * 24);
  // 512 bytes from 0x20 (one request): completions end on 64-byte
  // boundaries unless last: 0x20..0x100 (224), 0x100..0x200 (256),
  // 0x200..0x220 (32): three.
  CHECK(read_request_split(r, 0x20, 512).tlps == 1);
  CHECK(read_completion_split(r, 0x20, 512).tlps == 3);
  CHECK(read_completion_split(r, 0x20, 512).payload == 512);
  // 1 KiB from 0xE00 with MRRS 512: 0xE00..0x1000 and 0x1000..0x1200, two
  // requests; with MRRS 4096 still two, the 4 KiB boundary cuts it.
  CHECK(read_request_split(r, 0xE00, 1024).tlps == 2);
  CHECK(read_request_split(rules(256, 4096), 0xE00, 1024).tlps == 2);
  CHECK(read_request_split(rules(256, 4096), 0x1000, 4096).tlps == 1);
  CHECK(read_completion_split(rules(256, 4096), 0x1000, 4096).tlps == 16);
  // 256 bytes from 0x2: 65 DWs, more than one completion may carry: two,
  // ending at the RCB 0x100, then 0x100..0x102.
  CHECK(read_completion_split(r, 0x2, 256).tlps == 2);
  // A request asks for whole DWs too: 512 bytes from 0x2 are 129 DWs, two
  // requests with MRRS 512.
  CHECK(read_request_split(r, 0x2, 512).tlps == 2);
}

TEST_CASE("tlp: the tally counts by purpose and kind", "[tlp]") {
  TlpTally t(rules(256, 512), {"sqe_fetch", "data"});
  t.read(0, 0x4000, 64);
  t.read(0, 0x4040, 64);
  t.posted_write(1, 0x10000, 4096);
  CHECK(t.tlps(0, TlpKind::MemoryRead) == 2);
  CHECK(t.tlps(0, TlpKind::Completion) == 2);
  CHECK(t.tlps(0, TlpKind::PostedWrite) == 0);
  CHECK(t.wire_bytes(0, TlpKind::Completion) == 2 * (64 + 24));
  CHECK(t.tlps(1, TlpKind::PostedWrite) == 16);
  CHECK(t.payload_bytes(1, TlpKind::PostedWrite) == 4096);
  const auto v = t.values();
  REQUIRE(v.stat("tlps"));
  CHECK(v.stat("tlps")->entries.size() == 6);
  CHECK(v.stat("tlps")->entries[0].first == "sqe_fetch_mrd");
  CHECK(v.at("tlps.data_mwr") == 16);
  t.reset();
  CHECK(t.tlps(1, TlpKind::PostedWrite) == 0);
}
