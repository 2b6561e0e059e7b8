// Vcpu + Guest through the whole chain (Vcpu -> Hypervisor -> root complex
// -> NvmeControllerModel -> MSI -> Hypervisor -> Vcpu), built by
// platform::System from a Config. Every expected time is derived from the
// parameters set here and the PcieLink functions; a recording tracer gives
// exact (picosecond) event times. The CPU's own rules (halt polling) and the
// fio job's pacing in time (rate, thinktime) close the file; the job's rules
// alone are in test_fio_job_rules.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "nvmesim/models/guest/vcpu.h"
#include "nvmesim/models/nvme/nvme_controller.h"
#include "nvmesim/models/pcie/pcie_link.h"
#include "nvmesim/models/hv/vm_exit.h"
#include "nvmesim/platform/config/visitors.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/report/results.h"
#include "nvmesim/platform/system/system.h"
#include "nvmesim/traces/tracer.h"

using namespace nvmesim;
using namespace nvmesim::platform;
using models::ExitKind;
using sc_core::SC_NS;
using sc_core::sc_time;

namespace {

sc_time ns(double v) { return sc_time(v, SC_NS); }
sc_time ps(uint64_t v) { return sc_time::from_value(v); }

struct RecordingTracer : traces::Tracer {
  struct Io { uint16_t qid; uint64_t start, end; };
  struct Exit { unsigned vcpu; std::string kind; uint64_t start, end; };
  struct Value { uint16_t qid; traces::QueueSignal signal; uint64_t t; uint32_t value; };
  std::vector<Io> ios;
  std::vector<Exit> exits;
  std::vector<Value> values;
  std::vector<uint64_t> msix_times, interrupt_times;

  void begin(unsigned, unsigned, unsigned) override {}
  void end(uint64_t) override {}
  void vcpu_state(unsigned, uint64_t, traces::VcpuState) override {}
  void vm_exit(unsigned vcpu, const char* kind, uint64_t s, uint64_t e) override {
    exits.push_back({vcpu, kind, s, e});
  }
  void io_start(uint16_t, uint32_t, bool, uint64_t) override {}
  void io(uint16_t qid, uint32_t, bool, uint64_t s, uint64_t e) override {
    ios.push_back({qid, s, e});
  }
  void doorbell_update(uint16_t, bool, uint64_t, uint16_t, uint16_t, bool, bool, uint16_t) override {}
  void queue_value(uint16_t qid, traces::QueueSignal signal, uint64_t t, uint32_t v) override {
    values.push_back({qid, signal, t, v});
  }
  void thread_state(unsigned, uint64_t, traces::ThreadState) override {}
  void device_burst(unsigned, uint64_t, uint64_t, unsigned, unsigned) override {}
  void msix(uint16_t, uint64_t t) override { msix_times.push_back(t); }
  void interrupt(unsigned, uint64_t t) override { interrupt_times.push_back(t); }
  void hold_begin(traces::Hold, unsigned, uint64_t) override {}
  void hold_end(traces::Hold, unsigned) override {}

