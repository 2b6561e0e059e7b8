// `nvmesim timeline-html IN.json OUT.html`: a --timeline file (Chrome
// trace-event JSON) as one self-contained HTML page (inline SVG, a few lines
// of inline script for zoom, no external resource), so a timeline opens in
// any browser without a network. Tracks as the trace names them (vCPUs,
// host threads, queues), in its sort order; each queue's I/Os one row per
// command tag (the slot an I/O occupies, so concurrent I/Os never overlap);
// spans (exits, host work) as bars, instants (doorbells, MSI-X) as ticks;
// every element's <title> gives its name, start and duration, a doorbell
// update's the new, old and EventIdx values that decided it. Hovering (or
// clicking) an I/O lights its SQ and CQ doorbell updates, its interrupt and
// MSI-X, and the other way round (data-k / data-l keys, a few lines of
// inline script). The axis starts at the trace's window (--trace-start);
// colours come from one fixed table by kind of event, so every page agrees.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>

namespace nvmesim::platform {

// The input: a regular file of at most this many bytes (a larger page would
// not open in a browser anyway); a FIFO, a device, a larger file: exit 2.
constexpr size_t kTimelineInputMax = size_t(256) << 20;

// SIGINT/SIGTERM/SIGHUP while a page is made (platform/cli/interrupt.h).
struct TimelineInterrupted {};

// Throws std::runtime_error (one line, naming the event and field) when
// `trace_json` is not a trace, TimelineInterrupted on a signal.
std::string timeline_html(const std::string& trace_json, const std::string& title);

// The page of this run's own trace (--timeline FILE.html: run.cpp), written
// to `out`: as timeline_html, deaf to signals (an interrupted run still
// writes its files).
void timeline_html_of_run(const std::string& trace_json, const std::string& title, std::ostream& out);

int run_timeline_html_command(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace nvmesim::platform
