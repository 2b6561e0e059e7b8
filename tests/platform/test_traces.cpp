// --vcd and --timeline: the files of small runs, checked by parsing them
// here and (VCD) by GTKWave's own vcd2fst.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "nvmesim/platform/sweep/sweep_json.h"
#include "run_binary.h"
#include "text_file.h"

using nvmesim::test::slurp;

using nvmesim::test::run_nvmesim;

namespace {

std::string temp_path(const std::string& name) {
  return "/tmp/nvmesim_traces_" + std::to_string(::getpid()) + "_" + name;
}

// The number after `"key": ` that follows `after` in a JSON text.
uint64_t json_after(const std::string& json, const std::string& after, const std::string& key) {
  const size_t a = json.find(after);
  if (a == std::string::npos) throw std::runtime_error("no " + after);
  const std::string k = "\"" + key + "\": ";
  const size_t at = json.find(k, a);
  if (at == std::string::npos) throw std::runtime_error("no key " + key);
  return std::stoull(json.substr(at + k.size()));
}

// ---------------------------------------------------------------- VCD
struct VcdVar {
  std::string name;  // "q1.shadow_sq_tail"
  unsigned width = 0;
  bool string = false;
  std::string value;       // last value (binary digits or text)
  uint64_t changes = 0;    // after $dumpvars
  uint64_t rises = 0;      // 1-bit: changes to 1 after $dumpvars
};

struct Vcd {
  std::string timescale;
  std::map<std::string, VcdVar> vars;  // by id
  std::vector<uint64_t> times;
  bool dumpvars = false;
  VcdVar& by_name(const std::string& n) {
    for (auto& [id, v] : vars)
      if (v.name == n) return v;
    throw std::runtime_error("no VCD variable " + n);
  }
  bool has(const std::string& n) const {
    for (const auto& [id, v] : vars)
      if (v.name == n) return true;
    return false;
  }
};

uint64_t binary_value(const std::string& digits) {
  uint64_t v = 0;
  for (char c : digits) v = v * 2 + (c == '1');
  return v;
}

// Parses the subset of VCD nvmesim writes, strictly: anything else fails.
Vcd parse_vcd(const std::string& text) {
  Vcd vcd;
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> scopes;
  bool header = true, in_dumpvars = false;
  auto set = [&](const std::string& id, const std::string& value) {
    auto it = vcd.vars.find(id);
    REQUIRE(it != vcd.vars.end());
    VcdVar& v = it->second;
    if (!in_dumpvars) {
      REQUIRE(vcd.dumpvars);
      ++v.changes;
      if (v.width == 1 && value == "1") ++v.rises;
    }
    v.value = value;
  };
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream w(line);
    std::string tok;
    w >> tok;
    if (header) {
      if (tok == "$timescale") {
        w >> vcd.timescale;
      } else if (tok == "$scope") {
        std::string kind, name;
        w >> kind >> name;
        REQUIRE(kind == "module");
        scopes.push_back(name);
      } else if (tok == "$upscope") {
        REQUIRE(!scopes.empty());
        scopes.pop_back();
      } else if (tok == "$var") {
        std::string type, id, name;
        unsigned width = 0;
        w >> type >> width >> id >> name;
        REQUIRE((type == "wire" || type == "string"));
        REQUIRE(scopes.size() == 2);  // nvmesim.<scope>.<name>
        REQUIRE(scopes[0] == "nvmesim");
        VcdVar v;
        v.name = scopes[1] + "." + name;
        v.width = width;
        v.string = type == "string";
        REQUIRE(vcd.vars.count(id) == 0);
        vcd.vars[id] = v;
      } else if (tok == "$enddefinitions") {
        REQUIRE(scopes.empty());
        header = false;
      } else {
        REQUIRE((tok == "$version" || tok == "$date" || tok == "$comment"));
      }
      continue;
    }
    if (tok[0] == '#') {
      const uint64_t t = std::stoull(tok.substr(1));
      if (!vcd.times.empty()) REQUIRE(t > vcd.times.back());  // strictly increasing
      vcd.times.push_back(t);
    } else if (tok == "$dumpvars") {
      REQUIRE(!vcd.dumpvars);
      REQUIRE(!vcd.times.empty());
      in_dumpvars = true;
    } else if (tok == "$end") {
      REQUIRE(in_dumpvars);
      in_dumpvars = false;
      vcd.dumpvars = true;
    } else if (tok[0] == 'b') {
      std::string id;
      w >> id;
      REQUIRE(tok.find_first_not_of("01", 1) == std::string::npos);
      REQUIRE(tok.size() - 1 <= vcd.vars.at(id).width);
      set(id, tok.substr(1));
    } else if (tok[0] == 's') {
      std::string id;
      w >> id;
      REQUIRE(vcd.vars.at(id).string);
      set(id, tok.substr(1));
    } else {
      REQUIRE((tok[0] == '0' || tok[0] == '1'));
      REQUIRE(tok.size() >= 2);
      REQUIRE(vcd.vars.at(tok.substr(1)).width == 1);
      set(tok.substr(1), tok.substr(0, 1));
    }
  }
  REQUIRE_FALSE(header);
  return vcd;
}

