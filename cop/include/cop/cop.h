/* libcop: the C API of seed 000 (Sankaran 1995), ch. V, Table II.
 *
 * A PVM program uses the coordination processor (COP) through these calls.
 * The prototypes are the thesis's; tids and groups are PVM's (pvm3.h, libgpvm3),
 * datatypes are PVM's (PVM_INT, PVM_UINT, PVM_LONG, PVM_ULONG, PVM_FLOAT,
 * PVM_DOUBLE). Every call returns a negative code on error, as PVM does: PVM's
 * own codes where PVM reported the problem, the Cop* codes below otherwise.
 *
 * Where the data lives (ch. V, "COP Controller Address Spaces"):
 *   cop_write/cop_read/cop_rmw, cop_gather/cop_scatter: the task address space
 *     (TAS) of a task, one 64-bit word per element, 'msgtag' the first word;
 *   cop_barrier/cop_reduce/cop_bcast/cop_mcast: the global address space (GAS),
 *     'msgtag' the first word, one terminal-count and broadcast mask entry per
 *     element. Concurrent operations must use tags that do not overlap (see Tags).
 *
 * Tags (ch. V, "COP Controller Address Spaces"; Table II): a libcop tag is not a
 * label but a controller address. A group operation on 'msgtag' with 'count'
 * elements uses the words msgtag .. msgtag+count-1 (a barrier: the word msgtag) of
 * its group's window of the GAS, each with its own terminal-count and broadcast
 * mask entry, until every participating channel has done its part.
 * Group windows: libcop cuts the GAS into CopGroupWindows windows (default 16, of
 * 4096 words each at the 64K-word GAS) and gives each group name one of them the
 * first time a task uses the group, so two groups (a 2-D code's rows and columns)
 * may use the same tags at the same time, as in PVM: their words never meet. The
 * window is taken through PVM's mailbox (one test-and-set insert per window,
 * pvm_putinfo without PvmMboxOverWritable; the entries copbench.cop.windows,
 * copbench.cop.window.<k>, copbench.cop.group.<name>, copbench.cop.users.<k>), so
 * every task, host and COP level of the virtual machine maps (group, tag) alike; a
 * task asks once per group (its first call of the group costs a few pvmd round trips).
 * Window 0 is the multicasts' (cop_mcast names no group); groups get windows 1 ..
 * CopGroupWindows-1. A window is the group's while any task that used the group
 * lives (each registers as a user; the entries go when their task ends): a later
 * job, or the same name used again after every user has ended, may get another
 * window. When every window is held by other groups, the first call of a new group
 * gets CopErrNoWindow. CopGroupWindows 1 gives the group the whole GAS (tags up to
 * 65535, shared with the multicasts, as before group windows; the mailbox is not
 * asked): a task may then use one group only (a second group name: CopErrNoWindow),
 * and tasks of other jobs with one window must not share the partition at the same
 * time. The tasks of a virtual machine that use groups at the same time must use
 * the same count: a task whose count differs gets CopErrMismatch at its first group
 * call (counts above 1). So:
 *   - a group's tag + count must stay within its window (CopErrAddressRange);
 *   - operations that may be in progress at once need disjoint ranges: space the
 *     tags at least the longest array apart (a PVM program's tags 10, 11, 12 with
 *     arrays of more than one element overlap);
 *   - the same tag may be used again and again for the same kind of operation
 *     (the controller must keep successive operations on one word in order; the
 *     test cop_libcop_loops checks it for barriers, reductions and broadcasts);
 *   - a cop_barrier of the whole group ends every earlier operation of the group
 *     (each member has made its calls, so the controller has completed them).
 * libcop checks this at the call: a range that overlaps one used by another tag
 * (or the same tag for another kind of operation) of the same group since its
 * last full barrier is refused with CopErrTagOverlap, before anything reaches the
 * controller (groups cannot overlap: each has its own window; multicasts share
 * window 0). It sees only this task's calls: tasks of one group that call
 * different sequences are not detected. Ranges beyond the window are
 * CopErrAddressRange. (libcop splits long arrays into channel accesses of 128
 * elements; the words used are still tag .. tag+count-1 of the window.)
 * cop_read/cop_write/cop_rmw use a task address space instead: the tag is a word
 * offset there (tag + count <= the TAS size, 256 words, else CopErrAddressRange);
 * these are memory, not masks, so they need no spacing. cop_gather uses the words
 * tag .. tag+count-1 of each member's TAS, cop_scatter tag .. tag+count*members-1
 * of the root's, and both the words tag .. tag+2 of the group's window: tag+1 and
 * tag+2 for a check that every member names the same count, datatype and root (a
 * 2-word MAX reduction to every member, which is also the call's first barrier:
 * CopErrMismatch on every task when they disagree), tag for the closing barrier.
 *
 * Arguments every call refuses (nothing reaches the controller):
 *   PvmBadParam   null data with count > 0, count < 0, msgtag < 0, an unknown
 *                 datatype, a mode other than those below, an unknown reduction
 *                 function, rootcount < 1 or a null roots array or a root named
 *                 twice, numtasks < 1 or a null tids array, cop_barrier count 0
 *                 or < -1, a null group name, a receiver naming itself as srctid;
 *   CopErrBadType a datatype/function pair the hardware lacks (AND/OR/EXOR on
 *                 floating types, MAX/MIN on PVM_ULONG, cop_rmw on PVM_FLOAT);
 *   PvmNoInst     a root instance outside the group;
 *   PvmNotInGroup the caller is not a member (a broadcast's sender need not be
 *                 one), a multicast receiver is not among 'tids';
 *   PvmNoTask     a tid that names no task (asked of the pvmd with pvm_pstat
 *                 when a tid is first used: the call fails at once, without
 *                 waiting for the timeout or stalling its partners).
 * count 0 is accepted and does nothing. A call that waits for local partners or
 * for the channel gives up after CopTimeout (CopErrTimeout); one whose local
 * partner doing the channel part was killed gets CopErrPartnerDied (or, for a
 * broadcast receiver, fetches in its place).
 * Every wait is bounded (issue 25):
 *   - commands copd keeps "in progress" (waiting for a LOCK or for an operation
 *     in progress on their tag) time out at CopTimeout like any other wait;
 *   - a wait on a local partner that is itself in a channel wait: at most twice
 *     CopTimeout; the host area's slots of an operation that failed or timed out
 *     are swept, so later calls never wait for a free one;
 *   - copdrv gone (killed, even while it is an unreaped zombie): the task's next
 *     call and every wait end with CopErrLinkDown (seen on the task's connection
 *     to copdrv);
 *   - a member whose tasks have all ended (copdrv saw them go): the operations
 *     waiting for its channel fail with CopErrTaskEnded, at once when they were
 *     in progress, within copd's lease (1 s) when they began after;
 *   - a COP_URGENT access whose LOCK is held longer than copd's deadlock timer
 *     (copd --lock-limit-ms, default 500) is taken back: CopErrLockTimeout.
 * After a failure, a later call never returns another round's values (seed 000
 * ch. V: the controller voids an operation, the next starts on a clean entry):
 * when a collective (barrier, reduce, bcast, mcast) fails for a task after its
 * tags were taken, libcop notes its words as unsettled for the task's channel
 * (in the channel window), and the channel's next collective (whichever local
 * task does its channel part) first has the controller void what is still in
 * progress there for the channel (a SETTC with an empty mask) and drops the
 * results and NACKs of those words already at the node. The others still
 * waiting on that operation get CopErrVoided; if the channel is still down, the
 * call fails (CopErrLinkDown) and the words stay unsettled. A program that goes
 * on after an error keeps its tasks in step (every task makes the same calls)
 * for the later calls to succeed. A barrier or a reduction's
 * root also drops the results of its words that reached the node before it sent
 * its own contribution (a result needs it, so they are an earlier operation's).
 *
 * Operation identity (issue 34): every cop_barrier, cop_reduce, cop_bcast and
 * cop_mcast carries an identity that all its participants compute alike, without a
 * round trip: the generation of its (group, tag) (each task counts its own calls on
 * the group's tag word, of every kind, failed ones included: a call counts once it
 * is past the argument checks above and has its tag; counted per view of the group's
 * members, so a join or a leave starts every member, the newcomer too, at 0), and a
 * check of the job, the group window and tag, the members as the call sees them
 * (the view whose generations it counts, so no two calls of one task share an
 * identity), the kind of call, the datatype, the count and a reduction's function
 * (a multicast's "group" is its recipients). Tasks that see different members (a
 * receiver that called before a member died, a sender after) get an error
 * (CopErrTimeout), never the other view's words. It travels beside the thesis's words
 * (cop/link.h, link version 5). So:
 *   - the controller refuses a contribution of another identity (another round,
 *     datatype, count or job): CopErrMismatch to the tasks that contributed it and
 *     to the roots awaiting the result (a non-root whose contribution agreed with
 *     the first one's and came before the odd one returns 0: it waits for nothing),
 *     nothing delivered;
 *   - a task takes only results and broadcast words of its call's identity: an
 *     older round's left at the node is dropped (a receiver that timed out once is
 *     not a round behind at its next call), a later round's is kept for that call,
 *     another group's or job's is left alone; a failed call's words are voided on
 *     the controller by the channel's next call (see below) except an operation of
 *     that call's own round that another channel set up already;
 *   - a receiver naming another count or datatype than the sender (PVM_LONG sent,
 *     PVM_DOUBLE received; fewer elements than sent) gets CopErrMismatch, and the
 *     whole of that broadcast is consumed: the next receive gets its own round;
 *   - local tasks meet in the host area only for the same identity.
 * Every task of a group must therefore make the same calls on a tag, in the same
 * order (a broadcast's sender outside the group counts only its sends: use a tag
 * for them that the members use for nothing else). A task that fell out of step
 * (skipped a call or made one more: a loop that went on differently after an error in
 * one task) gets errors
 * (CopErrMismatch, CopErrTimeout), never another round's value, until every member
 * calls cop_resync(group, msgtag): a MAX reduction of the members' generations of
 * that tag (its own identity, valid at any generation) after which all continue at
 * one common generation. It returns 0 at every member or an error at each (call it
 * again, every member, after the error); it realigns the tag word `msgtag` only
 * (an array call's generation is its first word's).
 *
 * Porting a PVM program (the thesis's claim, ch. V: a PVM program moves to the
 * COP by replacing its group calls):
 *   pvm_mytid                        -> pvm_mytid, then cop_mytid (enrols on the channel)
 *   pvm_joingroup/lvgroup/gsize      -> unchanged (groups stay PVM's)
 *   pvm_barrier(g, n)                -> cop_barrier(g, n, tag)
 *   pvm_reduce(f, d, n, t, tag, g, r)-> cop_reduce(COP_f, d, t, n, tag, g, &r, 1); PvmSum ->
 *                                       COP_SUM, PvmMax -> COP_MAX, PvmMin -> COP_MIN (PvmProduct
 *                                       has no hardware); several roots at once are allowed
 *   pvm_bcast(g, tag) / pvm_recv     -> cop_bcast(d, n, t, g, tag, COP_SEND, -1) /
 *                                       cop_bcast(d, n, t, g, tag, COP_RECV, src or -1)
 *   pvm_mcast(tids, k, tag) / recv   -> cop_mcast(d, n, t, tids, k, tag, COP_SEND/COP_RECV, src)
 *   pvm_gather / pvm_scatter         -> cop_gather / cop_scatter (same arguments)
 *   shared variables (a server task  -> cop_write / cop_read / cop_rmw on the owner's task
 *   answering messages)                 address space (only the owner writes it; any task
 *                                       reads it or adds to it with cop_rmw)
 *   pvm_pk / upk of the data         -> none: the data array is passed to the call
 * What a mechanical port meets:
 *   - tags: PVM tags only label messages; here they are addresses (see Tags).
 *     Consecutive small tags with arrays overlap: CopErrTagOverlap at the call;
 *     a tag + count beyond the group's window (4096 words by default):
 *     CopErrAddressRange (use smaller tags, or fewer, larger windows with
 *     CopGroupWindows); the same tags in different groups (row and column groups)
 *     are harmless, as in PVM, up to CopGroupWindows-1 group names (then
 *     CopErrNoWindow at the new group's first call);
 *   - tasks must agree on each call's count, datatype, function and root, as in
 *     PVM. cop_gather/cop_scatter check it: CopErrMismatch on every task when they
 *     disagree (their first barrier carries the check). cop_reduce, cop_barrier
 *     and cop_bcast have no synchronisation to carry a check without adding to
 *     their cost; what is caught: contributions to one reduction with different
 *     functions or datatypes (the controller refuses the differing ones,
 *     CopErrMismatch to their tasks, and the roots get CopErrMismatch instead of
 *     a result); tasks of one host that disagree on a reduction's count,
 *     function or datatype, a barrier's members or a broadcast's count or
 *     datatype never share the host area (they time out, CopErrTimeout). A
 *     count or datatype that differs between hosts is caught by the operation
 *     identity (above): CopErrMismatch, never the first elements of a longer array;
 *   - cop_bcast's sender need not be a member of the group (the thesis allows it):
 *     every member receives its data, whether it names the sender or passes -1;
 *   - a PVM receive matches any tag with -1; cop_bcast/cop_mcast receive exactly
 *     'msgtag' and 'count' elements of 'datatype' (the sender's);
 *   - every member calls the collective (the sender too, with COP_SEND); a
 *     receiver that is not a member or recipient gets PvmNotInGroup;
 *   - PVM_FLOAT travels as a double; PVM_BYTE, PVM_SHORT, PVM_CPLX are not
 *     types here (PvmBadParam); PvmProduct has no hardware;
 *   - shared variables live in 256 words per task; a write to another task's
 *     space is CopErrProtection;
 *   - waits are bounded (CopTimeout, default 10 s) where PVM waits forever;
 *   - groups (CopGroupCache, the default): a member keeps each group's tids and channels
 *     and asks the group server again only when a change reaches it: libcop's own
 *     pvm_joingroup and pvm_lvgroup (they take the place of libgpvm3.so's; the real call,
 *     then a notice to the group's members in a PVM context of libcop's own, applied by
 *     a PVM message handler of libcop's, pvm_addmhf) and a PvmTaskExit notify on each
 *     member. A program that leaves PVM (pvm_exit) and enrols again calls cop_exit and
 *     cop_mytid again. A change is seen by a member's next call when the notice arrived
 *     first: PVM keeps one sender's messages in order, so a program that
 *     tells its tasks of a change through the changed task or PVM's barrier is covered.
 *     Not seen (a stale view: CopErrTimeout, or a result that misses a member who
 *     joined): a join or leave by a task not linked with libcop or linked with libgpvm3's
 *     static archive (that one fails to link: duplicate pvm_joingroup), or a notice
 *     overtaken by a message relayed through a third task on another host. Such programs
 *     set CopGroupCache 0 (the group server asked on every call, 1 + members round
 *     trips). A task that is not a member (a cop_bcast sender) asks the group server each
 *     call. A frozen group (pvm_freezegroup) that a member leaves is dead to PVM and no
 *     notice reaches the others: their collectives on it end in CopErrTimeout.
 *     CopStaticGroups keeps the first fetch whatever changes (the thesis's static groups).
 *     Not done: tasks of one node in a group that changes; one that joined later has made
 *     fewer calls on a tag than the node's earlier members, and they do not meet in the
 *     host area (CopErrTimeout; so since before CopGroupCache, whatever the option).
 *
 * A task reaches its host's channel through the driver copdrv, found by the
 * environment variable COP_DRIVER (the driver's directory, default
 * $TMPDIR/copbench-cop or /tmp/copbench-cop). COP_ACCESS=normal|direct picks
 * the access mode at enrollment (default direct); cop_setopt changes it.
 *
 * Jobs (seed 000 ch. V, partitions): every task belongs to a job, named at
 * cop_mytid by COP_JOB (the launchers set it: scripts/cop-stack, suite/launch),
 * else the Slurm job (SLURM_CLUSTER_NAME and SLURM_JOB_ID), else the PVM virtual
 * machine: a random nonce its first task puts in PVM's mailbox (persistent, name
 * copbench.cop.job), with the user and the master host, so two virtual machines
 * (two private pvmds of one user on one host) never share a job. copd gives each job its own partition (PPN) on the controller, the
 * same on every node, for as long as a task of the job is enrolled (a task
 * whose node's link lost copd's lease counts for one more lease, for its
 * copdrv to enrol it again: its job keeps its partition's words): masks,
 * GAS words, task address spaces and results of one job are out of reach of
 * every other job's tasks (their commands naming it get CopErrPartition), even
 * on the same channel and with the same tags. A job belongs to the user whose
 * task opened it (another user's task naming it: CopErrNotPermitted), and
 * copdrv admits only its job's user. Tasks that are to cooperate must name the
 * same job. Two jobs of one virtual machine using a PVM group of the same name: each
 * job's calls take only its own tasks as the group's members (a task publishes its
 * partition with its place, table mapping; another partition's is left out), with
 * PVM's instance numbers (roots) as they are, and a count (cop_barrier) counts them.
 * Two levels: the level-2 copd gives the partitions of the whole system, so a job has
 * one PPN on every level-1 controller and at the level 2, and two jobs never share one
 * there either (a level-1 asks its level 2 for a job it does not hold yet: a task's
 * first cop_mytid of a job on a level-1 costs one more round trip). A task's epoch
 * there names both its job's partition at the level 2 and its level-1 copd's life
 * (its task address space is there): a restart of either gives CopErrEpochLost.
 */
