// blk-mq's tag waits on an NVMe queue and the wake-up IPI of a shared
// virtqueue. A job deeper than its queue's tags (entries - 1), or whose I/Os
// split at MDTS into more commands than the tags, sleeps for a free tag as
// blk_mq_get_tag does (block/blk-mq-tag.c) and completes; the driver never
// has more commands outstanding than the tags. A vCPU whose interrupt
// handler wakes another vCPU's sleeping job sends it a reschedule IPI
// (native_smp_send_reschedule): an x2APIC ICR write, an exit of hv.exit_ipi
// on the sender unless hv.ipiv.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/presets.h"
#include "nvmesim/platform/system/system.h"
#include "nvmesim/traces/tracer.h"

using namespace nvmesim;
using namespace nvmesim::platform;

namespace {

// Commands the driver has issued and not yet completed, per queue, in the
// order the model issues and completes them (io_start per command, io per
// command's completion), and the IPI exits the vCPUs report.
struct OutstandingTracer : traces::Tracer {
  std::map<uint16_t, int64_t> now, max;
  std::map<unsigned, uint64_t> ipi_exits;
  std::vector<uint64_t> ipi_exit_ps;  // each IPI exit's length
  void begin(unsigned, unsigned, unsigned) override {}
  void end(uint64_t) override {}
  void vcpu_state(unsigned, uint64_t, traces::VcpuState) override {}
  void vm_exit(unsigned vcpu, const char* kind, uint64_t s, uint64_t e) override {
    if (std::string(kind) != "ipi") return;
    ++ipi_exits[vcpu];
    ipi_exit_ps.push_back(e - s);
  }
  void io_start(uint16_t qid, uint32_t, bool, uint64_t) override {
    max[qid] = std::max(max[qid], ++now[qid]);
  }
  void io(uint16_t qid, uint32_t, bool, uint64_t, uint64_t) override { --now[qid]; }
  void doorbell_update(uint16_t, bool, uint64_t, uint16_t, uint16_t, bool, bool, uint16_t) override {}
  void queue_value(uint16_t, traces::QueueSignal, uint64_t, uint32_t) override {}
  void thread_state(unsigned, uint64_t, traces::ThreadState) override {}
  void device_burst(unsigned, uint64_t, uint64_t, unsigned, unsigned) override {}
  void msix(uint16_t, uint64_t) override {}
  void interrupt(unsigned, uint64_t) override {}
  void hold_begin(traces::Hold, unsigned, uint64_t) override {}
  void hold_end(traces::Hold, unsigned) override {}
};

RunResults run_traced(const std::vector<std::pair<const char*, const char*>>& settings, OutstandingTracer& t) {
  Config c;
  for (const auto& [k, v] : settings) c.set(k, v);
  c.validate_all();
  traces::set_active(&t);
  System system(c);
  const RunResults r = system.run();
  traces::set_active(nullptr);
  return r;
}

// iodepth 200 on a 128-entry queue (127 tags), behind a 1 ms backend: the
// job issues its I/Os one per io_submit (iodepth_batch_submit=1) a few us
// apart, so none completes before the first 127 have taken every tag.
const std::vector<std::pair<const char*, const char*>> kDeep = {
    {"iodepth", "200"},          {"guest.io_queue_entries", "128"}, {"nvme.mqes", "128"},
    {"nvme.backend", "latency"}, {"nvme.backend_latency", "1ms"}};

}  // namespace

TEST_CASE("tag waits: 127 I/Os at iodepth 200 take the 127 tags without a wait", "[tag_wait]") {
  OutstandingTracer t;
  auto s = kDeep;
  s.push_back({"number_ios", "127"});
  const RunResults r = run_traced(s, t);
  REQUIRE(r.bringup_ok);
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == 127);
  CHECK(t.max[1] == 127);
  CHECK(r.stats.at("vcpu0.tag_waits") == 0);
}

TEST_CASE("tag waits: the 128th I/O at iodepth 200 sleeps once for a tag", "[tag_wait]") {
  OutstandingTracer t;
  auto s = kDeep;
  s.push_back({"number_ios", "128"});
  const RunResults r = run_traced(s, t);
  REQUIRE(r.bringup_ok);
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == 128);
  CHECK(t.max[1] == 127);  // never the 128 fio has in flight
  CHECK(r.stats.at("vcpu0.tag_waits") == 1);
  // Its io_submit returned after the first completion (1 ms), which freed the tag.
  CHECK(r.stats.at("vcpu0.ios") == 128);
}

