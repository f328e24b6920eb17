/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bcsctl run --mpi-stats: which MPI a program is linked with, where the
 * libbcsmpi for it is, and the environment that preloads it.  Nothing
 * here needs the module, so that the tests can check it on any host.
 */
#ifndef BCS_TOOLS_BCSCTL_MPI_H
#define BCS_TOOLS_BCSCTL_MPI_H

#include <stddef.h>

/*
 * The MPI a shared library named @soname ("libmpi.so.40") belongs to:
 * "openmpi", "mpich", or NULL for none known.
 */
const char *bcsctl_mpi_of_soname(const char *soname);

/*
 * The MPI the ELF program @prog (a path, or a name looked up in $PATH) is
 * linked with, from its DT_NEEDED entries and, if none names an MPI,
 * those of the libraries it needs (a few levels deep), looked for in its
 * RUNPATH, LD_LIBRARY_PATH, the directories of /etc/ld.so.conf
 * (bcsctl_mpi_ldconf()) and the usual ones.  Returns 0 with
 * *@mpi set, or a negative errno with a message in @err: -ENOENT (not
 * found), -ENOEXEC (not an ELF program of this machine), -ESRCH (linked
 * with no MPI known), -EINVAL (with two).
 */
int bcsctl_mpi_which(const char *prog, const char **mpi, char *err,
		     size_t errlen);

/*
 * The same with the dynamic loader's configuration read under @root ("" for
 * /: @root/etc/ld.so.conf, and its directories looked into under @root),
 * for the tests.
 */
int bcsctl_mpi_which_in(const char *root, const char *prog, const char **mpi,
			char *err, size_t errlen);

#define BCSCTL_LDCONF_DIRS	64	/* directories kept at most */
#define BCSCTL_LDCONF_DIR_MAX	256	/* bytes of one, with its NUL */

/*
 * The directories of the dynamic loader's configuration,
 * @root/etc/ld.so.conf (@root: "" or NULL for /), in ldconfig's order:
 * one directory per line ("=TYPE" and trailing slashes dropped, relative
 * ones ignored), '#' comments, "include PATTERN..." lines read in place
 * (a relative pattern from the including file's directory; the matches
 * sorted), "hwcap" lines ignored.  Each file must be a regular file of
 * root's or of this user's, writable by no one else, of 64 KiB at most;
 * others are skipped.  At most 64 files, includes 4 deep, @max
 * directories (up to BCSCTL_LDCONF_DIRS) of fewer than
 * BCSCTL_LDCONF_DIR_MAX bytes, each once, into @dirs.  Returns how many.
 */
int bcsctl_mpi_ldconf(const char *root, char (*dirs)[BCSCTL_LDCONF_DIR_MAX],
		      int max);

/*
 * The path of libbcsmpi-@mpi.so into @path: under $BCS_MPI_LIBDIR if
 * set, else in the directory it is installed in (BCSMPI_LIBDIR of the
 * build), else in the build tree beside this bcsctl (../libbcsmpi).
 * Returns 0, or -ENOENT with the places looked at in @err.
 */
int bcsctl_mpi_library(const char *mpi, char *path, size_t len, char *err,
		       size_t errlen);

/*
 * LD_PRELOAD with @lib added after @old (NULL or "" for none) into @out;
 * @lib is not added twice.  Returns 0 or -ENAMETOOLONG.
 */
int bcsctl_mpi_preload(const char *old, const char *lib, char *out,
		       size_t len);

/*
 * Everything --mpi-stats does before the command is executed: find the
 * MPI of @prog and its library, set LD_PRELOAD, BCS_MPI_STATS ("on") and
 * BCS_JOB (@job, if not 0) where unset.  Returns 0, or a negative errno
 * with a message in @err.
 */
int bcsctl_mpi_setup(const char *prog, unsigned int job, char *err,
		     size_t errlen);

#endif /* BCS_TOOLS_BCSCTL_MPI_H */