  std::vector<Value> of(traces::QueueSignal s, uint16_t qid) const {
    std::vector<Value> out;
    for (const auto& v : values)
      if (v.signal == s && v.qid == qid) out.push_back(v);
    return out;
  }
  std::vector<Exit> exits_of(const std::string& kind) const {
    std::vector<Exit> out;
    for (const auto& e : exits)
      if (e.kind == kind) out.push_back(e);
    return out;
  }
};

using Settings = std::vector<std::pair<std::string, std::string>>;

// Costs in whole or simple ns, so every figure below is exact.
Settings base_settings() {
  return {{"iodepth", "1"},
          {"number_ios", "1"},
          {"rw", "randread"},
          {"bs", "4k"},
          {"nvme.backend", "null"},
          {"nvme.dbbuf", "off"},
          {"hv.notify", "deferred"},
          {"hv.device_thread", "mainloop"},
          {"pcie.mode", "emulated"},
          {"pcie.emulated_access", "20ns"},
          {"pcie.host_copy_gbps", "10"},
          {"guest.submit_cost", "1500ns"},
          {"guest.complete_cost", "1000ns"},
          {"guest.irq_entry", "500ns"},
          {"guest.store_visibility", "20ns"},
          {"hv.exit_mmio", "2200ns"},
          {"hv.exit_mmio_other", "2300ns"},
          {"hv.exit_eoi", "800ns"},
          {"hv.inject", "1000ns"},
          {"hv.wakeup", "fixed"},  // exact sums need the fixed wake-ups
          {"hv.dispatch_latency", "2000ns"},
          {"hv.dispatch_cost", "500ns"},
          {"nvme.cmd_cost", "1000ns"},
          {"nvme.cqe_cost", "0ns"}};
}

Config make_config(Settings settings, const Settings& extra) {
  for (const auto& kv : extra) {
    bool replaced = false;
    for (auto& s : settings)
      if (s.first == kv.first) {
        s.second = kv.second;
        replaced = true;
      }
    if (!replaced) settings.push_back(kv);
  }
  Config c;
  for (const auto& [k, v] : settings) c.set(k, v);
  c.validate_all();
  return c;
}

// A whole run with `tracer` receiving every hook (the system is built and
// torn down inside, so the tracer is never left pointing at a dead run).
RunResults run_traced(RecordingTracer& tracer, const Settings& extra) {
  const Config c = make_config(base_settings(), extra);
  traces::set_active(&tracer);
  System system(c);
  const RunResults r = system.run();
  traces::set_active(nullptr);
  return r;
}

// The emulated link of base_settings().
models::PcieLink emulated_link() {
  models::PcieLinkParams p = nvmesim::platform::default_params<models::PcieLinkParams>();
  p.mode = models::PcieMode::Emulated;
  p.host_copy_gbps = 10.0;
  p.host_access_overhead_ns = 20.0;
  return models::PcieLink(p);
}

// vcpu0's exits but HLT, from its statistics group's times by kind.
double total_exit_ns(const stats::GroupValues& tree) {
  double t = 0;
  for (unsigned k = 0; k < models::EXIT_KIND_COUNT; ++k)
    if (k != unsigned(ExitKind::Hlt))
      t += double(tree.at(std::string("vcpu0.exit_time.") + models::to_string(ExitKind(k)))) / 1000.0;
  return t;
}

// vcpu0's time: guest work, exits (but HLT) and halted.
struct VcpuTimes {
  double guest_ns, exit_ns, idle_ns;
};
VcpuTimes vcpu0_times(const RunResults& r) {
  return {r.figure("utilization.vcpu.guest_ns", 0), r.figure("utilization.vcpu.exit_ns", 0),
          double(r.stats.at("vcpu0.idle_time")) / 1000.0};
}

}  // namespace

TEST_CASE("vcpu: one I/O at iodepth 1 costs the sum of the path's costs (buffer off)",
          "[vcpu]") {
  RecordingTracer tracer;
  const RunResults r = run_traced(tracer, {});
  REQUIRE(r.bringup_ok);
  REQUIRE(r.count("ios") == 1);
  REQUIRE(tracer.ios.size() == 1);
  const models::PcieLink l = emulated_link();
  // vCPU: submit_cost; the SQ doorbell MMIO exit (exit_mmio + the emulated
  // access) after which the exit has queued the work; host thread:
  // dispatch_latency, dispatch_cost, SQE fetch, cmd_cost, the 4 KiB of data
  // copied into guest memory, CQE write, MSI-X write; vCPU: injection exit,
  // irq entry, complete_cost.
  const sc_time expected = ns(1500) + ns(2200) + l.mmio_time(true, 4) + ns(2000) + ns(500) +
                           l.read_time(64) + ns(1000) + l.write_time(4096) + l.write_time(16) +
                           l.write_time(4) + ns(1000) + ns(500) + ns(1000);
  const sc_time measured = ps(tracer.ios[0].end - tracer.ios[0].start);
  CHECK(measured == expected);
  CHECK(measured == ns(10218.0));
  CHECK(r.driver_lat.min() == expected.value() / 1000);  // histogram in ns, truncated
  CHECK(r.driver_lat.max() == r.driver_lat.min());
  CHECK(r.count("exits.count.mmio_doorbell") == 2);  // SQ, then CQ head
  CHECK(r.count("exits.count.interrupt") == 1);
  CHECK(r.count("exits.count.eoi") == 1);
  REQUIRE(tracer.msix_times.size() >= 1);
  // The I/O's MSI-X (the last one) left the device CQE-write time before
  // its arrival; arrival = end - complete - irq_entry - inject.
  CHECK(ps(tracer.ios[0].end) - ns(1000) - ns(500) - ns(1000) - l.write_time(4) ==
        ps(tracer.msix_times.back()));
}

