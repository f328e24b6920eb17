# SPDX-License-Identifier: GPL-2.0
#
# bcs top-level build.  `make` builds the module for the default kernel
# headers, libbcs and the tools; `make check` and `make demo` do all set-up
# on a fresh Debian 12 machine (see README.md).

BUILD		?= $(CURDIR)/build
BCS_CACHE	?= /var/cache/bcs
export BUILD BCS_CACHE

# Default kernel headers: Debian's 6.1 flavour if installed, else the running
# kernel.  Override with KDIR=.
KDIR		?= $(firstword $(wildcard /lib/modules/*-amd64/build) \
			/lib/modules/$(shell uname -r)/build)

.PHONY: all module userspace libbcs libbcsmpi tools selftests bench daemon slurm \
	modules-all lint deps check check-debug fuzz cluster-check bench-run demo demo-node \
	gang-benefit slurm-gang master-rt tree-scale daemon-cost drain clean install deb \
	install-module \
	check-deb

all: module userspace

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

# The Slurm plugin where Slurm's spank.h is installed (slurm/Makefile).
SPANK_H		?= /usr/include/slurm/spank.h

userspace: libbcs tools libbcsmpi $(if $(wildcard $(SPANK_H)),slurm)

libbcs:
	$(MAKE) -C libbcs

# The MPI profiling library, one per MPI installed (libbcsmpi/Makefile).
libbcsmpi:
	$(MAKE) -C libbcsmpi

tools: libbcs
	$(MAKE) -C tools

daemon: libbcs
	$(MAKE) -C daemon

slurm: libbcs
	$(MAKE) -C slurm

selftests: libbcs
	$(MAKE) -C selftests

bench: libbcs
	$(MAKE) -C bench

# User space under PREFIX (default /usr/local; DESTDIR for staging): libbcs
# with its headers and pkg-config file, bcsctl, bcsstat, bcsd with its
# systemd unit and example configuration, the manual pages, the libbcsmpi
# of each MPI installed, and where Slurm's spank.h is, the SPANK plugin with
# its plugstack.conf.d snippet (slurm/Makefile).  The module is installed
# with DKMS (recommended) or by `make install-module`
# (Documentation/admin-guide.rst).
install: libbcs tools daemon libbcsmpi $(if $(wildcard $(SPANK_H)),slurm)
	$(MAKE) -C libbcs install
	$(MAKE) -C tools install
	$(MAKE) -C daemon install
	$(MAKE) -C libbcsmpi install
ifneq ($(wildcard $(SPANK_H)),)
	$(MAKE) -C slurm install
endif

# bcs.ko for kernel KREL (default: the running one), built against its
# headers and installed into /lib/modules/KREL/extra, then depmod: without
# DKMS, and so not rebuilt for the next kernel (DKMS is the recommended
# route: dkms.conf, the package bcs-dkms).  INSTALL_MOD_PATH stages it.
KREL		?= $(shell uname -r)
install-module:
	$(MAKE) -C /lib/modules/$(KREL)/build M=$(CURDIR) modules
	$(MAKE) -C /lib/modules/$(KREL)/build M=$(CURDIR) \
		INSTALL_MOD_DIR=extra modules_install
	depmod -a $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $(KREL)

# Debian packages (debian/) into $(BUILD)/deb, built in a copy of the tree
# and checked with lintian: bcs-dkms, libbcs1, libbcs-dev, bcs-tools, bcsd,
# libbcsmpi (Documentation/admin-guide.rst, "Installing from packages").
deb:
	scripts/deb.sh

# Builds the packages, installs them here (root), lets DKMS build the
# module for both guest kernels, removes and purges them (not in check).
check-deb:
	scripts/test-deb.sh

# Build bcs.ko for every supported kernel into $(BUILD)/kmod/<release>/.
modules-all:
	scripts/build-modules.sh

# checkpatch --strict and sparse (C=2) over the module; shellcheck and
# pyflakes over the shell and Python.
lint:
	scripts/lint.sh; rc=$$?; scripts/lint-scripts.sh || rc=1; exit $$rc

deps:
	scripts/deps.sh

check:
	scripts/check.sh

# The selftests, a longer fuzz run and kmemleak in a 6.1 kernel built with
# lockdep, KASAN, UBSAN and debug objects (cached under BCS_CACHE).
check-debug:
	scripts/check-debug.sh

# bcsd's parsers under libFuzzer, FUZZ_SECONDS (default 60) per target.
fuzz:
	scripts/fuzz.sh

# The three-guest cluster tests alone (bcsd, strobes, failover, loss).
cluster-check:
	selftests/cluster/run-cluster.sh

# Benchmarks in a guest (not part of check): make bench-run BENCH_ARGS=--all
bench-run: bench
	bench/run.sh $(BENCH_ARGS)

# Two barrier jobs, plain time-sharing against bcs with 100 ms slices: on
# three guests, then on two, where each guest has a host core to itself on
# a two-core machine, with finer barriers against a 20 ms guest scheduler
# slice (Documentation/testing.rst).
demo:
	scripts/demo-cluster.sh
	scripts/demo-cluster.sh --nodes 2 --quantum 20 --work 50

# One guest, two jobs gang-scheduled by the module alone.
demo-node:
	scripts/demo.sh

# Makespan of two barrier jobs: sequential, plain, bcs at several slices.
gang-benefit:
	bench/gang_benefit.sh $(GANG_ARGS)

# The same two jobs under Slurm: its gang scheduler, srun --bcs, plain
# time-sharing, one after the other (needs root).
slurm-gang:
	bench/slurm_gang.sh $(SLURM_GANG_ARGS)

# bcsd's master on busy CPUs, as an ordinary task and at real-time priority.
master-rt:
	bench/master_rt.sh $(MASTER_RT_ARGS)

# A tree of up to 1,024 bcsd-sim daemons on this host, against multicast.
tree-scale:
	bench/tree_scale.sh $(TREE_SCALE_ARGS)

# bcsd's own CPU per slice (a master and 4 or 16 bcsd-sim nodes in network
# namespaces on this host) at slices of 10 ms, 1 ms and 500 us.
daemon-cost:
	bench/daemon_cost.sh $(DAEMON_COST_ARGS)

# When a switch takes effect, draining the old row first or not.
drain:
	bench/drain.sh $(DRAIN_ARGS)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	-for d in libbcs libbcsmpi tools daemon selftests bench slurm; do \
		[ -f $$d/Makefile ] && $(MAKE) -C $$d clean; done
	rm -rf $(BUILD) module/generated
