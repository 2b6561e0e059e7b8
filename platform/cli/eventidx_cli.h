// `nvmesim eventidx`: explains the doorbell decision of both need_event forms
// for one (old, new, EventIdx) triple, or checks both forms against their
// interval rules for every triple of a queue size.
#pragma once

#include <iosfwd>

namespace nvmesim::platform {

// argv[0] is "eventidx". Returns 0 on success (or when the exhaustive check
// finds both forms follow their rules), 1 when the check fails, 2 on bad
// input (one line on `err`).
int run_eventidx_command(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace nvmesim::platform
