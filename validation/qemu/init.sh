#!/bin/busybox sh
# /init of the validation guest (busybox + Debian's fio in an initramfs).
# Settings come from kernel command-line words nvq.<key>=<value>:
#   nvq.mode=probe|run   probe: print NVQ-ALIVE and power off (accelerator check)
#   nvq.dbbuf=0|1        nvme.ko use_dbbuf (Doorbell Buffer Config off/on)
#   nvq.rw=a,b nvq.qd=1,2,.. nvq.jobs=J nvq.reps=R nvq.ios=N (I/Os per fio job)
# Per fio run it prints, between NVQ-RUN-BEGIN and NVQ-RUN-END on the serial
# console: the driver's doorbell counters and the nvme I/O-queue lines of
# /proc/interrupts before and after, and fio's JSON.  Around each fio run it
# reads two otherwise unused NVMe registers (PMRCAP 0xE00 before, PMRCTL 0xE04
# after) so that QEMU's pci_nvme_mmio_read trace event marks the run's window
# in QEMU's trace log.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /dev/shm && mount -t tmpfs tmpfs /tmp && mount -t tmpfs tmpfs /dev/shm

arg() { # arg KEY DEFAULT
	for w in $(cat /proc/cmdline); do
		case "$w" in nvq.$1=*) echo "${w#nvq.$1=}"; return;; esac
	done
	echo "$2"
}

echo "NVQ-ALIVE"
if [ "$(arg mode run)" = probe ]; then
	poweroff -f
fi

DBBUF=$(arg dbbuf 1)
RWS=$(arg rw randread | tr , ' ')
QDS=$(arg qd 1 | tr , ' ')
JOBS=$(arg jobs 1)
REPS=$(arg reps 1)
IOS=$(arg ios 2000)

# Load order: modules.dep lists dependencies last-needed-first (modload.list
# was written from it by run.sh).
for m in $(cat /modload.list); do
	if [ "${m##*/}" = nvme.ko ]; then
		insmod "/$m" use_dbbuf="$DBBUF" || echo "NVQ-ERROR insmod $m"
	else
		insmod "/$m" || echo "NVQ-ERROR insmod $m"
	fi
done

i=0
while [ ! -b /dev/nvme0n1 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
[ -b /dev/nvme0n1 ] || { echo "NVQ-ERROR no /dev/nvme0n1"; dmesg | tail -30; poweroff -f; }

P=/sys/module/nvme/parameters
BAR0=$(head -n1 /sys/class/nvme/nvme0/device/resource | cut -d' ' -f1)
echo "NVQ-INFO kernel=$(uname -r) fio=$(fio --version) use_dbbuf=$(cat $P/use_dbbuf) bar0=$BAR0 cpus=$(grep -c ^processor /proc/cpuinfo)"
echo "NVQ-INFO queues=$(ls -d /sys/block/nvme0n1/mq/* | wc -l)"
dmesg | grep -i nvme | sed 's/^/NVQ-DMESG /'

counters() {
	echo "$1 $(cat $P/db_sq_updates) $(cat $P/db_sq_mmio) $(cat $P/db_cq_updates) $(cat $P/db_cq_mmio)"
	grep 'nvme0q[1-9]' /proc/interrupts | sed "s/^/$1-IRQ /"
}

LAST=$((JOBS - 1))
for rw in $RWS; do
	for qd in $QDS; do
		r=1
		while [ $r -le $REPS ]; do
			echo "NVQ-RUN-BEGIN rw=$rw qd=$qd jobs=$JOBS rep=$r"
			counters NVQ-BEFORE
			devmem $((BAR0 + 0xE00)) 32 >/dev/null
			fio --name=nvq --filename=/dev/nvme0n1 --ioengine=libaio --direct=1 \
				--bs=4k --rw="$rw" --iodepth="$qd" --numjobs="$JOBS" \
				--size=$((IOS * 4))k --cpus_allowed=0-$LAST \
				--cpus_allowed_policy=split --group_reporting \
				--output-format=json >/tmp/fio.json 2>/tmp/fio.err
			rc=$?
			devmem $((BAR0 + 0xE04)) 32 >/dev/null
			counters NVQ-AFTER
			echo "NVQ-FIO-RC $rc"
			sed 's/^/NVQ-FIOERR /' /tmp/fio.err
			echo "NVQ-JSON-BEGIN"
			cat /tmp/fio.json
			echo "NVQ-JSON-END"
			echo "NVQ-RUN-END"
			r=$((r + 1))
		done
	done
done
echo "NVQ-DONE"
poweroff -f
