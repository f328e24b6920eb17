// SPDX-License-Identifier: GPL-2.0
/*
 * Requests to the master (BCSP_REQUEST: bcsctl through any node's bcsd,
 * or this host's control socket), carried out by the active master and
 * answered (BCSP_REPLY); the commands they send the nodes (BCSP_COMMAND),
 * and for an attach the node's result (BCSP_RESULT) that answers it.
 * The replies are kept, by standbys too, so that a retry gets the same
 * answer rather than being carried out again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bcs.h>
#include <sodium.h>

#include "bcsd.h"
#include "core/log.h"
#include "master/context.h"
#include "master/jobs.h"
#include "master/requests.h"
#include "tree/topo.h"

/* The id of the next command; 0 is none. */
static uint32_t next_cmd_id(const struct bcsd *d)
{
	return d->master.cmd_id + 1 ? d->master.cmd_id + 1 : 1;
}

/*
 * Command @cmd (its op, job and arg; for an attach its node) on the tasks
 * of a job, to the nodes (down a tree, to the subtrees that hold its tasks, or its
 * node, each child acknowledging it) and to this host's node part, whose
 * result may come before this returns.  Multicast, sent as often as a
 * strobe; each node carries it out once (its id, next_cmd_id()).
 */
static void send_command(struct bcsd *d, const struct bcsp_command *cmd)
{
	struct bcsp_msg m = { .hdr = { .type = BCSP_COMMAND } };
	unsigned int i, copies;

	m.hdr.epoch = d->master.epoch;
	m.hdr.priority = (uint16_t)d->cfg.priority;
	m.cmd = *cmd;
	d->master.cmd_id = next_cmd_id(d);
	m.cmd.id = d->master.cmd_id;
	/* Down a tree, the acknowledgements stand for the copies. */
	copies = tree_transport(d) ? 1 : d->cfg.strobe_copies;
	for (i = 0; i < copies; i++)
		net_send_command(d, &m);
	pr_info("job %u: command %u (%u) %u sent", cmd->job, cmd->op,
		cmd->arg, m.cmd.id);
	dispatch(d, &m, &(struct bcsd_origin){
		.local = true, .slice = d->master.strobe_slice });
}

/*
 * Is node @node one of the cluster's: in the nodes file if there is
 * one, else heard from (its reports), or this one?
 */
static bool node_known(const struct bcsd *d, uint32_t node)
{
	uint32_t i;

	if (node == d->node_id)
		return true;
	if (d->nodes)
		return topo_index(d->nodes, node) >= 0;
	for (i = 0; i < d->view.nr_peers; i++)
		if (d->view.peers[i].node == node)
			return true;
	return false;
}

/*
 * The slot of the attach waiting: request @req (a retry of it), or with
 * @req NULL command @cmd_id; -1 if none.
 */
static int attaching_find(const struct bcsd *d, const struct bcsp_request *req,
			  uint32_t cmd_id)
{
	const struct bcsp_request *r;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(d->master.attaching); i++) {
		r = &d->master.attaching[i].req;
		if (!r->id)
			continue;
		if (req ? r->id == req->id && r->node == req->node &&
			  r->job == req->job :
			  d->master.attaching[i].cmd_id == cmd_id)
			return (int)i;
	}
	return -1;
}

/*
 * Attach request @req: its command goes to its node, and the reply waits
 * for the node's result (requests_on_result()); 1 then, or 0 with @reply->error
 * set if it cannot go.  A retry of one in flight waits with it.
 */
static int attach(struct bcsd *d, const struct bcsp_request *req,
		  struct bcsp_request *reply)
{
	unsigned int i;

	if (!req->id) {
		reply->error = -EINVAL;	/* no retry could be told */
		return 0;
	}
	if (attaching_find(d, req, 0) >= 0)
		return 1;
	if (!jobs_find(d, req->job)) {
		reply->error = -ENOENT;
		return 0;
	}
	if (!node_known(d, req->attach.target)) {
		reply->error = -ENXIO;
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(d->master.attaching); i++)
		if (!d->master.attaching[i].req.id)
			break;
	if (i == ARRAY_SIZE(d->master.attaching)) {
		reply->error = -EBUSY;	/* BCSD_ATTACHING_MAX in flight */
		return 0;
	}
	d->master.attaching[i].req = *req;
	d->master.attaching[i].sent_ms = now_mono_ms();
	/* Before it goes: this master's own node answers at once. */
	d->master.attaching[i].cmd_id = next_cmd_id(d);
	send_command(d, &(struct bcsp_command){
		.op = BCSP_CMD_ATTACH, .job = req->job,
		.arg = req->attach.pid, .node = req->attach.target });
	return 1;
}

static void done_add(struct bcsd *d, const struct bcsp_request *reply);

/*
 * The reply to attach @i, with @error: to the group (down a tree) and to
 * this host's control socket, and kept for retries.
 */