// ---------------------------------------------------------------- JSON
// The timeline is read with the sweep's strict JSON reader (numbers keep
// their text, so timestamps stay exact).
using nvmesim::platform::sweep::Json;
using nvmesim::platform::sweep::parse_json;

// "12.345678" microseconds -> picoseconds, exactly.
uint64_t us_to_ps(const std::string& t) {
  const size_t dot = t.find('.');
  REQUIRE(dot != std::string::npos);
  REQUIRE(t.size() - dot - 1 == 6);
  return std::stoull(t.substr(0, dot)) * 1000000 + std::stoull(t.substr(dot + 1));
}

struct Span {
  uint64_t start, end;
};

// What a timeline holds, after checking its structure: valid JSON, the
// Object Format, events in time order, X spans ordered and disjoint on each
// vCPU and host-thread track, B/E and b/e balanced.
struct Timeline {
  std::map<uint64_t, std::string> track_names;  // tid -> name
  std::map<uint64_t, std::vector<Span>> x_spans;
  std::map<uint64_t, uint64_t> events_per_tid;
  uint64_t io_spans = 0, instants = 0, bursts = 0;
  std::map<std::string, uint64_t> begins;  // B spans by name
  uint64_t min_ts = UINT64_MAX, max_ts = 0;  // including span ends
};

Timeline check_timeline(const std::string& text) {
  Json doc;
  REQUIRE_NOTHROW(doc = parse_json(text));
  REQUIRE(doc.kind == Json::Object);
  const Json* unit = doc.find("displayTimeUnit");
  REQUIRE(unit);
  CHECK(unit->text == "ns");
  const Json* events = doc.find("traceEvents");
  REQUIRE(events);
  REQUIRE(events->kind == Json::Array);
  Timeline tl;
  std::map<uint64_t, std::vector<std::string>> be_stack;  // tid -> open B names
  std::map<std::string, std::pair<std::string, uint64_t>> async_open;  // id -> name, ts
  uint64_t last_ts = 0;
  for (const Json& e : events->items) {
    REQUIRE(e.kind == Json::Object);
    const Json* ph = e.find("ph");
    const Json* tid = e.find("tid");
    const Json* pid = e.find("pid");
    REQUIRE(ph);
    REQUIRE(tid);
    REQUIRE(pid);
    const uint64_t t = std::stoull(tid->text);
    if (ph->text == "M") {
      const Json* name = e.find("name");
      REQUIRE(name);
      if (name->text == "thread_name") tl.track_names[t] = e.find("args")->find("name")->text;
      continue;
    }
    REQUIRE(e.find("name"));
    REQUIRE(e.find("ts"));
    const uint64_t ts = us_to_ps(e.find("ts")->text);
    REQUIRE(ts >= last_ts);  // streamed in time order
    last_ts = ts;
    REQUIRE(tl.track_names.count(t));  // every track is named first
    ++tl.events_per_tid[t];
    uint64_t end = ts;
    const std::string& p = ph->text;
    if (p == "X") {
      REQUIRE(e.find("dur"));
      end = ts + us_to_ps(e.find("dur")->text);
      tl.x_spans[t].push_back({ts, end});
      if (e.find("name")->text == "burst") {
        ++tl.bursts;
        REQUIRE(e.find("args"));
        REQUIRE(e.find("args")->find("commands"));
        REQUIRE(e.find("args")->find("completions"));
      }
    } else if (p == "B") {
      be_stack[t].push_back(e.find("name")->text);
      ++tl.begins[e.find("name")->text];
    } else if (p == "E") {
      REQUIRE(!be_stack[t].empty());
      be_stack[t].pop_back();
    } else if (p == "b") {
      const std::string id = e.find("id")->text;
      REQUIRE(async_open.count(id) == 0);
      async_open[id] = {e.find("name")->text, ts};
      ++tl.io_spans;
    } else if (p == "e") {
      const std::string id = e.find("id")->text;
      REQUIRE(async_open.count(id) == 1);
      CHECK(async_open[id].first == e.find("name")->text);
      REQUIRE(async_open[id].second <= ts);
      async_open.erase(id);
    } else {
      REQUIRE(p == "i");
      ++tl.instants;
    }
    tl.min_ts = std::min(tl.min_ts, ts);
    tl.max_ts = std::max(tl.max_ts, end);
  }
  for (const auto& [t, s] : be_stack) CHECK(s.empty());
  CHECK(async_open.empty());
  // vCPU and host-thread tracks: X spans sorted and disjoint.
  for (const auto& [t, spans] : tl.x_spans) {
    const std::string& n = tl.track_names[t];
    if (n.rfind("vcpu", 0) != 0 && n.rfind("host", 0) != 0) continue;
    for (size_t i = 1; i < spans.size(); ++i) {
      INFO("track " << n << " span " << i);
      REQUIRE(spans[i].start >= spans[i - 1].start);
      REQUIRE(spans[i].start >= spans[i - 1].end);
    }
  }
  return tl;
}

}  // namespace

