#include "nvmesim/firmware/sim/statistics.h"

#include <algorithm>
#include <stdexcept>

namespace nvmesim::stats {

const char* unit_name(Unit unit) {
  switch (unit) {
    case Unit::Count: return "count";
    case Unit::Bytes: return "bytes";
    case Unit::Time: return "ns";
  }
  return "?";
}

Stat::Stat(Group& parent, std::string name, Unit unit, std::string description)
    : name_(std::move(name)), unit_(unit), description_(std::move(description)) {
  parent.stats_.push_back(this);
}

Vector::Vector(Group& parent, std::string name, Unit unit, std::string description,
               std::vector<std::string> subnames)
    : Stat(parent, std::move(name), unit, std::move(description)),
      subnames_(std::move(subnames)),
      values_(subnames_.size(), 0) {}

void Vector::reset() { std::fill(values_.begin(), values_.end(), 0); }

Group::~Group() {
  if (parent_) parent_->detach(this);
  for (auto& c : children_) c.second->parent_ = nullptr;
  for (Group* m : merged_) m->parent_ = nullptr;
}

void Group::detach(Group* child) {
  children_.erase(std::remove_if(children_.begin(), children_.end(),
                                 [&](const auto& c) { return c.second == child; }),
                  children_.end());
  merged_.erase(std::remove(merged_.begin(), merged_.end(), child), merged_.end());
}

void Group::add_group(std::string name, Group& child) {
  if (child.parent_) child.parent_->detach(&child);
  child.parent_ = this;
  children_.emplace_back(std::move(name), &child);
}

void Group::merge(Group& other) {
  if (other.parent_) other.parent_->detach(&other);
  other.parent_ = this;
  merged_.push_back(&other);
}

void Group::reset() {
  update();
  for (Stat* s : stats_) s->reset();
  for (Group* m : merged_) m->reset();
  for (auto& c : children_) c.second->reset();
}

void Group::collect(GroupValues& out) {
  update();
  for (const Stat* s : stats_) {
    StatValue v{s->name(), s->unit(), s->description(), {}};
    for (size_t i = 0; i < s->size(); ++i) v.entries.emplace_back(s->subname(i), s->value(i));
    for (const StatValue& seen : out.stats)
      if (seen.name == v.name)
        throw std::logic_error("statistics: two stats named '" + v.name + "' in group '" +
                               out.name + "'");
    out.stats.push_back(std::move(v));
  }
  for (Group* m : merged_) m->collect(out);
  for (auto& c : children_) {
    for (const GroupValues& seen : out.groups)
      if (seen.name == c.first)
        throw std::logic_error("statistics: two groups named '" + c.first + "' in group '" +
                               out.name + "'");
    GroupValues g;
    g.name = c.first;
    c.second->collect(g);
    out.groups.push_back(std::move(g));
  }
}

GroupValues Group::values(const std::string& name) {
  GroupValues out;
  out.name = name;
  collect(out);
  return out;
}

const GroupValues* GroupValues::group(const std::string& path) const {
  const GroupValues* g = this;
  size_t from = 0;
  while (g && from <= path.size()) {
    const size_t dot = path.find('.', from);
    const std::string part = path.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    const GroupValues* next = nullptr;
    for (const GroupValues& c : g->groups)
      if (c.name == part) next = &c;
    g = next;
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  return g;
}

const StatValue* GroupValues::stat(const std::string& name) const {
  for (const StatValue& s : stats)
    if (s.name == name) return &s;
  return nullptr;
}

const uint64_t* GroupValues::find(const std::string& path) const {
  // Longest group prefix, then a stat, then (for vectors) a subname.
  const GroupValues* g = this;
  size_t from = 0;
  for (;;) {
    const size_t dot = path.find('.', from);
    const std::string part = path.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    const GroupValues* next = nullptr;
    for (const GroupValues& c : g->groups)
      if (c.name == part) next = &c;
    if (next && dot != std::string::npos) {
      g = next;
      from = dot + 1;
      continue;
    }
    const StatValue* s = g->stat(part);
    const std::string sub = dot == std::string::npos ? "" : path.substr(dot + 1);
    if (s)
      for (const auto& e : s->entries)
        if (e.first == sub) return &e.second;
    return nullptr;
  }
}

uint64_t GroupValues::at(const std::string& path) const {
  if (const uint64_t* v = find(path)) return *v;
  throw std::out_of_range("statistics: no value '" + path + "'");
}

}  // namespace nvmesim::stats
