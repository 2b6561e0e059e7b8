#include <catch2/catch.hpp>

#include <set>

#include "nvmesim/models/guest/workload.h"

using namespace nvmesim::models;

TEST_CASE("workload: sequential reads walk the region and wrap", "[workload]") {
  JobSpec s;
  s.rw = RwMode::Read;
  s.bs = 4096;
  s.size = 3 * 4096;
  Workload w(s);
  const uint64_t expected[] = {0, 4096, 8192, 0, 4096};
  for (uint64_t e : expected) {
    const NextIo io = w.next();
    CHECK_FALSE(io.write);
    CHECK(io.offset == e);
    CHECK(io.bytes == 4096);
  }
}

TEST_CASE("workload: random offsets are aligned, in range, seeded", "[workload]") {
  JobSpec s;
  s.rw = RwMode::RandRead;
  s.bs = 8192;
  s.size = 1 << 20;  // 128 blocks
  s.seed = 1;
  Workload a(s), b(s);
  std::set<uint64_t> seen;
  for (int i = 0; i < 5000; ++i) {
    const NextIo x = a.next(), y = b.next();
    REQUIRE(x.offset == y.offset);  // same seed, same stream
    REQUIRE(x.offset % 8192 == 0);
    REQUIRE(x.offset < s.size);
    seen.insert(x.offset);
  }
  CHECK(seen.size() == 128);  // 5000 draws cover all 128 blocks
  s.job_index = 1;
  Workload c(s);
  int same = 0;
  JobSpec s2;
  s2.rw = RwMode::RandRead;
  s2.bs = 8192;
  s2.size = 1 << 20;
  s2.rwmixread = 50;
  s2.seed = 1;
  Workload a2(s2);
  for (int i = 0; i < 100; ++i) same += c.next().offset == a2.next().offset;
  CHECK(same < 10);  // another job, another stream
}

TEST_CASE("workload: rwmixread sets the share of reads", "[workload]") {
  for (uint32_t mix : {0u, 70u, 100u}) {
    JobSpec s;
    s.rw = RwMode::RandRw;
    s.bs = 4096;
    s.size = 1ull << 30;
    s.seed = 1;
    s.rwmixread = mix;
    Workload w(s);
    int reads = 0;
    const int n = 100000;
    for (int i = 0; i < n; ++i) reads += !w.next().write;
    CHECK(reads == Approx(n * mix / 100.0).margin(n * 0.01));
  }
}

TEST_CASE("workload: rw names come from one table, in fio's order", "[workload]") {
  CHECK(nvmesim::fw::enum_find(rw_modes, "randrw")->value == RwMode::RandRw);
  CHECK(std::string(to_string(RwMode::Write)) == "write");
  CHECK(nvmesim::fw::enum_find(rw_modes, "trim") == nullptr);
  CHECK(nvmesim::fw::enum_names(rw_modes) == "read, write, randread, randwrite, randrw");
}

TEST_CASE("workload: blockalign aligns random offsets as fio's io_u.c last_block", "[workload]") {
  // bs 8 KiB, ba 4 KiB, size 64 KiB: fio's last_block is (65536 - (8192 -
  // 4096)) / 4096 = 15 block numbers, offsets 0, 4096, ..., 57344, so that
  // every I/O fits the region; all 15 are drawn.
  JobSpec s;
  s.rw = RwMode::RandRead;
  s.bs = 8192;
  s.size = 65536;
  s.seed = 3;
  s.blockalign = 4096;
  Workload w(s);
  std::set<uint64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const NextIo io = w.next();
    REQUIRE(io.offset % 4096 == 0);
    REQUIRE(io.offset + io.bytes <= s.size);
    seen.insert(io.offset);
  }
  CHECK(seen.size() == 15);
  CHECK(*seen.rbegin() == 57344);
  // bssplit's 512-byte I/Os with ba 4 KiB (fio's jesd219 example): every
  // offset a multiple of 4 KiB.
  JobSpec m;
  m.rw = RwMode::RandRw;
  m.rwmixread = 40;
  m.bs = 4096;
  m.bssplit_text = "512/50:4k/40:64k/10";
  m.size = 1 << 20;
  m.blockalign = 4096;
  Workload x(m);
  for (int i = 0; i < 2000; ++i) {
    const NextIo io = x.next();
    REQUIRE(io.offset % 4096 == 0);
    REQUIRE(io.offset + io.bytes <= m.size);
  }
  // ba equal to bs draws the stream ba 0 draws.
  JobSpec z = s;
  z.blockalign = 0;
  s.blockalign = 8192;
  Workload p(s), q(z);
  for (int i = 0; i < 500; ++i) REQUIRE(p.next().offset == q.next().offset);
}

TEST_CASE("workload: zoned puts each share of accesses in its share of the region", "[workload]") {
  // fio's jesd219 zones: 50% of accesses in the first 5% of the region, 30%
  // in the next 15%, 20% in the last 80% (io_u.c __get_next_rand_offset_zoned).
  // 4 KiB blocks over 4 MiB: 1024 blocks; zone ends at blocks 51, 204, 1023.
  JobSpec s;
  s.rw = RwMode::RandRead;
  s.bs = 4096;
  s.size = 4 << 20;
  s.seed = 9;
  s.distribution_text = "zoned:50/5:30/15:20/80";
  Workload w(s);
  const int n = 40000;
  int zone[3] = {0, 0, 0};
  for (int i = 0; i < n; ++i) {
    const NextIo io = w.next();
    REQUIRE(io.offset % 4096 == 0);
    REQUIRE(io.offset + io.bytes <= s.size);
    const uint64_t b = io.offset / 4096;  // start = perc_prev * 1024 / 100: 0, 51, 204
    zone[b < 51 ? 0 : b < 204 ? 1 : 2]++;
  }
  // Binomial: 4 standard deviations of 40000 draws at p = 0.5, 0.3, 0.2 are
  // 400, 367 and 320 accesses.
  CHECK(std::abs(zone[0] - 20000) < 400);
  CHECK(std::abs(zone[1] - 12000) < 367);
  CHECK(std::abs(zone[2] - 8000) < 320);
}

TEST_CASE("workload: zoned's percentages are checked as fio's options.c", "[workload]") {
  fio_opt::DistributionSpec d;
  CHECK(fio_opt::parse_distribution("zoned:50/5:30/15:20/80", d).empty());
  CHECK(d.zones.size() == 3);
  CHECK(fio_opt::parse_distribution("zoned:50/5:30/15", d) ==
        "the access percentages must add up to 100 and the sizes to at most 100 (got 80 and 20)");
  CHECK(fio_opt::parse_distribution("zoned:50/60:50/60", d) ==
        "the access percentages must add up to 100 and the sizes to at most 100 (got 100 and 120)");
  CHECK(fio_opt::parse_distribution("zoned:50/5,50/5", d) == "per-direction zones (',') are not modelled");
  CHECK(fio_opt::parse_distribution("zoned", d) == "'zoned' needs access/size percentages (zoned:50/5:50/95)");
  CHECK(fio_opt::parse_distribution("zoned:x/5", d) == "'x/5' is not access/size");
}