static void attach_answer(struct bcsd *d, unsigned int i, int32_t error)
{
	struct bcsp_msg r = { .hdr = { .type = BCSP_REPLY } };

	r.hdr.epoch = d->master.epoch;
	r.hdr.priority = (uint16_t)d->cfg.priority;
	r.req = d->master.attaching[i].req;
	r.req.error = error;
	d->master.attaching[i].req.id = 0;
	done_add(d, &r.req);
	net_send(d, &r, NULL);
	r.hdr.sender = d->node_id;
	dispatch(d, &r, &(struct bcsd_origin){ .local = true });
}

/* How a command went on a node: for an attach, its reply. */
void requests_on_result(struct bcsd *d, const struct bcsp_msg *m,
			const struct bcsd_origin *from)
{
	const struct bcsp_result *res = &m->result;
	const struct bcsp_request *req;
	int i;

	(void)from;
	if (!d->master.active || m->hdr.epoch != d->master.epoch ||
	    res->op != BCSP_CMD_ATTACH)
		return;
	i = attaching_find(d, NULL, res->id);
	if (i < 0)
		return;		/* answered, or timed out */
	req = &d->master.attaching[i].req;
	/* From its node, about its process. */
	if (m->hdr.sender != req->attach.target || res->job != req->job ||
	    res->arg != req->attach.pid)
		return;
	d->cnt.results_rx++;
	attach_answer(d, (unsigned int)i, res->error);
}

/* Attaches whose node has not answered for BCSD_ATTACH_WAIT_MS. */
void requests_tick(struct bcsd *d)
{
	uint64_t now = now_mono_ms();
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(d->master.attaching); i++)
		if (d->master.attaching[i].req.id &&
		    now - d->master.attaching[i].sent_ms > BCSD_ATTACH_WAIT_MS)
			attach_answer(d, i, -EHOSTUNREACH);
}

/*
 * Carry out request @req; the answer is in @reply.  Returns false if the
 * answer comes later (an attach: attach_answer()).
 */
static bool carry_out(struct bcsd *d, const struct bcsp_request *req,
		      struct bcsp_request *reply)
{
	struct bcsd_job *j;
	uint32_t id, row;

	*reply = *req;
	reply->error = 0;
	switch (req->op) {
	case BCSP_OP_CREATE:
		if (req->row != BCS_ROW_NONE && req->row >= BCS_ROWS_MAX) {
			reply->error = -EINVAL;
		} else if (d->master.nr_jobs >= BCS_JOBS_MAX) {
			reply->error = -ENOSPC;
		} else if (req->job && jobs_find(d, req->job)) {
			reply->error = -EEXIST;
		} else if (req->job && !bcs_job_id_valid(req->job)) {
			reply->error = -EINVAL;
		} else {
			/* bcs.ko's rule: in turn, skipping the ids in use. */
			id = req->job;
			while (!bcs_job_id_valid(id) || jobs_find(d, id)) {
				id = d->master.next_job_id;
				d->master.next_job_id = bcs_job_id_next(id);
			}
			/* Any number but 0 (not known). */
			if (!jobs_add(d, id, req->row, req->row != BCS_ROW_NONE,
				      randombytes_random() | 1,
				      req->nodes.owner)) {
				reply->error = -ENOMEM;
				break;
			}
			/* The nodes it will run on, if the request says. */
			j = &d->master.jobs[d->master.nr_jobs - 1];
			if (req->nodes.nr) {
				j->declared = malloc(req->nodes.nr *
						     sizeof(j->declared[0]));
				if (!j->declared) {
					jobs_remove(d, j);
					reply->error = -ENOMEM;
					break;
				}
				j->nr_declared = req->nodes.nr;
				memcpy(j->declared, req->nodes.id,
				       req->nodes.nr * sizeof(j->declared[0]));
			}
			jobs_replan(d);
			row = j->row;
			reply->job = id;
			reply->row = row;
			pr_info("job %u created in row %u, owner %u", id, row,
				req->nodes.owner);
		}
		break;
	case BCSP_OP_DESTROY:
		j = jobs_find(d, req->job);
		if (!j) {
			reply->error = -ENOENT;
			break;
		}
		jobs_remove(d, j);
		context_forget(d, req->job);
		pr_info("job %u destroyed", req->job);
		break;
	case BCSP_OP_SET_ROW:
		j = jobs_find(d, req->job);
		if (!j)
			reply->error = -ENOENT;
		else if (req->row != BCS_ROW_NONE && req->row >= BCS_ROWS_MAX)
			reply->error = -EINVAL;
		else
			/* Pinned there; BCS_ROW_NONE: placed freely again. */
			matrix_pin(&d->master.matrix, req->job, req->row,
				   now_mono_ms());
		break;
	case BCSP_OP_SIGNAL:
		if (!jobs_find(d, req->job))
			reply->error = -ENOENT;
		else
			send_command(d, &(struct bcsp_command){
				.op = BCSP_CMD_SIGNAL, .job = req->job,
				.arg = req->signal.sig });
		return true;
	case BCSP_OP_ATTACH:
		/* The node's result answers it, unless it cannot go. */
		return !attach(d, req, reply);
	case BCSP_OP_MPI: {
		struct bcsp_command cmd = {
			.op = BCSP_CMD_MPI, .job = req->job,
			.arg = req->mpi.flags, .sub_bits = req->mpi.sub_bits,
			.len = req->mpi.len,
		};

		if (!jobs_find(d, req->job)) {
			reply->error = -ENOENT;
			return true;
		}
		memcpy(cmd.sel, req->mpi.sel, sizeof(cmd.sel));
		send_command(d, &cmd);
		return true;
	}
	case BCSP_OP_MPI_GATHER:
	case BCSP_OP_TGATHER:
		/*
		 * The nodes send their files to the asker (collect.c), or
		 * their subtrees' answers up the tree (node/tgnode.c).
		 */
		if (!req->id || !req->node)
			reply->error = -EINVAL;
		else if (!jobs_find(d, req->job))
			reply->error = -ENOENT;
		else
			send_command(d, &(struct bcsp_command){
				.op = req->op == BCSP_OP_TGATHER ?
				      BCSP_CMD_TGATHER : BCSP_CMD_MPI_GATHER,
				.job = req->job, .arg = req->id,
				.node = req->node });
		/* Every live node answers: the asker may hear fewer. */
		reply->gather.live = view_live_nodes(d, now_mono_ms());
		return true;
	case BCSP_OP_STATS:
		reply->error = context_stats(d, req,
					     jobs_find(d, req->job) != NULL);
		return true;
	case BCSP_OP_WINDOW:
	case BCSP_OP_WINDOW_CLEAR:
		reply->error = context_window(d, req);
		return true;
	default:
		reply->error = -EOPNOTSUPP;
	}
	if (!reply->error) {
		jobs_replan(d);
		jobs_map_changed(d, false);
	}
	return true;
}

