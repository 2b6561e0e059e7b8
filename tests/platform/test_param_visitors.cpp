// The parameters declared by the Params structs' visit(): the registry they
// build, the values they load, the enum tables behind choices, and the
// checks that need the whole system.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "nvmesim/models/guest/guest.h"
#include "nvmesim/models/nvme/nvme_controller.h"
#include "nvmesim/models/pcie/pcie_link.h"
#include "nvmesim/platform/config/system_params.h"
#include "nvmesim/platform/config/visitors.h"
#include "nvmesim/platform/config/params.h"

using namespace nvmesim;
using platform::Config;
using platform::ConfigError;
using platform::ParamKind;
using platform::ParamRegistry;
using platform::ParamSpec;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> names_of(const ParamSpec& s) { return s.choices; }

template <class E, size_t N>
std::vector<std::string> table_names(const fw::EnumEntry<E> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& e : table) out.push_back(e.name);
  return out;
}

// Every entry parses back to its value and prints as its name.
template <class E, size_t N>
void check_round_trip(const fw::EnumEntry<E> (&table)[N], const char* what) {
  INFO(what);
  for (const auto& e : table) {
    INFO(e.name);
    CHECK(platform::parse_choice(table, what, e.name) == e.value);
    CHECK(std::string(fw::enum_name(table, e.value)) == e.name);
  }
}

}  // namespace