#ifndef COP_COP_H
#define COP_COP_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Reduction functions of Table I (cop_reduce 'func') ---- */
#define COP_SUM 1  /* integers: SUMI32/64; PVM_FLOAT, PVM_DOUBLE: SUMF (FP unit) */
#define COP_MAX 2
#define COP_MIN 3
#define COP_AND 4  /* integers only */
#define COP_OR 5   /* integers only */
#define COP_EXOR 6 /* integers only */

/* ---- 'mode' of cop_write, cop_read, cop_rmw ---- */
#define COP_NORMAL 0 /* no channel lock: other channels may be serviced between elements */
#define COP_URGENT 1 /* LOCK ... UNLOCK around the whole array: atomic, stalls other channels */

/* ---- 'mode' of cop_bcast, cop_mcast ---- */
#define COP_SEND 0
#define COP_RECV 1

/* ---- cop_setopt/cop_getopt 'what' and values ---- */
#define CopStaticGroups 1 /* 1: a group's tids are fetched once, when 'count' members have
                             joined, and kept for good, whatever changes later (the thesis's
                             static groups); 0 (default): see CopGroupCache */
#define CopMapping 2      /* how a tid names its channel and task number (changing it, or
                             CopAccess, enrols the task again: do it before its groups are used) */
#define CopMapDirect 0    /*   CHNO = the tid's H field, TKNO = its L field (one pvmd per host,
                               hosts added to the virtual machine in channel order) */
