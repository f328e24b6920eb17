/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * bcs - buffered coscheduling (gang scheduling) for Linux clusters.
 *
 * This header is the whole user-space interface of bcs.ko.  It is shared,
 * unchanged, by the module, libbcs, the tools and the tests.
 *
 * Objects
 * -------
 * A *job* is a set of tasks that run and stop together.  Each job
 * has a numeric id (1 .. BCS_JOB_ID_MAX) and sits in a *row* (time slot of
 * the Ousterhout matrix, 0 .. BCS_ROWS_MAX - 1) or in no row
 * (BCS_ROW_NONE, the default), in which case bcs never suspends it.
 * A *strobe* names the row to run in the next slice; at the strobe's
 * deadline every job of that row (see "Rows of a job" below) is resumed
 * and every other job that has a row is suspended.
 * The switch drains, then fills: it tells the tasks of the jobs it suspends
 * to park, and wakes the jobs of the new row once every one of those tasks
 * that was running has parked, so that the new row does not compete for a
 * CPU with a task of the old row on its way to park.  It waits at most
 * drain_us (module parameter, default 1000, at most half a slice; 0 wakes
 * at once) and then wakes them anyway (BCS_SLICE_DRAIN_CUT).
 *
 * Modes (struct bcs_config.mode)
 * ------------------------------
 * BCS_MODE_OFF         no switching; every task runs.  Strobes fail with
 *                      -ENOTCONN.
 * Entering any mode resumes every job; the next strobe (or the first
 * standalone tick, at once) suspends the jobs outside its row.
 * BCS_MODE_STANDALONE  an hrtimer in the module strobes every slice_ns and
 *                      steps through the non-empty rows in order.  An
 *                      injected strobe switches at once and restarts the
 *                      slice timer.
 * BCS_MODE_DRIVEN      strobes come from user space (BCS_IOC_STROBE or
 *                      BCS_CMD_STROBE), from the *driver* only: the file
 *                      or netlink socket that entered driven mode.  A
 *                      strobe through any other file or socket fails with
 *                      -EBUSY.  bcs fails open and returns to
 *                      BCS_MODE_OFF when the driver is closed, and also
 *                      when the process that entered driven mode (the
 *                      driving process) closes the driver file or exits,
 *                      even if another process (a child) still holds it.
 *                      If no strobe arrives for watchdog_slices slices
 *                      (0 disables the watchdog) bcs fails open and stays
 *                      driven: the next strobe resumes gang scheduling.
 *
 * Fail-open: unload, driver loss and the watchdog resume every job; no task
 * is ever left suspended by bcs.
 *
 * Predictions (BCS_STROBE_PREDICT, driven mode)
 * ---------------------------------------------
 * A driver that knows the rotation (bcsd holds the master's map) sends with
 * each strobe for slice n the row of slice n + 1.  bcs.ko queues it behind
 * the strobe as a *prediction*, due at the strobe's deadline plus one slice,
 * so that a node whose strobe for n + 1 was lost or comes late still
 * switches at the right time, to the row the master would have sent:
 *  - a strobe from the driver replaces a queued prediction for its slice or
 *    a later one, which is not counted missed: it was only a guess;
 *  - a prediction that switches flags its record BCS_SLICE_PREDICTED and
 *    counts in @predicted of struct bcs_state; it is neither late nor
 *    missed, and it does not feed the watchdog, which counts from the last
 *    switch to a strobe of the driver: a silent driver still fails open
 *    after watchdog_slices;
 *  - a strobe that comes after its prediction has switched, for the same
 *    slice and row, only confirms it (no second switch); for another row it
 *    switches at once, late;
 *  - a prediction whose deadline has passed when its strobe arrives, or
 *    that finds the queue full, is dropped; BCS_STROBE_PREDICT cannot be
 *    combined with BCS_STROBE_NOW or BCS_STROBE_NEXT (-EINVAL).
 * A prediction is for the slice after a strobe only: it never runs more
 * than one slice past the driver's last strobe.  In standalone mode
 * predictions are ignored: an injected strobe switches at once.
 *
 * Expiry (BCS_STROBE_EXPIRE, driven mode)
 * ---------------------------------------
 * Without it a node whose strobes stop coming keeps the last row running
 * until the watchdog fails open.  With it, the strobe's row ends with its
 * slice, or with the slice of the prediction it carries: if no strobe from
 * the driver has come for the slice after that by its deadline, the node
 * switches to no row (every job in a row suspended, BCS_SLICE_EXPIRED,
 * counted in @expired), so that it never runs a row for more than one
 * slice that the driver may not have meant.  Like a prediction, the expiry
 * is queued behind the strobe, replaced by any strobe for its slice or a
 * later one, never displaces a strobe, and does not feed the watchdog.  Not
 * with BCS_STROBE_NEXT (-EINVAL); ignored in standalone mode.
 *
 * Plans (BCS_STROBE_PLAN, driven mode)
 * ------------------------------------
 * The matrix changes rarely, so a driver may send one strobe for many
 * slices: a *plan* of @plan_slices slices (1 to BCS_PLAN_SLICES_MAX).
 * Slice i of the plan (0 <= i < @plan_slices) is slice @slice + i, due at
 * @deadline_ns + i * the slice length (@slice_ns, or the current length if
 * 0), and runs row r(i): r(0) = @row, r(i) = bcs_row_next(@plan_rows,
 * r(i - 1)), or @row in every slice if @plan_rows is 0 (bit r of
 * @plan_rows: row r is a home row of the driver's map; bcsd's master picks
 * each slice's row by the same rule; bcs_plan_row() and
 * bcs_plan_deadline() below compute both).  The plan waits in the queue
 * like a strobe; when its first slice is due it switches and becomes the
 * node's current plan, and bcs.ko switches each further slice at its own
 * deadline, off its own clock, each a switch of the driver's (not a
 * prediction): flagged BCS_SLICE_PLANNED, counted in @planned and
 * @switches of struct bcs_state (the plan counts once in @strobes):
 *  - a later strobe or plan, for slice m due at E, replaces whatever of the
 *    current (or a waiting) plan is numbered m or later or due at E or
 *    later (the rest is dropped, not counted missed), so a driver cuts a
 *    plan short by sending the next one early, and a map change takes
 *    effect at the slice the driver names, on every node that has the new
 *    plan; a strobe that switches at once drops the rest (not missed);
 *  - a node never runs past its plan: each planned slice re-arms the
 *    watchdog as a strobe's switch does, so it counts from the last
 *    slice of the plan, not from its strobe; with BCS_STROBE_EXPIRE the
 *    last planned slice's row expires as a strobe's does (slice @slice +
 *    @plan_slices, due at the end of the plan);
 *  - a plan that comes late drops its slices numbered before the current
 *    slice whose deadlines have passed (if that is all of them it counts
 *    missed, as a strobe for a slice passed); of the rest it switches at
 *    once to the newest slice due (late, BCS_SLICE_OVERTAKEN, the slices
 *    passed over counted missed), as after a timer that fired late;
 *  - the whole plan must end by BCS_DEADLINE_NS_MAX (-ERANGE):
 *    bcs_plan_deadline(@deadline_ns, the length, @plan_slices), nor may
 *    @slice + @plan_slices exceed 2^64 - 1 (-ERANGE); its first deadline
 *    is checked as a strobe's; BCS_STROBE_PLAN cannot be combined with
 *    BCS_STROBE_NOW, BCS_STROBE_NEXT or BCS_STROBE_PREDICT (-EINVAL);
 *    @plan_slices out of range is -ERANGE; @plan_rows and @plan_slices
 *    must be 0 without the flag (-EINVAL).
 * In standalone mode a plan is validated and only its first slice is used,
 * as an injected strobe.
 *
 * Permissions
 * -----------
 * /dev/bcs is world-accessible.  Creating and placing jobs, changing the
 * configuration and sending strobes need CAP_SYS_ADMIN in the initial user
 * namespace, on both paths (ioctl and netlink).  Every job has an *owner*,
 * a uid: the effective uid of its creator, or with BCS_JOB_OWNER the uid
 * the creator names (so that root makes a job for a batch system's user).
 * Destroying a job needs CAP_SYS_ADMIN or to be its owner (effective uid).
 * Attaching and detaching a process need both: CAP_SYS_ADMIN or the job's
 * ownership, and the right to send the process a signal, as kill(2)
 * decides it for signal 0 (same uid, or CAP_KILL, and what the LSMs
 * allow), so ordinary users can attach their own processes to the jobs
 * made for them, and to no other.  Jobs owned by root stay open to root
 * only.  A job whose owner is not root is *reaped* (destroyed, announced
 * as BCS_JOB_END_DESTROYED) once it has had no task for reap_empty_s
 * seconds (module parameter, default 60, 0: never), counted from its
 * creation if no task ever joined it; jobs owned by root, as bcsd's are,
 * are never reaped.  Queries are open to everyone, but BCS_IOC_TASK_STATS
 * shows a caller without CAP_SYS_ADMIN or CAP_SYS_PTRACE only the tasks it
 * could signal.
 *
 * BCS_IOC_WINDOW reads the slice window for everyone; arming and disarming
 * it need CAP_SYS_ADMIN (checked after the argument), as BCS_CMD_WINDOW
 * does.
 *
 * BCS_IOC_DIST_CTL needs, for a list of pids, the right to signal each of
 * them, as attach; for a whole job, CAP_SYS_ADMIN or the right to signal
 * every task the job has.  BCS_IOC_DIST_READ shows a caller without
 * CAP_SYS_ADMIN or CAP_SYS_PTRACE only tasks of its own uid (-EPERM).
 *
 * Every ioctl argument starts with a __u32 size that must equal the size of
 * the struct, has no implicit padding, and has reserved fields and unused
 * flag bits that must be zero: otherwise the ioctl fails with -EINVAL
 * (struct bcs_state is output only: only its size is checked).
 * Unknown ioctls fail with -ENOTTY, bad pointers with -EFAULT, unknown jobs
 * with -ENOENT, unknown pids with -ESRCH, missing privileges with -EPERM.
 *
 * ioctls on /dev/bcs (all of them also work through compat_ptr_ioctl)
 * ------------------------------------------------------------------
 * BCS_IOC_JOB_CREATE   struct bcs_job: create job @id (0: pick a free id,
 *                      returned in @id) in @row, owned by the caller's
 *                      effective uid or, with BCS_JOB_OWNER, by @owner
 *                      (-EINVAL if it is no uid of the caller's user
 *                      namespace).  -EEXIST if @id is taken,
 *                      -ENOSPC if 4096 jobs exist, -ENOMEM.  With
 *                      BCS_JOB_ROWS the job also runs in the rows of the
 *                      bit set @rows (alternate scheduling, see "Rows of a
 *                      job" below).  BCS_JOB_AT_SLICE: -EINVAL.
 *                      BCS_JOB_FILLER makes it a filler job (see
 *                      "Filler jobs" below).
 * BCS_IOC_JOB_DESTROY  struct bcs_job: detach every task of job @id (they
 *                      keep running) and destroy it.  @flags must be 0.
 *                      -EPERM unless CAP_SYS_ADMIN or the job's owner.
 * BCS_IOC_JOB_SET_ROW  struct bcs_job: move job @id to @row (and, with
 *                      BCS_JOB_ROWS, the set @rows); takes effect at the
 *                      next strobe, or with BCS_JOB_AT_SLICE at the first
 *                      switch to a slice numbered @slice or later.  The
 *                      job stays a filler job or not, as it was.  With
 *                      BCS_JOB_SET_FILLER, instead, only make the job a
 *                      filler job (with BCS_JOB_FILLER) or not (without),
 *                      from the next switch; @row, @rows and @slice must
 *                      be 0 and no flag but those two set (-EINVAL).
 * BCS_IOC_ATTACH       struct bcs_attach: attach process @pid (all of its
 *                      threads; with BCS_ATTACH_THREAD only thread @pid) to
 *                      job @job.  Children and threads created later join
 *                      the same job; exiting tasks leave it by themselves.
 *                      @nr_tasks (0 on input) returns the number of
 *                      threads attached.
 *                      -EBUSY if a task is already in another job,
 *                      -EPERM without the right to signal it or if the
 *                      caller is neither the job's owner nor
 *                      CAP_SYS_ADMIN (as for BCS_IOC_DETACH).
 * BCS_IOC_DETACH       struct bcs_attach: detach @pid (its threads, or one
 *                      thread) from job @job; detached tasks run freely.
 * BCS_IOC_CONFIG       struct bcs_config: set the fields named in @set
 *                      (BCS_CONFIG_*), then return the whole configuration.
 *                      @set == 0 only reads it.
 * BCS_IOC_STROBE       struct bcs_strobe: switch to @row at @deadline_ns.
 *                      -ERANGE if @deadline_ns exceeds BCS_DEADLINE_NS_MAX
 *                      or, in driven mode, lies more than
 *                      BCS_STROBE_AHEAD_MAX_NS ahead (checked with
 *                      BCS_STROBE_NOW too); -EBUSY in driven mode through
 *                      any file but the driver's.
 *                      In driven mode up to BCS_STROBE_QUEUE strobes wait
 *                      for their deadlines; one due no later than a waiting
 *                      one supersedes it (counted missed).  With
 *                      BCS_STROBE_PREDICT it also names @next_row, the row
 *                      of the slice after it: a prediction, which switches
 *                      at the next deadline (@deadline_ns + the slice) only
 *                      if no strobe from the driver has come by then (see
 *                      below).  With BCS_STROBE_PLAN it is a plan of
 *                      @plan_slices slices through the rows @plan_rows
 *                      (see "Plans" above).
 * BCS_IOC_GET_STATE    struct bcs_state: global state and counters.
 * BCS_IOC_JOB_LIST     struct bcs_job_list: copy up to @count job records
 *                      (struct bcs_job_info) to @jobs; @count returns the
 *                      number of jobs that exist; min(both) were copied.
 * BCS_IOC_TASK_STATS   struct bcs_task_list: copy up to @count task records
 *                      (struct bcs_task_stat) of job @job (0: all jobs) to
 *                      @tasks; @count returns the number that exist;
 *                      min(both) were copied.  Pids are those of the
 *                      caller's pid namespace (0: not visible there).
 * BCS_IOC_DIST_CTL     struct bcs_dist_ctl: per-task distributions (see
 *                      "Distributions" below) of job @job: with @op
 *                      BCS_DIST_ENABLE start recording the metrics in
 *                      @metrics at resolution @sub_bits, BCS_DIST_DISABLE
 *                      stop recording them (what was recorded stays),
 *                      BCS_DIST_RELEASE free every statistic of the tasks
 *                      (also of those that are gone).  With @nr_pids 0 for
 *                      the whole job, tasks that join it later included;
 *                      otherwise for the @nr_pids (at most
 *                      BCS_DIST_PIDS_MAX) threads of the job listed at
 *                      @pids (__s32 each).  -ESRCH if a pid is not a task
 *                      of the job, -ENOENT if the job has neither tasks
 *                      nor statistics, -ENOSPC past the job's bound of
 *                      tracked tasks (module parameter
 *                      dist_max_job_tasks), -EDQUOT past a uid's
 *                      (dist_max_user_tasks), -ENOMEM.
 * BCS_IOC_DIST_READ    struct bcs_dist_read: the totals of task @pid of job
 *                      @job (one that is gone too) in @totals, and the
 *                      histogram of @metric in the format of
 *                      linux/bcs_hist.h (header, then the non-empty
 *                      buckets) in the @buf_size bytes at @buf.
 *                      @buf_size returns the bytes the histogram takes (0
 *                      if @metric was never enabled for the task); if that
 *                      is more than the room given, -ENOSPC and nothing is
 *                      written to @buf, but the argument is updated (@buf
 *                      0 and @buf_size 0 ask for the size: 0).  With
 *                      BCS_DIST_NEXT the task is the tracked one with the
 *                      smallest pid above @pid (start at 0), returned in
 *                      @pid; -ESRCH when there is none.
 * BCS_IOC_WINDOW       struct bcs_window: the slice window of the ring
 *                      (see "Slice windows" below).  @op BCS_WINDOW_GET
 *                      (anyone) reads it, BCS_WINDOW_ARM (CAP_SYS_ADMIN)
 *                      arms it for the slices @from_slice .. @to_slice,
 *                      replacing any window, BCS_WINDOW_DISARM
 *                      (CAP_SYS_ADMIN) removes it; each returns the window
 *                      as it is after the call.  The argument is checked
 *                      before the capability.  -EINVAL if @to_slice <
 *                      @from_slice, -E2BIG if the window has more slices
 *                      than the ring has records, -ERANGE if slice
 *                      @from_slice has begun (it is not after the current
 *                      slice); @from_slice and @to_slice must be 0 for the
 *                      other ops, and the output fields 0 on input.
 *
 * /dev/bcsstat (mode 0444)
 * ------------------------
 * Per-slice records, one per gang switch, in a ring of nr_records entries
 * (module parameter stat_records, default 10000).
 *  - mmap(offset 0, read-only): struct bcs_stat_header at offset 0, the ring
 *    of struct bcs_slice_record at header.records_offset.  The record for
 *    sequence number s lives at index s % nr_records and is valid when its
 *    @seq equals s before and after it is read (check @seq, read, read
 *    barrier, check @seq again).  header.head is the sequence number of the
 *    next record to be written.  The newest record is written again when
 *    its @parked_ns or @resumed_ns is filled in: its @seq reads U64_MAX
 *    for that moment, and the record is final once a newer one exists.
 *  - read(): each open file has a cursor, starting at the oldest record
 *    still in the ring; read returns whole records in order, blocks (unless
 *    O_NONBLOCK: -EAGAIN) when none is new, and supports poll().  A buffer
 *    smaller than one record gets -EINVAL.  If the writer laps a slow
 *    reader, the reader skips to the oldest record: the gap shows in @seq.
 *  - ioctl BCS_IOC_GET_STATE, BCS_IOC_JOB_LIST and BCS_IOC_TASK_STATS, as on
 *    /dev/bcs, for per-job and per-task accounting.
 *
 * Rows of a job (alternate scheduling)
 * ------------------------------------
 * A job with a row runs in a *set* of rows: its home row @row, and with
 * BCS_JOB_ROWS (struct bcs_job) also every row r whose bit (1ULL << r) is
 * set in @rows, the rows where its nodes are otherwise idle (Feitelson and
 * Rudolph's alternate scheduling).  @row's own bit may be set in @rows or
 * not: @row is always in the set.  A switch to row r resumes every job
 * whose set holds r, and the jobs with no row; the rotation of standalone
 * mode and BCS_STROBE_NEXT (bcs_row_next()) steps through the home rows
 * only: alternate rows never add a row to it.  Without BCS_JOB_ROWS @rows
 * must be 0, and with @row BCS_ROW_NONE too (-EINVAL): a job with no row
 * runs always.  struct bcs_job_info shows the set in @rows.
 *
 * So that a change of the matrix never splits a gang, BCS_IOC_JOB_SET_ROW
 * with BCS_JOB_AT_SLICE makes the new @row and @rows take effect at the
 * first switch to a global slice numbered @slice or later (the numbers
 * that driven strobes carry; standalone mode counts its own), on every
 * node that is told the same slice; until then the job runs as before and
 * is listed as before.  If that slice has begun already, the change takes
 * effect at the next switch, as without the flag, but is listed only from
 * then.  A later BCS_IOC_JOB_SET_ROW of the job replaces a change that
 * waits, with the flag or without it.  Without BCS_JOB_AT_SLICE @slice must be 0; the
 * flag is for BCS_IOC_JOB_SET_ROW only (-EINVAL on create and destroy).
 *
 * Filler jobs (flexible coscheduling's fill)
 * ------------------------------------------
 * A job created with BCS_JOB_FILLER, or made one with BCS_JOB_SET_FILLER,
 * is a *filler*: besides the rows it runs in by its own rows (if any), it
 * runs in every slice in which the node is *idle*, instead of being
 * suspended.  The node is idle in a slice of row r when no job that has
 * tasks (@nr_tasks > 0) runs by its rows in r: none whose set (home or
 * alternate rows) holds r.  Jobs with no row (BCS_ROW_NONE) run always
 * and do not make the node busy; nor does a job of row r with no tasks.
 * A filler job that runs by its own rows makes the node busy like any
 * other.  A switch to no row (BCS_SLICE_EXPIRED) finds the node idle, so
 * filler jobs run in it.  Whether the node is idle is decided at each
 * switch, after the changes of rows due then: a job that gets its first
 * task in the middle of a slice makes the node busy from the next switch.
 * Fail-open runs every job, filler or not, as before.  The flag changes
 * nothing else: a filler job is listed, accounted (@slices_run counts the
 * slices it filled too) and destroyed like any other.
 *
 * Slice windows
 * -------------
 * Like the EMDS window of BCS-MPI, the ring can be armed in advance for a
 * range of slice numbers, so that the records of exactly those slices are
 * captured, on every node that arms the same window, and kept.  While a
 * window is armed, a switch writes its record only if its slice number
 * lies in [@from_slice, @to_slice]: the switches before it leave the ring
 * as it is (BCS_WINDOW_ARMED), those in it are recorded
 * (BCS_WINDOW_CAPTURING), and the first switch to a slice after
 * @to_slice ends it (BCS_WINDOW_DONE): nothing more is recorded, so the
 * window's records stay in the ring, until the window is disarmed and
 * every switch is recorded again.  A window holds at most as many slices
 * as the ring has records; a slice switched more than once (a fail-open
 * in it, say) has a record per switch, and records that would overwrite
 * the window's own are not written but counted in @dropped.  The window
 * is shown in struct bcs_window (BCS_IOC_WINDOW), in the ring's header
 * and, its state, in struct bcs_state and BCS_CMD_GET_STATE.
 *
 * Generic netlink family "bcs" (BCS_GENL_NAME, version BCS_GENL_VERSION)
 * ---------------------------------------------------------------------
 * BCS_CMD_GET_STATE  reply: BCS_A_MODE, BCS_A_ROW, BCS_A_SLICE,
 *                    BCS_A_SLICE_NS, BCS_A_WATCHDOG_SLICES, BCS_A_FAILOPEN,
 *                    BCS_A_NR_JOBS, BCS_A_NR_TASKS, BCS_A_STROBES,
 *                    BCS_A_LATE, BCS_A_MISSED, BCS_A_FAILOPENS,
 *                    BCS_A_PREDICTED, BCS_A_EXPIRED, BCS_A_NR_PARKED,
 *                    BCS_A_DRIVER_PID, BCS_A_SWITCHES,
 *                    BCS_A_ATTACH_FAILURES, BCS_A_STAT_RECORDS,
 *                    BCS_A_DRAIN_CUTS, BCS_A_WINDOW_STATE,
 *                    BCS_A_PLANNED (from modules with plans): every field
 *                    of struct bcs_state but @size and @version, with the
 *                    same meaning; and the slice window: BCS_A_WINDOW_FROM,
 *                    BCS_A_WINDOW_TO, BCS_A_WINDOW_RECORDS, the fields of
 *                    struct bcs_window of the same names.
 * BCS_CMD_DRIVE      (admin) make the sending socket the driver and enter
 *                    driven mode; optional BCS_A_SLICE_NS and
 *                    BCS_A_WATCHDOG_SLICES.  Closing the socket fails open.
 * BCS_CMD_RELEASE    (admin) the driver gives up: fail open, mode off.
 * BCS_CMD_STROBE     (admin, the driver only: -EBUSY from another
 *                    socket) BCS_A_SLICE, BCS_A_ROW (< BCS_ROWS_MAX even
 *                    with BCS_STROBE_NEXT), BCS_A_DEADLINE_NS required;
 *                    BCS_A_SLICE_NS, BCS_A_FLAGS optional; BCS_A_NEXT_ROW
 *                    optional, the prediction of BCS_STROBE_PREDICT (the
 *                    attribute sets the flag; the flag without it is
 *                    -EINVAL); BCS_A_PLAN_SLICES optional, a plan (sets
 *                    BCS_STROBE_PLAN the same way), with BCS_A_PLAN_ROWS
 *                    (optional, 0 if absent; -EINVAL without a plan).
 * BCS_CMD_WINDOW     (admin) with BCS_A_WINDOW_FROM and BCS_A_WINDOW_TO,
 *                    arm the slice window as BCS_WINDOW_ARM does (same
 *                    errors); with neither, disarm it; one without the
 *                    other is -EINVAL.
 *
 * Multicast group "events" (BCS_GENL_MCGRP_EVENTS): the end of a job.
 * Joining it needs CAP_SYS_ADMIN in the initial user namespace: bind() or
 * NETLINK_ADD_MEMBERSHIP fails with -EPERM otherwise.
 * BCS_CMD_JOB_ENDED  (notification only; sent as a request: -EOPNOTSUPP)
 *                    BCS_A_JOB: the job's id; BCS_A_JOB_END: why, enum
 *                    bcs_job_end; BCS_A_DIST_TASKS: tasks whose statistics
 *                    (BCS_IOC_DIST_READ) the job keeps, 0 if none, kept
 *                    until released with BCS_DIST_RELEASE (after a
 *                    destruction, up to the module parameter dist_kept_jobs
 *                    destroyed jobs, the oldest dropped past it);
 *                    BCS_A_EVENT_SEQ: the event's number since the module
 *                    was loaded, from 1, counting the events dropped before
 *                    they were sent too, so that a gap shows a loss.
 *                    A destroyed job is announced exactly once
 *                    (BCS_JOB_END_DESTROYED); a job whose last task leaves
 *                    it (BCS_JOB_END_EXITED or BCS_JOB_END_DETACHED) each
 *                    time that happens, since tasks may join it again.
 *                    Jobs destroyed by the module's unload are not
 *                    announced.  Notifications are sent from a work item,
 *                    after the event, never from the job's path; one that
 *                    finds no memory or a full queue is dropped, and one
 *                    that a listener's full socket buffer refuses is lost
 *                    for that listener (its recv() fails with -ENOBUFS;
 *                    counted if the socket set NETLINK_BROADCAST_ERROR,
 *                    as libbcs's does), both counted in debugfs
 *                    bcs/state.
 * Attributes are validated strictly, with an extended ack: out-of-range
 * values fail with -ERANGE; unknown attributes, wrong lengths, unknown flag
 * bits and missing attributes with -EINVAL; BCS_A_DEADLINE_NS over
 * BCS_DEADLINE_NS_MAX, or too far ahead as for BCS_IOC_STROBE, with
 * -ERANGE.  Admin commands need CAP_SYS_ADMIN in the initial user
 * namespace (-EPERM).  The family exists in the initial network namespace
 * only.
 *
 * Times are nanoseconds of CLOCK_REALTIME unless named otherwise, so that
 * records of different nodes with synchronised clocks can be compared.
 */
#ifndef _UAPI_LINUX_BCS_H
#define _UAPI_LINUX_BCS_H

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * The version of bcs as a whole: module (modinfo), library, tools and
 * daemon (--version), pkg-config file and dkms.conf all show this one.
 * BCS_VERSION below is another thing, the version of this interface.
 */
#define BCS_PACKAGE_VERSION	"0.2.0"

#define BCS_DEVICE_NAME		"bcs"
#define BCS_STAT_DEVICE_NAME	"bcsstat"

#define BCS_ROWS_MAX		64
#define BCS_JOBS_MAX		4096		/* jobs a node holds at once */
#define BCS_ROW_NONE		0xffffffffU
#define BCS_JOB_ID_MAX		0x7fffffffU
#define BCS_SLICE_NS_MIN	50000ULL	/* 50 us */
#define BCS_SLICE_NS_MAX	10000000000ULL	/* 10 s */
#define BCS_WATCHDOG_MAX	100000U
#define BCS_STROBE_QUEUE	8		/* driven strobes held */
/* The latest deadline_ns of any strobe: it must fit a (signed) ktime. */
#define BCS_DEADLINE_NS_MAX	0x7fffffffffffffffULL
/*
 * How far ahead of now a driven strobe may be due: as far as the queue
 * could ever hold strobes, BCS_STROBE_QUEUE slices of the longest length.
 */
#define BCS_STROBE_AHEAD_MAX_NS	(BCS_STROBE_QUEUE * BCS_SLICE_NS_MAX)
/* The most slices one strobe may plan (BCS_STROBE_PLAN). */
#define BCS_PLAN_SLICES_MAX	4096U

/*
 * Shared rules, pure functions that bcs.ko and user space (bcsd's master)
 * compile alike, so that both follow one rule.
 */

/* A job id that may name a job: 1 .. BCS_JOB_ID_MAX. */
static inline int bcs_job_id_valid(__u32 id)
{
	return id >= 1 && id <= BCS_JOB_ID_MAX;
}

/*
 * The id that follows @id when ids are handed out in turn: the next one
 * up, 1 after BCS_JOB_ID_MAX (and after anything that is not an id).
 * Callers skip the ids in use; there are far fewer jobs than ids.
 */
static inline __u32 bcs_job_id_next(__u32 id)
{
	return id >= 1 && id < BCS_JOB_ID_MAX ? id + 1 : 1;
}

/*
 * The order rows take turns in: the first row of the bit set @rows (bit r
 * for row r, rows 0 .. BCS_ROWS_MAX - 1) after @row, from the lowest again
 * after the highest; from the lowest too when @row is BCS_ROW_NONE.
 * BCS_ROW_NONE when @rows is empty: no job has a row.
 */
static inline __u32 bcs_row_next(__u64 rows, __u32 row)
{
	__u64 after;

	if (!rows)
		return BCS_ROW_NONE;
	if (row < BCS_ROWS_MAX - 1) {
		after = rows & (~0ULL << (row + 1));
		if (after)
			return (__u32)__builtin_ctzll(after);
	}
	return (__u32)__builtin_ctzll(rows);
}

/*
 * The row of slice @i of a plan (BCS_STROBE_PLAN) whose slice 0 runs @row
 * (< BCS_ROWS_MAX) and that steps through the rows of the bit set @rows:
 * r(0) = @row, r(i) = bcs_row_next(@rows, r(i - 1)); @row in every slice
 * when @rows is 0.  Since r(i) for i >= 1 lies in @rows, r(j + i) ==
 * bcs_plan_row(@rows, r(j), i): a plan can be followed from any slice.
 * At most BCS_ROWS_MAX steps, whatever @i.
 */
static inline __u32 bcs_plan_row(__u64 rows, __u32 row, __u32 i)
{
	__u64 below, left;
	__u32 first, n = 0, k = 0;

	if (!rows || !i)
		return row;
	first = bcs_row_next(rows, row);
	for (left = rows; left; left &= left - 1)
		n++;
	below = rows & ((1ULL << first) - 1);
	for (; below; below &= below - 1)
		k++;
	k = (k + (i - 1) % n) % n;
	for (left = rows; k; k--)
		left &= left - 1;
	return (__u32)__builtin_ctzll(left);
}

/*
 * The deadline of slice @i of a plan whose slice 0 is due at @deadline_ns,
 * in slices of @slice_ns: @deadline_ns + @i * @slice_ns, or (__u64)-1,
 * which is above BCS_DEADLINE_NS_MAX, if that lies past
 * BCS_DEADLINE_NS_MAX (or @deadline_ns does).  A plan of n slices ends at
 * the deadline of its slice n, which must not lie past it.
 */
static inline __u64 bcs_plan_deadline(__u64 deadline_ns, __u64 slice_ns,
				      __u32 i)
{
	__u64 span;

	if (deadline_ns > BCS_DEADLINE_NS_MAX ||
	    __builtin_mul_overflow(slice_ns, (__u64)i, &span) ||
	    span > BCS_DEADLINE_NS_MAX - deadline_ns)
		return ~0ULL;
	return deadline_ns + span;
}

enum bcs_mode {
	BCS_MODE_OFF		= 0,
	BCS_MODE_STANDALONE	= 1,
	BCS_MODE_DRIVEN		= 2,
};

#define BCS_JOB_ROWS		(1U << 0)	/* @rows: alternate rows */
#define BCS_JOB_AT_SLICE	(1U << 1)	/* SET_ROW at slice @slice */
/*
 * A filler job (see "Filler jobs" above): on create, the job is one; on
 * BCS_IOC_JOB_SET_ROW, only with BCS_JOB_SET_FILLER, the value that flag
 * sets.  Also struct bcs_job_info.flags of a filler job.
 */
#define BCS_JOB_FILLER		(1U << 2)
/*
 * BCS_IOC_JOB_SET_ROW only: set the job's filler flag to BCS_JOB_FILLER's
 * bit (set: a filler, clear: not one) and change nothing else; @row,
 * @rows and @slice must be 0 and no other flag set.
 */
#define BCS_JOB_SET_FILLER	(1U << 3)
/*
 * BCS_IOC_JOB_CREATE only: the job's owner is the uid @owner (in the
 * caller's user namespace), not the caller's effective uid.
 */
#define BCS_JOB_OWNER		(1U << 4)
#define BCS_JOB_FLAGS		(BCS_JOB_ROWS | BCS_JOB_AT_SLICE | \
				 BCS_JOB_FILLER | BCS_JOB_SET_FILLER | \
				 BCS_JOB_OWNER)

/* BCS_IOC_JOB_CREATE, _DESTROY, _SET_ROW */
struct bcs_job {
	__u32 size;		/* sizeof(struct bcs_job) */
	__u32 flags;		/* BCS_JOB_*; 0 for _DESTROY */
	__u32 id;		/* job id; 0 on create: allocate one */
	__u32 row;		/* 0 .. BCS_ROWS_MAX - 1 or BCS_ROW_NONE */
	__u64 rows;		/* with BCS_JOB_ROWS: the rows (bit r for row
				 * r) the job runs in besides @row; else 0
				 */
	union {
		__u64 slice;	/* with BCS_JOB_AT_SLICE: the first slice
				 * of the new @row and @rows; else 0
				 */
		__u64 owner;	/* create with BCS_JOB_OWNER: the owner's
				 * uid (< 2^32 - 1); else 0
				 */
	};
};

#define BCS_ATTACH_THREAD	(1U << 0)	/* only the thread @pid */
#define BCS_ATTACH_FLAGS	BCS_ATTACH_THREAD

/* BCS_IOC_ATTACH, BCS_IOC_DETACH */
struct bcs_attach {
	__u32 size;		/* sizeof(struct bcs_attach) */
	__u32 flags;		/* BCS_ATTACH_* */
	__u32 job;		/* job id */
	__s32 pid;		/* process (or, with BCS_ATTACH_THREAD, thread) */
	__u32 nr_tasks;		/* out: threads attached or detached */
	__u32 reserved0;	/* must be 0 */
	__u64 reserved[2];	/* must be 0 */
};

#define BCS_CONFIG_MODE		(1U << 0)
#define BCS_CONFIG_SLICE	(1U << 1)
#define BCS_CONFIG_WATCHDOG	(1U << 2)
#define BCS_CONFIG_ALL		(BCS_CONFIG_MODE | BCS_CONFIG_SLICE | \
				 BCS_CONFIG_WATCHDOG)

/* BCS_IOC_CONFIG */
struct bcs_config {
	__u32 size;		/* sizeof(struct bcs_config) */
	__u32 set;		/* BCS_CONFIG_* fields to change */
	__u64 slice_ns;		/* BCS_SLICE_NS_MIN .. BCS_SLICE_NS_MAX */
	__u32 mode;		/* enum bcs_mode */
	__u32 watchdog_slices;	/* 0 (off) .. BCS_WATCHDOG_MAX */
	__u64 reserved[2];	/* must be 0 */
};

#define BCS_STROBE_NOW		(1U << 0)	/* ignore @deadline_ns */
#define BCS_STROBE_NEXT		(1U << 1)	/* standalone: next row */
#define BCS_STROBE_PREDICT	(1U << 2)	/* @next_row is a prediction */
#define BCS_STROBE_EXPIRE	(1U << 3)	/* its rows end with their slices */
#define BCS_STROBE_PLAN		(1U << 4)	/* @plan_slices slices (Plans) */
#define BCS_STROBE_FLAGS	(BCS_STROBE_NOW | BCS_STROBE_NEXT | \
				 BCS_STROBE_PREDICT | BCS_STROBE_EXPIRE | \
				 BCS_STROBE_PLAN)

/* BCS_IOC_STROBE */
struct bcs_strobe {
	__u32 size;		/* sizeof(struct bcs_strobe) */
	__u32 flags;		/* BCS_STROBE_* */
	__u64 slice;		/* global slice number */
	__u64 deadline_ns;	/* switch time; in the past: switch now, late
				 * (driven: dropped, missed, if @slice is
				 * before the current slice)
				 */
	__u64 slice_ns;		/* 0, or the new local slice length */
	__u32 row;		/* row to run, < BCS_ROWS_MAX */
	__u32 next_row;		/* with BCS_STROBE_PREDICT: the row of slice
				 * @slice + 1, < BCS_ROWS_MAX; else 0
				 */
	__u64 plan_rows;	/* with BCS_STROBE_PLAN: the home rows the plan
				 * steps through (bit r: row r); else 0
				 */
	__u32 plan_slices;	/* with BCS_STROBE_PLAN: slices planned, 1 to
				 * BCS_PLAN_SLICES_MAX; else 0
				 */
	__u32 reserved;		/* must be 0 */
};

/* BCS_IOC_GET_STATE */
struct bcs_state {
	__u32 size;		/* sizeof(struct bcs_state) */
	__u32 version;		/* out: BCS_VERSION */
	__u32 mode;		/* enum bcs_mode */
	__u32 row;		/* row running now, BCS_ROW_NONE before any */
	__u64 slice;		/* current slice number */
	__u64 slice_ns;
	__u32 watchdog_slices;
	__u32 failopen;		/* 1 while failed open in driven mode */
	__u32 nr_jobs;
	__u32 nr_tasks;		/* attached tasks (threads) */
	__u32 nr_parked;	/* tasks parked right now */
	__s32 driver_pid;	/* tgid of the driver, 0 if none */
	__u64 strobes;		/* strobes accepted (a plan is one) */
	__u64 switches;		/* slices started (each of a plan's) */
	__u64 late;		/* switches after their deadline */
	__u64 missed;		/* strobes lost or superseded (a lost
				 * one whose prediction switched counts
				 * in @predicted instead), and slices of
				 * a plan that a late timer passed over
				 */
	__u64 failopens;	/* fail-open events */
	__u64 attach_failures;	/* children not attached (no memory) */
	__u32 stat_records;	/* capacity of the /dev/bcsstat ring */
	__u32 window_state;	/* enum bcs_window_state of the slice window */
	__u64 drain_cuts;	/* switches that woke the next row at the
				 * drain limit (BCS_SLICE_DRAIN_CUT)
				 */
	__u64 predicted;	/* switches to a prediction
				 * (BCS_SLICE_PREDICTED)
				 */
	__u64 expired;		/* slices that ran no row because the
				 * row of a strobe with BCS_STROBE_EXPIRE
				 * ended (BCS_SLICE_EXPIRED)
				 */
	__u64 planned;		/* switches to a slice of a plan after its
				 * first (BCS_SLICE_PLANNED), which no
				 * strobe of its own brought; 0 from
				 * modules before plans, where this was
				 * reserved
				 */
};

#define BCS_VERSION		1

enum bcs_job_state {
	BCS_JOB_RUNNING		= 0,
	BCS_JOB_SUSPENDED	= 1,
};

struct bcs_job_info {
	__u32 id;
	__u32 row;
	__u32 state;		/* enum bcs_job_state */
	__u32 nr_tasks;
	__u32 nr_parked;
	__u32 flags;		/* BCS_JOB_FILLER if it is a filler job;
				 * 0 from modules before filler jobs
				 */
	__u64 run_ns;		/* CPU time of its tasks since they attached,
				 * tasks that have left included
				 */
	__u64 suspended_ns;	/* time its tasks spent parked, summed */
	__u64 slices_run;	/* slices in which the job could run (a row
				 * of its set, or every job after a
				 * fail-open)
				 */
	__u64 rows;		/* rows it runs in now, @row's included;
				 * 0 with no row
				 */
	__u32 owner;		/* its owner's uid in the caller's user
				 * namespace (the overflow uid if it has
				 * none there); 0 from modules before owners
				 */
	__u32 reserved1;
};

/* BCS_IOC_JOB_LIST */
struct bcs_job_list {
	__u32 size;		/* sizeof(struct bcs_job_list) */
	__u32 count;		/* in: room in @jobs; out: jobs that exist */
	__u64 jobs;		/* user pointer to struct bcs_job_info[] */
	__u64 reserved[2];	/* must be 0 */
};

enum bcs_task_state {
	BCS_TASK_RUNNABLE	= 0,	/* running or waiting for a CPU */
	BCS_TASK_BLOCKED	= 1,	/* sleeping on its own account */
	BCS_TASK_PARKED		= 2,	/* suspended by bcs */
};

struct bcs_task_stat {
	__s32 pid;		/* thread id */
	__s32 tgid;		/* process id */
	__u32 job;
	__u32 state;		/* enum bcs_task_state */
	__u64 attach_ns;	/* when the task joined its job */
	__u64 run_ns;		/* CPU time since attach */
	__u64 suspended_ns;	/* time parked by bcs */
	__u64 blocked_ns;	/* time neither running, runnable nor parked */
	__u64 slices_run;	/* slices in which the task got CPU time */
	__u64 parks;		/* times the task was parked */
};

/* BCS_IOC_TASK_STATS */
struct bcs_task_list {
	__u32 size;		/* sizeof(struct bcs_task_list) */
	__u32 job;		/* 0: every job */
	__u32 count;		/* in: room in @tasks; out: tasks that exist */
	__u32 reserved0;	/* must be 0 */
	__u64 tasks;		/* user pointer to struct bcs_task_stat[] */
	__u64 reserved[2];	/* must be 0 */
};

/*
 * Distributions
 * -------------
 * For every tracked task bcs.ko follows the scheduler's tracepoints and
 * splits the time since tracking began into four states, each one a
 * metric (enum bcs_dist_metric):
 *  - BCS_DIST_BURST: running; a burst is the CPU time from the end of a
 *    voluntary sleep to the start of the next one, or to the task's leaving
 *    the job (exit, detach): preemptions and bcs suspensions inside it do
 *    not end it (they are counted in @preemptions and @suspensions);
 *  - BCS_DIST_BLOCKED: a voluntary sleep (blocked in the kernel on its own
 *    account), from the switch-out to its wake-up;
 *  - BCS_DIST_SUSPENDED: parked by bcs, from the switch-out to its wake-up;
 *  - BCS_DIST_WAIT: runnable and not running, on a run queue after a
 *    wake-up or a preemption, until the task runs again.
 * The histogram of a metric has one value per interval (per burst, per
 * sleep, per park, per wait), in nanoseconds.  The totals are of every
 * state whether its metric is enabled or not, and include the interval in
 * progress: @run_ns + @blocked_ns + @suspended_ns + @wait_ns ==
 * @tracked_ns, the time the task was tracked (from the enable, or from its
 * attach if the job's metrics were enabled before, until now, its exit or
 * detach, or the disable of its last metric).
 */
#define BCS_DIST_PIDS_MAX	4096

enum bcs_dist_metric {
	BCS_DIST_BURST		= 0,
	BCS_DIST_BLOCKED	= 1,
	BCS_DIST_SUSPENDED	= 2,
	BCS_DIST_WAIT		= 3,
	BCS_DIST_METRICS	= 4,
};

#define BCS_DIST_ALL		((1U << BCS_DIST_METRICS) - 1)

enum bcs_dist_op {
	BCS_DIST_ENABLE		= 0,
	BCS_DIST_DISABLE	= 1,
	BCS_DIST_RELEASE	= 2,
};

/* BCS_IOC_DIST_CTL */
struct bcs_dist_ctl {
	__u32 size;		/* sizeof(struct bcs_dist_ctl) */
	__u32 job;
	__u32 op;		/* enum bcs_dist_op */
	__u32 metrics;		/* 1 << enum bcs_dist_metric, or'ed; not 0 */
	__u32 sub_bits;		/* BCS_DIST_ENABLE: 0..BCS_HIST_SUB_BITS_MAX */
	__u32 nr_pids;		/* 0: the whole job */
	__u64 pids;		/* user pointer to __s32[nr_pids] */
	__u64 reserved[2];	/* must be 0 */
};

struct bcs_dist_totals {
	__u64 start_ns;		/* CLOCK_MONOTONIC: tracking began */
	__u64 tracked_ns;
	__u64 run_ns;
	__u64 blocked_ns;
	__u64 suspended_ns;
	__u64 wait_ns;
	__u64 bursts;		/* bursts ended by a voluntary sleep */
	__u64 preemptions;	/* switched out while runnable */
	__u64 suspensions;	/* parks by bcs */
	__u32 state;		/* enum bcs_dist_metric: the one now */
	__u32 flags;		/* BCS_DIST_* below */
};

#define BCS_DIST_GONE		(1U << 0)	/* the task left the job */
#define BCS_DIST_TRACKING	(1U << 1)	/* some metric is enabled */

#define BCS_DIST_NEXT		(1U << 0)	/* bcs_dist_read.flags */

/* BCS_IOC_DIST_READ */
struct bcs_dist_read {
	__u32 size;		/* sizeof(struct bcs_dist_read) */
	__u32 job;
	__s32 pid;		/* thread id; out with BCS_DIST_NEXT */
	__u32 metric;		/* enum bcs_dist_metric */
	__u32 flags;		/* BCS_DIST_NEXT */
	__u32 buf_size;		/* in: room at @buf; out: bytes needed */
	__u64 buf;		/* user pointer: struct bcs_hist_header, ... */
	__u64 reserved[2];	/* must be 0 */
	struct bcs_dist_totals totals;	/* out */
};

/* Slice windows (see "Slice windows" above) */
enum bcs_window_op {
	BCS_WINDOW_GET		= 0,	/* read the window */
	BCS_WINDOW_ARM		= 1,	/* arm it for @from_slice .. @to_slice */
	BCS_WINDOW_DISARM	= 2,	/* remove it: record every switch */
};

enum bcs_window_state {
	BCS_WINDOW_NONE		= 0,	/* no window: every switch recorded */
	BCS_WINDOW_ARMED	= 1,	/* waiting for a slice in the window */
	BCS_WINDOW_CAPTURING	= 2,	/* recording the window's slices */
	BCS_WINDOW_DONE		= 3,	/* a slice after it began: nothing is
					 * recorded until it is disarmed
					 */
};

/* BCS_IOC_WINDOW */
struct bcs_window {
	__u32 size;		/* sizeof(struct bcs_window) */
	__u32 op;		/* enum bcs_window_op */
	__u32 flags;		/* none defined: must be 0 */
	__u32 state;		/* out: enum bcs_window_state; in: 0 */
	__u64 from_slice;	/* first slice; in with BCS_WINDOW_ARM, else
				 * 0 in; out
				 */
	__u64 to_slice;		/* last slice, inclusive; as @from_slice */
	__u64 records;		/* out: records the window holds; in: 0 */
	__u64 dropped;		/* out: records of the window not written,
				 * the ring being full of it; in: 0
				 */
	__u64 first_seq;	/* out: sequence number of its first record,
				 * valid while @records is not 0; in: 0
				 */
	__u64 reserved[2];	/* must be 0 */
};

#define BCS_IOC_MAGIC		0xbc
#define BCS_IOC_JOB_CREATE	_IOWR(BCS_IOC_MAGIC, 1, struct bcs_job)
#define BCS_IOC_JOB_DESTROY	_IOW(BCS_IOC_MAGIC, 2, struct bcs_job)
#define BCS_IOC_JOB_SET_ROW	_IOW(BCS_IOC_MAGIC, 3, struct bcs_job)
#define BCS_IOC_ATTACH		_IOWR(BCS_IOC_MAGIC, 4, struct bcs_attach)
#define BCS_IOC_DETACH		_IOWR(BCS_IOC_MAGIC, 5, struct bcs_attach)
#define BCS_IOC_CONFIG		_IOWR(BCS_IOC_MAGIC, 6, struct bcs_config)
#define BCS_IOC_STROBE		_IOW(BCS_IOC_MAGIC, 7, struct bcs_strobe)
#define BCS_IOC_GET_STATE	_IOWR(BCS_IOC_MAGIC, 8, struct bcs_state)
#define BCS_IOC_JOB_LIST	_IOWR(BCS_IOC_MAGIC, 9, struct bcs_job_list)
#define BCS_IOC_TASK_STATS	_IOWR(BCS_IOC_MAGIC, 10, struct bcs_task_list)
#define BCS_IOC_DIST_CTL	_IOW(BCS_IOC_MAGIC, 11, struct bcs_dist_ctl)
#define BCS_IOC_DIST_READ	_IOWR(BCS_IOC_MAGIC, 12, struct bcs_dist_read)
#define BCS_IOC_WINDOW		_IOWR(BCS_IOC_MAGIC, 13, struct bcs_window)

/* /dev/bcsstat */
#define BCS_STAT_MAGIC		0x53534342U	/* "BCSS" little endian */
#define BCS_STAT_VERSION	1

struct bcs_stat_header {
	__u32 magic;		/* BCS_STAT_MAGIC */
	__u32 version;		/* BCS_STAT_VERSION */
	__u32 header_size;	/* sizeof(struct bcs_stat_header) */
	__u32 record_size;	/* sizeof(struct bcs_slice_record) */
	__u32 nr_records;	/* ring capacity */
	__u32 records_offset;	/* byte offset of record 0 in the mapping */
	__u64 head;		/* sequence number of the next record */
	/*
	 * The slice window, as in struct bcs_window; all 0 (BCS_WINDOW_NONE)
	 * when there is none, and in modules before windows, where these
	 * were reserved.  Each field is written on its own: BCS_IOC_WINDOW
	 * reads them together.
	 */
	__u64 window_from;
	__u64 window_to;
	__u64 window_records;
	__u64 window_first_seq;
	__u32 window_state;	/* enum bcs_window_state */
	__u32 reserved0;
};

/* struct bcs_slice_record.flags */
#define BCS_SLICE_LATE		(1U << 0)	/* switched after the deadline */
#define BCS_SLICE_STANDALONE	(1U << 1)	/* strobe from the local timer */
#define BCS_SLICE_DRIVEN	(1U << 2)	/* strobe from user space */
#define BCS_SLICE_FAILOPEN	(1U << 3)	/* fail-open: every job resumed */
#define BCS_SLICE_INJECTED	(1U << 4)	/* strobe injected by ioctl */
/*
 * The jobs of the new row were woken at the drain limit (module parameter
 * drain_us), before every task of the old row that was running had parked.
 * Set on the newest record when that happens.
 */
#define BCS_SLICE_DRAIN_CUT	(1U << 5)
/*
 * Driven strobes that had reached bcs.ko in time were overtaken by this
 * one: when the switch ran, their deadlines and its own had all passed (the
 * CPU was held up, or the clock stepped forward), and only the newest
 * switched.  They count in @missed with any slices skipped.
 */
#define BCS_SLICE_OVERTAKEN	(1U << 6)
/*
 * The switch ran a prediction (BCS_STROBE_PREDICT): no strobe from the
 * driver for this slice had come by its deadline.  @strobe_ns is the
 * arrival of the strobe that carried the prediction, a slice earlier.
 */
#define BCS_SLICE_PREDICTED	(1U << 7)
/*
 * No row runs: the row of a strobe with BCS_STROBE_EXPIRE (and of the
 * prediction it carried) has ended, and no strobe from the driver covers
 * this slice.  @row is BCS_ROW_NONE: only jobs without a row run.
 */
#define BCS_SLICE_EXPIRED	(1U << 8)
/*
 * The switch ran a slice of a plan (BCS_STROBE_PLAN) after its first, off
 * bcs.ko's own clock: a switch of the driver's all the same.  @strobe_ns is
 * the arrival of the plan.
 */
#define BCS_SLICE_PLANNED	(1U << 9)

struct bcs_slice_record {
	__u64 seq;		/* record sequence number, written last */
	__u64 slice;		/* global slice number */
	__u64 strobe_ns;	/* arrival of the strobe */
	__u64 deadline_ns;	/* when the switch was due */
	__u64 switch_start_ns;	/* switch began */
	__u64 switch_end_ns;	/* every task told to park or woken */
	__u64 interval_ns;	/* since the previous switch began */
	__u64 switch_ns;	/* switch_end_ns - switch_start_ns */
	__u32 row;		/* row that runs in this slice */
	__u32 flags;		/* BCS_SLICE_* */
	__u32 nr_suspended;	/* tasks told to park */
	__u32 nr_resumed;	/* tasks woken */
	__u32 nr_running;	/* tasks of running jobs */
	__u32 nr_blocked;	/* of those, sleeping at the switch */
	__u32 late;		/* 1 if this switch was late */
	__u32 missed;		/* strobes missed since the previous record */
	__u64 late_total;	/* late switches since load */
	__u64 missed_total;	/* missed strobes since load */
	/*
	 * When the switch had taken effect: the last task that was runnable
	 * at the switch and was told to park has parked (@parked_ns), and
	 * the last task woken has left its parking (@resumed_ns).  Tasks
	 * blocked at the switch are not waited for: they park before they
	 * can return to user space.  @switch_end_ns if there was nothing to
	 * wait for; 0 while something is still awaited.  Both are filled in
	 * after the record is published, until the next record is: 0 in a
	 * record that has a successor means the switch never took full
	 * effect within its slice.
	 */
	__u64 parked_ns;
	__u64 resumed_ns;
};

/* Generic netlink */
#define BCS_GENL_NAME		"bcs"
#define BCS_GENL_VERSION	1
#define BCS_GENL_MCGRP_EVENTS	"events"

enum bcs_cmd {
	BCS_CMD_UNSPEC,
	BCS_CMD_GET_STATE,
	BCS_CMD_DRIVE,
	BCS_CMD_RELEASE,
	BCS_CMD_STROBE,
	BCS_CMD_WINDOW,
	BCS_CMD_JOB_ENDED,
	__BCS_CMD_MAX,
};

#define BCS_CMD_MAX (__BCS_CMD_MAX - 1)

enum bcs_attr {
	BCS_A_UNSPEC,
	BCS_A_PAD,
	BCS_A_SLICE,		/* u64 */
	BCS_A_ROW,		/* u32 */
	BCS_A_DEADLINE_NS,	/* u64 */
	BCS_A_SLICE_NS,		/* u64 */
	BCS_A_FLAGS,		/* u32, BCS_STROBE_* */
	BCS_A_MODE,		/* u32, enum bcs_mode */
	BCS_A_WATCHDOG_SLICES,	/* u32 */
	BCS_A_FAILOPEN,		/* u32 */
	BCS_A_NR_JOBS,		/* u32 */
	BCS_A_NR_TASKS,		/* u32 */
	BCS_A_STROBES,		/* u64 */
	BCS_A_LATE,		/* u64 */
	BCS_A_MISSED,		/* u64 */
	BCS_A_FAILOPENS,	/* u64 */
	BCS_A_NEXT_ROW,		/* u32, a prediction: BCS_STROBE_PREDICT */
	BCS_A_PREDICTED,	/* u64 */
	BCS_A_EXPIRED,		/* u64 */
	BCS_A_NR_PARKED,	/* u32 */
	BCS_A_DRIVER_PID,	/* u32, the tgid (a pid_t), 0 if none */
	BCS_A_SWITCHES,		/* u64 */
	BCS_A_ATTACH_FAILURES,	/* u64 */
	BCS_A_STAT_RECORDS,	/* u32 */
	BCS_A_DRAIN_CUTS,	/* u64 */
	BCS_A_WINDOW_FROM,	/* u64, slice number */
	BCS_A_WINDOW_TO,	/* u64, slice number */
	BCS_A_WINDOW_STATE,	/* u32, enum bcs_window_state; reply only */
	BCS_A_WINDOW_RECORDS,	/* u64; reply only */
	BCS_A_JOB,		/* u32, a job id */
	BCS_A_JOB_END,		/* u32, enum bcs_job_end */
	BCS_A_DIST_TASKS,	/* u32 */
	BCS_A_EVENT_SEQ,	/* u64 */
	BCS_A_PLAN_SLICES,	/* u32, a plan: BCS_STROBE_PLAN */
	BCS_A_PLAN_ROWS,	/* u64, with BCS_A_PLAN_SLICES only */
	BCS_A_PLANNED,		/* u64 */
	__BCS_A_MAX,
};

#define BCS_A_MAX (__BCS_A_MAX - 1)

/* BCS_A_JOB_END of BCS_CMD_JOB_ENDED: why the job ended. */
enum bcs_job_end {
	BCS_JOB_END_DESTROYED	= 1,	/* BCS_IOC_JOB_DESTROY */
	BCS_JOB_END_EXITED	= 2,	/* its last task exited */
	BCS_JOB_END_DETACHED	= 3,	/* its last task was detached */
};

#endif /* _UAPI_LINUX_BCS_H */