TEST_CASE("visitors: the registry holds the 155 parameters with their specs", "[params][visit]") {
  const ParamRegistry& reg = ParamRegistry::builtin();
  REQUIRE(reg.all().size() == 155);
  // The component blocks in order: fio's flat names first, then hv.* up to
  // hv.device_thread and the passthrough settings, the engine's hv.notify,
  // hv.timer_delay and hv.fault, then the device choice and virtio.*.
  CHECK(reg.all().front().name == "rw");
  // fio's latency_target search, after thinktime_blocks.
  CHECK(reg.all()[23].name == "latency_target");
  CHECK(reg.all()[25].name == "latency_percentile");
  CHECK(reg.find("latency_percentile")->max == 100);
  CHECK(reg.find("latency_percentile")->default_value == "100");
  CHECK(reg.all()[26].name == "latency_run");
  CHECK(reg.all()[31].name == "sim.quantum");
  CHECK(reg.all()[35].name == "guest.submit_cost");
  CHECK(reg.all()[38].name == "guest.submit_call_cost");  // the costs per system call, after irq_entry
  CHECK(reg.all()[40].name == "guest.reap_event_cost");
  CHECK(reg.all()[57].name == "nvme.mqes");
  CHECK(reg.all()[79].name == "nvme.clock");  // the hardware engine's 8, after the controller's 22
  CHECK(reg.all()[85].name == "nvme.msix_cycles");
  CHECK(reg.all()[86].name == "nvme.sqe_burst");
  CHECK(reg.all()[87].name == "pcie.mode");
  CHECK(reg.all()[96].name == "hv.cpu_ghz");
  CHECK(reg.all()[124].name == "hv.exit_ipi");  // the IPI exit and hv.ipiv, after hv.posted_interrupts
  CHECK(reg.all()[125].name == "hv.ipiv");
  CHECK(reg.all()[126].name == "host.cores");
  CHECK(reg.all()[127].name == "host.wakeup_wait");  // added by its Params field and visit line only
  CHECK(reg.all()[128].name == "hv.device_thread");
  CHECK(reg.all()[129].name == "hv.passthrough");
  CHECK(reg.all()[130].name == "hv.msix_bar_mmap");
  CHECK(reg.all()[131].name == "hv.page_size");
  // QEMU's engine's notification: its own table (models::NotifierParams).
  CHECK(reg.all()[132].name == "hv.notify");
  CHECK(reg.all()[133].name == "hv.timer_delay");
  CHECK(reg.all()[134].name == "hv.fault");
  // How its MSIs reach KVM and what they cost (models::MsiParams).
  CHECK(reg.all()[135].name == "hv.msi");
  CHECK(reg.all()[137].name == "hv.msi_irqfd_cost");
  CHECK(reg.all()[138].name == "device");
  CHECK(reg.all()[139].name == "preset");  // platform/config/preset_params.h
  CHECK(reg.all()[143].name == "virtio.queues");
  CHECK(reg.all()[151].name == "virtio.busy_poll");
  // fio's engine details, each job's (models/guest/vcpu_params.h IoEngineParams), last.
  CHECK(reg.all()[152].name == "uring_cmd");
  CHECK(reg.all().back().name == "guest.uring_cmd_share");
  const ParamSpec* busy_poll = reg.find("virtio.busy_poll");
  REQUIRE(busy_poll);
  CHECK(busy_poll->kind == ParamKind::Time);
  CHECK(busy_poll->default_value == "0ns");

  const ParamSpec* mmio = reg.find("hv.exit_mmio");
  REQUIRE(mmio);
  CHECK(mmio->kind == ParamKind::Time);
  CHECK(mmio->default_value == "5100cyc");
  CHECK(mmio->unit == "time");
  CHECK(mmio->min == 0);
  CHECK(mmio->max == 1e6);
  CHECK(mmio->help == "trapped MMIO write exit (doorbell)");

  const ParamSpec* bandwidth = reg.find("nvme.backend_bandwidth");
  REQUIRE(bandwidth);
  CHECK(bandwidth->kind == ParamKind::Real);
  CHECK(bandwidth->unit == "MB/s");
  CHECK(bandwidth->default_value == "0");
  const ParamSpec* page = reg.find("hv.page_size");
  REQUIRE(page);
  CHECK(page->kind == ParamKind::Choice);
  CHECK(page->default_value == "4k");

  // fio's text options carry their check (models/guest/fio_options.h).
  const ParamSpec* bssplit = reg.find("bssplit");
  REQUIRE(bssplit);
  CHECK(bssplit->kind == ParamKind::Text);
  CHECK(bssplit->check != nullptr);
  CHECK(reg.all()[13].name == "iodepth_low");

  const ParamSpec* number_ios = reg.find("number_ios");
  REQUIRE(number_ios);
  CHECK(number_ios->kind == ParamKind::Integer);
  CHECK(number_ios->default_value == "200000");
  CHECK(number_ios->unit == "I/Os");
  CHECK(number_ios->max == 1e10);
  CHECK(number_ios->count_suffixes);

  // An alias and a bare-ns time, from ParamOptions.
  const ParamSpec* poll = reg.find("hv.poll_max");
  REQUIRE(poll);
  CHECK(poll->name == "hv.poll_max_ns");
  CHECK(poll->bare_ns);
  CHECK(poll->default_value == "32768ns");
  CHECK(poll->max == 1e9);

  // An integer choice and the two auto choices, auto where it always stood.
  const ParamSpec* lanes = reg.find("pcie.lanes");
  REQUIRE(lanes);
  CHECK(lanes->kind == ParamKind::Choice);
  CHECK(names_of(*lanes) == std::vector<std::string>{"1", "2", "4", "8", "16"});
  CHECK(lanes->unit == "lanes");
  CHECK(names_of(*reg.find("nvme.cq_eventidx")) ==
        std::vector<std::string>{"echo", "lag", "park", "never", "auto"});
  CHECK(names_of(*reg.find("nvme.mmio_doorbell_value")) ==
        std::vector<std::string>{"auto", "use", "ignore"});

  const ParamSpec* size = reg.find("mem.size");
  REQUIRE(size);
  CHECK(size->kind == ParamKind::Size);
  CHECK(size->default_value == "256m");
  CHECK(size->min == 16.0 * 1024 * 1024);
  CHECK(size->max == 3.0 * 1024 * 1024 * 1024);

  // A second registry from the same visitors is the same list.
  ParamRegistry again;
  platform::register_builtin_params(again);
  REQUIRE(again.all().size() == reg.all().size());
  for (size_t i = 0; i < reg.all().size(); ++i) CHECK(again.all()[i].name == reg.all()[i].name);
}

TEST_CASE("visitors: whole names from a prefix", "[params][visit]") {
  CHECK(platform::full_param_name("nvme", "mqes") == "nvme.mqes");
  CHECK(platform::full_param_name("", "bs") == "bs");
  CHECK(platform::full_param_name("hv", "host.cores") == "host.cores");
}

