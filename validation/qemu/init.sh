#!/bin/busybox sh
# /init of the validation guest (busybox + Debian's fio in an initramfs).
# Settings come from kernel command-line words nvq.<key>=<value>:
#   nvq.mode=probe|run   probe: print NVQ-ALIVE and power off (accelerator check)
#   nvq.dbbuf=0|1        nvme.ko use_dbbuf (Doorbell Buffer Config off/on)
#   nvq.rw=a,b nvq.qd=1,2,.. nvq.jobs=J nvq.reps=R nvq.ios=N (I/Os per fio job)
#   nvq.dev=nvme|virtio-blk  the device fio reads (/dev/nvme0n1 or /dev/vda)
#   nvq.count=module|kprobes|none  virtio-blk: how kicks are counted (below)
# virtio-blk: instead of the nvme counters it prints, per fio run, the
# guest's kicks sent, kick decisions and virtblk_done calls (-1 when not
# counted) and the virtio0-req.N lines of /proc/interrupts; no QEMU trace
# marks.
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

DEV=$(arg dev nvme)

# Load order: modules.dep lists dependencies last-needed-first (modload.list
# and modload-virtio.list were written from it by run.sh).
# load_modules LIST [nvme.ko's options]: insmod each module of LIST in order.
load_modules() {
	for m in $(cat "$1"); do
		if [ "${m##*/}" = nvme.ko ]; then
			insmod "/$m" $2 || echo "NVQ-ERROR insmod $m"
		else
			insmod "/$m" || echo "NVQ-ERROR insmod $m"
		fi
	done
}
# wait_disk DEV: up to 60 s for the block device to appear, else power off.
wait_disk() {
	i=0
	while [ ! -b "$1" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	[ -b "$1" ] || { echo "NVQ-ERROR no $1"; dmesg | tail -30; poweroff -f; }
}
if [ "$DEV" = virtio-blk ]; then
	load_modules /modload-virtio.list
	wait_disk /dev/vda
	FILE=/dev/vda
	echo "NVQ-INFO kernel=$(uname -r) fio=$(fio --version) cpus=$(grep -c ^processor /proc/cpuinfo)"
	echo "NVQ-INFO queues=$(ls -d /sys/block/vda/mq/* | wc -l)"
	echo "NVQ-INFO features=$(cat /sys/block/vda/device/features)"
	echo "NVQ-INFO scheduler=$(cat /sys/block/vda/queue/scheduler)"
	grep virtio /proc/interrupts | sed 's/^/NVQ-IRQLINE /'
	dmesg | grep -i virtio | sed 's/^/NVQ-DMESG /'
	# Counted calls, in this order (drivers/block/virtio_blk.c callers):
	#   kicks sent: virtqueue_notify -> vp_notify
	#     (drivers/virtio/virtio_pci_common.c), the notify write (an exit
	#     under KVM);
	#   kick decisions: virtqueue_kick_prepare (drivers/virtio/virtio_ring.c;
	#     with VIRTIO_RING_F_EVENT_IDX, vring_need_event against avail_event)
	#     from virtio_queue_rq when bd->last, virtio_commit_rqs and
	#     virtblk_add_req_batch;
	#   virtblk_done calls: the virtqueue callback vring_interrupt runs for
	#     an interrupt that found used buffers.
	# count=module: virtio_blk.ko rebuilt with virtio-blk-kick-counters.patch
	# (atomic counters at those call sites, read from /sys/module).
	# count=kprobes: Debian's module; kprobes on vp_notify,
	# virtqueue_kick_prepare and virtblk_done whose only consumer is a hist
	# trigger (Debian's 6.1 has no CONFIG_FUNCTION_PROFILER); the trigger's
	# "Hits:" total grows by one per call.  Both give the same counts; the
	# probes cost a few percent of IOPS (README.md).
	COUNT=$(arg count module)
	T=/sys/kernel/tracing
	VB=/sys/module/virtio_blk/parameters
	PROBES="vp_notify virtqueue_kick_prepare virtblk_done"
	if [ "$COUNT" = kprobes ]; then
		mount -t tracefs nodev $T || echo "NVQ-ERROR tracefs"
		for f in $PROBES; do
			echo "p:nvq_$f $f" >>$T/kprobe_events || echo "NVQ-ERROR kprobe $f"
			echo 'hist:keys=common_pid' >$T/events/kprobes/nvq_$f/trigger || echo "NVQ-ERROR hist $f"
		done
	elif [ "$COUNT" = module ]; then
		[ -r $VB/vb_kicks ] || echo "NVQ-ERROR virtio_blk.ko has no counters"
	fi
	counters() {
		case "$COUNT" in
		module) echo "$1 $(cat $VB/vb_kicks) $(cat $VB/vb_kick_checks) $(cat $VB/vb_done_calls)" ;;
		kprobes)
			line="$1"
			for f in $PROBES; do
				h=$(sed -n 's/^ *Hits: *//p' $T/events/kprobes/nvq_$f/hist)
				line="$line ${h:--1}"
			done
			echo "$line" ;;
		*) echo "$1 -1 -1 -1" ;;
		esac
		grep 'virtio[0-9]*-req\.' /proc/interrupts | sed "s/^/$1-IRQ /"
	}
else
	load_modules /modload.list "use_dbbuf=$DBBUF"
	wait_disk /dev/nvme0n1
	FILE=/dev/nvme0n1

	P=/sys/module/nvme/parameters
	BAR0=$(head -n1 /sys/class/nvme/nvme0/device/resource | cut -d' ' -f1)
	echo "NVQ-INFO kernel=$(uname -r) fio=$(fio --version) use_dbbuf=$(cat $P/use_dbbuf) bar0=$BAR0 cpus=$(grep -c ^processor /proc/cpuinfo)"
	echo "NVQ-INFO queues=$(ls -d /sys/block/nvme0n1/mq/* | wc -l)"
	dmesg | grep -i nvme | sed 's/^/NVQ-DMESG /'

	counters() {
		echo "$1 $(cat $P/db_sq_updates) $(cat $P/db_sq_mmio) $(cat $P/db_cq_updates) $(cat $P/db_cq_mmio)"
		grep 'nvme0q[1-9]' /proc/interrupts | sed "s/^/$1-IRQ /"
	}
fi

# mark 0xE00|0xE04: an NVMe register read that QEMU's trace shows (nvme only).
mark() { [ "$DEV" = virtio-blk ] || devmem $((BAR0 + $1)) 32 >/dev/null; }

LAST=$((JOBS - 1))
for rw in $RWS; do
	for qd in $QDS; do
		r=1
		while [ $r -le $REPS ]; do
			echo "NVQ-RUN-BEGIN rw=$rw qd=$qd jobs=$JOBS rep=$r"
			counters NVQ-BEFORE
			mark 0xE00
			fio --name=nvq --filename=$FILE --ioengine=libaio --direct=1 \
				--bs=4k --rw="$rw" --iodepth="$qd" --numjobs="$JOBS" \
				--size=$((IOS * 4))k --cpus_allowed=0-$LAST \
				--cpus_allowed_policy=split --group_reporting \
				--output-format=json >/tmp/fio.json 2>/tmp/fio.err
			rc=$?
			mark 0xE04
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