TEST_CASE("tag waits: iodepth 200 on 127 tags runs to completion, at most 127 commands outstanding", "[tag_wait]") {
  OutstandingTracer t;
  auto s = kDeep;
  s.push_back({"number_ios", "3000"});
  s.push_back({"nvme.backend_latency", "200us"});
  const RunResults r = run_traced(s, t);
  REQUIRE(r.bringup_ok);
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == 3000);
  CHECK(r.count("io_errors") == 0);
  CHECK(t.max[1] == 127);
  CHECK(t.now[1] == 0);
  CHECK(r.stats.at("vcpu0.tag_waits") > 0);
}

TEST_CASE("tag waits: with polled completions the job polls its CQ for a tag", "[tag_wait]") {
  OutstandingTracer t;
  auto s = kDeep;
  s.push_back({"number_ios", "1000"});
  s.push_back({"nvme.backend_latency", "100us"});
  s.push_back({"guest.completion", "poll"});
  const RunResults r = run_traced(s, t);
  REQUIRE(r.bringup_ok);
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == 1000);
  CHECK(t.max[1] == 127);
  CHECK(r.stats.at("vcpu0.tag_waits") > 0);
}

// bs 1m split at MDTS 128 KiB (nvme.mdts=5: 32 pages of 4 KiB) into 8
// commands: iodepth 32 wants 256 tags, a 64-entry queue has 63.
TEST_CASE("tag waits: 1m I/Os split at MDTS 128k, iodepth 32, 64-entry queue: at most 63 commands outstanding", "[tag_wait][split]") {
  OutstandingTracer t;
  const RunResults r = run_traced({{"bs", "1m"},
                                   {"nvme.mdts", "5"},
                                   {"iodepth", "32"},
                                   {"guest.io_queue_entries", "64"},
                                   {"nvme.mqes", "63"},
                                   {"number_ios", "200"}},
                                  t);
  REQUIRE(r.bringup_ok);
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == 200);
  CHECK(r.count("io_errors") == 0);
  CHECK(r.stats.at("nvme.io_commands") == 200 * 8);
  CHECK(t.max[1] <= 63);
  CHECK(t.max[1] == 63);  // the queue filled: parts waited
  CHECK(r.stats.at("vcpu0.tag_waits") > 0);
}

// A single I/O's 8 parts on 3 tags: its parts go as earlier ones complete,
// and the data they carry is what was written (verify=pattern).
TEST_CASE("tag waits: one I/O's parts beyond the tags wait for each other, data intact", "[tag_wait][split]") {
  OutstandingTracer t;
  const RunResults r = run_traced({{"bs", "1m"},
                                   {"nvme.mdts", "5"},
                                   {"iodepth", "2"},
                                   {"guest.io_queue_entries", "4"},
                                   {"nvme.backend", "ram"},
                                   {"rw", "randrw"},
                                   {"verify", "pattern"},
                                   {"do_verify", "off"},  // 200 I/Os, no read-back after them
                                   {"size", "16m"},
                                   {"number_ios", "200"}},
                                  t);
  REQUIRE(r.bringup_ok);
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == 200);
  CHECK(r.count("io_errors") == 0);
  CHECK(t.max[1] == 3);
  CHECK(r.stats.at("vcpu0.verified_reads") > 0);
  CHECK(r.stats.at("vcpu0.verify_errors") == 0);
  CHECK(r.stats.at("vcpu0.tag_waits") > 0);
}

namespace {
// Two jobs on one virtqueue: vCPU 0 takes its interrupt and completes
// vCPU 1's I/Os. vCPU 1 takes no interrupt, so each of its halts (a sleep in
// io_getevents, or for a tag) is ended by one wake-up from vCPU 0: one IPI.
std::vector<std::pair<const char*, const char*>> shared(const char* ipiv, const char* exit_ipi) {
  return {{"device", "virtio-blk"}, {"nvme.backend", "null"}, {"numjobs", "2"}, {"virtio.queues", "1"},
          {"iodepth", "4"},         {"number_ios", "2000"},    {"hv.ipiv", ipiv}, {"hv.exit_ipi", exit_ipi}};
}

uint64_t halts(const RunResults& r, unsigned v) {
  const std::string g = "vcpu" + std::to_string(v) + ".";
  return r.stats.at(g + "halt_sleeps") + r.stats.at(g + "halt_poll_hits");
}
}  // namespace

