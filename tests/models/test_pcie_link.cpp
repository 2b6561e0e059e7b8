// PcieLink timing: every expected value below is worked out by hand.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include <systemc>

#include "nvmesim/models/pcie/pcie_link.h"
#include "tests/models/default_params.h"

using nvmesim::models::PcieLink;
using nvmesim::models::PcieLinkParams;
using nvmesim::models::PcieMode;

namespace {

double as_ns(const sc_core::sc_time& t) { return t.to_seconds() * 1e9; }

// sc_time has 1 ps resolution: allow half a picosecond of rounding.
Approx ns_approx(double v) { return Approx(v).margin(0.0005); }

std::string validation_error(const PcieLinkParams& p) {
  try {
    PcieLink::validate(p);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("PcieLink: gen3 x4 bandwidth and posted writes", "[models][pcie]") {
  PcieLinkParams p = nvmesim::test::default_link();  // defaults: gen3 x4, MPS 256, MRRS 512, 24 B, 700 ns
  PcieLink link(p);
  // 8 GT/s * 4 lanes * 128/130 / 8 = 512/130 = 3.9384615 bytes/ns.
  CHECK(link.bandwidth_bytes_per_ns() == Approx(512.0 / 130.0));

  // 4096 bytes, MPS 256: 16 TLPs, 4096 + 16*24 = 4480 bytes on the wire;
  // 4480 / (512/130) = 4480 * 130 / 512 = 1137.5 ns.
  CHECK(link.write_tlps(4096) == 16);
  CHECK(link.write_ns(4096) == Approx(1137.5));
  CHECK(link.write_time(4096) == sc_core::sc_time(1137.5, sc_core::SC_NS));

  // 100 bytes: 1 TLP, 124 bytes: 124 * 130 / 512 = 31.484375 ns.
  CHECK(link.write_tlps(100) == 1);
  CHECK(link.write_ns(100) == Approx(31.484375));
  CHECK(as_ns(link.write_time(100)) == ns_approx(31.484375));

  // 257 bytes: 2 TLPs, 257 + 48 = 305 bytes: 305 * 130 / 512 = 77.44140625 ns.
  CHECK(link.write_tlps(257) == 2);
  CHECK(link.write_ns(257) == Approx(77.44140625));

  CHECK(link.write_time(0) == sc_core::SC_ZERO_TIME);
}

TEST_CASE("PcieLink: reads split at MRRS and completions at MPS",
          "[models][pcie]") {
  PcieLinkParams p = nvmesim::test::default_link();  // gen3 x4: 512/130 bytes/ns
  p.max_payload_size = 256;
  p.max_read_request_size = 512;
  PcieLink link(p);

  // 4096 bytes, MRRS 512: 8 requests, each answered by 512/256 = 2
  // completions = 16 completions; 4096 + 16*24 = 4480 bytes = 1137.5 ns;
  // plus one 700 ns round trip = 1837.5 ns.
  CHECK(link.read_requests(4096) == 8);
  CHECK(link.read_completions(4096) == 16);
  CHECK(link.read_ns(4096) == Approx(1837.5));
  CHECK(link.read_time(4096) == sc_core::sc_time(1837.5, sc_core::SC_NS));

  // 1000 bytes: requests of 512 and 488 bytes -> 2 + 2 completions;
  // 1000 + 4*24 = 1096 bytes: 1096 * 130 / 512 = 278.28125 ns; + 700.
  CHECK(link.read_requests(1000) == 2);
  CHECK(link.read_completions(1000) == 4);
  CHECK(link.read_ns(1000) == Approx(978.28125));

  // 64 bytes (one SQ entry): 1 request, 1 completion: 88 bytes =
  // 88 * 130 / 512 = 22.34375 ns; + 700 = 722.34375 ns.
  CHECK(link.read_ns(64) == Approx(722.34375));

  // MRRS smaller than MPS: every request is one completion.
  // 4096 bytes, MRRS 128, MPS 256: 32 requests, 32 completions;
  // 4096 + 32*24 = 4864 bytes: 4864 * 130 / 512 = 1235 ns; + 700 = 1935 ns.
  PcieLinkParams q = p;
  q.max_read_request_size = 128;
  PcieLink small_rr(q);
  CHECK(small_rr.read_requests(4096) == 32);
  CHECK(small_rr.read_completions(4096) == 32);
  CHECK(small_rr.read_time(4096) == sc_core::sc_time(1935, sc_core::SC_NS));

  CHECK(link.read_time(0) == sc_core::SC_ZERO_TIME);
}

TEST_CASE("PcieLink: MMIO is one posted TLP or one round trip",
          "[models][pcie]") {
  PcieLink link{nvmesim::test::default_link()};
  // Doorbell write: 4 bytes + 24 = 28 bytes: 28 * 130 / 512 = 7.109375 ns.
  CHECK(link.mmio_ns(true) == Approx(7.109375));
  CHECK(as_ns(link.mmio_time(true)) == ns_approx(7.109375));
  // 8-byte write: 32 * 130 / 512 = 8.125 ns.
  CHECK(link.mmio_time(true, 8) == sc_core::sc_time(8.125, sc_core::SC_NS));
  // A read is one round trip.
  CHECK(link.mmio_time(false) == sc_core::sc_time(700, sc_core::SC_NS));
}

TEST_CASE("PcieLink: other generations and widths", "[models][pcie]") {
  PcieLinkParams g1 = nvmesim::test::default_link();
  g1.generation = 1;
  g1.lanes = 1;
  g1.max_payload_size = 128;
  PcieLink l1(g1);
  // 2.5 GT/s * 1 * 8/10 / 8 = 0.25 bytes/ns; 128 + 24 = 152 bytes = 608 ns.
  CHECK(l1.bandwidth_bytes_per_ns() == Approx(0.25));
  CHECK(l1.write_time(128) == sc_core::sc_time(608, sc_core::SC_NS));

  PcieLinkParams g2 = g1;
  g2.generation = 2;
  g2.lanes = 8;
  // 5 * 8 * 0.8 / 8 = 4 bytes/ns.
  CHECK(PcieLink(g2).bandwidth_bytes_per_ns() == Approx(4.0));

  PcieLinkParams g5 = nvmesim::test::default_link();
  g5.generation = 5;
  g5.lanes = 16;
  g5.max_payload_size = 512;
  PcieLink l5(g5);
  // 32 * 16 * 128/130 / 8 = 8192/130 = 63.0154 bytes/ns.
  // 4096 bytes: 8 TLPs: 4096 + 192 = 4288 bytes * 130 / 8192 = 68.046875 ns.
  CHECK(l5.bandwidth_bytes_per_ns() == Approx(8192.0 / 130.0));
  CHECK(l5.write_ns(4096) == Approx(68.046875));
  CHECK(as_ns(l5.write_time(4096)) == ns_approx(68.046875));

  PcieLinkParams g4 = nvmesim::test::default_link();
  g4.generation = 4;
  g4.lanes = 2;
  // 16 * 2 * 128/130 / 8 = 512/130, same as gen3 x4.
  CHECK(PcieLink(g4).bandwidth_bytes_per_ns() == Approx(512.0 / 130.0));
}

TEST_CASE("PcieLink: emulated mode is a host memcpy", "[models][pcie]") {
  PcieLinkParams p = nvmesim::test::default_link();
  p.mode = PcieMode::Emulated;  // 10 GB/s = 10 bytes/ns, 20 ns per access
  PcieLink link(p);
  CHECK(link.bandwidth_bytes_per_ns() == Approx(10.0));
  // 20 + 4096 / 10 = 429.6 ns, reads and writes alike.
  CHECK(link.write_ns(4096) == Approx(429.6));
  CHECK(link.read_ns(4096) == Approx(429.6));
  CHECK(link.write_time(4096) == sc_core::sc_time(429.6, sc_core::SC_NS));
  CHECK(link.read_time(4096) == sc_core::sc_time(429.6, sc_core::SC_NS));
  // 20 + 64 / 10 = 26.4 ns.
  CHECK(link.read_time(64) == sc_core::sc_time(26.4, sc_core::SC_NS));
  // MMIO: just the access overhead, either direction.
  CHECK(link.mmio_time(true) == sc_core::sc_time(20, sc_core::SC_NS));
  CHECK(link.mmio_time(false) == sc_core::sc_time(20, sc_core::SC_NS));
  CHECK(link.write_time(0) == sc_core::SC_ZERO_TIME);

  p.host_copy_gbps = 2.5;
  p.host_access_overhead_ns = 0;
  // 4096 / 2.5 = 1638.4 ns.
  CHECK(PcieLink(p).write_ns(4096) == Approx(1638.4));
}

TEST_CASE("PcieLink: validation names the field and the allowed values",
          "[models][pcie]") {
  PcieLinkParams ok = nvmesim::test::default_link();
  CHECK(validation_error(ok).empty());

  PcieLinkParams p = ok;
  p.generation = 6;
  CHECK(validation_error(p) ==
        "pcie.gen: 6 is not allowed (allowed: 1, 2, 3, 4, 5)");
  p.generation = 0;
  CHECK(validation_error(p) ==
        "pcie.gen: 0 is not allowed (allowed: 1, 2, 3, 4, 5)");

  p = ok;
  p.lanes = 3;
  CHECK(validation_error(p) ==
        "pcie.lanes: 3 is not allowed (allowed: 1, 2, 4, 8, 16)");
  p.lanes = 32;
  CHECK(validation_error(p) ==
        "pcie.lanes: 32 is not allowed (allowed: 1, 2, 4, 8, 16)");

  p = ok;
  p.max_payload_size = 384;
  CHECK(validation_error(p) ==
        "pcie.mps: 384 is not allowed "
        "(allowed: 128, 256, 512, 1024, 2048, 4096)");
  p.max_payload_size = 64;
  CHECK(validation_error(p).rfind("pcie.mps: 64 ", 0) == 0);

  p = ok;
  p.max_read_request_size = 8192;
  CHECK(validation_error(p) ==
        "pcie.mrrs: 8192 is not allowed "
        "(allowed: 128, 256, 512, 1024, 2048, 4096)");

  p = ok;
  p.read_round_trip_ns = -1;
  CHECK(validation_error(p) ==
        "pcie.read_rtt: -1 is not allowed (allowed: finite, >= 0 ns)");

  p = ok;
  p.host_copy_gbps = 0;
  CHECK(validation_error(p) ==
        "pcie.host_copy_gbps: 0 is not allowed (allowed: finite, > 0 GB/s)");

  p = ok;
  p.host_access_overhead_ns = -5;
  CHECK(validation_error(p) ==
        "pcie.emulated_access: -5 is not allowed "
        "(allowed: finite, >= 0 ns)");

  p = ok;
  p.tlp_overhead_bytes = 65;
  CHECK(validation_error(p) ==
        "pcie.tlp_overhead: 65 is not allowed (allowed: 0..64)");

  // The constructor validates too; messages are one line.
  p = ok;
  p.lanes = 5;
  CHECK_THROWS_AS(PcieLink(p), std::invalid_argument);
  CHECK(validation_error(p).find('\n') == std::string::npos);
}