/*
 * The reply given to an earlier copy of request @req, if any.  A retry is
 * the same node, id and operation, on the same job if the request names
 * one (a create may leave it to the master): ids start at random, but a
 * node that restarted may still meet an old one.
 */
static struct bcsp_request *done_find(struct bcsd *d,
				      const struct bcsp_request *req)
{
	struct bcsp_request *r;
	unsigned int i;

	if (!req->id)
		return NULL;
	for (i = 0; i < ARRAY_SIZE(d->master.done); i++) {
		r = &d->master.done[i];
		if (r->id == req->id && r->node == req->node &&
		    r->op == req->op && (!req->job || r->job == req->job))
			return r;
	}
	return NULL;
}

static void done_add(struct bcsd *d, const struct bcsp_request *reply)
{
	if (done_find(d, reply))
		return;
	d->master.done[d->master.done_next++ % ARRAY_SIZE(d->master.done)] = *reply;
}

/*
 * A standby heard the reply of the master it follows.  Replies go to the
 * group so that standbys keep them as the master does: if the requester
 * loses a reply and the master fails before the retry, the standby that
 * takes over answers the retry instead of carrying the request out again
 * (a second job, or a destroy that finds no job).
 */
void requests_on_reply(struct bcsd *d, const struct bcsp_msg *m,
		       const struct bcsd_origin *from)
{
	if (!from->local && !d->master.active)
		done_add(d, &m->req);
}

static void on_request(struct bcsd *d, const struct bcsp_msg *m)
{
	struct bcsp_msg r = { .hdr = { .type = BCSP_REPLY } };
	struct bcsp_request *done;

	/*
	 * Addressed to this master as it is now: a request for an earlier
	 * epoch (a replay, or one sent before a take-over) is not carried
	 * out; a node retries with the epoch it follows.
	 */
	if (m->hdr.epoch != d->master.epoch)
		return;
	r.hdr.epoch = d->master.epoch;
	r.hdr.priority = (uint16_t)d->cfg.priority;
	/*
	 * A retry of a request already carried out gets the same answer;
	 * unless it made a job that is gone since, as when the old master
	 * failed before its map reached this one: that is made again.
	 */
	done = done_find(d, &m->req);
	if (done && (done->op != BCSP_OP_CREATE || done->error ||
		     jobs_find(d, done->job))) {
		r.req = *done;
	} else {
		if (!carry_out(d, &m->req, &r.req))
			return;		/* answered later */
		if (done)
			*done = r.req;
		else
			done_add(d, &r.req);
	}
	net_send(d, &r, NULL);
}

/*
 * A request: from the network, carried out by the active master and
 * answered to the group; from this host's control socket (ctl.c), while
 * this master is active, carried out and answered to it alone.
 */
void requests_on_request(struct bcsd *d, const struct bcsp_msg *m,
			 const struct bcsd_origin *from)
{
	struct bcsp_msg r = { .hdr = { .type = BCSP_REPLY } };

	if (!d->master.active)
		return;
	if (!from->local) {
		on_request(d, m);
		return;
	}
	r.hdr.epoch = d->master.epoch;
	r.hdr.sender = d->node_id;
	if (carry_out(d, &m->req, &r.req))
		dispatch(d, &r, from);
}