TEST_CASE("wake-up IPI: one per wake-up of a sleeping job on another vCPU, an exit of hv.exit_ipi on the sender", "[ipi][shared]") {
  OutstandingTracer t;
  const RunResults r = run_traced(shared("off", "1us"), t);
  REQUIRE(r.bringup_ok);
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == 4000);
  const uint64_t ipis = r.stats.at("vcpu0.ipis");
  CHECK(ipis > 0);
  CHECK(ipis == halts(r, 1));
  CHECK(r.stats.at("vcpu1.ipis") == 0);  // it completes nobody's I/O
  CHECK(r.stats.at("vcpu0.exits.ipi") == ipis);
  CHECK(r.stats.at("vcpu1.exits.ipi") == 0);
  CHECK(r.stats.at("vcpu0.exit_time.ipi") == ipis * 1000000);  // ps
  CHECK(t.ipi_exits[0] == ipis);
  CHECK(t.ipi_exits.count(1) == 0);
  for (const uint64_t ps : t.ipi_exit_ps) CHECK(ps == 1000000);
  // The sender's exit time holds them (utilisation's exits).
  uint64_t exit_ps = 0;
  for (const char* k : {"mmio_doorbell", "mmio_other", "ioeventfd", "pio", "interrupt", "eoi", "ipi"})
    exit_ps += r.stats.at(std::string("vcpu0.exit_time.") + k);
  CHECK(r.figure("utilization.vcpu.exit_ns", 0) == Approx(exit_ps / 1000.0));
}

TEST_CASE("wake-up IPI: hv.exit_ipi=3us costs the sender 3 us per IPI", "[ipi][shared]") {
  OutstandingTracer t;
  const RunResults r = run_traced(shared("off", "3us"), t);
  REQUIRE(r.bringup_ok);
  CHECK(r.count("ios") == 4000);
  const uint64_t ipis = r.stats.at("vcpu0.ipis");
  CHECK(ipis > 0);
  CHECK(ipis == halts(r, 1));
  CHECK(r.stats.at("vcpu0.exits.ipi") == ipis);
  CHECK(r.stats.at("vcpu0.exit_time.ipi") == ipis * 3000000);
}

TEST_CASE("wake-up IPI: with IPI virtualization (hv.ipiv=on) the IPIs take no exit", "[ipi][shared]") {
  OutstandingTracer t;
  const RunResults r = run_traced(shared("on", "1us"), t);
  REQUIRE(r.bringup_ok);
  CHECK_FALSE(r.stalled);
  CHECK(r.count("ios") == 4000);
  const uint64_t ipis = r.stats.at("vcpu0.ipis");
  CHECK(ipis > 0);
  CHECK(ipis == halts(r, 1));
  CHECK(r.stats.at("vcpu0.exits.ipi") == 0);
  CHECK(r.stats.at("vcpu0.exit_time.ipi") == 0);
  CHECK(t.ipi_exits.empty());
}

// Under TCG an IPI is cpu_interrupt's flag on the target (hw/intc/apic.c
// apic_deliver -> apic_set_irq): the tcg preset makes it cost nothing.
TEST_CASE("wake-up IPI: the tcg preset's IPIs take no exit", "[ipi][shared]") {
  Config tcg;
  apply_preset("tcg", tcg);
  CHECK(tcg.time_ns("hv.exit_ipi") == 0);
  OutstandingTracer t;
  const RunResults r = run_traced(shared("off", "0ns"), t);
  REQUIRE(r.bringup_ok);
  CHECK(r.count("ios") == 4000);
  CHECK(r.stats.at("vcpu0.ipis") == halts(r, 1));
  CHECK(r.stats.at("vcpu0.exits.ipi") == 0);
  CHECK(r.stats.at("vcpu0.exit_time.ipi") == 0);
  CHECK(t.ipi_exits.empty());
}

// Each job with its own queue: every completion is on the submitter's vCPU.
TEST_CASE("wake-up IPI: none when each job has its own queue", "[ipi]") {
  OutstandingTracer t;
  const RunResults r =
      run_traced({{"numjobs", "2"}, {"iodepth", "4"}, {"number_ios", "500"}, {"nvme.backend", "null"}}, t);
  REQUIRE(r.bringup_ok);
  CHECK(r.count("ios") == 1000);
  CHECK(r.stats.at("vcpu0.ipis") + r.stats.at("vcpu1.ipis") == 0);
  CHECK(r.count("exits.count.ipi") == 0);
}
