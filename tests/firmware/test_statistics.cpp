// The statistics groups (firmware/sim/statistics.h): registration order, merge,
// reset through the tree, lookups, and the errors that keep a dump unambiguous.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "nvmesim/firmware/sim/statistics.h"

using namespace nvmesim;

namespace {
struct Doorbells : stats::Group {
  stats::Scalar updates{*this, "updates", stats::Unit::Count, "published"};
  stats::Scalar mmio{*this, "mmio", stats::Unit::Count, "written to BAR0"};
};
struct Exits : stats::Group {
  stats::Vector count{*this, "exits", stats::Unit::Count, "by kind", {"mmio", "hlt"}};
  stats::Scalar wait{*this, "wait", stats::Unit::Time, "lock wait"};
};
}  // namespace

TEST_CASE("statistics: groups dump their stats in declaration order, merged and nested", "[stats]") {
  stats::Group root;
  Doorbells sq;
  Exits exits;
  Doorbells vcpu;
  root.add_group("vcpu0", vcpu);
  vcpu.merge(exits);
  vcpu.add_group("sq1", sq);
  ++sq.updates;
  sq.updates += 4;
  sq.mmio++;
  exits.count[1] = 7;
  exits.wait += 1234567;  // ps
  const stats::GroupValues v = root.values();
  REQUIRE(v.groups.size() == 1);
  const stats::GroupValues& g = v.groups[0];
  CHECK(g.name == "vcpu0");
  REQUIRE(g.stats.size() == 4);  // its own, then the merged group's
  CHECK(g.stats[0].name == "updates");
  CHECK(g.stats[2].name == "exits");
  CHECK(g.stats[2].entries[1] == std::make_pair(std::string("hlt"), uint64_t(7)));
  CHECK(v.at("vcpu0.sq1.updates") == 5);
  CHECK(v.at("vcpu0.sq1.mmio") == 1);
  CHECK(v.at("vcpu0.exits.hlt") == 7);
  CHECK(v.at("vcpu0.wait") == 1234567);
  CHECK(v.group("vcpu0.sq1") != nullptr);
  CHECK(v.group("vcpu0.sq2") == nullptr);
  CHECK_THROWS_AS(v.at("vcpu0.sq1.nothing"), std::out_of_range);
  CHECK(std::string(stats::unit_name(stats::Unit::Time)) == "ns");

  root.reset();
  CHECK(sq.updates == 0);
  CHECK(exits.count[1] == 0);
  CHECK(exits.wait.value() == 0);
}

TEST_CASE("statistics: a destroyed group leaves its parent, and names must be unique", "[stats]") {
  stats::Group root;
  {
    Doorbells gone;
    root.add_group("sq0", gone);
    CHECK(root.values().groups.size() == 1);
  }
  CHECK(root.values().groups.empty());
  Doorbells a, b;
  root.add_group("sq1", a);
  root.add_group("sq1", b);
  CHECK_THROWS_AS(root.values(), std::logic_error);
  stats::Group twice;
  Doorbells c, d;
  twice.merge(c);
  twice.merge(d);  // two "updates"
  CHECK_THROWS_AS(twice.values(), std::logic_error);
}
