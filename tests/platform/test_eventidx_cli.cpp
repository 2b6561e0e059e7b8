// `nvmesim eventidx`: exact output lines, exit codes, and the exhaustive
// counts against a separate enumeration done here.
#include <catch2/catch.hpp>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "nvmesim/platform/cli/eventidx_cli.h"

namespace {

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result run(std::vector<const char*> args) {
  args.insert(args.begin(), "eventidx");
  std::ostringstream out, err;
  const int code = nvmesim::platform::run_eventidx_command(int(args.size()), args.data(), out, err);
  return {code, out.str(), err.str()};
}

std::string lines(std::initializer_list<std::string> ls) {
  std::string s;
  for (const std::string& l : ls) s += l + "\n";
  return s;
}

}  // namespace

TEST_CASE("eventidx cli: wrapping update, EventIdx inside and outside", "[eventidx_cli]") {
  Result r = run({"--qsize", "1024", "--old", "1020", "--new", "2", "--eventidx", "0"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out == lines({
                     "qsize 1024, old 1020, new 2 (6 new entries), EventIdx 0",
                     "linux:     ring: EventIdx 0 lies in [1020, 2) mod 1024",
                     "inclusive: ring: EventIdx 0 lies in [1020, 2] mod 1024",
                 }));

  r = run({"--qsize", "1024", "--old", "1020", "--new", "2", "--eventidx", "5"});
  CHECK(r.code == 0);
  CHECK(r.out == lines({
                     "qsize 1024, old 1020, new 2 (6 new entries), EventIdx 5",
                     "linux:     no ring: EventIdx 5 lies outside [1020, 2) mod 1024",
                     "inclusive: no ring: EventIdx 5 lies outside [1020, 2] mod 1024",
                 }));
}

TEST_CASE("eventidx cli: the forms differ when EventIdx == new", "[eventidx_cli]") {
  Result r = run({"--qsize", "1024", "--old", "1020", "--new", "2", "--eventidx", "2"});
  CHECK(r.code == 0);
  CHECK(r.out ==
        lines({
            "qsize 1024, old 1020, new 2 (6 new entries), EventIdx 2",
            "linux:     no ring: EventIdx 2 lies outside [1020, 2) mod 1024",
            "inclusive: ring: EventIdx 2 lies in [1020, 2] mod 1024",
            "forms differ: EventIdx == new; linux rings once the index has moved past "
            "EventIdx, inclusive as soon as it reaches it",
        }));

  // new == old alone does not make them differ; with EventIdx == new it does.
  r = run({"--qsize", "64", "--old", "7", "--new", "7", "--eventidx", "3"});
  CHECK(r.code == 0);
  CHECK(r.out == lines({
                     "qsize 64, old 7, new 7 (0 new entries), EventIdx 3",
                     "linux:     no ring: EventIdx 3 lies outside [7, 7) mod 64 (empty)",
                     "inclusive: no ring: EventIdx 3 lies outside [7, 7] mod 64",
                 }));
  r = run({"--qsize", "64", "--old", "7", "--new", "7", "--eventidx", "7"});
  CHECK(r.out.find("inclusive: ring: EventIdx 7 lies in [7, 7] mod 64\n") != std::string::npos);
  CHECK(r.out.find("forms differ: EventIdx == new;") != std::string::npos);
}

TEST_CASE("eventidx cli: a parked EventIdx is explained with the u16 modulus", "[eventidx_cli]") {
  Result r = run({"--qsize", "1024", "--old", "1020", "--new", "2", "--eventidx", "4294967295"});
  CHECK(r.code == 0);
  CHECK(r.out ==
        lines({
            "qsize 1024, old 1020, new 2 (6 new entries), EventIdx 65535",
            "note: --eventidx 4294967295 is read as its low 16 bits, 65535 (the 32-bit buffer "
            "entry holds a 16-bit index)",
            "note: EventIdx 65535 is parked (>= qsize 1024): the driver's index never equals it",
            "linux:     ring: EventIdx 65535 lies in [1020, 2) mod 65536",
            "inclusive: ring: EventIdx 65535 lies in [1020, 2] mod 65536",
            "moduli differ: the u16 test works mod 65536, where this update wraps through "
            "1024..65535; mod 1024 no interval holds EventIdx 65535, so a parked EventIdx rings "
            "once per lap, on the update that wraps",
        }));

  // Not wrapping: no ring, and no moduli line.
  r = run({"--qsize", "1024", "--old", "3", "--new", "9", "--eventidx", "0xFFFF"});
  CHECK(r.code == 0);
  CHECK(r.out ==
        lines({
            "qsize 1024, old 3, new 9 (6 new entries), EventIdx 65535",
            "note: EventIdx 65535 is parked (>= qsize 1024): the driver's index never equals it",
            "linux:     no ring: EventIdx 65535 lies outside [3, 9) mod 65536",
            "inclusive: no ring: EventIdx 65535 lies outside [3, 9] mod 65536",
        }));
}

TEST_CASE("eventidx cli: exhaustive N=5 counts match a separate enumeration",
          "[eventidx_cli]") {
  // Independent count: the rule by case split; the forms differ where
  // exactly one of [old, new) and [old, new] holds EventIdx.
  const uint32_t n = 5;
  uint64_t triples = 0, ei_new = 0, new_old = 0, both = 0, neither = 0;
  for (uint32_t o = 0; o < n; ++o)
    for (uint32_t w = 0; w < n; ++w)
      for (uint32_t e = 0; e < n; ++e) {
        ++triples;
        const bool half = o <= w ? (o <= e && e < w) : (e >= o || e < w);
        const bool closed = half || e == w;
        if (half == closed) continue;
        if (e == w && w == o) ++both;
        else if (e == w) ++ei_new;
        else if (w == o) ++new_old;
        else ++neither;
      }
  REQUIRE(triples == 125);
  const uint64_t differ = ei_new + new_old + both + neither;

  Result r = run({"--qsize", "5", "--exhaustive"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out ==
        lines({
            "qsize 5: checked " + std::to_string(triples) +
                " triples (old, new, EventIdx each in 0..4), every one by brute force",
            "rules: linux rings iff EventIdx lies in [old, new), inclusive iff in [old, new], "
            "cyclically mod 65536 (the u16 tests' modulus), each interval walked index by index",
            "linux vs its rule:     0 mismatches",
            "inclusive vs its rule: 0 mismatches",
            "mod 5 vs mod 65536 intervals: 0 disagreements (0 on wrapping updates, new < old)",
            "forms differ on " + std::to_string(differ) +
                " triples: EventIdx == new only: " + std::to_string(ei_new) +
                ", new == old only: " + std::to_string(new_old) +
                ", both: " + std::to_string(both) + ", neither: " + std::to_string(neither),
            "result: OK: both forms follow their rules, and mod 5 gives the same intervals as "
            "mod 65536 for every EventIdx < 5",
        }));
  // The same numbers by hand: N(N-1) = 20, N = 5.
  CHECK(ei_new == 20);
  CHECK(both == 5);
  CHECK(new_old == 0);
  CHECK(neither == 0);
}

TEST_CASE("eventidx cli: help", "[eventidx_cli]") {
  Result r = run({"--help"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.rfind("Usage: nvmesim eventidx --qsize N --old O --new W --eventidx E\n", 0) == 0);
  CHECK(r.out.find("--exhaustive") != std::string::npos);
}

TEST_CASE("eventidx cli: bad input is one error line and exit 2", "[eventidx_cli]") {
  struct Case {
    std::vector<const char*> args;
    std::string error;
  };
  const std::string p = "nvmesim eventidx: error: ";
  const Case cases[] = {
      {{"--qsize", "1024", "--old", "1030", "--new", "2", "--eventidx", "0"},
       "--old: 1030 is out of range for --qsize 1024 (allowed 0..1023)"},
      {{"--qsize", "1024", "--old", "0", "--new", "1024", "--eventidx", "0"},
       "--new: 1024 is out of range for --qsize 1024 (allowed 0..1023)"},
      {{"--qsize", "1", "--exhaustive"}, "--qsize: 1 is out of range (allowed 2..65536)"},
      {{"--qsize", "65537", "--old", "0", "--new", "0", "--eventidx", "0"},
       "--qsize: 65537 is out of range (allowed 2..65536)"},
      {{"--qsize", "4096", "--exhaustive"},
       "--exhaustive: --qsize 4096 is too large (allowed 2..2048: N^3 triples)"},
      {{"--qsize", "1024", "--old", "abc", "--new", "2", "--eventidx", "0"},
       "--old: 'abc' is not a number (decimal or 0x hex)"},
      {{"--qsize", "1024", "--old", "1", "--new", "2", "--eventidx", "4294967296"},
       "--eventidx: 4294967296 is out of range (allowed 0..4294967295, a 32-bit buffer entry)"},
      {{"--qsize", "1024", "--new", "2", "--eventidx", "0"},
       "--old is required (give --old, --new and --eventidx, or --exhaustive)"},
      {{"--old", "1", "--new", "2", "--eventidx", "0"},
       "--qsize is required (see nvmesim eventidx --help)"},
      {{"--qsize", "8", "--exhaustive", "--eventidx", "3"},
       "--eventidx cannot be combined with --exhaustive"},
      {{"--qsize", "8", "--bogus"}, "unknown option '--bogus' (see --help)"},
      {{"--qsize", "8", "stray", "--exhaustive"},
       "unexpected argument 'stray' (see --help)"},
  };
  for (const Case& c : cases) {
    Result r = run(c.args);
    INFO(c.error);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == p + c.error + "\n");
  }
  // Valid edge values are accepted.
  CHECK(run({"--qsize", "65536", "--old", "65535", "--new", "0", "--eventidx", "0xffff"}).code == 0);
  CHECK(run({"--qsize", "2", "--exhaustive"}).code == 0);
}