#define CopMapTable 1     /*   (default) a table every task publishes at enrollment (PVM mailbox) */
#define CopAccess 3       /* how this task reaches the channel: */
#define CopAccessNormal 0 /*   read/write requests through the driver (two copies each way) */
#define CopAccessDirect 1 /*   (default) the channel window mapped into the task, no copies */
#define CopTimeout 4      /* milliseconds a call waits for the link, or for the other tasks
                             of its host, before CopErrTimeout (default 10000; 0 = no limit
                             while the link is alive) */
#define CopGroupWindows 5 /* windows the GAS is cut into, one per group name (see Tags): 1, 2,
                             4, ... 64 (default 16, or $COP_GROUP_WINDOWS at cop_mytid); every
                             task of the virtual machine must use the same count (else
                             CopErrMismatch at its first group operation). 1: the task's one
                             group has the whole GAS, a second group name gets CopErrNoWindow */
#define CopGroupCache 6   /* without CopStaticGroups: 1 (default) a member keeps each group's tids
                             and channels and asks the group server again only when a join, a
                             leave or a member's exit reaches it (see "Porting": changes it
                             cannot see); 0: asked of the group server on every call */

/* ---- cop_notify 'what' beside PVM's PvmTaskExit, PvmHostDelete, PvmHostAdd ---- */
#define CopChannelDown 100 /* a PVM message with 'msgtag' (one int: the error code) is sent to
                              the calling task when its channel fails */

