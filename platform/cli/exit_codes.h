// nvmesim's exit statuses, one per class of outcome (README.md, "Exit status").
#pragma once

namespace nvmesim::platform::exit_code {

constexpr int kOk = 0;
constexpr int kInternal = 1;  // a bug or a resource the process could not get (memory, fork)
constexpr int kUsage = 2;     // usage or configuration: one line naming the field, nothing ran
constexpr int kStalled = 3;   // stalled, with --fail-on-stall
constexpr int kFailed = 4;    // the simulated system failed: I/O errors, failed verification, bring-up refused
constexpr int kOutput = 5;    // results could not be written: standard output, --output, a trace, a log
// 128 + the signal when SIGINT/SIGTERM cut the run short (130, 143).

}  // namespace nvmesim::platform::exit_code
