#!/bin/bash
# Real-system reference for nvmesim: Debian's QEMU 7.2 nvme device (null-co
# backend) and Debian's Linux 6.1 guest running fio; doorbell counts, IOPS,
# latency and interrupts per configuration, written as one CSV.
# Usage (as root on Debian 12):  validation/qemu/run.sh [--smoke] [--out FILE]
# Environment: WORKDIR (scratch, default /var/tmp/nvmesim-qemu), REPEATS (3),
#   IOS (I/Os per fio job, default 2000), SKIP_APT=1 (packages already there),
#   ACCEL=kvm|tcg (skip the probe), BOOT_TIMEOUT (s per boot, default 1500);
#   a subset: RWS_OVERRIDE (randread,read), QDS_OVERRIDE (1,32), JOBS_LIST_OVERRIDE
#   ("1 2"), DBBUF_LIST_OVERRIDE ("0 1"), IOEVENTFD_LIST_OVERRIDE ("off on");
#   QEMU_CPUS (taskset core list for QEMU, e.g. 0: one core);
#   TRACE_TIMING=1 (also trace, with timestamps, the events that time the main
#   loop and the guest; validation/qemu/trace_timing.py reads the logs).
# DEVICE=virtio-blk: the same guest and fio against -device virtio-blk-pci on
#   the same null-co drive (default out: results-virtio.csv, parsed by
#   parse_virtio.py); its matrix: JOBS_LIST_OVERRIDE (default "1 2 4"),
#   QDS_OVERRIDE ("1,2,4,8,16,32,64"), IOTHREAD_LIST_OVERRIDE ("none poll0 polldef":
#   main loop; -object iothread with poll-max-ns=0; iothread at QEMU's default
#   poll-max-ns), VQUEUES_LIST_OVERRIDE ("1 jobs": num-queues 1, or one per
#   job), VIRTIO_COUNT=module|kprobes|none (how the guest's kicks are counted:
#   module, default: virtio_blk.ko rebuilt with virtio-blk-kick-counters.patch;
#   kprobes: kprobe events with hist triggers on Debian's own module; none).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SMOKE=0
OUT=""
while [ $# -gt 0 ]; do
	case "$1" in
	--smoke) SMOKE=1 ;;
	--out) OUT=$2; shift ;;
	*) echo "run.sh: unknown option '$1' (allowed: --smoke, --out FILE)" >&2; exit 2 ;;
	esac
	shift
done
DEVICE=${DEVICE:-nvme}
case "$DEVICE" in nvme | virtio-blk) ;; *) echo "run.sh: DEVICE must be nvme or virtio-blk, not '$DEVICE'" >&2; exit 2 ;; esac
if [ -z "$OUT" ]; then
	if [ "$DEVICE" = virtio-blk ]; then
		[ $SMOKE = 1 ] && OUT=$HERE/results-virtio-smoke.csv || OUT=$HERE/results-virtio.csv
	elif [ $SMOKE = 1 ]; then OUT=$HERE/results-smoke.csv
	else OUT=$HERE/results.csv; fi
fi

