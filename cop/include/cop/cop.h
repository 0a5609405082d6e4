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
 *     element. Concurrent operations must use tags that do not overlap.
 *
 * A task reaches its host's channel through the driver copdrv, found by the
 * environment variable COP_DRIVER (the driver's directory, default
 * $TMPDIR/copbench-cop or /tmp/copbench-cop). COP_ACCESS=normal|direct picks
 * the access mode at enrollment (default direct); cop_setopt changes it.
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
                             joined, and kept; 0 (default): asked of the group server each call */
#define CopMapping 2      /* how a tid names its channel and task number (changing it, or
                             CopAccess, enrols the task again: do it before its groups are used) */
#define CopMapDirect 0    /*   CHNO = the tid's H field, TKNO = its L field (one pvmd per host,
                               hosts added to the virtual machine in channel order) */
#define CopMapTable 1     /*   (default) a table every task publishes at enrollment (PVM mailbox) */
#define CopAccess 3       /* how this task reaches the channel: */
#define CopAccessNormal 0 /*   read/write requests through the driver (two copies each way) */
#define CopAccessDirect 1 /*   (default) the channel window mapped into the task, no copies */
#define CopTimeout 4      /* milliseconds a call waits for the link before CopErrTimeout
                             (default 10000; 0 = wait as long as the link is alive) */

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
#define CopErrNoDriver -130     /* no copdrv at COP_DRIVER */
#define CopErrNotEnrolled -131  /* cop_mytid has not succeeded */
#define CopErrBadType -132      /* datatype/function pair the hardware does not have */
#define CopErrMapping -133      /* the selected tid mapping does not hold for some task */

/* ---- Task initialization and management ---- */
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
