// Command arbitration (firmware/nvme/arbitration.h) against the rules of
// NVMe Base Specification 1.4, section 4.13, written out by hand: every
// expected sequence below is the list of SQ ids (and, where it matters, the
// commands granted) that the rules give, worked out on paper, not computed.
//
// The rules, as used here:
//  - Round Robin (CC.AMS 000b): every SQ, the Admin SQ included, in turn by
//    SQ id; QPRIO is ignored.
//  - WRR with Urgent Priority Class (CC.AMS 001b): Admin before Urgent
//    before the weighted class; inside it, each round gives High HPW+1,
//    Medium MPW+1 and Low LPW+1 commands, in that order, round robin among
//    the SQs of one level; a level with nothing ready is skipped.
//  - A turn launches at most 2^AB commands (AB 111b: no limit), and under
//    WRR no more than its level's credits left in the round.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "nvmesim/firmware/nvme/arbitration.h"

using namespace nvmesim::fw;

namespace {

constexpr uint32_t kForever = 0xFFFFFFFFu;  // an SQ that never runs out
constexpr uint32_t kNoLimit = ArbitrationFeature::NO_LIMIT;

ArbitrationFeature feature(uint8_t ab, uint8_t hpw, uint8_t mpw, uint8_t lpw) {
  ArbitrationFeature f;
  f.ab = ab;
  f.hpw = hpw;
  f.mpw = mpw;
  f.lpw = lpw;
  return f;
}

// A controller's side of the arbiter: SQs holding a number of commands; each
// turn fetches what it is granted (or what is left), and an SQ that runs
// out leaves the rotation.
struct Queues {
  Arbiter arb{16};
  std::map<uint16_t, uint32_t> held;

  Queues(ArbitrationMechanism m, const ArbitrationFeature& f) { arb.configure(m, f); }
  void add(uint16_t sqid, uint32_t commands, SqPriority p = SqPriority::Urgent) {
    arb.set_priority(sqid, p);
    held[sqid] = commands;
    arb.set_ready(sqid, commands > 0);
  }
  // The next `turns` turns: (sqid, commands granted).
  std::vector<std::pair<uint16_t, uint32_t>> grants(size_t turns) {
    std::vector<std::pair<uint16_t, uint32_t>> out;
    for (size_t i = 0; i < turns; ++i) {
      const Arbiter::Grant g = arb.next();
      if (!g) break;
      out.emplace_back(g.sqid, g.commands);
      uint32_t& left = held[g.sqid];
      const uint32_t fetched = left == kForever ? g.commands : std::min(left, g.commands);
      if (left != kForever) left -= fetched;
      arb.consumed(g, fetched);
      if (left == 0) arb.set_ready(g.sqid, false);
    }
    return out;
  }
  std::vector<uint16_t> picks(size_t turns) {
    std::vector<uint16_t> ids;
    for (const auto& g : grants(turns)) ids.push_back(g.first);
    return ids;
  }
};

using Ids = std::vector<uint16_t>;
using Grants = std::vector<std::pair<uint16_t, uint32_t>>;
constexpr auto RR = ArbitrationMechanism::RoundRobin;
constexpr auto WRR = ArbitrationMechanism::WeightedRoundRobinUrgent;
constexpr auto U = SqPriority::Urgent, H = SqPriority::High, M = SqPriority::Medium, L = SqPriority::Low;

}  // namespace

TEST_CASE("arbitration: the Arbitration feature's dword and burst", "[arbitration]") {
  const ArbitrationFeature d;  // the default: AB 111b, weights 0
  CHECK(d.dword() == 0x00000007u);
  CHECK(d.burst() == kNoLimit);
  // HPW 31:24, MPW 23:16, LPW 15:8, AB 2:0; bits 7:3 reserved.
  const ArbitrationFeature f = ArbitrationFeature::from_dword(0x04030201u | 0xF8u);
  CHECK(f.hpw == 4);
  CHECK(f.mpw == 3);
  CHECK(f.lpw == 2);
  CHECK(f.ab == 1);
  CHECK(f.dword() == 0x04030201u);
  const uint32_t bursts[] = {1, 2, 4, 8, 16, 32, 64, kNoLimit};
  for (uint8_t ab = 0; ab < 8; ++ab) CHECK(feature(ab, 0, 0, 0).burst() == bursts[ab]);
}