case "$OUT" in /*) ;; *) OUT=$PWD/$OUT ;; esac # the script works in WORKDIR
WORKDIR=${WORKDIR:-/var/tmp/nvmesim-qemu}
REPEATS=${REPEATS:-3}
IOS=${IOS:-2000}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-1500}
if [ $SMOKE = 1 ]; then
	RWS="randread"; QDS="1,32"; JOBS_LIST="1"; DBBUF_LIST="0 1"; IOEVENTFD_LIST="off"
else
	RWS="randread,read"; QDS="1,2,4,8,16,32,64"; JOBS_LIST="1 2"; DBBUF_LIST="0 1"; IOEVENTFD_LIST="off on"
fi
IOTHREAD_LIST="none poll0 polldef"; VQUEUES_LIST="1 jobs"; VIRTIO_COUNT=${VIRTIO_COUNT:-module}
case "$VIRTIO_COUNT" in module | kprobes | none) ;; *) echo "run.sh: VIRTIO_COUNT must be module, kprobes or none" >&2; exit 2 ;; esac
if [ "$DEVICE" = virtio-blk ]; then
	RWS="randread"; QDS="1,2,4,8,16,32,64"; JOBS_LIST="1 2 4"
	[ $SMOKE = 1 ] && { QDS="1,16"; JOBS_LIST="1"; IOTHREAD_LIST="polldef"; }
fi
IOTHREAD_LIST=${IOTHREAD_LIST_OVERRIDE:-$IOTHREAD_LIST}
VQUEUES_LIST=${VQUEUES_LIST_OVERRIDE:-$VQUEUES_LIST}
JOBS_LIST=${JOBS_LIST_OVERRIDE:-$JOBS_LIST}
RWS=${RWS_OVERRIDE:-$RWS}
QDS=${QDS_OVERRIDE:-$QDS}
DBBUF_LIST=${DBBUF_LIST_OVERRIDE:-$DBBUF_LIST}
IOEVENTFD_LIST=${IOEVENTFD_LIST_OVERRIDE:-$IOEVENTFD_LIST}
# QEMU_CPUS=0 or 0,1: run QEMU's threads on these host cores only (taskset),
# to see how the counts follow the cores its threads share.
PIN=""
[ -n "${QEMU_CPUS:-}" ] && PIN="taskset -c $QEMU_CPUS"

log() { echo "[run.sh $(date -u +%H:%M:%S)] $*" >&2; }
mkdir -p "$WORKDIR"
cd "$WORKDIR"
START=$(date +%s)

# --- packages and versions -------------------------------------------------
if [ "${SKIP_APT:-0}" != 1 ]; then
	log "installing host packages"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq qemu-system-x86 busybox-static fio cpio gzip xz-utils \
		kmod make gcc python3 linux-headers-amd64 >/dev/null
fi
IMG_PKG=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/{print $2; exit}')
ABI=${IMG_PKG#linux-image-}
IMG_VER=$(apt-cache policy "$IMG_PKG" | awk '/Candidate:/{print $2}')
SRC_VER=$(apt-cache policy linux-source-6.1 | awk '/Candidate:/{print $2}')
if [ "$IMG_VER" != "$SRC_VER" ]; then
	# Debian's current image and source differ: take the source of the image's version.
	log "linux-image $IMG_VER != linux-source-6.1 $SRC_VER; using linux-source-6.1=$IMG_VER"
	SRC_VER=$IMG_VER
fi
HDR_PKG=linux-headers-$ABI
if [ "${SKIP_APT:-0}" != 1 ]; then
	apt-get install -y -qq "$HDR_PKG=$IMG_VER" >/dev/null
fi
HDR_VER=$(dpkg-query -W -f '${Version}' "$HDR_PKG")
[ "$HDR_VER" = "$IMG_VER" ] || { echo "run.sh: $HDR_PKG $HDR_VER does not match $IMG_PKG $IMG_VER" >&2; exit 1; }
QEMU_VERSION=$(qemu-system-x86_64 --version | head -n1 | sed 's/^QEMU emulator version //')
FIO_VERSION=$(fio --version)
LINUX_VERSION="$ABI ($IMG_VER)"
log "guest $IMG_PKG $IMG_VER, headers $HDR_VER, source linux-source-6.1 $SRC_VER; $QEMU_VERSION; $FIO_VERSION"
qemu-system-x86_64 -device nvme,help | grep -q 'ioeventfd=' ||
	{ echo "run.sh: this QEMU's nvme device has no ioeventfd property" >&2; exit 1; }
if [ "$DEVICE" = virtio-blk ]; then
	# An iothread's poll-max-ns when none is given (QEMU's iothread.c
	# IOTHREAD_POLL_MAX_NS_DEFAULT; 32768 in 7.2), read back over QMP.
	POLL_DEFAULT=$(printf '%s\n' '{"execute":"qmp_capabilities"}' \
		'{"execute":"qom-get","arguments":{"path":"/objects/io0","property":"poll-max-ns"}}' '{"execute":"quit"}' |
		qemu-system-x86_64 -machine none -nodefaults -display none -object iothread,id=io0 -qmp stdio 2>/dev/null |
		sed -n 's/^{"return": \([0-9][0-9]*\)}.*/\1/p')
	[ -n "$POLL_DEFAULT" ] || { echo "run.sh: could not read the iothread's default poll-max-ns" >&2; exit 1; }
	log "virtio-blk: iothread default poll-max-ns $POLL_DEFAULT"
fi

# --- guest kernel and the patched nvme.ko ------------------------------------
IMG_DEB=${IMG_PKG}_${IMG_VER}_amd64.deb
SRC_DEB=linux-source-6.1_${SRC_VER}_all.deb
[ -f "$IMG_DEB" ] || apt-get download "$IMG_PKG=$IMG_VER" 2>/dev/null
[ -f "$SRC_DEB" ] || apt-get download "linux-source-6.1=$SRC_VER" 2>/dev/null
if [ ! -f kimg/.done-$IMG_VER ]; then
	rm -rf kimg && mkdir kimg && dpkg-deb -x "$IMG_DEB" kimg
	depmod -b kimg "$ABI"
	touch kimg/.done-$IMG_VER