/* ---- Error codes (PVM's codes pass through unchanged) ---- */
#define CopErrUnknownOpcode -101
#define CopErrWordCount -102
#define CopErrReservedBits -103
#define CopErrChannelRange -104
#define CopErrAddressRange -105 /* tag + count beyond the controller's address space */
#define CopErrProtection -106   /* write to a task address space the task does not own */
#define CopErrPartition -107
#define CopErrMaskInUse -108    /* terminal-count/broadcast mask entry busy (overlapping tags) */
#define CopErrPrivilege -109
#define CopErrNoMask -110
#define CopErrNotParticipant -111
#define CopErrNotLocked -112
#define CopErrBadMask -113
#define CopErrTimeout -114      /* link: no answer within the transmit timer / CopTimeout */
#define CopErrChecksum -115
#define CopErrRetryLimit -116   /* link: resend limit reached */
#define CopErrLinkDown -117     /* copd or copdrv is gone, or a channel of the operation failed */
#define CopErrOverflow -118     /* the channel's out-of-context buffer was full: a message was lost */
#define CopErrTaskEnded -119    /* a task taking part in the operation ended before it completed: the
                                   operation is void (the controller's end_task) */
#define CopErrLockTimeout -145 /* this task's LOCK (COP_URGENT) was held longer than copd's deadlock
                                   timer (copd --lock-limit-ms): the controller took it back so the
                                   other channels run again; the rest of the locked sequence is
                                   refused with this code (nothing of it after the take-back ran) */
#define CopErrVoided -146      /* the operation was voided: a participant's earlier call on these
                                   words had failed (timeout, link down), and before using them again
                                   it had the controller void what was left in progress there, so
                                   no call completes an operation with another round's values */
#define CopErrEpochLost -160   /* what this task had on the controller is gone: copd restarted, or its
                                   job's partition was freed (every task of the job past its lease,
                                   a network partition longer than two leases) and taken again since
                                   the task joined. Every later call of the task gets this code, never
                                   the new partition's zeros, until it joins again knowingly: cop_exit,
                                   then cop_mytid (a new task number in the job's partition as it is
                                   now; the program restores what it needs there). See "Epochs". */