TEST_CASE("visitors: load_params reads every field in its unit", "[params][visit]") {
  Config c;
  c.set("hv.cpu_ghz", "2");
  c.set("hv.exit_mmio", "3000cyc");  // 1500 ns at 2 GHz
  c.set("hv.poll_max", "1000");      // bare ns through the alias
  c.set("hv.doorbell_access", "pio");
  c.set("hv.device_thread", "iothread");
  c.set("pcie.lanes", "16");
  c.set("pcie.read_rtt", "1.5us");
  c.set("nvme.backend", "ram");
  c.set("nvme.capacity", "2g");
  c.set("rw", "randwrite");
  c.set("number_ios", "2k");
  c.set("verify", "pattern");
  c.set("guest.completion", "poll");

  const auto hv = platform::load_params<platform::HvParams>(c);
  CHECK(hv.cpu_ghz == 2);
  CHECK(hv.exits.exit_mmio == sc_core::sc_time(1500, sc_core::SC_NS));
  CHECK(hv.threads.poll_max == sc_core::sc_time(1000, sc_core::SC_NS));
  CHECK(hv.exits.pio_doorbells);
  CHECK(hv.device_thread == platform::DeviceThread::Iothread);
  CHECK(platform::load_params<models::NotifierParams>(c).mode == models::NotifyMode::Deferred);

  const auto link = platform::load_params<models::PcieLinkParams>(c);
  CHECK(link.lanes == 16);
  CHECK(link.read_round_trip_ns == 1500);
  CHECK(link.mode == models::PcieMode::Emulated);

  const auto nvme = platform::load_params<models::NvmeControllerModel::Params>(c);
  CHECK(nvme.backend.kind == models::BackendKind::Ram);
  CHECK(nvme.backend.capacity == (2ull << 30));
  CHECK_FALSE(nvme.cq_eventidx.has_value());  // auto

  const auto w = platform::load_params<models::WorkloadParams>(c);
  CHECK(w.job.rw == models::RwMode::RandWrite);
  CHECK(w.number_ios == 2048);
  CHECK(w.verify == models::VerifyMode::Pattern);
  CHECK(w.iodepth == 32);

  const auto guest = platform::load_params<models::GuestParams>(c);
  CHECK_FALSE(guest.driver.interrupts);
  CHECK(guest.cpu.submit_cost == sc_core::sc_time(1500, sc_core::SC_NS));
}

TEST_CASE("visitors: the firmware's own initializers agree with the visit lines", "[params][visit]") {
  // fw::ControllerConfig and fw::DriverConfig keep initializers for the
  // firmware's tests (no Config there); they must not drift.
  const auto nvme = platform::default_params<models::NvmeControllerModel::Params>();
  const fw::ControllerConfig fc;
  CHECK(nvme.firmware.mqes == fc.mqes);
  CHECK(nvme.firmware.dstrd == fc.dstrd);
  CHECK(nvme.firmware.max_io_queues == fc.max_io_queues);
  CHECK(nvme.firmware.mdts == fc.mdts);
  CHECK(nvme.firmware.lba_bytes == fc.lba_bytes);
  CHECK(nvme.firmware.dbbuf == fc.dbbuf);
  CHECK(nvme.firmware.sq_eventidx == fc.sq_eventidx);
  const auto guest = platform::default_params<models::GuestParams>();
  const fw::DriverConfig dc;
  CHECK(guest.driver.io_queue_entries == dc.io_queue_entries);
  CHECK(guest.driver.io_cq_entries == dc.io_cq_entries);
  CHECK(guest.driver.admin_shadow == dc.admin_shadow);
  CHECK(guest.driver.dbbuf_full_barrier == dc.dbbuf_full_barrier);
  CHECK(guest.driver.need_event_form == dc.need_event_form);
  CHECK(guest.driver.interrupts == dc.interrupts);
  CHECK(guest.driver.dbbuf_config_fault == dc.dbbuf_config_fault);
  CHECK(guest.driver.irq_coalescing_threshold == dc.irq_coalescing_threshold);
  CHECK(guest.driver.io_prp1_misaligned == dc.io_prp1_misaligned);
}

TEST_CASE("enum tables: every entry round-trips, and each table is its parameter's choices",
          "[params][visit]") {
  check_round_trip(models::rw_modes, "rw");
  check_round_trip(models::WorkloadParams::verify_modes, "verify");
  check_round_trip(models::backend_kinds, "nvme.backend");
  check_round_trip(models::notify_modes, "hv.notify");
  check_round_trip(models::pcie_modes, "pcie.mode");
  check_round_trip(models::eventfd_faults, "hv.fault");
  check_round_trip(platform::device_threads, "hv.device_thread");
  check_round_trip(platform::HvParams::doorbell_accesses, "hv.doorbell_access");
  check_round_trip(fw::dbbuf_modes, "nvme.dbbuf");
  check_round_trip(fw::eventidx_policies, "nvme.sq_eventidx");
  check_round_trip(fw::mmio_doorbell_values, "nvme.mmio_doorbell_value");
  check_round_trip(fw::need_event_forms, "guest.need_event");
  check_round_trip(fw::dbbuf_config_faults, "guest.dbbuf_fault");
  check_round_trip(models::GuestParams::prp_faults, "guest.io_prp_fault");
  check_round_trip(fw::virtio_ring_faults, "guest.virtio_fault");
  check_round_trip(models::GuestParams::completion_paths, "guest.completion");

  const ParamRegistry& reg = ParamRegistry::builtin();
  auto choices = [&](const char* name) { return reg.find(name)->choices; };
  CHECK(choices("rw") == table_names(models::rw_modes));
  CHECK(choices("nvme.backend") == table_names(models::backend_kinds));
  CHECK(choices("hv.notify") == table_names(models::notify_modes));
  CHECK(choices("hv.fault") == table_names(models::eventfd_faults));
  CHECK(choices("nvme.dbbuf") == table_names(fw::dbbuf_modes));
  CHECK(choices("guest.dbbuf_fault") == table_names(fw::dbbuf_config_faults));
  CHECK(choices("guest.virtio_fault") == table_names(fw::virtio_ring_faults));
  CHECK(choices("hv.device_thread") == table_names(platform::device_threads));
}

