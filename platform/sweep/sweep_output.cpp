#include "nvmesim/platform/sweep/sweep_output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>

#include "nvmesim/platform/config/input_file.h"
#include "nvmesim/platform/config/user_text.h"

namespace nvmesim::platform::sweep {

namespace {

// A sweep's own files: regular files only (a FIFO would block), bounded.
InputLimits sweep_file_limits() {
  InputLimits l;
  l.max_bytes = kSweepFileMax;
  l.check_lines = false;
  return l;
}

}  // namespace

bool read_file(const std::string& path, std::string& text) {
  try {
    return read_input_file_if_exists(path, path, text, sweep_file_limits());
  } catch (const InputFileError&) {
    return false;
  }
}

void write_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write '" + tmp + "' (" + std::strerror(errno) + ")");
    out << text;
    out.close();
    if (!out) throw std::runtime_error("error writing '" + tmp + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename '" + tmp + "' (" + std::strerror(errno) + ")");
}

void make_dirs(const std::string& path) {
  for (size_t at = 1; at <= path.size(); ++at) {
    if (at != path.size() && path[at] != '/') continue;
    const std::string part = path.substr(0, at);
    if (::mkdir(part.c_str(), 0777) != 0 && errno != EEXIST)
      throw std::runtime_error("cannot create directory '" + part + "' (" + std::strerror(errno) + ")");
  }
}

std::string first_line(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.pop_back();
    size_t a = 0;
    while (a < line.size() && (line[a] == ' ' || line[a] == '\t')) ++a;
    if (a < line.size()) return line.substr(a);
  }
  return "";
}

Record make_record(const Point& point, const std::string& out, const std::string& err, int exit_code) {
  Record r;
  r.point = point.values;
  r.seed = point.seed;
  std::string parse_error;
  try {
    r.results = parse_json(out);
  } catch (const JsonError& e) {
    parse_error = e.what();
  }
  const bool object = parse_error.empty() && r.results.kind == Json::Object;
  if (exit_code == 0 && object) {
    // A run that ended but not well (stalled, device_needs_reset, ...) is
    // not done: its status is its outcome, and --resume runs it again.
    const Json* outcome = r.results.find("outcome");
    r.status = outcome && outcome->kind == Json::String && !outcome->text.empty() ? outcome->text : "ok";
    if (r.status != "ok")
      if (const Json* h = r.results.find("headline"); h && h->kind == Json::String) r.error = h->text;
    return r;
  }
  r.status = "failed";
  r.error = first_line(err);
  if (r.error.empty())
    r.error = exit_code != 0 ? "exit code " + std::to_string(exit_code)
                             : "the output is not a JSON object" +
                                   (parse_error.empty() ? std::string() : " (" + parse_error + ")");
  if (!object) r.results = Json();
  return r;
}

std::string jsonl_line(const Record& r) {
  Json point = Json::object();
  for (const auto& [name, value] : r.point) point.fields.emplace_back(name, Json::string(value));
  Json line = Json::object();
  line.fields.emplace_back("point", point);
  line.fields.emplace_back("seed", Json::number(std::to_string(r.seed)));
  line.fields.emplace_back("status", Json::string(r.status));
  line.fields.emplace_back("error", Json::string(r.error));
  line.fields.emplace_back("results", r.results);
  return to_json(line);
}

Record parse_jsonl_line(const std::string& text) {
  const Json line = parse_json(text);
  const Json* point = line.find("point");
  const Json* seed = line.find("seed");
  const Json* status = line.find("status");
  if (line.kind != Json::Object || !point || point->kind != Json::Object || !seed ||
      seed->kind != Json::Number || !status || status->kind != Json::String)
    throw JsonError("not a sweep record (needs point, seed, status)");
  Record r;
  for (const auto& [name, value] : point->fields) {
    if (value.kind != Json::String) throw JsonError("point value of '" + name + "' is not a string");
    r.point.emplace_back(name, value.text);
  }
  try {
    r.seed = std::stoull(seed->text);
  } catch (const std::exception&) {
    throw JsonError("bad seed '" + seed->text + "'");
  }
  r.status = status->text;
  if (const Json* e = line.find("error"); e && e->kind == Json::String) r.error = e->text;
  if (const Json* res = line.find("results")) r.results = *res;
  return r;
}

std::vector<Record> read_jsonl(const std::string& path) {
  std::vector<Record> records;
  std::string text;
  if (!read_input_file_if_exists(path, path, text, sweep_file_limits())) return records;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      records.push_back(parse_jsonl_line(line));
    } catch (const JsonError&) {
    }
  }
  return records;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