#define CopErrNoDriver -130     /* no copdrv at COP_DRIVER */
#define CopErrNotEnrolled -131  /* cop_mytid has not succeeded */
#define CopErrBadType -132      /* datatype/function pair the hardware does not have */
#define CopErrMapping -133      /* the selected tid mapping does not hold for some task */
#define CopErrTagOverlap -134   /* the call's GAS range (tag .. tag+count-1) overlaps a range another
                                   tag of this task's group operations uses and that may still be in
                                   progress (no full cop_barrier of that group since): see "Tags" */
#define CopErrPartnerDied -135  /* a local task doing this operation's channel part died (the host
                                   area's slot is cleared; the next call on the tag starts afresh) */
#define CopErrNoWindow -136     /* every group window of the GAS is taken by other group names (see
                                   Tags, CopGroupWindows): the group cannot have its own tags */
#define CopErrMismatch -137     /* the tasks of a collective disagree on its count, datatype or root
                                   (cop_gather, cop_scatter: every task of the call), on a
                                   reduction's function or datatype (the differing tasks and the
                                   roots: the controller's NACK mismatch), on the operation's
                                   identity (another round, job, count or datatype: see "Operation
                                   identity"), or on CopGroupWindows; nothing is delivered */
#define CopErrNotPermitted -150 /* cop_mytid: copdrv admits only its job's user (SO_PEERCRED; copdrv's
                                   uid or --allow-uid, and root), or the job id (COP_JOB) is another
                                   user's job on this controller */