TEST_CASE("enum tables: an unknown choice is refused with the allowed list", "[params][visit]") {
  CHECK(error_of([] { platform::parse_choice(models::notify_modes, "hv.notify", "poll"); }) ==
        "--hv.notify: 'poll' is not one of sync, deferred, ioeventfd, timer");
  CHECK(error_of([] { platform::parse_choice(fw::eventidx_policies, "nvme.sq_eventidx", "Echo"); }) ==
        "--nvme.sq_eventidx: 'Echo' is not one of echo, lag, park, never");
  // Config::set says the same, from the same table.
  Config c;
  CHECK(error_of([&] { c.set("hv.notify", "poll"); }) ==
        "--hv.notify: 'poll' is not one of sync, deferred, ioeventfd, timer");
  CHECK(error_of([&] { c.set("nvme.cq_eventidx", "sometimes"); }) ==
        "--nvme.cq_eventidx: 'sometimes' is not one of echo, lag, park, never, auto");
}

TEST_CASE("auto choices resolve from nvme.dbbuf", "[params][visit]") {
  Config c;
  c.set("nvme.dbbuf", "vendor");
  auto p = platform::load_system_params(c, {});
  CHECK(p.nvme.firmware.cq_eventidx == fw::EventIdxPolicy::Never);
  CHECK(p.nvme.firmware.mmio_doorbell_value == fw::MmioDoorbellValue::Ignore);
  CHECK(p.nvme.firmware.pci_vendor_id == nvme::PCI_VENDOR_VENDOR_EXT);
  c.set("nvme.dbbuf", "spec");
  c.set("nvme.cq_eventidx", "lag");
  p = platform::load_system_params(c, {});
  CHECK(p.nvme.firmware.cq_eventidx == fw::EventIdxPolicy::Lag);
  CHECK(p.nvme.firmware.mmio_doorbell_value == fw::MmioDoorbellValue::Use);
  CHECK(p.nvme.firmware.pci_vendor_id == nvme::PCI_VENDOR_QEMU);
  CHECK(p.nvme.firmware.namespace_lbas == (1ull << 30) / 512);
  CHECK(p.nvme.firmware.msix_vectors == 65);
}

TEST_CASE("cross-field checks: each is made in one place", "[params][visit]") {
  auto system_error = [](const Config& c) {
    return error_of([&] { platform::check_system_params(platform::load_system_params(c, {}), c); });
  };
  // bs against the LBA size: Config::validate_all's alone.
  Config lba;
  lba.set("bs", "3000");
  CHECK(error_of([&] { lba.validate_all(); }) == "--bs: 3000 is not a multiple of nvme.lba_bytes (512)");
  CHECK(system_error(lba) == "");
  // size against capacity: the same.
  Config size;
  size.set("nvme.capacity", "1g");  // given: checked (an unset one grows to the size)
  size.set("size", "2g");
  CHECK(error_of([&] { size.validate_all(); }) == "--size: 2g is larger than nvme.capacity (1g)");
  CHECK(system_error(size) == "");
  // bs split at MDTS into more commands than the queue's tags: its parts
  // wait for tags (blk_mq_get_tag), nothing refuses it.
  Config mdts;
  mdts.set("bs", "1m");
  mdts.set("nvme.mdts", "1");
  CHECK(error_of([&] { mdts.validate_all(); }) == "");
  CHECK(system_error(mdts) == "");
  // Per-vCPU workloads: the largest iodepth is the one that must fit a virtqueue.
  Config base, deep;
  base.set("device", "virtio-blk");
  base.set("virtio.queue_size", "64");
  deep = base;
  deep.set("iodepth", "65");
  base.set("iodepth", "8");
  CHECK(error_of([&] {
          platform::check_system_params(platform::load_system_params(base, {&base, &deep}), base);
        }) == "--iodepth: 65 does not fit a virtqueue of 64 descriptors, 1 per request (allowed 1..64; "
              "raise virtio.queue_size)");
  CHECK(system_error(base) == "");
}
