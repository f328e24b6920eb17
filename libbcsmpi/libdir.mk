# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Where the libbcsmpi libraries are installed: the one place that says it.
# libbcsmpi/Makefile installs them there; tools/Makefile compiles it into
# bcsctl, whose `run --mpi-stats` preloads them from there.

PREFIX		?= /usr/local
BCSMPI_LIBDIR	?= $(PREFIX)/lib
