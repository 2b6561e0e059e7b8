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