TEST_CASE("traces: GTKWave's vcd2fst converts the VCD", "[traces]") {
  // CI installs gtkwave (README's apt-get line): a missing tool is a failure.
  REQUIRE(std::system("command -v vcd2fst >/dev/null 2>&1") == 0);
  const std::string vcd = temp_path("a.vcd"), fst = temp_path("a.fst");
  const auto r = run_nvmesim("--number_ios=200 --nvme.dbbuf=spec --vcd " + vcd);
  REQUIRE(r.exit_code == 0);
  const int rc = std::system(("vcd2fst " + vcd + " " + fst + " >/dev/null 2>&1").c_str());
  CHECK(WIFEXITED(rc));
  CHECK(WEXITSTATUS(rc) == 0);
  std::ifstream f(fst, std::ios::binary | std::ios::ate);
  CHECK(f.tellg() > 0);
  std::remove(vcd.c_str());
  std::remove(fst.c_str());
}

TEST_CASE("traces: the VCD's value changes follow the doorbell counts", "[traces]") {
  const std::string vcd_path = temp_path("b.vcd");
  // 200 I/Os on a 64-entry queue, one SQ update per I/O.
  const auto r = run_nvmesim(
      "--number_ios=200 --numjobs=1 --iodepth_batch_submit=1 --nvme.dbbuf=spec "
      "--guest.io_queue_entries=64 --output-format=json --vcd " + vcd_path);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("warning") == std::string::npos);
  Vcd vcd = parse_vcd(slurp(vcd_path));
  std::remove(vcd_path.c_str());
  CHECK(vcd.timescale == "1ps");
  REQUIRE(vcd.dumpvars);
  CHECK(vcd.times.front() == 0);

  const uint64_t sq_updates = json_after(r.out, "\"sq\": {", "updates");
  const uint64_t sq_mmio = json_after(r.out, "\"sq\": {", "mmio");
  const uint64_t sq_suppressed = json_after(r.out, "\"sq\": {", "suppressed");
  const uint64_t cq_updates = json_after(r.out, "\"cq\": {", "updates");
  const uint64_t cq_mmio = json_after(r.out, "\"cq\": {", "mmio");
  const uint64_t cq_suppressed = json_after(r.out, "\"cq\": {", "suppressed");
  REQUIRE(sq_updates == 200);  // iodepth_batch_submit=1
  REQUIRE(sq_suppressed > 0);  // the EventIdx did suppress some

  // The driver publishes each new tail once through the shadow doorbell.
  CHECK(vcd.by_name("q1.shadow_sq_tail").changes == sq_updates);
  CHECK(vcd.by_name("q1.driver_sq_tail").changes == sq_updates);
  CHECK(vcd.by_name("q1.shadow_cq_head").changes == cq_updates);
  CHECK(vcd.by_name("q1.sq_doorbell_mmio").rises == sq_mmio);
  CHECK(vcd.by_name("q1.sq_suppressed").rises == sq_suppressed);
  CHECK(vcd.by_name("q1.cq_doorbell_mmio").rises == cq_mmio);
  CHECK(vcd.by_name("q1.cq_suppressed").rises == cq_suppressed);
  CHECK(vcd.by_name("msix.vector1").rises == json_after(r.out, "\"controller\": {", "interrupts"));
  // End state: 200 mod 64 = 8 for every ring index; nothing outstanding.
  CHECK(binary_value(vcd.by_name("q1.driver_sq_tail").value) == 200 % 64);
  CHECK(binary_value(vcd.by_name("q1.shadow_sq_tail").value) == 200 % 64);
  CHECK(binary_value(vcd.by_name("q1.device_sq_head").value) == 200 % 64);
  CHECK(binary_value(vcd.by_name("q1.driver_cq_head").value) == 200 % 64);
  CHECK(binary_value(vcd.by_name("q1.outstanding").value) == 0);
  // Pulses end low; the vCPU ends in guest code (it finished the job).
  CHECK(vcd.by_name("q1.sq_doorbell_mmio").value == "0");
  CHECK(vcd.by_name("vcpu0.state_name").value == "guest");
  CHECK(vcd.by_name("vcpu0.state").changes > 0);
  CHECK(vcd.by_name("host0.state").changes > 0);
}

