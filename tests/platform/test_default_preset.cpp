// The command's default model: presets kvm,qemu-7.2 under everything the user
// sets (the `preset` parameter); --preset=none keeps the parameters' own
// defaults; a dumped configuration names its presets and replays them.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/presets.h"
#include "tests/platform/run_binary.h"
#include "tests/platform/temp_dir.h"

using nvmesim::platform::Config;
using nvmesim::test::run_nvmesim;
using nvmesim::test::TempDir;

namespace {

const std::string kRun = "--single-run --nvme.dbbuf=spec --number_ios=300 --output-format=json";

nlohmann::json config_of(const std::string& args) {
  const auto r = run_nvmesim(args);
  INFO(args << "\n" << r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out)["config"];
}

}  // namespace

TEST_CASE("default preset: no --preset runs kvm,qemu-7.2, byte for byte", "[preset][binary]") {
  const auto plain = run_nvmesim(kRun);
  const auto named = run_nvmesim(kRun + " --preset=kvm,qemu-7.2");
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out == named.out);
  const auto config = nlohmann::json::parse(plain.out)["config"];
  CHECK(config["preset"] == "kvm,qemu-7.2");
  // Every value the two presets set is the run's (a later preset wins).
  Config presets;
  nvmesim::platform::apply_preset("kvm,qemu-7.2", presets);
  int checked = 0;
  for (const auto& [name, value] : presets.effective())
    if (presets.from_preset(name)) {
      INFO(name);
      CHECK(config[name] == value);
      ++checked;
    }
  // The presets' own lists (no name in both) and the preset parameter.
  size_t listed = 1;
  for (const auto& p : nvmesim::platform::presets())
    if (p.name == "kvm" || p.name == "qemu-7.2") listed += p.values.size();
  CHECK(size_t(checked) == listed);
  CHECK(listed == 22);
}

TEST_CASE("default preset: none keeps the parameters' own defaults, and options beat the preset",
          "[preset][binary]") {
  const auto bare = config_of(kRun + " --preset=none");
  const Config defaults;
  for (const char* name : {"hv.notify", "hv.halt_poll", "hv.posted_interrupts", "guest.submit_cost", "hv.msi"}) {
    INFO(name);
    CHECK(bare[name] == defaults.text(name));
  }
  CHECK(bare["preset"] == "none");
  // An option over the default preset, and over a named one.
  CHECK(config_of(kRun + " --hv.halt_poll=0ns")["hv.halt_poll"] == "0ns");
  CHECK(config_of(kRun + " --hv.halt_poll=0ns")["hv.notify"] == "deferred");
  CHECK(config_of(kRun + " --preset=qemu-7.1 --hv.notify=deferred")["hv.notify"] == "deferred");
  // A named preset replaces the default: qemu-7.1 alone is no KVM model.
  CHECK(config_of(kRun + " --preset=qemu-7.1")["hv.posted_interrupts"] == defaults.text("hv.posted_interrupts"));
}

TEST_CASE("default preset: a --config file names the presets it is built on", "[preset][binary]") {
  TempDir dir("nvmesim_default_preset", "ini");
  const std::string ini = dir / "bare.ini";
  std::ofstream(ini) << "preset = none\niodepth = 4\n";
  const auto from_file = config_of(kRun + " --config " + ini);
  CHECK(from_file["preset"] == "none");
  CHECK(from_file["hv.notify"] == Config().text("hv.notify"));
  CHECK(from_file["iodepth"] == "4");
  // The command line's --preset beats the file's, as options beat files.
  CHECK(config_of(kRun + " --config " + ini + " --preset=kvm")["hv.halt_poll"] == "200us");
  std::ofstream(ini) << "preset = kvm,nosuch\n";
  const auto bad = run_nvmesim(kRun + " --config " + ini);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "nvmesim: error: config file " + ini +
                       " line 1: preset: 'kvm,nosuch': 'nosuch' is not one of haswell-ep, ivybridge-i7, qemu-7.2, "
                       "qemu-7.1, kvm, tcg, or none\n");
}

TEST_CASE("default preset: the comparison's header names the model, and only what else was set",
          "[preset][binary]") {
  const auto text = run_nvmesim("--number_ios=300 --iodepth=4");
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("\nmodel: --preset=kvm,qemu-7.2\n\n") != std::string::npos);
  CHECK(text.out.find("also set:") == std::string::npos);
  const auto bare = run_nvmesim("--number_ios=300 --iodepth=4 --preset=none --hv.notify=ioeventfd");
  REQUIRE(bare.exit_code == 0);
  CHECK(bare.out.find("model:") == std::string::npos);
  CHECK(bare.out.find("\nalso set: hv.notify=ioeventfd\n") != std::string::npos);
}

TEST_CASE("default preset: no argument at all runs the default comparison over seeds 1..3", "[preset][binary]") {
  const auto r = run_nvmesim("");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("nvmesim default experiment over 3 seeds (seed=1..3): rw=randread bs=4k iodepth=32 numjobs=1 "
                    "backend=null number_ios=200000, MMIO doorbell exit 5100cyc at 2.3 GHz\n"
                    "model: --preset=kvm,qemu-7.2\n",
                    0) == 0);
  CHECK(r.out.find("(95%, 3 seeds)") != std::string::npos);
}

TEST_CASE("default preset: the preset parameter records what apply_preset applied, in order", "[preset]") {
  Config c;
  nvmesim::platform::apply_preset("qemu-7.1", c);
  CHECK(c.text("preset") == "qemu-7.1");
  nvmesim::platform::apply_preset("kvm,haswell-ep", c);
  CHECK(c.text("preset") == "qemu-7.1,kvm,haswell-ep");
  CHECK(nvmesim::platform::model_line(c) == "model: --preset=qemu-7.1,kvm,haswell-ep\n");
  Config none;
  none.set("preset", "none");
  nvmesim::platform::apply_preset_under("none", none);
  CHECK(nvmesim::platform::model_line(none).empty());
  CHECK(none.text("hv.notify") == Config().text("hv.notify"));
}
