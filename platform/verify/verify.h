// `nvmesim verify`: every interleaving of the guest driver's and the
// device's accesses to one SQ/CQ pair, checked for lost wake-ups, queue
// overflows, entries processed twice or skipped, and EventIdx values ahead
// of the device (docs/verify.md).
#pragma once

#include <iosfwd>

namespace nvmesim::platform {

// argv[0] is "verify". Exit status: 0 no violation, 1 a counterexample,
// 2 bad input (one line on `err`).
int run_verify_command(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace nvmesim::platform
