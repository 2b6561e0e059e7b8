#include "nvmesim/platform/cli/eventidx_cli.h"
#include "nvmesim/platform/config/user_text.h"

#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/platform/cli/options.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "nvmesim/firmware/nvme/eventidx.h"

namespace po = boost::program_options;

namespace nvmesim::platform {
namespace {

constexpr const char* kPrefix = "nvmesim eventidx: error: ";
constexpr uint32_t kMaxExhaustiveQsize = 2048;  // N^3 triples: ~2 s at 1024, ~20 s at 2048

struct UsageError {
  std::string message;
};

// Decimal or 0x-prefixed hex, no sign: a value the user typed, not a C literal.
std::optional<uint64_t> parse_number(const std::string& text) {
  std::string digits = text;
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits = digits.substr(2);
    base = 16;
  }
  if (digits.empty() || digits.size() > 20) return std::nullopt;
  uint64_t value = 0;
  for (char ch : digits) {
    int d;
    if (ch >= '0' && ch <= '9') d = ch - '0';
    else if (base == 16 && ch >= 'a' && ch <= 'f') d = ch - 'a' + 10;
    else if (base == 16 && ch >= 'A' && ch <= 'F') d = ch - 'A' + 10;
    else return std::nullopt;
    if (value > (UINT64_MAX - uint64_t(d)) / uint64_t(base)) return std::nullopt;
    value = value * uint64_t(base) + uint64_t(d);
  }
  return value;
}

uint64_t number_option(const po::variables_map& vm, const std::string& name) {
  const std::string& text = vm[name].as<std::string>();
  const std::optional<uint64_t> v = parse_number(text);
  if (!v) {
    throw UsageError{"--" + name + ": " + quoted(text) + " is not a number (decimal or 0x hex)"};
  }
  return *v;
}

// Marks [old, new) by stepping one index at a time from old, mod `modulus`:
// the rule itself, independent of the u16 subtraction it checks.
void walk_interval(std::vector<uint8_t>& in, uint32_t old_idx, uint32_t new_idx,
                   uint32_t modulus) {
  std::fill(in.begin(), in.end(), 0);
  for (uint32_t k = old_idx; k != new_idx; k = (k + 1) % modulus) in[k] = 1;
}

void print_help(std::ostream& out, const po::options_description& desc) {
  out << "Usage: nvmesim eventidx --qsize N --old O --new W --eventidx E\n"
         "       nvmesim eventidx --qsize N --exhaustive\n"
         "\n"
         "Says whether a driver that moved its SQ tail (or CQ head) from O to W must\n"
         "write the MMIO doorbell, for both forms of the EventIdx test:\n"
         "  linux      (u16)(new - eventidx - 1) <  (u16)(new - old)\n"
         "             rings iff EventIdx lies in [old, new) cyclically\n"
         "  inclusive  (u16)(new - eventidx)     <= (u16)(new - old)\n"
         "             rings iff EventIdx lies in [old, new] cyclically\n"
         "The u16 tests work mod 65536. For EventIdx < N that equals the interval\n"
         "mod N; an EventIdx parked at or above N is crossed only by an update that\n"
         "wraps the queue, i.e. once per lap. --eventidx is read as the low 16 bits\n"
         "of the 32-bit buffer entry, as the Linux driver does.\n"
         "\n"
         "--exhaustive checks both forms against their rules, walked index by index,\n"
         "for every (old, new, EventIdx) in [0, N)^3, N <= "
      << kMaxExhaustiveQsize
      << " (about 2 s for N = 1024, 20 s for 2048).\n"
         "Exit status: 0 ok, 1 a form breaks its rule, 2 bad input.\n\n"
      << desc;
}

std::string interval(uint32_t old_idx, uint32_t new_idx, bool inclusive, uint32_t modulus) {
  std::ostringstream s;
  s << '[' << old_idx << ", " << new_idx << (inclusive ? ']' : ')') << " mod " << modulus;
  return s.str();
}

int explain_triple(uint32_t n, uint32_t old_idx, uint32_t new_idx, uint64_t eventidx_raw,
                   std::ostream& out) {
  // The 32-bit buffer entry is read as a 16-bit index.
  const uint32_t ei = uint32_t(eventidx_raw & 0xFFFF);
  const bool parked = ei >= n;
  const uint32_t entries = (new_idx + n - old_idx) % n;

  out << "qsize " << n << ", old " << old_idx << ", new " << new_idx << " (" << entries
      << (entries == 1 ? " new entry" : " new entries") << "), EventIdx " << ei << '\n';
  if (eventidx_raw > 0xFFFF) {
    out << "note: --eventidx " << eventidx_raw << " is read as its low 16 bits, " << ei
        << " (the 32-bit buffer entry holds a 16-bit index)\n";
  }
  if (parked) {
    out << "note: EventIdx " << ei << " is parked (>= qsize " << n
        << "): the driver's index never equals it\n";
  }

  std::vector<uint8_t> in16(65536), in_n(n);
  walk_interval(in16, old_idx, new_idx, 65536);
  walk_interval(in_n, old_idx, new_idx, n);
  const bool rule16[2] = {in16[ei] != 0, in16[ei] != 0 || ei == new_idx};
  const bool rule_n[2] = {!parked && in_n[ei] != 0, !parked && (in_n[ei] != 0 || ei == new_idx)};
  const bool moduli_differ = rule16[0] != rule_n[0] || rule16[1] != rule_n[1];
  // Name the modulus whose interval the text states: N where it gives the
  // u16 test's answer, else the u16 test's own 65536.
  const uint32_t shown_mod = (parked || moduli_differ) ? 65536 : n;

  int status = 0;
  bool rings[2] = {false, false};
  const fw::NeedEventForm forms[2] = {fw::NeedEventForm::Linux, fw::NeedEventForm::Inclusive};
  for (int f = 0; f < 2; ++f) {
    const bool inclusive = forms[f] == fw::NeedEventForm::Inclusive;
    rings[f] = fw::need_event(forms[f], uint16_t(ei), uint16_t(new_idx), uint16_t(old_idx));
    std::string label = std::string(fw::to_string(forms[f])) + ":";
    label.resize(11, ' ');
    out << label << (rings[f] ? "ring" : "no ring") << ": EventIdx " << ei
        << (rule16[f] ? " lies in " : " lies outside ")
        << interval(old_idx, new_idx, inclusive, shown_mod);
    if (!inclusive && new_idx == old_idx) out << " (empty)";
    if (rings[f] != rule16[f]) {
      out << " [BUG: the u16 test disagrees with the interval rule]";
      status = 1;
    }
    out << '\n';
  }
  if (moduli_differ) {
    out << "moduli differ: the u16 test works mod 65536, where this update wraps through "
        << n << "..65535; mod " << n << " no interval holds EventIdx " << ei
        << ", so a parked EventIdx rings once per lap, on the update that wraps\n";
  }
  if (rings[0] != rings[1]) {
    out << "forms differ: EventIdx == new; linux rings once the index has moved past "
           "EventIdx, inclusive as soon as it reaches it\n";
  }
  return status;
}

int run_exhaustive(uint32_t n, std::ostream& out) {
  uint64_t triples = 0, lin_bad = 0, inc_bad = 0, modn = 0, modn_wrapped = 0;
  uint64_t differ_ei_new = 0, differ_new_old = 0, differ_both = 0, differ_neither = 0;
  std::vector<uint8_t> in16(65536), in_n(n);
  uint32_t olds_done = 0;  // SIGINT/SIGTERM/SIGHUP stop the walk between two old indices
  for (uint32_t old_idx = 0; old_idx < n && !interrupt::received(); ++old_idx, ++olds_done) {
    std::fill(in16.begin(), in16.end(), 0);
    std::fill(in_n.begin(), in_n.end(), 0);
    // new takes the queue indices in walk order from old; both intervals grow
    // by one walked step at a time (mod N, and mod 65536 through N..65535).
    uint32_t walk16 = old_idx;
    for (uint32_t j = 0; j < n; ++j) {
      const uint32_t new_idx = (old_idx + j) % n;
      if (j > 0) in_n[(old_idx + j - 1) % n] = 1;
      while (walk16 != new_idx) {
        in16[walk16] = 1;
        walk16 = (walk16 + 1) & 0xFFFF;
      }
      const uint16_t w = uint16_t(new_idx), o = uint16_t(old_idx);
      uint32_t lb = 0, ib = 0, md = 0, at_new = 0, elsewhere = 0;
      for (uint32_t ei = 0; ei < n; ++ei) {
        const bool lin = fw::need_event_linux(uint16_t(ei), w, o);
        const bool inc = fw::need_event_inclusive(uint16_t(ei), w, o);
        const bool rule = in16[ei] != 0;
        lb += lin != rule;
        ib += inc != (rule || ei == new_idx);
        md += rule != (in_n[ei] != 0);
        at_new += (lin != inc) & (ei == new_idx);
        elsewhere += (lin != inc) & (ei != new_idx);
      }
      triples += n;
      lin_bad += lb;
      inc_bad += ib;
      modn += md;
      if (new_idx < old_idx) modn_wrapped += md;
      if (new_idx == old_idx) {
        differ_both += at_new;
        differ_new_old += elsewhere;
      } else {
        differ_ei_new += at_new;
        differ_neither += elsewhere;
      }
    }
  }
  const uint64_t differ = differ_ei_new + differ_new_old + differ_both + differ_neither;
  const bool ok = lin_bad == 0 && inc_bad == 0 && modn == 0;
  if (olds_done < n) {  // interrupted: what was checked, and no verdict on the rest
    out << "qsize " << n << ": INTERRUPTED by " << interrupt::signal_name(interrupt::received())
        << " after old = 0.." << int64_t(olds_done) - 1 << " of 0.." << n - 1 << ": " << triples
        << " triples checked, " << lin_bad + inc_bad + modn << " mismatches among them\n"
        << "result: INTERRUPTED (no verdict on the triples not checked)\n";
    return interrupt::exit_code();
  }

  out << "qsize " << n << ": checked " << triples << " triples (old, new, EventIdx each in 0.."
      << n - 1 << "), every one by brute force\n";
  out << "rules: linux rings iff EventIdx lies in [old, new), inclusive iff in [old, new], "
         "cyclically mod 65536 (the u16 tests' modulus), each interval walked index by index\n";
  out << "linux vs its rule:     " << lin_bad << " mismatches\n";
  out << "inclusive vs its rule: " << inc_bad << " mismatches\n";
  out << "mod " << n << " vs mod 65536 intervals: " << modn << " disagreements (" << modn_wrapped
      << " on wrapping updates, new < old)\n";
  out << "forms differ on " << differ << " triples: EventIdx == new only: " << differ_ei_new
      << ", new == old only: " << differ_new_old << ", both: " << differ_both
      << ", neither: " << differ_neither << '\n';
  if (ok) {
    out << "result: OK: both forms follow their rules, and mod " << n
        << " gives the same intervals as mod 65536 for every EventIdx < " << n << '\n';
  } else {
    out << "result: FAILED\n";
  }
  return ok ? 0 : 1;
}

}  // namespace