#define CopErrNoPartition -151  /* cop_mytid: every partition (PPN) of the controller belongs to another
                                   job (copd --partitions) */

/* ---- Task initialization and management ---- */
/* Enrols the task on its host's channel (a task number, TKNO, from the driver) and
 * clears its task address space: a fresh task reads zeros there, whatever a task that
 * had the TKNO before left behind. */
int cop_mytid(void);
int cop_setopt(int what, int val); /* returns the previous value */
int cop_getopt(int what);
int cop_notify(int what, int msgtag, int cnt, int *tids);

/* ---- Shared memory: task address spaces on the controller ---- */
int cop_write(void *data, int count, int datatype, int tid, int msgtag, int mode);
int cop_read(void *data, int count, int datatype, int tid, int msgtag, int mode);
int cop_rmw(void *data, int count, int datatype, int tid, int msgtag, int mode);

/* ---- Group operations ---- */
int cop_bcast(void *data, int count, int datatype, char *group, int msgtag, int mode, int srctid);
int cop_mcast(void *data, int count, int datatype, int *tids, int numtasks, int msgtag, int mode,
              int srctid);
int cop_barrier(char *group, int count, int msgtag);
/* 'roots' holds group instance numbers (as pvm_reduce's root), 'rootcount' of them. */
int cop_reduce(int func, void *data, int datatype, int count, int msgtag, char *group, int *roots,
               int rootcount);
/* The thesis names gather and scatter without prototypes; these follow pvm_gather/pvm_scatter.
 * Data passes through task address spaces: each member's slice at 'msgtag' of its own TAS
 * (gather), the root's whole array at 'msgtag' of the root's TAS (scatter). */
int cop_gather(void *result, void *data, int count, int datatype, int msgtag, char *group,
               int rootginst);
int cop_scatter(void *result, void *data, int count, int datatype, int msgtag, char *group,
                int rootginst);
/* Every member calls it: the members' generations of (group, msgtag) become one common
 * value (see "Operation identity"). 0, or the error of the reduction it does. */
int cop_resync(char *group, int msgtag);

/* ---- copbench additions (not in the thesis) ---- */
const char *cop_strerror(int code);
int cop_exit(void); /* leaves the channel (the driver frees this task's TKNO) */
/* The controller's modelled-hardware clock (cycles of P_CLK) as of the last message this
 * task received from it; benchmarks take differences to give modelled COP times. */
int cop_modelled_cycles(unsigned long long *cycles);
/* This task's channel (CHNO) and task number (TKNO), once enrolled. */
int cop_channel(int *chno, int *tkno);

#ifdef __cplusplus
}
#endif
#endif /* COP_COP_H */