TEST_CASE("traces: without the doorbell buffer every update is an MMIO pulse", "[traces]") {
  const std::string vcd_path = temp_path("c.vcd");
  const auto r = run_nvmesim("--number_ios=200 --nvme.dbbuf=off --output-format=json --vcd " + vcd_path);
  REQUIRE(r.exit_code == 0);
  Vcd vcd = parse_vcd(slurp(vcd_path));
  std::remove(vcd_path.c_str());
  CHECK(vcd.by_name("q1.sq_doorbell_mmio").rises == 200);
  CHECK(vcd.by_name("q1.sq_suppressed").rises == 0);
  CHECK(vcd.by_name("q1.shadow_sq_tail").changes == 0);  // no shadow buffer
  CHECK(vcd.by_name("q1.cq_doorbell_mmio").rises == json_after(r.out, "\"cq\": {", "updates"));
}

TEST_CASE("traces: the timeline is valid JSON with balanced, ordered spans", "[traces]") {
  const std::string path = temp_path("d.json");
  // Two jobs (two vCPUs, two queues) so tracks interleave.
  const auto r = run_nvmesim("--number_ios=200 --numjobs=2 --iodepth=16 --nvme.dbbuf=spec "
                             "--output-format=json --timeline " + path);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("warning") == std::string::npos);
  const Timeline tl = check_timeline(slurp(path));
  std::remove(path.c_str());
  const uint64_t ios = json_after(r.out, "\"ios\"", "ios");
  REQUIRE(ios == 400);
  CHECK(tl.io_spans == ios);
  std::set<std::string> names;
  for (const auto& [tid, n] : tl.track_names) names.insert(n);
  CHECK(names == std::set<std::string>{"vcpu0", "vcpu1", "host0", "q1", "q2"});
  CHECK(tl.bursts > 0);
  CHECK(tl.instants > 0);
  // Exits on both vCPUs.
  for (const auto& [tid, n] : tl.track_names)
    if (n.rfind("vcpu", 0) == 0) CHECK(tl.x_spans.count(tid));
}