TEST_CASE("arbitration: round robin visits every SQ in turn, the admin SQ among them", "[arbitration]") {
  Queues q(RR, feature(0, 0, 0, 0));
  q.add(0, 2);
  q.add(1, kForever);
  q.add(2, kForever);
  CHECK(q.picks(8) == Ids{0, 1, 2, 0, 1, 2, 1, 2});
}

TEST_CASE("arbitration: round robin ignores QPRIO", "[arbitration]") {
  Queues q(RR, feature(0, 255, 0, 0));
  q.add(1, kForever, L);
  q.add(2, kForever, U);
  q.add(3, kForever, H);
  q.add(4, kForever, M);
  CHECK(q.picks(8) == Ids{1, 2, 3, 4, 1, 2, 3, 4});
}

TEST_CASE("arbitration: an SQ that empties leaves the rotation", "[arbitration]") {
  Queues q(RR, feature(0, 0, 0, 0));
  q.add(1, 5);
  q.add(2, 2);
  q.add(3, 4);
  // 1 2 3 | 1 2(empty) 3 | 1 3 | 1 3(empty) | 1(empty)
  CHECK(q.picks(20) == Ids{1, 2, 3, 1, 2, 3, 1, 3, 1, 3, 1});
  CHECK(!q.arb.next());
  CHECK(!q.arb.any_ready());
}

TEST_CASE("arbitration: Arbitration Burst 2^AB per turn, 111b no limit", "[arbitration]") {
  SECTION("round robin, AB 1: bursts of 2") {
    Queues q(RR, feature(1, 0, 0, 0));
    q.add(1, kForever);
    q.add(2, 3);
    CHECK(q.grants(4) == Grants{{1, 2}, {2, 2}, {1, 2}, {2, 2}});
  }
  SECTION("round robin, AB 3: bursts of 8") {
    Queues q(RR, feature(3, 0, 0, 0));
    q.add(1, kForever);
    q.add(2, kForever);
    CHECK(q.grants(3) == Grants{{1, 8}, {2, 8}, {1, 8}});
  }
  SECTION("round robin, AB 7: no limit, an SQ gives all it holds") {
    Queues q(RR, feature(7, 0, 0, 0));
    q.add(1, 5);
    q.add(2, 9);
    CHECK(q.grants(3) == Grants{{1, kNoLimit}, {2, kNoLimit}});
    CHECK(q.held[1] == 0);
    CHECK(q.held[2] == 0);
  }
  SECTION("WRR, AB 1: bursts of 2, cut to the level's credits") {
    // High 3 credits: 2 then 1; Medium 2: one burst of 2; Low 1.
    Queues q(WRR, feature(1, 2, 1, 0));
    q.add(1, kForever, H);
    q.add(2, kForever, M);
    q.add(3, kForever, L);
    CHECK(q.grants(8) == Grants{{1, 2}, {1, 1}, {2, 2}, {3, 1}, {1, 2}, {1, 1}, {2, 2}, {3, 1}});
  }
  SECTION("WRR, AB 7: each level's whole weight in one turn") {
    Queues q(WRR, feature(7, 2, 1, 0));
    q.add(1, kForever, H);
    q.add(2, kForever, M);
    q.add(3, kForever, L);
    CHECK(q.grants(6) == Grants{{1, 3}, {2, 2}, {3, 1}, {1, 3}, {2, 2}, {3, 1}});
  }
}

TEST_CASE("arbitration: WRR weights HPW=2 MPW=1 LPW=0, AB=0, one SQ per level", "[arbitration]") {
  Queues q(WRR, feature(0, 2, 1, 0));
  q.add(1, kForever, H);
  q.add(2, kForever, M);
  q.add(3, kForever, L);
  // A round: High 3, Medium 2, Low 1.
  CHECK(q.grants(12) == Grants{{1, 1}, {1, 1}, {1, 1}, {2, 1}, {2, 1}, {3, 1},
                               {1, 1}, {1, 1}, {1, 1}, {2, 1}, {2, 1}, {3, 1}});
}

