// Named statistics in named groups, after gem5's statistics::Group
// (src/base/statistics.hh, src/base/stats/group.hh): a component declares
// each counter as a member of its group, with a name, a unit and a
// description; the platform links the groups into one tree, resets the tree
// when measurement starts and dumps it by walking it (the JSON "stats"
// object, the sweep CSV, docs/metrics.md). Adding a statistic is its
// declaration and its increment. Plain C++ (no SystemC): the firmware counts
// with it too; models add a stat kind for sc_time (models/sim/stat_time.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nvmesim::stats {

// Count: events; Bytes: bytes moved; Time: simulated time, held as integer
// picoseconds (SystemC's default resolution) and written as ns with three
// decimals, so no figure is rounded.
enum class Unit { Count, Bytes, Time };
const char* unit_name(Unit unit);  // "count", "bytes", "ns"

class Group;

class Stat {
 public:
  // Registers itself with `parent`, which lists its stats in declaration order.
  Stat(Group& parent, std::string name, Unit unit, std::string description);
  Stat(const Stat&) = delete;
  Stat& operator=(const Stat&) = delete;
  virtual ~Stat() = default;

  const std::string& name() const { return name_; }
  Unit unit() const { return unit_; }
  const std::string& description() const { return description_; }
  // A scalar has one entry with an empty subname; a vector one per subname.
  virtual size_t size() const { return 1; }
  virtual std::string subname(size_t) const { return ""; }
  virtual uint64_t value(size_t index = 0) const = 0;  // Time: picoseconds
  virtual void reset() = 0;

 private:
  std::string name_;
  Unit unit_;
  std::string description_;
};

// A counter: `++s`, `s += n`, and it reads as its value.
class Scalar : public Stat {
 public:
  using Stat::Stat;
  Scalar& operator++() {
    ++value_;
    return *this;
  }
  uint64_t operator++(int) { return value_++; }
  Scalar& operator+=(uint64_t n) {
    value_ += n;
    return *this;
  }
  operator uint64_t() const { return value_; }
  uint64_t value(size_t = 0) const override { return value_; }
  void reset() override { value_ = 0; }

 private:
  uint64_t value_ = 0;
};

// One counter per named index (e.g. per VM-exit kind).
class Vector : public Stat {
 public:
  Vector(Group& parent, std::string name, Unit unit, std::string description,
         std::vector<std::string> subnames);
  uint64_t& operator[](size_t index) { return values_.at(index); }
  uint64_t operator[](size_t index) const { return values_.at(index); }
  size_t size() const override { return values_.size(); }
  std::string subname(size_t index) const override { return subnames_.at(index); }
  uint64_t value(size_t index = 0) const override { return values_.at(index); }
  void reset() override;

 private:
  std::vector<std::string> subnames_;
  std::vector<uint64_t> values_;
};

// What a group held at one moment: plain values, for results and writers.
struct StatValue {
  std::string name;
  Unit unit = Unit::Count;
  std::string description;
  std::vector<std::pair<std::string, uint64_t>> entries;  // (subname, value); scalar: one, ""
};

struct GroupValues {
  std::string name;  // "" for the root
  std::vector<StatValue> stats;
  std::vector<GroupValues> groups;

  const GroupValues* group(const std::string& path) const;  // "vcpu0", "driver.sq1"; nullptr if absent
  const StatValue* stat(const std::string& name) const;
  // The value of "group.path.stat" or "group.path.stat.subname"; throws
  // std::out_of_range naming the path when there is none.
  uint64_t at(const std::string& path) const;
  // The same value, or null when the tree has none.
  const uint64_t* find(const std::string& path) const;
  bool empty() const { return stats.empty() && groups.empty(); }
};

class Group {
 public:
  Group() = default;
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  virtual ~Group();  // leaves its parent; its children become roots

  // `child` appears in this group's dump as the subgroup `name`.
  void add_group(std::string name, Group& child);
  // `other`'s stats and subgroups appear as this group's own (gem5's
  // mergeStatGroup): one component's counters kept in two places.
  void merge(Group& other);
  // Zero every stat of this group, its merged groups and subgroups.
  void reset();
  // Snapshot of the tree under this group. Throws std::logic_error on two
  // stats or groups of one name in one group.
  GroupValues values(const std::string& name = "");

  const std::vector<Stat*>& stats() const { return stats_; }

 protected:
  // Brings lazily accounted stats up to date; called before reset and values.
  virtual void update() {}

 private:
  friend class Stat;
  void detach(Group* child);
  void collect(GroupValues& out);

  Group* parent_ = nullptr;
  std::vector<Stat*> stats_;
  std::vector<std::pair<std::string, Group*>> children_;
  std::vector<Group*> merged_;
};

}  // namespace nvmesim::stats
