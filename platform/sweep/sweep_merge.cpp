#include "nvmesim/platform/sweep/sweep_merge.h"

#include "nvmesim/platform/config/input_file.h"

#include <algorithm>
#include <map>

#include "nvmesim/platform/sweep/sweep_runner.h"

namespace nvmesim::platform::sweep {

namespace {

std::string key(PointValues values, uint64_t seed) {
  std::sort(values.begin(), values.end());
  std::string k = std::to_string(seed);
  for (const auto& [name, value] : values) k += "\n" + name + "=" + value;
  return k;
}

}  // namespace

std::vector<Record> collect_records(const std::string& dir) {
  std::vector<Record> found;
  try {
    found = read_jsonl(dir + "/results.jsonl");
    for (Record& r : read_jsonl(dir + "/results.jsonl.partial")) found.push_back(std::move(r));
  } catch (const InputFileError& e) {
    throw UsageError(std::string("--merge: ") + e.what());
  }
  Manifest m;
  if (read_manifest(dir, m)) {
    for (const Point& p : expand_grid(m.axes, m.seed)) {
      Record r;
      if (record_from_files(dir, p, r)) found.push_back(std::move(r));
    }
  }
  return found;
}

std::vector<Record> assemble(const std::vector<Point>& points, const std::vector<Record>& found) {
  std::map<std::string, const Record*> best;
  for (const Record& r : found) {
    if (r.status == "missing") continue;  // a placeholder from an earlier merge
    const Record*& slot = best[key(r.point, r.seed)];
    // An ok record wins; otherwise the later one (a rerun) does.
    if (!slot || r.status == "ok" || slot->status != "ok") slot = &r;
  }
  std::vector<Record> out;
  for (const Point& p : points) {
    auto it = best.find(key(p.values, p.seed));
    Record r;
    if (it != best.end()) {
      r = *it->second;
    } else {
      r.status = "missing";
      r.error = "no result for this point in the merged directories";
    }
    r.point = p.values;  // grid's axis order
    r.seed = p.seed;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<Axis> union_axes(const std::vector<std::pair<std::string, Manifest>>& manifests) {
  std::vector<Axis> axes;
  auto names = [](const std::vector<Axis>& a) {
    std::vector<std::string> n;
    for (const Axis& x : a) n.push_back(x.name);
    return n;
  };
  for (const auto& [dir, m] : manifests) {
    if (axes.empty()) {
      axes = m.axes;
      continue;
    }
    std::vector<std::string> a = names(axes), b = names(m.axes);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b)
      throw UsageError("--merge: " + dir + " sweeps other parameters than " + manifests.front().first +
                       " (give the grid with --grid to merge them)");
    for (const Axis& src : m.axes)
      for (Axis& dst : axes)
        if (dst.name == src.name)
          for (const std::string& v : src.values)
            if (std::find(dst.values.begin(), dst.values.end(), v) == dst.values.end()) dst.values.push_back(v);
  }
  return axes;
}

}  // namespace nvmesim::platform::sweep