fi
KERNEL=$WORKDIR/kimg/boot/vmlinuz-$ABI
MODDIR=kimg/lib/modules/$ABI
if [ ! -f nvme-src/.done-$SRC_VER ]; then
	log "extracting drivers/nvme/host from $SRC_DEB"
	rm -rf nvme-src lsrc && mkdir -p nvme-src lsrc
	dpkg-deb --fsys-tarfile "$SRC_DEB" | tar -x -C lsrc ./usr/src/linux-source-6.1.tar.xz
	tar -xJf lsrc/usr/src/linux-source-6.1.tar.xz -C nvme-src --strip-components=4 \
		--wildcards 'linux-source-6.1/drivers/nvme/host/*'
	rm -rf lsrc
	touch nvme-src/.done-$SRC_VER
fi
rm -rf nvme-build && mkdir nvme-build
if [ "$DEVICE" = virtio-blk ] && [ ! -f vblk-src/.done-$SRC_VER ]; then
	log "extracting drivers/block/virtio_blk.c from $SRC_DEB"
	rm -rf vblk-src lsrc && mkdir -p vblk-src lsrc
	dpkg-deb --fsys-tarfile "$SRC_DEB" | tar -x -C lsrc ./usr/src/linux-source-6.1.tar.xz
	tar -xJf lsrc/usr/src/linux-source-6.1.tar.xz -C vblk-src --strip-components=3 \
		linux-source-6.1/drivers/block/virtio_blk.c
	rm -rf lsrc
	touch vblk-src/.done-$SRC_VER