TEST_CASE("vcpu: one I/O at iodepth 1 with the doorbell buffer (spec, echo)", "[vcpu][dbbuf]") {
  RecordingTracer tracer;
  const RunResults r = run_traced(tracer, {{"nvme.dbbuf", "spec"}});
  REQUIRE(r.bringup_ok);
  REQUIRE(r.dbbuf_active);
  REQUIRE(tracer.ios.size() == 1);
  const models::PcieLink l = emulated_link();
  // Driver: the full barrier waits for the shadow store (store_visibility);
  // echo at iodepth 1 still asks for the MMIO doorbell. Device: shadow tail
  // read, SQE, SQ EventIdx write + shadow re-read, cmd_cost, CQ EventIdx
  // write + shadow head read, CQE, MSI-X.
  const sc_time expected = ns(1500) + ns(20) + ns(2200) + l.mmio_time(true, 4) + ns(2000) +
                           ns(500) + l.read_time(4) + l.read_time(64) + l.write_time(4) +
                           l.read_time(4) + ns(1000) + l.write_time(4096) + l.write_time(4) +
                           l.read_time(4) + l.write_time(16) + l.write_time(4) + ns(1000) +
                           ns(500) + ns(1000);
  CHECK(ps(tracer.ios[0].end - tracer.ios[0].start) == expected);
  CHECK(r.count("doorbells.sq.mmio") == 1);
  CHECK(r.count("eventidx.shadow_reads") == 3);  // SQ tail twice, CQ head once
  CHECK(r.count("eventidx.eventidx_writes") == 2);
}

TEST_CASE("vcpu: polled completions take no interrupt exits", "[vcpu]") {
  const Config c = make_config(base_settings(), {{"guest.completion", "poll"},
                                                 {"number_ios", "50"},
                                                 {"iodepth", "4"}});
  System system(c);
  const RunResults r = system.run();
  REQUIRE(r.bringup_ok);
  CHECK(r.count("ios") == 50);
  CHECK(r.count("io_errors") == 0);
  CHECK(r.count("exits.count.interrupt") == 0);
  CHECK(r.count("exits.count.eoi") == 0);
  CHECK(r.count("exits.count.hlt") == 0);
  CHECK(r.count("controller.interrupts") == 0);
  REQUIRE(r.vcpus.size() == 1);
  CHECK(r.count("utilization.vcpu.interrupts", 0) == 0);
  CHECK(r.stats.at("vcpu0.idle_time") == 0);
  // Buffer off: every update is an MMIO doorbell.
  CHECK(r.count("exits.count.mmio_doorbell") == r.count("doorbells.sq.mmio") + r.count("doorbells.cq.mmio"));
}

TEST_CASE("vcpu: a polled completion is seen at the first poll after the CQE is written",
          "[vcpu]") {
  RecordingTracer tracer;
  const RunResults r = run_traced(tracer, {{"guest.completion", "poll"},
                                          {"guest.poll_interval", "1000ns"}});
  REQUIRE(r.count("ios") == 1);
  REQUIRE(tracer.ios.size() == 1);
  const models::PcieLink l = emulated_link();
  // The vCPU resumes after the doorbell exit at t1 and checks the CQ every
  // poll_interval; the device writes the CQE dl + dc + SQE + cmd + data
  // copy + CQE after t1 = 3977.6 ns, so the 4th check (t1 + 4000 ns) is the
  // first that may see it.
  const sc_time t1 = ns(1500) + ns(2200) + l.mmio_time(true, 4);
  const sc_time cqe =
      ns(2000) + ns(500) + l.read_time(64) + ns(1000) + l.write_time(4096) + l.write_time(16);
  REQUIRE(cqe == ns(3977.6));
  CHECK(ps(tracer.ios[0].end - tracer.ios[0].start) == t1 + ns(4000) + ns(1000));
}

TEST_CASE("vcpu: a shadow store becomes visible store_visibility after it", "[vcpu][dbbuf]") {
  RecordingTracer tracer;
  // No full barrier (Google's older driver): the doorbell decision runs
  // while the store still sits in the store buffer.
  const RunResults r = run_traced(tracer, {{"nvme.dbbuf", "spec"},
                                          {"guest.store_visibility", "300ns"},
                                          {"guest.dbbuf_full_barrier", "off"},
                                          {"number_ios", "3"}});
  REQUIRE(r.count("ios") == 3);
  REQUIRE(tracer.ios.size() == 3);
  const auto shadow = tracer.of(traces::QueueSignal::ShadowSqTail, 1);
  REQUIRE(shadow.size() == 3);
  const auto doorbells = tracer.exits_of(models::to_string(ExitKind::MmioDoorbell));
  for (unsigned i = 0; i < 3; ++i) {
    // The store is made when the driver has built the command:
    // submit_cost after the I/O started.
    const sc_time store = ps(tracer.ios[i].start) + ns(1500);
    CHECK(ps(shadow[i].t) == store + ns(300));
    CHECK(shadow[i].value == i + 1);
    // The SQ doorbell exit starts at the store, before it is visible.
    bool found = false;
    for (const auto& e : doorbells)
      if (ps(e.start) == store) found = true;
    CHECK(found);
  }
}

