// The derived figures' table (see derived_figures.h).
#include "nvmesim/platform/report/derived_figures.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "nvmesim/models/hv/vm_exit.h"
#include "nvmesim/platform/report/results.h"

namespace nvmesim::platform {
namespace figures {

namespace {

using models::EXIT_KIND_COUNT;
using models::ExitKind;
using stats::GroupValues;

constexpr double kUndefined = std::numeric_limits<double>::quiet_NaN();

// The value at "group.path.stat[.subname]" (GroupValues::at's reading), or
// 0 when the tree has none: a device without the statistic (virtio-blk
// keeps no shadow reads), a thread without polling (the hardware engine), a
// group that was never created (a failed bring-up's I/O queues).
uint64_t stat(const GroupValues& tree, const std::string& path) {
  const uint64_t* v = tree.find(path);
  return v ? *v : 0;
}

double ns(uint64_t ps) { return double(ps) / 1000.0; }

std::string vcpu_path(unsigned j, const std::string& name) { return "vcpu" + std::to_string(j) + "." + name; }

unsigned vcpu_count(const RunResults& r) { return unsigned(r.vcpus.size()); }

// A vCPU statistic summed over the vCPUs.
uint64_t vcpus_sum(const RunResults& r, const std::string& name) {
  uint64_t n = 0;
  for (unsigned j = 0; j < vcpu_count(r); ++j) n += stat(r.stats, vcpu_path(j, name));
  return n;
}

uint64_t exit_count(const GroupValues& tree, unsigned vcpus, unsigned kind) {
  uint64_t n = 0;
  for (unsigned j = 0; j < vcpus; ++j)
    n += stat(tree, vcpu_path(j, std::string("exits.") + models::to_string(ExitKind(kind))));
  return n;
}

uint64_t exits_excluding_hlt(const GroupValues& tree, unsigned vcpus) {
  uint64_t n = 0;
  for (unsigned k = 0; k < EXIT_KIND_COUNT; ++k)
    if (k != unsigned(ExitKind::Hlt)) n += exit_count(tree, vcpus, k);
  return n;
}

// The doorbell updates of the I/O queues (driver.sq<N> / driver.cq<N>, N >= 1;
// virtio-blk: virtio_driver.vq<N>, its kicks, no CQ doorbell), measured phase.
struct Doorbells {
  uint64_t updates = 0, mmio = 0, suppressed = 0;
  uint64_t updates_with_dbbuf = 0, suppressed_with_dbbuf = 0;  // the hit rate's
};

Doorbells doorbells(const RunResults& r, bool sq) {
  Doorbells d;
  if (!r.bringup_ok) return d;  // no measured phase
  auto add = [&](const GroupValues& q) {
    d.updates += stat(q, "updates");
    d.mmio += stat(q, "mmio");
    d.suppressed += stat(q, "suppressed");
    const uint64_t with = stat(q, "updates_with_dbbuf");
    d.updates_with_dbbuf += with;
    // A queue's suppressed updates count towards the hit rate when it made
    // updates with the buffer active (virtio-blk without EVENT_IDX
    // suppresses kicks by NO_NOTIFY: not the EventIdx's).
    if (with) d.suppressed_with_dbbuf += stat(q, "suppressed");
  };
  if (const GroupValues* driver = r.stats.group("driver")) {
    for (const GroupValues& q : driver->groups)
      if (q.name.rfind(sq ? "sq" : "cq", 0) == 0 && q.name != "sq0" && q.name != "cq0") add(q);
  } else if (const GroupValues* virtio = r.stats.group("virtio_driver"); virtio && sq) {
    for (const GroupValues& q : virtio->groups)
      if (q.name.rfind("vq", 0) == 0) add(q);
  }
  return d;
}

// The device's group: "nvme", or "virtio_blk" with device=virtio-blk.
std::string device(const RunResults& r) { return r.stats.group("virtio_blk") ? "virtio_blk" : "nvme"; }

// A count the devices name differently (virtio-blk's requests are NVMe's
// I/O commands); "" for a device without it.
uint64_t device_stat(const RunResults& r, const std::string& nvme, const std::string& virtio_blk) {
  if (device(r) == "virtio_blk") return virtio_blk.empty() ? 0 : stat(r.stats, "virtio_blk." + virtio_blk);
  return stat(r.stats, "nvme." + nvme);
}

// What utilisation is a fraction of (RunResults::utilization_span_ns).
double span(const RunResults& r) {
  const double s = std::max(r.utilization_span_ns, r.sim_time_ns);
  return s > 0 ? s : 1;
}

double vcpu_guest_ns(const RunResults& r, unsigned j) { return ns(stat(r.stats, vcpu_path(j, "guest_time"))); }

double vcpu_exit_ns(const RunResults& r, unsigned j) {
  double t = 0;
  for (unsigned k = 0; k < EXIT_KIND_COUNT; ++k)
    if (k != unsigned(ExitKind::Hlt))
      t += ns(stat(r.stats, vcpu_path(j, std::string("exit_time.") + models::to_string(ExitKind(k)))));
  return t;
}

double thread_ns(const RunResults& r, unsigned i, const char* time) {
  return ns(stat(r.stats, device_thread(r, i) + "." + time));
}

// One job file section over its vCPUs: its first start, its last finish,
// and its span from the first start to its last completion.
struct Section {
  double start_ns = 0, done_ns = 0, span_ns = 0;
  uint64_t ios = 0, read_ios = 0, write_ios = 0;
};

Section section(const RunResults& r, unsigned index) {
  Section f;
  bool first = true;
  for (unsigned v : r.sections.at(index).vcpus) {
    if (v >= r.vcpus.size()) continue;
    const VcpuFigures& x = r.vcpus[v];
    f.start_ns = first ? x.start_ns : std::min(f.start_ns, x.start_ns);
    f.done_ns = first ? x.done_ns : std::max(f.done_ns, x.done_ns);
    f.span_ns = std::max(f.span_ns, x.start_ns + x.sim_time_ns);
    f.ios += stat(r.stats, vcpu_path(v, "ios"));
    f.read_ios += stat(r.stats, vcpu_path(v, "read_ios"));
    f.write_ios += stat(r.stats, vcpu_path(v, "write_ios"));
    first = false;
  }
  f.span_ns = std::max(0.0, f.span_ns - f.start_ns);
  return f;
}

// A direction's IOPS or bandwidth over the measured interval, as the text
// report's per-direction lines give it.
double per_second(const RunResults& r, uint64_t n) {
  const double secs = r.sim_time_ns / 1e9;
  return secs > 0 ? n / secs : 0;
}

using Value = std::function<double(const RunResults&, unsigned)>;

std::vector<Figure> build() {
  std::vector<Figure> t;
  auto add = [&](std::string key, Format format, int decimals, std::string definition, Value value,
                 Over over = Over::Run, bool in_json = true) {
    t.push_back({std::move(key), format, decimals, over, in_json, std::move(definition), std::move(value)});
  };
  auto count = [&](std::string key, std::string definition, std::function<double(const RunResults&)> value) {
    add(std::move(key), Format::Count, 0, std::move(definition),
        [value](const RunResults& r, unsigned) { return value(r); });
  };
  auto fixed = [&](std::string key, int decimals, std::string definition,
                   std::function<double(const RunResults&)> value) {
    add(std::move(key), Format::Fixed, decimals, std::move(definition),
        [value](const RunResults& r, unsigned) { return value(r); });
  };

  // The run's I/Os.
  fixed("sim_time_ns", 3, "the measured interval: to the last completion, or to the runtime's end when the runtime ended the run (a stalled or interrupted run: until it stopped)",
        [](const RunResults& r) { return r.sim_time_ns; });
  count("ios", "sum of `vcpu<N>.ios`", [](const RunResults& r) { return vcpus_sum(r, "ios"); });
  count("read_ios", "sum of `vcpu<N>.read_ios`", [](const RunResults& r) { return vcpus_sum(r, "read_ios"); });
  count("write_ios", "sum of `vcpu<N>.write_ios`", [](const RunResults& r) { return vcpus_sum(r, "write_ios"); });
  count("io_errors", "sum of `vcpu<N>.io_errors`", [](const RunResults& r) { return vcpus_sum(r, "io_errors"); });
  count("first_error_status", "NVMe status field of the first failed I/O (lowest vCPU); 0: none",
        [](const RunResults& r) { return r.first_error_status; });
  count("verify.verified_reads", "sum of `vcpu<N>.verified_reads`",
        [](const RunResults& r) { return vcpus_sum(r, "verified_reads"); });
  count("verify.errors", "sum of `vcpu<N>.verify_errors`",
        [](const RunResults& r) { return vcpus_sum(r, "verify_errors"); });
  add("iops", Format::Rate, 0, "ios / sim_time_ns, per second",
      [](const RunResults& r, unsigned) {
        return r.sim_time_ns > 0 ? r.figure("ios") * 1e9 / r.sim_time_ns : 0;
      });
  add("bw_bytes", Format::Rate, 0, "(read_bytes + write_bytes) / sim_time_ns, per second",
      [](const RunResults& r, unsigned) {
        return r.sim_time_ns > 0
                   ? double(vcpus_sum(r, "read_bytes") + vcpus_sum(r, "write_bytes")) * 1e9 / r.sim_time_ns
                   : 0;
      });
  // The text report's per-direction lines.
  for (const char* dir : {"read", "write"}) {
    const std::string d = dir;
    add(d + "_bytes", Format::Count, 0, "sum of `vcpu<N>." + d + "_bytes`",
        [d](const RunResults& r, unsigned) { return vcpus_sum(r, d + "_bytes"); }, Over::Run, false);
    add(d + "_iops", Format::Rate, 0, d + "_ios / sim_time_ns, per second",
        [d](const RunResults& r, unsigned) { return per_second(r, vcpus_sum(r, d + "_ios")); }, Over::Run, false);
    add(d + "_bw_bytes", Format::Rate, 0, d + "_bytes / sim_time_ns, per second",
        [d](const RunResults& r, unsigned) { return per_second(r, vcpus_sum(r, d + "_bytes")); }, Over::Run,
        false);
  }

  // Doorbells: the I/O queues' updates.
  for (const bool sq : {true, false}) {
    const std::string q = sq ? "sq" : "cq";
    const std::string groups = sq ? "`driver.sq<N>` (virtio-blk: `virtio_driver.vq<N>`)" : "`driver.cq<N>`";
    count("doorbells." + q + ".updates", "sum of the I/O queues' " + groups + " `updates`",
          [sq](const RunResults& r) { return doorbells(r, sq).updates; });
    count("doorbells." + q + ".mmio", "sum of the I/O queues' " + groups + " `mmio`",
          [sq](const RunResults& r) { return doorbells(r, sq).mmio; });
    count("doorbells." + q + ".suppressed", "sum of the I/O queues' " + groups + " `suppressed`",
          [sq](const RunResults& r) { return doorbells(r, sq).suppressed; });
  }
  for (const bool sq : {true, false}) {
    const std::string q = sq ? "sq" : "cq";
    add("doorbells." + q + ".updates_with_dbbuf", Format::Count, 0,
        "sum of the I/O queues' `updates_with_dbbuf` (" + q + ")",
        [sq](const RunResults& r, unsigned) { return doorbells(r, sq).updates_with_dbbuf; }, Over::Run, false);
    add("doorbells." + q + ".suppressed_with_dbbuf", Format::Count, 0,
        "sum of `suppressed` over the I/O queues (" + q + ") with `updates_with_dbbuf`",
        [sq](const RunResults& r, unsigned) { return doorbells(r, sq).suppressed_with_dbbuf; }, Over::Run, false);
  }
  add("doorbells.mmio", Format::Count, 0, "doorbells.sq.mmio + doorbells.cq.mmio",
      [](const RunResults& r, unsigned) { return doorbells(r, true).mmio + doorbells(r, false).mmio; }, Over::Run,
      false);
  for (const bool sq : {true, false}) {
    const std::string q = sq ? "sq" : "cq";
    const std::string d = "doorbells." + q + ".";
    fixed("eventidx." + q + "_hit_rate", 6,
          d + "suppressed_with_dbbuf / " + d + "updates_with_dbbuf; null when that is 0 or the buffer is inactive",
          [d](const RunResults& r) {
            const double updates = r.figure(d + "updates_with_dbbuf");
            return r.dbbuf_active && updates ? r.figure(d + "suppressed_with_dbbuf") / updates : kUndefined;
          });
  }
  add("eventidx.dbbuf_active", Format::Flag, 0,
      "the doorbell buffer (virtio-blk: VIRTIO_RING_F_EVENT_IDX) was in use in the measured phase",
      [](const RunResults& r, unsigned) { return r.dbbuf_active ? 1.0 : 0.0; });
  count("eventidx.shadow_reads", "`nvme.shadow_reads` (virtio-blk: 0)",
        [](const RunResults& r) { return device_stat(r, "shadow_reads", ""); });
  count("eventidx.eventidx_writes", "`nvme.eventidx_writes` (virtio-blk: `virtio_blk.avail_event_writes`)",
        [](const RunResults& r) { return device_stat(r, "eventidx_writes", "avail_event_writes"); });

  // VM exits, by kind.
  for (unsigned k = 0; k < EXIT_KIND_COUNT; ++k)
    count(std::string("exits.count.") + models::to_string(ExitKind(k)), "sum of `vcpu<N>.exits.<kind>`",
          [k](const RunResults& r) { return exit_count(r.stats, vcpu_count(r), k); });
  for (unsigned k = 0; k < EXIT_KIND_COUNT; ++k) {
    const std::string kind = models::to_string(ExitKind(k));
    fixed("exits.time_ns." + kind, 3, "sum of `vcpu<N>.exit_time.<kind>`", [kind](const RunResults& r) {
      return ns(vcpus_sum(r, "exit_time." + kind));
    });
  }

  // Per I/O.
  fixed("per_io.sq_mmio", 6, "doorbells.sq.mmio / ios", [](const RunResults& r) {
    return per_io(r, r.figure("doorbells.sq.mmio"));
  });
  fixed("per_io.cq_mmio", 6, "doorbells.cq.mmio / ios", [](const RunResults& r) {
    return per_io(r, r.figure("doorbells.cq.mmio"));
  });
  fixed("per_io.exits", 6, "(doorbells.sq.mmio + doorbells.cq.mmio) / ios",
        [](const RunResults& r) { return per_io(r, r.figure("doorbells.mmio")); });
  fixed("per_io.all_exits", 6, "VM exits of every kind but hlt / ios",
        [](const RunResults& r) { return per_io(r, double(exits_excluding_hlt(r.stats, vcpu_count(r)))); });
  fixed("per_io.interrupts", 6, "controller.interrupts / ios",
        [](const RunResults& r) { return per_io(r, r.figure("controller.interrupts")); });
  fixed("per_io.msix_messages", 6, "controller.interrupts / ios (the same as per_io.interrupts)",
        [](const RunResults& r) { return r.figure("per_io.interrupts"); });
  fixed("per_io.injection_exits", 6, "exits.count.interrupt / ios",
        [](const RunResults& r) { return per_io(r, r.figure("exits.count.interrupt")); });

  // The device's counts.
  count("controller.commands", "`nvme.io_commands` (virtio-blk: `virtio_blk.requests`)",
        [](const RunResults& r) { return device_stat(r, "io_commands", "requests"); });
  count("controller.interrupts", "`nvme.msix_sent` (virtio-blk: `virtio_blk.msix_sent`)",
        [](const RunResults& r) { return device_stat(r, "msix_sent", "msix_sent"); });
  count("controller.dma_reads", "`nvme.dma_reads` (virtio-blk: `virtio_blk.dma_reads`)",
        [](const RunResults& r) { return device_stat(r, "dma_reads", "dma_reads"); });
  count("controller.dma_writes", "`nvme.dma_writes` (virtio-blk: `virtio_blk.dma_writes`)",
        [](const RunResults& r) { return device_stat(r, "dma_writes", "dma_writes"); });
  for (const char* name :
       {"async_events", "cq_full_waits", "coalesced_completions", "lost_notifications", "stuck_handler_runs"}) {
    const std::string n = name;
    count("controller." + n, "`nvme." + n + "` (virtio-blk: 0)",
          [n](const RunResults& r) { return device_stat(r, n, ""); });
  }

  // Utilisation: fractions of utilization.span_ns.
  auto vcpu_fixed = [&](const char* name, std::string definition, Value value) {
    add(std::string("utilization.vcpu.") + name, Format::Fixed, 6, std::move(definition), std::move(value),
        Over::Vcpu);
  };
  vcpu_fixed("busy", "(`vcpu<N>.guest_time` + its exits' time but hlt's) / utilization.span_ns",
             [](const RunResults& r, unsigned j) { return (vcpu_guest_ns(r, j) + vcpu_exit_ns(r, j)) / span(r); });
  vcpu_fixed("guest", "`vcpu<N>.guest_time` / utilization.span_ns",
             [](const RunResults& r, unsigned j) { return vcpu_guest_ns(r, j) / span(r); });
  vcpu_fixed("exits", "`vcpu<N>.exit_time`, every kind but hlt, / utilization.span_ns",
             [](const RunResults& r, unsigned j) { return vcpu_exit_ns(r, j) / span(r); });
  add("utilization.vcpu.ios", Format::Count, 0, "`vcpu<N>.ios`",
      [](const RunResults& r, unsigned j) { return stat(r.stats, vcpu_path(j, "ios")); }, Over::Vcpu);
  add("utilization.vcpu.interrupts", Format::Count, 0, "`vcpu<N>.interrupts`",
      [](const RunResults& r, unsigned j) { return stat(r.stats, vcpu_path(j, "interrupts")); }, Over::Vcpu);
  // fio json+'s usr_cpu and sys_cpu.
  add("utilization.vcpu.guest_ns", Format::Fixed, 3, "`vcpu<N>.guest_time`", vcpu_guest_ns, Over::Vcpu, false);
  add("utilization.vcpu.exit_ns", Format::Fixed, 3, "`vcpu<N>.exit_time`, every kind but hlt", vcpu_exit_ns,
      Over::Vcpu, false);
  auto thread_fixed = [&](const char* name, std::string definition, Value value) {
    add(std::string("utilization.device.") + name, Format::Fixed, 6, std::move(definition), std::move(value),
        Over::DeviceThread);
  };
  thread_fixed("busy", "(`<thread>.busy_time` + `<thread>.poll_time`) / utilization.span_ns",
               [](const RunResults& r, unsigned i) {
                 return (thread_ns(r, i, "busy_time") + thread_ns(r, i, "poll_time")) / span(r);
               });
  thread_fixed("work", "`<thread>.busy_time` / utilization.span_ns",
               [](const RunResults& r, unsigned i) { return thread_ns(r, i, "busy_time") / span(r); });
  thread_fixed("polling", "`<thread>.poll_time` / utilization.span_ns",
               [](const RunResults& r, unsigned i) { return thread_ns(r, i, "poll_time") / span(r); });
  add("utilization.device.dispatches", Format::Count, 0,
      "`<thread>.dispatches` (the hardware engine: `nvme.engine.runs`)",
      [](const RunResults& r, unsigned i) {
        const std::string g = device_thread(r, i);
        const GroupValues* group = r.stats.group(g);
        return stat(r.stats, g + (group && !group->stat("dispatches") ? ".runs" : ".dispatches"));
      },
      Over::DeviceThread);
  for (const char* name : {"wakeups_from_sleep", "wakeups_while_polling"}) {
    const std::string n = name;
    add("utilization.device." + n, Format::Count, 0, "`<thread>." + n + "`",
        [n](const RunResults& r, unsigned i) { return stat(r.stats, device_thread(r, i) + "." + n); },
        Over::DeviceThread);
  }
  count("utilization.host_cores", "`host.cores` (0: one core per thread)",
        [](const RunResults& r) { return r.host_cores; });
  fixed("utilization.overcommitted", 6, "`host.overcommitted_time` / utilization.span_ns",
        [](const RunResults& r) { return ns(stat(r.stats, "host.overcommitted_time")) / span(r); });
  fixed("utilization.span_ns", 3,
        "the measured interval, extended to the end of the vCPUs' work after their last completion",
        [](const RunResults& r) { return span(r); });

  // Bring-up, apart.
  for (unsigned k = 0; k < EXIT_KIND_COUNT; ++k)
    count(std::string("bringup.exits.") + models::to_string(ExitKind(k)),
          "sum of `vcpu<N>.exits.<kind>` when the measured phase started",
          [k](const RunResults& r) { return exit_count(r.bringup_stats, vcpu_count(r), k); });
  add("bringup.exit_count", Format::Count, 0, "bring-up's VM exits of every kind but hlt",
      [](const RunResults& r, unsigned) { return exits_excluding_hlt(r.bringup_stats, vcpu_count(r)); }, Over::Run,
      false);

  // A job file's sections, each over its vCPUs.
  auto job = [&](const char* name, Format format, int decimals, std::string definition,
                 std::function<double(const Section&)> value) {
    add(std::string("job_results.") + name, format, decimals, std::move(definition),
        [value](const RunResults& r, unsigned s) { return value(section(r, s)); }, Over::JobSection);
  };
  job("start_ns", Format::Fixed, 3, "its vCPUs' first start, from the measured phase's start",
      [](const Section& s) { return s.start_ns; });
  job("done_ns", Format::Fixed, 3, "its vCPUs' last finish, same origin", [](const Section& s) { return s.done_ns; });
  job("sim_time_ns", Format::Fixed, 3, "its first start to its last completion, or to its runtime's end when the runtime ended it",
      [](const Section& s) { return s.span_ns; });
  job("ios", Format::Count, 0, "sum of its `vcpu<N>.ios`", [](const Section& s) { return s.ios; });
  job("read_ios", Format::Count, 0, "sum of its `vcpu<N>.read_ios`", [](const Section& s) { return s.read_ios; });
  job("write_ios", Format::Count, 0, "sum of its `vcpu<N>.write_ios`", [](const Section& s) { return s.write_ios; });
  job("iops", Format::Fixed, 3, "its ios / its sim_time_ns, per second",
      [](const Section& s) { return s.span_ns > 0 ? s.ios / (s.span_ns / 1e9) : 0; });

  // --host-stats: the simulator process.
  fixed("host.ios_per_wall_s", 0, "ios / wall-clock seconds",
        [](const RunResults& r) { return r.wall_s > 0 ? r.figure("ios") / r.wall_s : 0; });
  fixed("host.activations_per_io", 3, "SystemC process activations in the measured phase / ios",
        [](const RunResults& r) {
          uint64_t n = 0;
          for (const auto& a : r.activations) n += a.second;
          return per_io(r, double(n));
        });
  return t;
}

const std::map<std::string, size_t>& index() {
  static const std::map<std::string, size_t> map = [] {
    std::map<std::string, size_t> m;
    for (size_t i = 0; i < all().size(); ++i)
      if (!m.emplace(all()[i].key, i).second) throw std::logic_error("figures: '" + all()[i].key + "' twice");
    return m;
  }();
  return map;
}

std::string top_key(const std::string& key) { return key.substr(0, key.find('.')); }
std::string parent(const std::string& key) { return key.substr(0, key.rfind('.')); }
std::string leaf(const std::string& key) { return key.substr(key.rfind('.') + 1); }

// `doc` at the dotted path, objects made on the way (in insertion order).
report::Json& at_path(report::Json& doc, const std::string& path) {
  report::Json* j = &doc;
  size_t from = 0;
  for (;;) {
    const size_t dot = path.find('.', from);
    j = &(*j)[path.substr(from, dot == std::string::npos ? std::string::npos : dot - from)];
    if (dot == std::string::npos) return *j;
    from = dot + 1;
  }
}

}  // namespace

const std::vector<Figure>& all() {
  static const std::vector<Figure> table = build();
  return table;
}

const Figure& find(const std::string& key) {
  const auto& m = index();
  const auto it = m.find(key);
  if (it == m.end()) throw std::out_of_range("figures: no figure '" + key + "'");
  return all()[it->second];
}

std::string device_thread(const RunResults& r, unsigned index) {
  if (index < r.host_threads.size()) return r.host_threads[index];
  return "nvme.engine";  // hv.passthrough: the SSD's engine runs its queues, no host thread
}

unsigned instances(const RunResults& r, Over over) {
  switch (over) {
    case Over::Run: return 1;
    case Over::Vcpu: return vcpu_count(r);
    case Over::DeviceThread: return unsigned(r.host_threads.size()) + (r.stats.group("nvme.engine") ? 1 : 0);
    case Over::JobSection: return unsigned(r.sections.size());
  }
  return 0;
}

double per_io(const RunResults& r, double n) {
  const double ios = r.figure("ios");
  return ios ? n / ios : 0;
}

report::Json json_value(const Figure& f, double v) {
  switch (f.format) {
    case Format::Count: return uint64_t(v);
    case Format::Fixed: return report::fixed(v, f.decimals);
    case Format::Rate: return report::rate(v);
    case Format::Flag: return v != 0;
  }
  return nullptr;
}

void put_json(report::Json& doc, const RunResults& r, const std::string& section) {
  const auto& table = all();
  for (size_t i = 0; i < table.size(); ++i) {
    const Figure& f = table[i];
    if (!f.in_json || top_key(f.key) != section) continue;
    if (f.over == Over::Run) {
      at_path(doc, f.key) = json_value(f, f.value(r, 0));
      continue;
    }
    // An array: its elements whole, from the first of its figures on.
    const std::string array = parent(f.key);
    report::Json& out = at_path(doc, array) = report::Json::array();
    size_t last = i;
    for (unsigned n = 0; n < instances(r, f.over); ++n) {
      report::Json e = report::Json::object();
      if (f.over == Over::Vcpu) e["vcpu"] = n;
      if (f.over == Over::DeviceThread) e["thread"] = device_thread(r, n);
      if (f.over == Over::JobSection) e["name"] = r.sections[n].name;
      for (size_t k = i; k < table.size() && parent(table[k].key) == array; ++k) {
        if (table[k].in_json) e[leaf(table[k].key)] = json_value(table[k], table[k].value(r, n));
        last = k;
      }
      out.push_back(std::move(e));
    }
    while (last + 1 < table.size() && parent(table[last + 1].key) == array) ++last;
    i = last;
  }
}

std::string docs_table() {
  std::string out;
  std::vector<std::string> seen;
  for (const Figure& f : all()) {
    std::string key = f.key;
    for (unsigned k = 0; k < EXIT_KIND_COUNT; ++k) {
      const std::string kind = models::to_string(ExitKind(k));
      if (key.size() > kind.size() && key.compare(key.size() - kind.size(), kind.size(), kind) == 0 &&
          key[key.size() - kind.size() - 1] == '.')
        key = key.substr(0, key.size() - kind.size()) + "<kind>";
    }
    if (f.over == Over::Vcpu || f.over == Over::DeviceThread || f.over == Over::JobSection)
      key = parent(key) + "[]." + leaf(key);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    out += "| `" + key + "` | " + f.definition + (f.in_json ? "" : " (not in the JSON)") + " |\n";
  }
  return out;
}

}  // namespace figures

double RunResults::figure(const std::string& key, unsigned instance) const {
  return figures::find(key).value(*this, instance);
}

uint64_t RunResults::count(const std::string& key, unsigned instance) const {
  const figures::Figure& f = figures::find(key);
  if (f.format != figures::Format::Count) throw std::logic_error("figures: '" + key + "' is not a count");
  return uint64_t(f.value(*this, instance));
}

}  // namespace nvmesim::platform