fi
cp nvme-src/pci.c nvme-src/*.h nvme-build/
patch -d nvme-build -p4 -s <"$HERE/nvme-pci-dbbuf-counters.patch"
printf 'obj-m := nvme.o\nnvme-y := pci.o\nccflags-y := -I$(src)\n' >nvme-build/Kbuild
log "building nvme.ko against $HDR_PKG"
make -s -C "/usr/src/$HDR_PKG" M="$WORKDIR/nvme-build" -j2 modules >nvme-build/build.log 2>&1 ||
	{ cat nvme-build/build.log >&2; exit 1; }
if [ "$DEVICE" = virtio-blk ]; then
	# virtio_blk.ko with kick counters (virtio-blk-kick-counters.patch).
	rm -rf vblk-build && mkdir vblk-build
	cp vblk-src/virtio_blk.c vblk-build/
	patch -d vblk-build -p3 -s <"$HERE/virtio-blk-kick-counters.patch"
	printf 'obj-m := virtio_blk.o\n' >vblk-build/Kbuild
	log "building virtio_blk.ko against $HDR_PKG"
	make -s -C "/usr/src/$HDR_PKG" M="$WORKDIR/vblk-build" -j2 modules >vblk-build/build.log 2>&1 ||
		{ cat vblk-build/build.log >&2; exit 1; }
fi

# --- initramfs -------------------------------------------------------------
log "building initramfs"
rm -rf rootfs && mkdir -p rootfs/bin rootfs/sbin rootfs/proc rootfs/sys rootfs/dev rootfs/tmp
cp /bin/busybox rootfs/bin/busybox
cp /usr/bin/fio rootfs/bin/fio
for lib in $(ldd /usr/bin/fio | grep -o '/[^ ]*'); do
	mkdir -p "rootfs$(dirname "$lib")"
	cp -L "$lib" "rootfs$lib"
done
# The dynamic loader under the path the binary names (PT_INTERP).
INTERP=$(readelf -l /usr/bin/fio | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
mkdir -p "rootfs$(dirname "$INTERP")" && cp -L "$INTERP" "rootfs$INTERP"
: >rootfs/modload.list
deps=$(awk -v k="kernel/drivers/nvme/host/nvme.ko:" '$1 == k {for (i = NF; i > 1; i--) print $i}' "$MODDIR/modules.dep")
for m in $deps kernel/drivers/nvme/host/nvme.ko; do
	src=$MODDIR/$m
	[ "$m" = kernel/drivers/nvme/host/nvme.ko ] && src=nvme-build/nvme.ko
	mkdir -p "rootfs/$(dirname "${m%.xz}")"
	case "$src" in *.xz) xz -dc "$src" >"rootfs/${m%.xz}" ;; *) cp "$src" "rootfs/$m" ;; esac
	echo "${m%.xz}" >>rootfs/modload.list
done
# virtio-blk: virtio_pci and virtio_blk (Debian builds both, and virtio and
# virtio_ring, as modules), each after what it depends on.
: >rootfs/modload-virtio.list
for top in kernel/drivers/virtio/virtio_pci.ko kernel/drivers/block/virtio_blk.ko; do
	for m in $(awk -v k="$top" '$1 == k":" || $1 == k".xz:" {for (i = NF; i > 1; i--) print $i; print substr($1, 1, length($1) - 1)}' "$MODDIR/modules.dep"); do
		grep -qx "${m%.xz}" rootfs/modload-virtio.list && continue
		mkdir -p "rootfs/$(dirname "${m%.xz}")"
		src=$MODDIR/$m
		# The counting virtio_blk.ko replaces Debian's (VIRTIO_COUNT=module).
		[ "${m%.xz}" = kernel/drivers/block/virtio_blk.ko ] && [ "$VIRTIO_COUNT" = module ] &&
			[ "$DEVICE" = virtio-blk ] && src=vblk-build/virtio_blk.ko
		case "$src" in *.xz) xz -dc "$src" >"rootfs/${m%.xz}" ;; *) cp "$src" "rootfs/${m%.xz}" ;; esac
		echo "${m%.xz}" >>rootfs/modload-virtio.list
	done
done
cp "$HERE/init.sh" rootfs/init && chmod +x rootfs/init
(cd rootfs && find . | cpio -o -H newc --quiet | gzip -1) >initramfs.gz

# --- QEMU ------------------------------------------------------------------
printf '%s\n' pci_nvme_mmio_doorbell_sq pci_nvme_mmio_doorbell_cq pci_nvme_dbbuf_config \
	pci_nvme_mmio_read >trace-events.txt
MSG=""
if [ "${TRACE_TIMING:-0}" = 1 ]; then
	# Where each request spends its time: SQ processing in the main loop,
	# completion queued, MSI-X raised; thread id and microseconds per line.
	printf '%s\n' pci_nvme_io_cmd pci_nvme_enqueue_req_completion pci_nvme_irq_msix \
		pci_nvme_shadow_doorbell_sq pci_nvme_eventidx_sq >>trace-events.txt
	MSG="-msg timestamp=on"
fi
KCMD_BASE="console=ttyS0 loglevel=4 iomem=relaxed panic=-1"

DEV_ARGS=() # set per boot for virtio-blk; empty: the nvme device
boot() { # boot ACCEL SMP IOEVENTFD TIMEOUT TAG CMDLINE-WORDS...  (device: DEV_ARGS, else nvme)
	local accel=$1 smp=$2 ioeventfd=$3 tmo=$4 tag=$5
	shift 5
	local dev=(-drive if=none,id=nvm,format=raw,file.driver=null-co,file.read-zeroes=on,file.size=1G
		-device "nvme,serial=nvq0001,drive=nvm,ioeventfd=$ioeventfd")
	[ ${#DEV_ARGS[@]} -gt 0 ] && dev=("${DEV_ARGS[@]}")
	# -cpu host aborts on this host (KVM rejects MSR 0x10a); qemu64 for both.
	rm -f "serial-$tag.log" "trace-$tag.log"
	nice -n 10 timeout --foreground -k 10 "$tmo" $PIN qemu-system-x86_64 \
		-accel "$accel" -cpu qemu64 -m 1024M -smp "$smp" -nographic -no-reboot \
		-kernel "$KERNEL" -initrd initramfs.gz -append "$KCMD_BASE $*" \
		"${dev[@]}" \
		-trace "events=trace-events.txt" -D "trace-$tag.log" \
		-serial "file:serial-$tag.log" -monitor none -display none $MSG </dev/null >"qemu-$tag.out" 2>&1 || true
}

if [ -z "${ACCEL:-}" ]; then
	log "probing KVM (60 s limit)"
	ACCEL=tcg
	if [ -w /dev/kvm ]; then
		boot kvm 1 off 60 probe nvq.mode=probe
		if grep -q NVQ-ALIVE serial-probe.log 2>/dev/null; then
			ACCEL=kvm
		else
			log "KVM: guest did not reach /init within 60 s (last serial bytes: $(tail -c 60 serial-probe.log 2>/dev/null | tr -cd '[:print:]'))"
		fi
	fi
	log "accelerator: $ACCEL"
fi

RUN_TAGS=""
# boot_run TAG SMP IOEVENTFD CMDLINE-WORDS...: one boot running every fio run
# of the matrix's rw, iodepth and repeats; its tag joins RUN_TAGS.
boot_run() {
	local tag=$1 smp=$2 ioeventfd=$3 t0
	shift 3
	log "boot $tag ($ACCEL): rw=$RWS qd=$QDS reps=$REPEATS ios/job=$IOS"
	t0=$(date +%s)
	boot "$ACCEL" "$smp" "$ioeventfd" "$BOOT_TIMEOUT" "$tag" "$@" \
		nvq.rw=$RWS nvq.qd=$QDS nvq.jobs=$smp nvq.reps=$REPEATS nvq.ios=$IOS
	grep -q NVQ-DONE "serial-$tag.log" || log "WARNING: $tag did not finish (see $WORKDIR/serial-$tag.log)"
	log "boot $tag took $(($(date +%s) - t0)) s"
	RUN_TAGS="$RUN_TAGS $tag"
}
if [ "$DEVICE" = virtio-blk ]; then
	# Tag vb-j<numjobs>-q<num-queues>-<none|poll0|polldef>; one boot each.
	for jobs in $JOBS_LIST; do
		for vq in $VQUEUES_LIST; do
			[ "$vq" = jobs ] && vq=$jobs
			for it in $IOTHREAD_LIST; do
				tag=vb-j$jobs-q$vq-$it
				case " $RUN_TAGS " in *" $tag "*) continue ;; esac # numjobs 1: q1 = one per job
				DEV_ARGS=(-drive if=none,id=vd,format=raw,file.driver=null-co,file.read-zeroes=on,file.size=1G)
				case "$it" in
				none) DEV_ARGS+=(-device "virtio-blk-pci,drive=vd,num-queues=$vq") ;;
				poll0 | polldef)
					obj=iothread,id=io0
					[ "$it" = poll0 ] && obj=$obj,poll-max-ns=0
					DEV_ARGS+=(-object "$obj" -device "virtio-blk-pci,drive=vd,num-queues=$vq,iothread=io0") ;;
				*) echo "run.sh: iothread mode must be none, poll0 or polldef, not '$it'" >&2; exit 2 ;;
				esac
				boot_run "$tag" "$jobs" on nvq.dev=virtio-blk nvq.count=$VIRTIO_COUNT
			done
		done
	done
	python3 "$HERE/parse_virtio.py" --qemu-version "$QEMU_VERSION" --linux-version "$LINUX_VERSION" \
		--fio-version "$FIO_VERSION" --accel "$ACCEL" --poll-default "$POLL_DEFAULT" --count "$VIRTIO_COUNT" \
		--workdir "$WORKDIR" --out "$OUT" $RUN_TAGS
	log "wrote $OUT in $(($(date +%s) - START)) s"
	exit 0
fi
for jobs in $JOBS_LIST; do
	for dbbuf in $DBBUF_LIST; do
		for ioeventfd in $IOEVENTFD_LIST; do
			boot_run "j${jobs}-db${dbbuf}-ev${ioeventfd}" "$jobs" "$ioeventfd" nvq.dbbuf=$dbbuf
		done
	done
done

python3 "$HERE/parse.py" --qemu-version "$QEMU_VERSION" --linux-version "$LINUX_VERSION" \
	--fio-version "$FIO_VERSION" --accel "$ACCEL" --workdir "$WORKDIR" --out "$OUT" $RUN_TAGS
log "wrote $OUT in $(($(date +%s) - START)) s"
if [ "${TRACE_TIMING:-0}" = 1 ]; then
	# The device thread's wake-up stalls at iodepth 1, for nvmesim validate --timing.
	TIMING=${OUT%.csv}-timing.csv
	python3 "$HERE/trace_timing.py" --csv "$TIMING" "$WORKDIR" $RUN_TAGS >"$WORKDIR/trace-timing.txt"
	grep 'iodepth=1' "$WORKDIR/trace-timing.txt" >&2 || true
	# The same stalls without QEMU: a thread asleep in ppoll, woken by one of
	# one or two spinning threads (validation/qemu/wakeup_probe.c).
	gcc -O2 -pthread -o wakeup_probe "$HERE/wakeup_probe.c"
	for n in 1 2; do nice -n 10 ./wakeup_probe "$n" 5000 300 20 | tee -a "$WORKDIR/trace-timing.txt" >&2; done
	log "wrote $TIMING"
fi