TEST_CASE("vcpu: with the full barrier the doorbell waits for the shadow store", "[vcpu][dbbuf]") {
  RecordingTracer tracer;
  const RunResults r = run_traced(tracer, {{"nvme.dbbuf", "spec"},
                                          {"guest.store_visibility", "300ns"},
                                          {"number_ios", "2"}});
  REQUIRE(r.count("ios") == 2);
  const auto shadow = tracer.of(traces::QueueSignal::ShadowSqTail, 1);
  REQUIRE(shadow.size() == 2);
  const auto doorbells = tracer.exits_of(models::to_string(ExitKind::MmioDoorbell));
  for (unsigned i = 0; i < 2; ++i) {
    const sc_time visible = ps(tracer.ios[i].start) + ns(1500) + ns(300);
    CHECK(ps(shadow[i].t) == visible);
    bool found = false;
    for (const auto& e : doorbells)
      if (ps(e.start) == visible) found = true;
    CHECK(found);
  }
}

TEST_CASE("vcpu: guest + exits + idle account for the measured interval (buffer off)", "[vcpu]") {
  const Config c = make_config(base_settings(), {{"iodepth", "2"}, {"number_ios", "200"}});
  System system(c);
  const RunResults r = system.run();
  REQUIRE(r.count("ios") == 200);
  REQUIRE(r.vcpus.size() == 1);
  const VcpuTimes v = vcpu0_times(r);
  CHECK(v.exit_ns == Approx(total_exit_ns(r.stats)).margin(1e-6));
  CHECK(v.guest_ns > 0);
  CHECK(v.idle_ns > 0);
  // The interval ends at the last completion; the exits of that last
  // batch's CQ doorbell and EOI follow it but are counted.
  const models::PcieLink l = emulated_link();
  const double trailing = 2200 + l.mmio_ns(true, 4) + 800;
  CHECK(v.guest_ns + v.exit_ns + v.idle_ns == Approx(r.sim_time_ns + trailing).margin(1e-3));
  // Within one quantum (1 us) once the trailing exits are set apart.
  CHECK(std::abs(v.guest_ns + v.exit_ns + v.idle_ns - trailing - r.sim_time_ns) <= 1000.0);
}

TEST_CASE("vcpu: the full barrier's store-buffer stall counts as guest time",
          "[vcpu][dbbuf]") {
  const Config c = make_config(base_settings(), {{"nvme.dbbuf", "spec"},
                                                 {"guest.store_visibility", "300ns"},
                                                 {"iodepth", "1"},
                                                 {"number_ios", "20"}});
  System system(c);
  const RunResults r = system.run();
  REQUIRE(r.count("ios") == 20);
  const VcpuTimes v = vcpu0_times(r);
  const models::PcieLink l = emulated_link();
  // After the last completion: CQ shadow barrier (guest), CQ doorbell exit, EOI.
  const double trailing = 300 + 2200 + l.mmio_ns(true, 4) + 800;
  CHECK(v.guest_ns + v.exit_ns + v.idle_ns == Approx(r.sim_time_ns + trailing).margin(1e-3));
}

TEST_CASE("vcpu: the vendor doorbell buffer runs on PCI vendor 0x1AE0 with opcode 0xC0",
          "[vcpu][dbbuf]") {
  const Config c = make_config(base_settings(), {{"nvme.dbbuf", "vendor"}, {"number_ios", "10"}});
  System system(c);
  const RunResults r = system.run();
  REQUIRE(r.bringup_ok);
  CHECK(system.controller().firmware().config().pci_vendor_id == 0x1AE0);
  CHECK(r.dbbuf_active);
  CHECK(r.dbbuf_opcode == 0xC0);
  CHECK(r.count("ios") == 10);
}

