#!/bin/sh
# fio's own plotting script (Debian's fio package: fio_generate_plots, with
# gnuplot) renders nvmesim's fio logs: every plot it draws is made, none
# missing. Exit 77 (ctest: skipped) when the tools are not installed.
NVMESIM=$1
command -v fio_generate_plots >/dev/null 2>&1 || { echo "fio_generate_plots not installed (apt-get install fio)"; exit 77; }
command -v gnuplot >/dev/null 2>&1 || { echo "gnuplot not installed (apt-get install gnuplot-nox)"; exit 77; }
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
cd "$d" || exit 1
printf '[global]\nrw=randrw\niodepth=8\nruntime=4ms\ntime_based\nwrite_lat_log=nv\nwrite_bw_log=nv\nwrite_iops_log=nv\n[a]\n[b]\nlog_avg_msec=1\n' > p.fio
"$NVMESIM" --job p.fio --nvme.dbbuf=spec > run.txt || { echo "nvmesim failed"; exit 1; }
fio_generate_plots nvmesim > plots.txt 2>&1 || { cat plots.txt; echo "fio_generate_plots failed"; exit 1; }
if grep -q "No log files found" plots.txt; then cat plots.txt; exit 1; fi
# slat has no samples (nvmesim does not separate submission latency): gnuplot
# skips those files; the script still goes on to clat and bw.
for t in lat clat iops bw; do
  [ -s "nvmesim-$t.svg" ] || { echo "no nvmesim-$t.svg"; cat plots.txt; exit 1; }
done
# Each plot with data holds both jobs' series (gnuplot writes one path per line).
for t in lat clat iops bw; do
  n=$(grep -c "Queue depth" "nvmesim-$t.svg")
  [ "$n" -ge 2 ] || { echo "nvmesim-$t.svg: $n series"; exit 1; }
done
echo "fio_generate_plots drew lat, clat, iops and bw from nvmesim's logs"
