// Parameters that only act together with another one's value, declared in
// one table (param_requires.cpp, beside the parameter list) and checked in
// one place, so that a setting never silently does nothing.
//
//   hv.fault (not none)      needs hv.notify ioeventfd        refused
//   verify (any mode)        needs nvme.backend ram           refused
//                            (virtio.backend with device=virtio-blk)
//   pcie.gen/lanes/mps/...   need pcie.mode link              warned
//   pcie.host_copy_gbps/...  need pcie.mode emulated          warned
//   guest.io_prp_fault       needs device nvme                warned
//   guest.dbbuf_fault        needs nvme, no passthrough, nvme.dbbuf spec|vendor   warned
//   hv.notify=ioeventfd      needs nvme.dbbuf spec|vendor     warned (QEMU 7.2)
//   nvme.clock, nvme.*_cycles need hv.passthrough on          warned (the hardware engine's)
//   nvme.cmd_cost, cqe_cost  need hv.passthrough off          warned (QEMU's engine's)
//   nvme.backend_*_cost, hv.msi_*_cost need hv.passthrough off and device nvme; each MSI cost its hv.msi   warned
//   ...
// --help prints the whole table (param_requirements_help). In the default
// comparison (buffer off and spec) the command line warns only about a
// setting inert in both runs.
// A refusal is a ConfigError ("--hv.fault: eventfd_spin needs hv.notify
// ioeventfd (it is deferred)"); a warning is one line for standard error.
#pragma once

#include <string>
#include <vector>

namespace nvmesim::platform {

class Config;

struct ParamRequirement {
  const char* param;      // the dependent parameter
  const char* inert;      // its value that asks for nothing (nullptr: any value the user set acts)
  const char* needs;      // the parameter it needs
  std::vector<const char*> values;  // ... at one of these values
  bool refuse;            // true: the run is refused (exit 2); false: warned about once
  const char* why;        // what happens otherwise, for the message
  const char* only = nullptr;  // the requirement holds for this value of param only (nullptr: any but inert)
};

const std::vector<ParamRequirement>& param_requirements();

// Throws ConfigError for the first refused combination in `config`; returns
// the warnings ("nvmesim: warning: ..."), one per parameter: first those of
// the backend's old spellings (backend_alias_warnings, device_backend.h).
std::vector<std::string> check_param_requirements(const Config& config);

// The table for --help, one line a requirement:
// "  hv.fault (not none) needs hv.notify=ioeventfd [refused]: no eventfd exists to fault".
std::string param_requirements_help();

}  // namespace nvmesim::platform