int run_eventidx_command(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  po::options_description desc("Options");
  desc.add_options()
      ("help,h", "show this help")
      ("qsize", po::value<std::string>()->value_name("N"), "queue size, 2..65536")
      ("old", po::value<std::string>()->value_name("O"), "index before the update, 0..N-1")
      ("new", po::value<std::string>()->value_name("W"), "index after the update, 0..N-1")
      ("eventidx", po::value<std::string>()->value_name("E"),
       "EventIdx buffer entry, 0..4294967295 (low 16 bits used)")
      ("exhaustive", po::bool_switch(), "check every triple of queue size N instead");

  try {
    const po::variables_map vm = cli::to_variables(cli::parse_options(argc, argv, desc), desc);

    if (vm.count("help")) {
      print_help(out, desc);
      return 0;
    }
    if (!vm.count("qsize")) {
      throw UsageError{"--qsize is required (see nvmesim eventidx --help)"};
    }
    const uint64_t n = number_option(vm, "qsize");
    if (n < 2 || n > 65536) {
      throw UsageError{"--qsize: " + std::to_string(n) + " is out of range (allowed 2..65536)"};
    }

    const bool exhaustive = vm["exhaustive"].as<bool>();
    const char* triple[] = {"old", "new", "eventidx"};
    if (exhaustive) {
      for (const char* name : triple) {
        if (vm.count(name)) {
          throw UsageError{std::string("--") + name + " cannot be combined with --exhaustive"};
        }
      }
      if (n > kMaxExhaustiveQsize) {
        throw UsageError{"--exhaustive: --qsize " + std::to_string(n) +
                         " is too large (allowed 2.." + std::to_string(kMaxExhaustiveQsize) +
                         ": N^3 triples)"};
      }
      return run_exhaustive(uint32_t(n), out);
    }

    for (const char* name : triple) {
      if (!vm.count(name)) {
        throw UsageError{std::string("--") + name +
                         " is required (give --old, --new and --eventidx, or --exhaustive)"};
      }
    }
    uint64_t v[3];
    for (int i = 0; i < 3; ++i) v[i] = number_option(vm, triple[i]);
    for (int i = 0; i < 2; ++i) {
      if (v[i] >= n) {
        throw UsageError{std::string("--") + triple[i] + ": " + std::to_string(v[i]) +
                         " is out of range for --qsize " + std::to_string(n) + " (allowed 0.." +
                         std::to_string(n - 1) + ")"};
      }
    }
    if (v[2] > 0xFFFFFFFFull) {
      throw UsageError{"--eventidx: " + std::to_string(v[2]) +
                       " is out of range (allowed 0..4294967295, a 32-bit buffer entry)"};
    }
    return explain_triple(uint32_t(n), uint32_t(v[0]), uint32_t(v[1]), v[2], out);
  } catch (const UsageError& e) {
    err << kPrefix << e.message << '\n';
    return 2;
  } catch (const cli::UsageError& e) {
    err << kPrefix << e.what() << '\n';
    return 2;
  }
}

}  // namespace nvmesim::platform
