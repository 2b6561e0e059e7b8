#!/usr/bin/env bash
# Runs a fixed set of nvmesim commands with one binary and keeps each one's
# standard output and exit status in a folder, so two builds can be compared
# byte for byte (a refactoring keeps every figure):
#   scripts/outputs.sh build/nvmesim /tmp/before
#   scripts/outputs.sh build-new/nvmesim /tmp/after && diff -r /tmp/before /tmp/after
# Set QUICK=1 to skip the slow ones (the scenarios and the two validates).
set -uo pipefail
bin=$(readlink -f "$1"); out=$2
mkdir -p "$out"
export NVMESIM_NO_PROGRESS=1
run() {  # name, arguments...
  local name=$1; shift
  ( cd "$out" && "$bin" "$@" >"$name.out" 2>"$name.err"; echo "exit $?" >>"$name.out" )
}
J=--output-format=json
src=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
run default
run default-json $J
run spec-json --single-run --nvme.dbbuf=spec $J
run qemu71-kvm-json --preset qemu-7.1,kvm $J
run qemu72-tcg-json --preset qemu-7.2,tcg $J
run virtio-json --device=virtio-blk $J
run virtio-iothread-json --device=virtio-blk --hv.notify=ioeventfd --hv.device_thread=iothread --hv.poll_max=32us --numjobs=2 $J
run virtio-busypoll-json --device=virtio-blk --iodepth=1 --virtio.busy_poll=50us --number_ios=2000 $J
run passthrough-json --hv.passthrough=on $J
run passthrough-link-json --hv.passthrough=on --pcie.mode=link $J
run link-json --single-run --pcie.mode=link --nvme.dbbuf=spec $J
run jobs4-json --numjobs=4 $J
run ioeventfd-json --hv.notify=ioeventfd --nvme.dbbuf=spec --iodepth=8 $J
run iothreads-json --hv.device_thread=iothread --hv.iothreads=2 --numjobs=2 --hv.poll_max=32us $J
run timer-json --hv.notify=timer --nvme.dbbuf=vendor --iodepth=4 $J
run sync-json --hv.notify=sync --nvme.dbbuf=spec --iodepth=4 $J
run fault-json --hv.notify=ioeventfd --nvme.dbbuf=spec --hv.fault=eventfd_spin --number_ios=500 $J
run jitter-json --hv.dispatch_jitter=2us --nvme.dbbuf=spec $J
run coalesce-json --hv.posted_interrupts=on --guest.irq_coalescing_thr=8 --guest.irq_coalescing_time=200us $J
run hostcores-json --host.cores=2 --numjobs=4 $J
run bql-json --hv.bql=on --hv.exit_return_share=0.3 --hv.halt_poll=200us --hv.halt_wakeup=5us --hv.bql_handoff=5us $J
run rate-json --single-run --nvme.dbbuf=spec --iodepth=4 --rate_iops=20000 --number_ios=400 $J
run thinktime-json --single-run --nvme.dbbuf=spec --iodepth=8 --thinktime=20us --thinktime_blocks=4 --number_ios=400 $J
run verify-pattern-json --single-run --nvme.dbbuf=spec --rw=randwrite --verify=pattern --nvme.backend=ram --number_ios=400 $J
run mixed-text --single-run --rw=randrw --rwmixread=70 --bssplit=4k/50:64k/50 --number_ios=1000
run job-ramdisk --job "$src/workloads/seed-ramdisk.fio" --runtime=10ms
run job-ramdisk-jsonplus --job "$src/workloads/seed-ramdisk.fio" --runtime=10ms --output-format=json+
run list-params --list-params
run list-presets --list-presets
run verify verify
run verify-nobarrier verify --guest.dbbuf_full_barrier=off
run eventidx eventidx --qsize 64 --exhaustive
if [[ -z ${QUICK:-} ]]; then
  run scenario-list scenario --list
  for s in $("$bin" scenario --list 2>/dev/null | awk -F: '/^[a-z0-9-]+:/{print $1}'); do
    run "scenario-$s" scenario "$s" $J
  done
  run validate-published validate "$src/validation/published/figures.csv"
  run validate-qemu validate "$src/validation/qemu/results.csv" --preset qemu-7.2,tcg --timing "$src/validation/qemu/results-timing.csv"
fi
