// fw::DbbufDevicePass: the device's doorbell-buffer steps as the controller
// and `nvmesim verify` both walk them, and the controller's accesses in that
// order for a given DbbufDeviceOrder.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "nvmesim/firmware/nvme/dbbuf_device_steps.h"
#include "tests/firmware/test_controller_env.h"

using namespace nvmesim::fw;
using Step = DbbufDeviceStep;

namespace {

// The steps of a pass with `entries` queue entries to go through (the
// decisions: FetchSqe / CqePending take one while any is left; WriteCqe
// always finds room), with each position on the way.
std::vector<Step> walk(DbbufDevicePass p, bool covered, unsigned entries, std::vector<unsigned>* positions = nullptr) {
  std::vector<Step> out;
  for (int guard = 0; guard < 64 && !p.done(); ++guard) {
    out.push_back(p.step());
    if (positions) positions->push_back(p.position());
    const bool decision = p.step() == Step::FetchSqe || p.step() == Step::CqePending;
    if (decision && entries == 0) {
      p.finish();
      continue;
    }
    if (p.step() == Step::FetchSqe || p.step() == Step::WriteCqe) --entries;
    p.advance(covered);
  }
  return out;
}

}  // namespace

TEST_CASE("dbbuf steps: the firmware's SQ pass and posting run, covered and not", "[dbbuf][steps]") {
  const DbbufDeviceOrder order;  // the firmware's
  CHECK(valid_access_order(order.sq));
  std::vector<unsigned> pos;
  CHECK(walk(DbbufDevicePass::sq_pass(true, order), true, 2, &pos) ==
        std::vector<Step>{Step::LoadShadow, Step::FetchSqe, Step::StoreEventIdx, Step::Barrier, Step::LoadShadow,
                          Step::FetchSqe, Step::StoreEventIdx, Step::Barrier, Step::LoadShadow, Step::FetchSqe});
  CHECK(pos == std::vector<unsigned>{0, 1, 2, 3, 4, 1, 2, 3, 4, 1});
  CHECK(walk(DbbufDevicePass::sq_pass(false, order), false, 2) ==
        std::vector<Step>{Step::FetchSqe, Step::FetchSqe, Step::FetchSqe});
  pos.clear();
  CHECK(walk(DbbufDevicePass::cq_post(order), true, 1, &pos) ==
        std::vector<Step>{Step::CqePending, Step::StoreEventIdx, Step::Barrier, Step::LoadShadow, Step::WriteCqe,
                          Step::CqePending});
  CHECK(pos == std::vector<unsigned>{0, 1, 2, 3, 4, 0});
  CHECK(walk(DbbufDevicePass::cq_post(order), false, 2) ==
        std::vector<Step>{Step::CqePending, Step::WriteCqe, Step::CqePending, Step::WriteCqe, Step::CqePending});
}

TEST_CASE("dbbuf steps: a cursor rebuilt from its position goes on the same way", "[dbbuf][steps]") {
  DbbufDeviceOrder order;
  order.sq = DbbufAccessOrder{{Step::LoadShadow, Step::StoreEventIdx, Step::Barrier}, 3};
  for (const bool sq : {true, false}) {
    DbbufDevicePass p = sq ? DbbufDevicePass::sq_pass(true, order) : DbbufDevicePass::cq_post(order);
    for (int i = 0; i < 12; ++i) {
      const DbbufDevicePass again = DbbufDevicePass::at(sq, order, p.position());
      CHECK(again.step() == p.step());
      CHECK(again.next_step(true) == p.next_step(true));
      CHECK(again.follows_barrier() == p.follows_barrier());
      CHECK(p.position() < DbbufDevicePass::kPositions);
      p.advance(true);
    }
  }
  // Only the firmware's load comes after a barrier.
  DbbufDevicePass p = DbbufDevicePass::cq_post(DbbufDeviceOrder{});
  p.advance(true);
  CHECK(p.step() == Step::StoreEventIdx);
  CHECK(p.next_step(true) == Step::Barrier);
  p.advance(true);
  p.advance(true);
  CHECK(p.step() == Step::LoadShadow);
  CHECK(p.follows_barrier());
  p.finish();
  CHECK(p.done());
  CHECK(p.step() == Step::Done);
  // Coverage that starts in mid-pass (Doorbell Buffer Config executed by
  // the admin pass) brings the next command's accesses.
  DbbufDevicePass admin = DbbufDevicePass::sq_pass(false, DbbufDeviceOrder{});
  CHECK(admin.step() == Step::FetchSqe);
  admin.advance(true);
  CHECK(admin.step() == Step::StoreEventIdx);
  CHECK_FALSE(valid_access_order(DbbufAccessOrder{{Step::FetchSqe}, 1}));
  CHECK_FALSE(valid_access_order(DbbufAccessOrder{{Step::Barrier}, 4}));
  DbbufDeviceOrder bad;
  bad.cq = DbbufAccessOrder{{Step::WriteCqe}, 1};
  const DbbufDeviceOrder fixed = sanitized_order(bad);
  CHECK(fixed.cq.count == 3);
  CHECK(fixed.cq.access[2] == Step::LoadShadow);
}

TEST_CASE("dbbuf steps: the controller makes its accesses in the order it is given", "[dbbuf][steps][controller]") {
  using namespace ctltest;
  constexpr uint64_t SHADOW = 0x600000, EVENTIDX = 0x601000;
  ControllerConfig c;
  // Load first, then the EventIdx store and a barrier (verify's load-store).
  c.dbbuf_order.sq = c.dbbuf_order.cq = DbbufAccessOrder{{Step::LoadShadow, Step::StoreEventIdx, Step::Barrier}, 3};
  Harness h(c);
  h.enable();
  h.create_pair(1, 16, 16);
  REQUIRE(field(h.admin(dbbuf_cmd(SHADOW, EVENTIDX)).status) == 0);
  h.place_io(1, Harness::read_cmd(0, 1, DATA));
  h.env.w32(SHADOW + 8, 1);  // the shadow SQ1 tail
  const uint64_t reads = h.ctrl.counters().shadow_reads, writes = h.ctrl.counters().eventidx_writes;
  CHECK(h.ctrl.process_sq(1, 64) == 1);
  // The pass's first load, then per command: load, EventIdx store.
  CHECK(h.ctrl.counters().shadow_reads == reads + 2);
  CHECK(h.ctrl.counters().eventidx_writes == writes + 1);
  CHECK(h.env.r32(EVENTIDX + 8) == 1);
}
