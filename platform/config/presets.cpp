#include "nvmesim/platform/config/presets.h"

#include <sstream>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/user_text.h"

namespace nvmesim::platform {

const std::vector<Preset>& presets() {
  // Exit costs in cycles as measured on each machine (Paolo Bonzini's reply in
  // the qemu-devel thread 'nvme: support Google vendor extension': ioeventfd cuts the MMIO exit by 55-70%).
  static const std::vector<Preset> list = {
      {"haswell-ep",
       "Haswell-EP host: trapped MMIO 5100 cycles, with ioeventfd 2250; port I/O 3800, with "
       "ioeventfd 1150",
       "qemu-devel thread 'nvme: support Google vendor extension' (Bonzini's figures)",
       {{"hv.exit_mmio", "5100cyc"},
        {"hv.exit_mmio_other", "5100cyc"},
        {"hv.exit_ioeventfd", "2250cyc"},
        {"hv.exit_pio", "3800cyc"},
        {"hv.exit_pio_ioeventfd", "1150cyc"}}},
      {"ivybridge-i7",
       "Ivy Bridge i7 host: trapped MMIO 7000 cycles, with ioeventfd 3000; port I/O 4100, with "
       "ioeventfd 1800",
       "qemu-devel thread 'nvme: support Google vendor extension' (Bonzini's figures)",
       {{"hv.exit_mmio", "7000cyc"},
        {"hv.exit_mmio_other", "7000cyc"},
        {"hv.exit_ioeventfd", "3000cyc"},
        {"hv.exit_pio", "4100cyc"},
        {"hv.exit_pio_ioeventfd", "1800cyc"}}},
      // Device mechanisms, as the named QEMU release runs them (docs/mechanisms.md
      // walks through the code). Exit costs are not part of these: combine
      // with an exit-cost preset (--preset qemu-7.2,haswell-ep).
      {"qemu-7.2",
       "QEMU 7.2 NVMe emulation: a doorbell write is handled in the vCPU's exit, which schedules "
       "the queue's bottom half in the main loop (under the global lock); the SQ EventIdx is set "
       "to the tail after each command and the CQ EventIdx to the head before each CQE",
       "QEMU 7.2 hw/nvme/ctrl.c: nvme_process_db, nvme_process_sq, nvme_post_cqes"
       "; its MSI by ioctl: nvme_post_cqes -> nvme_irq_assert -> hw/pci/msix.c msix_notify -> "
       "msi_send_message -> kvm_apic_mem_write -> kvm_send_msi -> kvm_irqchip_send_msi (KVM_SIGNAL_MSI)",
       {{"hv.notify", "deferred"},
        {"hv.msi", "ioctl"},
        {"hv.device_thread", "mainloop"},
        {"hv.bql", "on"},
        {"nvme.sq_eventidx", "echo"},
        {"nvme.cq_eventidx", "echo"},
        {"nvme.mmio_doorbell_value", "use"}}},
      {"qemu-7.1",
       "QEMU 7.1 NVMe emulation, the first release with shadow doorbells: a doorbell write arms the "
       "queue's 500 ns QEMU_CLOCK_VIRTUAL timer, whose expiry processes the SQ in the main loop; "
       "each completion arms the CQ's 500 ns timer, which posts the CQEs; the SQ EventIdx is set "
       "to the tail after each command, and the device never writes the CQ EventIdx, so the guest "
       "skips nearly every CQ doorbell; with ioeventfd each completion is posted at once with its "
       "own interrupt",
       "QEMU 7.1 hw/nvme/ctrl.c: nvme_process_db (timer_mod(sq->timer, now + 500)), "
       "nvme_enqueue_req_completion (timer_mod(cq->timer, now + 500)), nvme_process_sq, "
       "nvme_post_cqes (no CQ EventIdx update: added by 'hw/nvme: fix missing cq eventidx update' "
       "for 7.2); 'hw/nvme: Use ioeventfd to handle doorbell updates' (2e53b0b45024) posted each CQE "
       "at once, which 'hw/nvme: reenable cqe batching' (d38cc6fd, 7.2) undid, turning the timers into "
       "bottom halves"
       "; its MSI by ioctl: nvme_post_cqes -> nvme_irq_assert -> hw/pci/msix.c msix_notify -> "
       "msi_send_message -> kvm_apic_mem_write -> kvm_send_msi -> kvm_irqchip_send_msi (KVM_SIGNAL_MSI)",
       {{"hv.notify", "timer"},
        {"hv.msi", "ioctl"},
        {"hv.timer_delay", "500ns"},
        {"hv.device_thread", "mainloop"},
        {"hv.bql", "on"},
        {"nvme.sq_eventidx", "echo"},
        {"nvme.cq_eventidx", "never"},
        {"nvme.mmio_doorbell_value", "use"},
        {"nvme.cqe_post", "each_ioeventfd"}}},
      // How KVM runs the vCPU around the device's exits and interrupts.
      {"kvm",
       "KVM on a host with APIC virtualization and posted interrupts (Intel since Ivy Bridge-EP): "
       "no injection or EOI exit; an MMIO exit to QEMU runs in phases, the device seeing the "
       "write before the vCPU is back in the guest; a halted vCPU polls for up to 200 us "
       "(halt_poll_ns) before it schedules out; a vCPU that scheduled out and a device thread "
       "asleep in ppoll wake after a delay drawn from the wake-ups measured on this project's host "
       "(hv.wakeup=measured, the default); an MSI costs the device thread that sends it 2 us by "
       "KVM_SIGNAL_MSI, 170 ns by an irqfd (one eventfd write)",
       "Linux virt/kvm/kvm_main.c kvm_vcpu_halt, grow_halt_poll_ns (KVM_HALT_POLL_NS_DEFAULT "
       "200000 on x86); arch/x86/kvm/vmx/vmx.c enable_apicv, posted interrupts; QEMU "
       "accel/kvm/kvm-all.c kvm_cpu_exec (KVM_EXIT_MMIO dispatched in the vCPU thread); the "
       "wake-ups (device thread and scheduled-out vCPU) are drawn from validation/host/wakeup-idle*.csv "
       "(validation/qemu/wakeup_probe.c); the 30% return share and the guest's costs are "
       "assumptions (sensitivity in docs/mechanisms.md); nvmesim validate fits the MMIO exit. "
       "Guest costs, assumed, split as Linux pays them so "
       "that iodepth=1 still totals 6 us per I/O: 1 us per io_submit call + 1.5 us per command "
       "submitted; 1 us per interrupt (nvme_irq entry) + 0.6 us per CQE (nvme_pci_complete_rq to "
       "aio_complete); 0.3 us per io_getevents call + 0.2 us per event it returns + 1.4 us when the "
       "call sleeps (fs/aio.c read_events -> schedule: the switch out and back in, measured: half the "
       "median round trip of perf bench sched pipe on this host, validation/host/sched-pipe.csv); the 2 us "
       "KVM_SIGNAL_MSI ioctl is an assumption, the irqfd's 170 ns is the p50 eventfd write() "
       "measured on this host (validation/host/eventfd_write_cost.c, eventfd-write-cost.csv)",
       {{"hv.posted_interrupts", "on"},
        {"hv.msi_ioctl_cost", "2us"},
        {"hv.msi_irqfd_cost", "170ns"},
        {"hv.apicv", "on"},
        {"hv.exit_return_share", "0.3"},
        {"hv.halt_poll", "200us"},
        {"hv.bql_handoff", "5us"},
        {"guest.submit_cost", "1500ns"},
        {"guest.complete_cost", "600ns"},
        {"guest.irq_entry", "1us"},
        {"guest.submit_call_cost", "1us"},
        {"guest.reap_call_cost", "300ns"},
        {"guest.reap_event_cost", "200ns"},
        {"guest.reap_sleep_cost", "1400ns"}}},
      // How the guest runs: under TCG the guest is emulated instruction by
      // instruction (slow) and a doorbell write is a call into the device
      // model from the vCPU thread, not a VM exit.
      {"tcg",
       "QEMU TCG (no hardware virtualization): an MMIO write runs the device's handler in the "
       "vCPU thread under the global lock (no VM exit); interrupts are a flag the vCPU checks "
       "between translated blocks (no injection exit, no EOI exit), taken and EOIed under the "
       "global lock when hv.bql is on; an IPI to another vCPU is that flag too (no exit); guest code is emulated, so "
       "guest CPU costs are two orders of magnitude above native (nvmesim validate fits the guest cost on iodepth=1 IOPS)",
       "QEMU 7.2 accel/tcg/cputlb.c io_writex (MMIO under the lock), hw/intc/apic.c "
       "apic_set_irq -> cpu_interrupt, accel/tcg/cpu-exec.c cpu_handle_interrupt and "
       "hw/intc/apic.c apic_mem_write (the lock), apic_deliver -> apic_bus_deliver -> apic_set_irq (an IPI); "
       "guest costs and the 2 us handler cost are assumptions",
       {{"hv.exit_mmio", "2us"},
        {"hv.exit_ipi", "0ns"},
        {"hv.exit_mmio_other", "2us"},
        {"hv.exit_ioeventfd", "1us"},
        {"hv.posted_interrupts", "on"},
        {"hv.apicv", "on"},
        {"hv.bql_interrupts", "on"},
        {"guest.submit_cost", "300us"},
        {"guest.complete_cost", "150us"},
        {"guest.irq_entry", "50us"}},
       {"guest.submit_cost@ioeventfd=off"}},
  };
  return list;
}

namespace {

const Preset* find_preset(const std::string& name) {
  for (const Preset& p : presets())
    if (p.name == name) return &p;
  return nullptr;
}

std::string known_presets() {
  std::string known;
  for (const Preset& p : presets()) known += (known.empty() ? "" : ", ") + p.name;
  return known;
}

}  // namespace

void apply_preset(const std::string& names, Config& config) {
  // "qemu-7.2,haswell-ep": several presets, applied in order (later wins).
  if (names == "none") return;
  size_t begin = 0;
  for (;;) {
    const size_t comma = names.find(',', begin);
    const std::string name = names.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (name.empty()) throw ConfigError("--preset: empty name (see --list-presets)");
    const Preset* found = find_preset(name);
    if (!found) throw ConfigError("--preset: " + quoted(name) + " is not one of " + known_presets());
    for (const auto& [k, v] : found->values) {
      config.set(k, v);
      config.mark_from_preset(k);
    }
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  // The configuration says what it is built on (its JSON `config` block
  // too): the presets an earlier call applied, then these.
  if (config.registry().find("preset")) {
    const std::string before = config.from_preset("preset") ? config.text("preset") + "," : "";
    config.set("preset", before + names);
    config.mark_from_preset("preset");
  }
}

std::string preset_names_problem(const std::string& names) {
  // By name only: the builtin registry checks its default with this, before
  // any Config can exist.
  if (names == "none") return "";
  std::istringstream list(names + ",");
  for (std::string name; std::getline(list, name, ',');) {
    if (name.empty()) return "empty name in " + quoted(names) + " (see --list-presets)";
    if (!find_preset(name))
      return (name == names ? std::string("not") : quoted(name) + " is not") + " one of " + known_presets() +
             (name == "none" ? " (none stands alone: no preset at all)" : ", or none");
  }
  return "";
}

void apply_preset_under(const std::string& names, Config& config) {
  if (names == "none") return;
  Config preset(config.registry());
  apply_preset(names, preset);  // in order: a later preset's value wins; sets `preset` to names
  for (const auto& [name, value] : preset.effective()) {
    if (!preset.from_preset(name)) continue;
    if (!config.is_set(name)) {
      config.set(name, value);
      config.mark_from_preset(name);
    } else if (config.text(name) == preset.text(name)) {
      config.mark_from_preset(name);
    }
  }
}

std::string model_line(const Config& config) {
  const std::string& names = config.text("preset");
  return names == "none" ? "" : "model: --preset=" + names + "\n";
}

std::vector<std::string> preset_calibrations(const std::string& names) {
  std::vector<std::string> out;
  std::istringstream list(names);
  std::string name;
  while (std::getline(list, name, ','))
    for (const Preset& p : presets())
      if (p.name == name)
        for (const std::string& c : p.calibrate) {
          // A later preset's choice for the same cost replaces an earlier one.
          const std::string param = c.substr(0, c.find('@'));
          for (auto it = out.begin(); it != out.end();)
            it = it->substr(0, it->find('@')) == param ? out.erase(it) : it + 1;
          out.push_back(c);
        }
  return out;
}

std::string list_presets_text() {
  std::ostringstream o;
  for (const Preset& p : presets()) {
    o << p.name << ": " << p.description << "\n  source: " << p.source << "\n  sets:";
    for (const auto& [k, v] : p.values) o << " " << k << "=" << v;
    if (!p.calibrate.empty()) {
      o << "\n  nvmesim validate calibrates:";
      for (const std::string& c : p.calibrate) o << " " << c;
    }
    o << "\n";
  }
  o << "(cycles convert at hv.cpu_ghz; later options override a preset)\n";
  return o.str();
}

}  // namespace nvmesim::platform