std::string csv_text(const std::vector<std::string>& axis_names, const std::vector<Record>& records) {
  // Metric columns: every flattened key, in the order first seen.
  std::vector<std::string> metrics;
  std::map<std::string, size_t> column;
  std::vector<std::vector<std::pair<std::string, std::string>>> flat(records.size());
  for (size_t k = 0; k < records.size(); ++k) {
    if (records[k].results.kind != Json::Null) flatten(records[k].results, "", flat[k]);
    for (const auto& kv : flat[k])
      if (column.emplace(kv.first, metrics.size()).second) metrics.push_back(kv.first);
  }
  std::string o;
  auto row = [&](const std::vector<std::string>& fields) {
    for (size_t k = 0; k < fields.size(); ++k) o += (k ? "," : "") + csv_field(fields[k]);
    o += "\n";
  };
  std::vector<std::string> header = axis_names;
  for (const char* h : {"seed", "status", "error"}) header.push_back(h);
  header.insert(header.end(), metrics.begin(), metrics.end());
  row(header);
  for (size_t k = 0; k < records.size(); ++k) {
    const Record& r = records[k];
    std::vector<std::string> fields;
    for (const std::string& name : axis_names) {
      std::string v;
      for (const auto& [n, value] : r.point)
        if (n == name) v = value;
      fields.push_back(v);
    }
    fields.push_back(std::to_string(r.seed));
    fields.push_back(r.status);
    fields.push_back(r.error);
    std::vector<std::string> m(metrics.size());
    for (const auto& [key, value] : flat[k]) m[column[key]] = value;
    fields.insert(fields.end(), m.begin(), m.end());
    row(fields);
  }
  return o;
}

void write_results(const std::string& dir, const std::vector<std::string>& axis_names,
                   const std::vector<Record>& records) {
  std::string jsonl;
  for (const Record& r : records) jsonl += jsonl_line(r) + "\n";
  write_file_atomic(dir + "/results.jsonl", jsonl);
  write_file_atomic(dir + "/results.csv", csv_text(axis_names, records));
}

void write_manifest(const std::string& dir, const Manifest& m) {
  Json j = Json::object();
  j.fields.emplace_back("seed", Json::number(std::to_string(m.seed)));
  Json fixed;
  fixed.kind = Json::Array;
  for (const std::string& f : m.fixed) fixed.items.push_back(Json::string(f));
  j.fields.emplace_back("fixed", fixed);
  Json axes;
  axes.kind = Json::Array;
  for (const Axis& a : m.axes) {
    Json axis = Json::object(), values;
    values.kind = Json::Array;
    for (const std::string& v : a.values) values.items.push_back(Json::string(v));
    axis.fields.emplace_back("name", Json::string(a.name));
    axis.fields.emplace_back("values", values);
    axes.items.push_back(axis);
  }
  j.fields.emplace_back("axes", axes);
  write_file_atomic(dir + "/sweep.json", to_json(j) + "\n");
}

bool read_manifest(const std::string& dir, Manifest& m) {
  // Every way sweep.json can be wrong is the user's to fix (exit 2, naming
  // the file): not a regular file, too long, not JSON, not a manifest.
  const std::string path = dir + "/sweep.json";
  std::string text;
  try {
    if (!read_input_file_if_exists(path, path, text, sweep_file_limits())) return false;
  } catch (const InputFileError& e) {
    throw UsageError(e.what());
  }
  const std::string where = path + ": ";
  Json j;
  try {
    j = parse_json(text);
  } catch (const JsonError& e) {
    throw UsageError(where + "not JSON (" + e.what() + ")");
  }
  const Json* seed = j.find("seed");
  const Json* fixed = j.find("fixed");
  const Json* axes = j.find("axes");
  auto all_strings = [](const Json& array) {
    for (const Json& v : array.items)
      if (v.kind != Json::String) return false;
    return true;
  };
  if (j.kind != Json::Object || !seed || seed->kind != Json::Number ||
      seed->text.find_first_not_of("0123456789") != std::string::npos || seed->text.size() > 19 || !fixed ||
      fixed->kind != Json::Array || !all_strings(*fixed) || !axes || axes->kind != Json::Array)
    throw UsageError(where + "not a sweep manifest (needs seed, a decimal integer; fixed, strings; axes)");
  m = Manifest();
  m.seed = std::stoull(seed->text);
  for (const Json& f : fixed->items) m.fixed.push_back(f.text);
  for (const Json& a : axes->items) {
    const Json* name = a.find("name");
    const Json* values = a.find("values");
    if (!name || name->kind != Json::String || !values || values->kind != Json::Array || !all_strings(*values))
      throw UsageError(where + "an axis needs a name and values (strings)");
    // An axis as --grid gives it: a known parameter; a seed axis holds
    // decimal integers (point_seed reads them as numbers).
    if (!ParamRegistry::builtin().find(name->text))
      throw UsageError(where + "axis " + quoted(name->text) + " is not a parameter (see --list-params)");
    Axis axis;
    axis.name = name->text;
    for (const Json& v : values->items) {
      if (axis.name == "seed" && (v.text.empty() || v.text.size() > 18 ||
                                  v.text.find_first_not_of("0123456789") != std::string::npos))
        throw UsageError(where + "seed value " + quoted(v.text) + " is not a decimal integer below 10^18");
      axis.values.push_back(v.text);
    }
    m.axes.push_back(axis);
  }
  return true;
}

}  // namespace nvmesim::platform::sweep