// ---- The CPU: KVM's halt-polling window (firmware/hv/halt_poll.h), halt by halt.
TEST_CASE("vcpu: halt polling grows its window after a halt it missed and keeps it while it catches the interrupt",
          "[vcpu][halt_poll]") {
  // nvme.cmd_cost 13 us: each halt waits about 16 us for its interrupt (the
  // first test's 4.0 us from the SQ doorbell's exit to the MSI-X, plus
  // 12 us), between halt_poll_ns_grow_start (10 us) and twice it.
  const Config c =
      make_config(base_settings(), {{"hv.halt_poll", "200us"}, {"nvme.cmd_cost", "13us"}, {"number_ios", "4"}});
  System system(c);
  const RunResults r = system.run();
  REQUIRE(r.count("ios") == 4);
  const models::Vcpu& v = *system.vcpus()[0];
  // Halt 1: window 0, the thread schedules out; the window opens at 10 us.
  // Halt 2: polls 10 us, misses, schedules out; the window doubles to 20 us.
  // Halts 3 and 4: caught within 20 us; the window stays.
  CHECK(uint64_t(v.results().halt_sleeps) == 2);
  CHECK(uint64_t(v.results().halt_poll_hits) == 2);
  CHECK(v.halt_poll_window() == ns(20000));
}

TEST_CASE("vcpu: halts longer than hv.halt_poll never open the window", "[vcpu][halt_poll]") {
  // Each halt (about 16 us, as above) outlasts the 15 us maximum: KVM
  // neither grows a closed window nor polls.
  const Config c =
      make_config(base_settings(), {{"hv.halt_poll", "15us"}, {"nvme.cmd_cost", "13us"}, {"number_ios", "4"}});
  System system(c);
  const RunResults r = system.run();
  REQUIRE(r.count("ios") == 4);
  const models::Vcpu& v = *system.vcpus()[0];
  CHECK(uint64_t(v.results().halt_sleeps) == 4);
  CHECK(uint64_t(v.results().halt_poll_hits) == 0);
  CHECK(v.halt_poll_window() == ns(0));
}

// ---- The job on the CPU (models/guest/fio_job.h): fio's pacing in time.
TEST_CASE("vcpu: rate_iops starts I/O n within fio's microsecond after n / rate", "[vcpu][fio_job]") {
  RecordingTracer tracer;
  const Config c = make_config(base_settings(), {{"rate_iops", "10000"}, {"number_ios", "5"}});
  traces::set_active(&tracer);
  System system(c);
  const RunResults r = system.run();
  traces::set_active(nullptr);
  REQUIRE(r.count("ios") == 5);
  REQUIRE(tracer.ios.size() == 5);
  const uint64_t start = system.vcpus()[0]->results().start.value();
  // I/O n is due n * 100 us after the job's start; the job sleeps the whole
  // microseconds its clock (utime_since_now, truncated) says are left, so
  // it starts less than 1 us after that.
  for (unsigned n = 0; n < 5; ++n) {
    const uint64_t due = start + n * 100000000ull;  // ps
    CHECK(tracer.ios[n].start >= due);
    CHECK(tracer.ios[n].start < due + 1000000);
  }
}

TEST_CASE("vcpu: thinktime reaps the I/Os in flight, spins thinktime_spin and halts the rest", "[vcpu][fio_job]") {
  const Settings think = {{"number_ios", "4"}, {"thinktime", "50us"}, {"thinktime_spin", "20us"},
                          {"thinktime_blocks", "2"}};
  RecordingTracer tracer;
  const Config c = make_config(base_settings(), think);
  traces::set_active(&tracer);
  System system(c);
  const RunResults r = system.run();
  traces::set_active(nullptr);
  REQUIRE(r.count("ios") == 4);
  REQUIRE(tracer.ios.size() == 4);
  // fio reaps an I/O when its interrupt handler has returned (the CQ
  // doorbell's exit, the EOI) and prepares the next one then; after the
  // 2nd and the 4th I/O issued it thinks first: 50 us.
  const models::PcieLink l = emulated_link();
  const sc_time reaped = ns(2200) + l.mmio_time(true, 4) + ns(800);
  CHECK(ps(tracer.ios[1].start - tracer.ios[0].end) == reaped);
  CHECK(ps(tracer.ios[2].start - tracer.ios[1].end) == reaped + ns(50000));
  CHECK(ps(tracer.ios[3].start - tracer.ios[2].end) == reaped);
  CHECK(system.vcpus()[0]->results().done - ps(tracer.ios[3].end) == reaped + ns(50000));
  // The spins are guest work (beside each I/O's submit_cost, irq_entry and
  // complete_cost), the rest of each think idle (beside the halts for the
  // interrupts).
  CHECK(vcpu0_times(r).guest_ns == Approx(4 * (1500 + 500 + 1000) + 2 * 20000.0).margin(1e-6));
  CHECK(vcpu0_times(r).idle_ns >= 2 * 30000.0);
}