TEST_CASE("arbitration: WRR round robin inside a level, kept across rounds", "[arbitration]") {
  Queues q(WRR, feature(0, 2, 1, 0));
  q.add(1, kForever, H);
  q.add(4, kForever, H);
  q.add(2, kForever, M);
  q.add(5, kForever, M);
  q.add(3, kForever, L);
  // Round 1: High 1 4 1, Medium 2 5, Low 3; round 2: High 4 1 4, Medium 2 5, Low 3.
  CHECK(q.picks(12) == Ids{1, 4, 1, 2, 5, 3, 4, 1, 4, 2, 5, 3});
}

TEST_CASE("arbitration: WRR levels with nothing ready are skipped", "[arbitration]") {
  SECTION("a High SQ that empties: its level's credits lapse") {
    Queues q(WRR, feature(0, 2, 1, 0));
    q.add(1, 4, H);
    q.add(2, kForever, M);
    q.add(3, kForever, L);
    CHECK(q.picks(13) == Ids{1, 1, 1, 2, 2, 3, 1, 2, 2, 3, 2, 2, 3});
  }
  SECTION("only High holds commands: it gets every turn") {
    Queues q(WRR, feature(0, 2, 1, 0));
    q.add(1, kForever, H);
    CHECK(q.picks(5) == Ids{1, 1, 1, 1, 1});
  }
  SECTION("only Low holds commands: it gets every turn") {
    Queues q(WRR, feature(0, 2, 1, 0));
    q.add(3, kForever, L);
    CHECK(q.picks(4) == Ids{3, 3, 3, 3});
  }
}

TEST_CASE("arbitration: WRR strict priority: admin, then urgent, then weighted", "[arbitration]") {
  SECTION("admin first, then urgent, then the weighted class") {
    Queues q(WRR, feature(0, 2, 1, 0));
    q.add(1, kForever, H);
    q.add(4, 2, U);
    q.add(0, 2);
    CHECK(q.picks(8) == Ids{0, 0, 4, 4, 1, 1, 1, 1});
  }
  SECTION("the admin SQ's burst is AB's") {
    Queues q(WRR, feature(1, 0, 0, 0));
    q.add(0, 3);
    q.add(1, kForever, H);
    CHECK(q.grants(3) == Grants{{0, 2}, {0, 2}, {1, 1}});
  }
  SECTION("urgent preempts a weighted round, which then goes on") {
    Queues q(WRR, feature(0, 2, 1, 0));
    q.add(1, kForever, H);
    q.add(2, kForever, M);
    q.add(3, kForever, L);
    CHECK(q.picks(4) == Ids{1, 1, 1, 2});
    q.add(4, 2, U);  // commands arrive in an Urgent SQ
    CHECK(q.picks(7) == Ids{4, 4, 2, 3, 1, 1, 1});
  }
  SECTION("urgent SQs share round robin and starve the weighted class") {
    Queues q(WRR, feature(0, 2, 1, 0));
    q.add(1, kForever, H);
    q.add(4, kForever, U);
    q.add(5, kForever, U);
    CHECK(q.picks(6) == Ids{4, 5, 4, 5, 4, 5});
  }
}

TEST_CASE("arbitration: reconfiguring starts a new round, a reset clears", "[arbitration]") {
  Queues q(WRR, feature(0, 2, 1, 0));
  q.add(1, kForever, H);
  q.add(2, kForever, M);
  CHECK(q.picks(4) == Ids{1, 1, 1, 2});
  q.arb.configure(WRR, feature(0, 0, 3, 0));  // High 1, Medium 4
  CHECK(q.picks(6) == Ids{1, 2, 2, 2, 2, 1});
  CHECK(q.arb.priority(1) == H);
  q.arb.reset();
  CHECK(!q.arb.any_ready());
  CHECK(q.arb.priority(1) == U);
  CHECK(q.arb.mechanism() == WRR);
  CHECK(q.arb.feature().mpw == 3);
}