TEST_CASE("traces: the device thread's timeline with processing inside the exit", "[traces]") {
  // hv.device_thread=vcpu: device bursts run inside the vCPU's exit, which
  // waits; the writers must still stream in time order.
  const std::string path = temp_path("e.json"), vcd = temp_path("e.vcd");
  const auto r = run_nvmesim("--number_ios=200 --hv.device_thread=vcpu --sim.quantum=1ns "
                             "--nvme.dbbuf=spec --timeline " + path + " --vcd " + vcd);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("warning") == std::string::npos);
  const Timeline tl = check_timeline(slurp(path));
  CHECK(tl.io_spans == 200);
  CHECK(tl.bursts > 0);
  parse_vcd(slurp(vcd));
  std::remove(path.c_str());
  std::remove(vcd.c_str());
}

TEST_CASE("traces: iothreads with adaptive polling", "[traces]") {
  const std::string path = temp_path("k.json"), vcd_path = temp_path("k.vcd");
  // iodepth 4: the iothreads run dry between batches and poll (at iodepth 32
  // they keep working from one batch to the next and never poll).
  const auto r = run_nvmesim("--number_ios=200 --numjobs=2 --iodepth=4 --hv.device_thread=iothread "
                             "--hv.iothreads=2 --nvme.dbbuf=spec --timeline " + path + " --vcd " +
                             vcd_path);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("warning") == std::string::npos);
  const Timeline tl = check_timeline(slurp(path));
  CHECK(tl.io_spans == 400);
  CHECK(tl.begins.count("working"));
  CHECK(tl.begins.count("polling"));
  std::set<std::string> names;
  for (const auto& [tid, n] : tl.track_names) names.insert(n);
  CHECK(names == std::set<std::string>{"vcpu0", "vcpu1", "host0", "host1", "host2", "q1", "q2"});
  Vcd vcd = parse_vcd(slurp(vcd_path));
  CHECK(vcd.by_name("host1.state").changes > 0);  // iothread0
  CHECK(vcd.by_name("host2.state").changes > 0);  // iothread1
  std::remove(path.c_str());
  std::remove(vcd_path.c_str());
}

TEST_CASE("traces: --trace-start and --trace-stop bound both files", "[traces]") {
  const std::string vcd_path = temp_path("f.vcd"), tl_path = temp_path("f.json");
  const auto r = run_nvmesim("--number_ios=300 --nvme.dbbuf=spec --trace-start=200us --trace-stop=400us "
                             "--vcd " + vcd_path + " --timeline " + tl_path);
  REQUIRE(r.exit_code == 0);
  Vcd vcd = parse_vcd(slurp(vcd_path));
  REQUIRE(vcd.times.size() > 2);
  CHECK(vcd.times.front() == 200000000);  // $dumpvars at the start
  CHECK(vcd.times.back() <= 400000000);
  CHECK(vcd.by_name("q1.shadow_sq_tail").changes > 0);
  const Timeline tl = check_timeline(slurp(tl_path));
  CHECK(tl.min_ts >= 200000000);
  CHECK(tl.max_ts <= 400000000);
  CHECK(tl.io_spans > 0);
  CHECK(tl.io_spans < 300);

  // The whole run, for comparison: the window holds fewer changes.
  const auto all = run_nvmesim("--number_ios=300 --nvme.dbbuf=spec --vcd " + vcd_path);
  REQUIRE(all.exit_code == 0);
  Vcd whole = parse_vcd(slurp(vcd_path));
  CHECK(whole.by_name("q1.shadow_sq_tail").changes == 300);
  CHECK(vcd.by_name("q1.shadow_sq_tail").changes < 300);
  std::remove(vcd_path.c_str());
  std::remove(tl_path.c_str());
}

TEST_CASE("traces: --trace-signals keeps only the matching signals", "[traces]") {
  const std::string vcd_path = temp_path("g.vcd"), tl_path = temp_path("g.json");
  const auto r = run_nvmesim("--number_ios=200 --numjobs=2 --nvme.dbbuf=spec --trace-signals='q1.*,vcpu0.st*' "
                             "--vcd " + vcd_path + " --timeline " + tl_path);
  REQUIRE(r.exit_code == 0);
  Vcd vcd = parse_vcd(slurp(vcd_path));
  CHECK(vcd.vars.size() == 12 + 2);  // q1's twelve, vcpu0.state and state_name
  for (const auto& [id, v] : vcd.vars) {
    INFO(v.name);
    CHECK((v.name.rfind("q1.", 0) == 0 || v.name == "vcpu0.state" || v.name == "vcpu0.state_name"));
  }
  CHECK_FALSE(vcd.has("q2.shadow_sq_tail"));
  CHECK_FALSE(vcd.has("host0.state"));
  const Timeline tl = check_timeline(slurp(tl_path));
  for (const auto& [tid, count] : tl.events_per_tid) CHECK(tl.track_names.at(tid) == "q1");
  CHECK(tl.io_spans == 200);  // q1's only
  std::remove(vcd_path.c_str());
  std::remove(tl_path.c_str());
}

TEST_CASE("traces: bad trace options are one-line errors with exit code 2", "[traces]") {
  const std::string vcd = temp_path("h.vcd");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--vcd " + vcd + " --trace-start=abc", "--trace-start: 'abc' is not a time"},
      {"--vcd " + vcd + " --trace-start=5", "--trace-start: '5' is not a time"},
      {"--vcd " + vcd + " --trace-start=2us --trace-stop=1us", "--trace-stop: 1us is not after --trace-start (2us)"},
      {"--vcd " + vcd + " --trace-signals='q1.*,'", "--trace-signals: empty pattern"},
      {"--vcd " + vcd + " --trace-signals='q1$'", "--trace-signals: 'q1$' may hold only"},
      {"--vcd " + vcd + " --trace-signals='nothing*'", "--trace-signals: 'nothing*' matches no signal"},
      {"--trace-start=1us", "--trace-start: needs --vcd FILE or --timeline FILE"},
      {"--vcd /nonexistent-dir/x.vcd", "--vcd: cannot open '/nonexistent-dir/x.vcd'"},
      {"--vcd " + vcd + " --timeline " + vcd, "--vcd and --timeline: both name"},
  };
  for (const auto& [args, message] : cases) {
    INFO(args);
    const auto r = run_nvmesim("--number_ios=10 --single-run " + args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("nvmesim: error: " + message, 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  std::remove(vcd.c_str());
}

TEST_CASE("traces: tracing does not change the results", "[traces]") {
  const std::string vcd = temp_path("i.vcd"), tl = temp_path("i.json");
  const std::string args = "--number_ios=300 --nvme.dbbuf=spec --output-format=json";
  const auto plain = run_nvmesim(args);
  const auto traced = run_nvmesim(args + " --vcd " + vcd + " --timeline " + tl);
  REQUIRE(plain.exit_code == 0);
  REQUIRE(traced.exit_code == 0);
  CHECK(plain.out == traced.out);
  std::remove(vcd.c_str());
  std::remove(tl.c_str());
}

TEST_CASE("traces: the GTKWave save file written beside the VCD groups its signals", "[traces]") {
  const std::string vcd_path = temp_path("j.vcd"), gtkw_path = temp_path("j.gtkw");
  const auto r = run_nvmesim("--number_ios=50 --numjobs=1 --nvme.dbbuf=spec --vcd " + vcd_path);
  REQUIRE(r.exit_code == 0);
  Vcd vcd = parse_vcd(slurp(vcd_path));
  std::remove(vcd_path.c_str());
  std::istringstream gtkw(slurp(gtkw_path));
  std::remove(gtkw_path.c_str());
  std::string line;
  std::set<std::string> listed, groups;
  unsigned depth = 0;
  std::string flags;
  while (std::getline(gtkw, line)) {
    if (line.rfind("@", 0) == 0) flags = line;
    if (line.rfind("-", 0) == 0) {  // a group's begin or end label
      if (flags == "@800200") {
        ++depth;
        groups.insert(line.substr(1));
      } else if (flags == "@1000200") {
        REQUIRE(depth > 0);
        --depth;
      }
    }
    if (line.rfind("nvmesim.", 0) == 0) {
      const std::string name = line.substr(8, line.find('[') - 8);  // without GTKWave's [15:0]
      INFO(name);
      CHECK(vcd.has(name));  // names exactly what the writer emits
      CHECK(depth == 1);     // inside a group
      listed.insert(name);
    }
  }
  CHECK(depth == 0);
  CHECK(groups.count("q1"));
  // Every signal of queue 1 is in the save file.
  for (const auto& [id, v] : vcd.vars)
    if (v.name.rfind("q1.", 0) == 0) CHECK(listed.count(v.name));
}
