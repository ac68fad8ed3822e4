/* relaunch_hipgraph.h: the inspection API of relaunch's hipGraph
 * interposer (librelaunch_hipgraph.so, loaded with LD_PRELOAD).
 *
 * A process running under the interposer asks which of its graph execs
 * relaunch replays and why the others run on the real HIP, how many
 * launches went each way, and may switch replay off and on at run time.
 *
 * The functions live in the interposer, not in a library the application
 * links: resolve them with dlsym(RTLD_DEFAULT, "rl_hipgraph_api_version")
 * and friends, so the same binary runs without the interposer (the
 * symbols are then absent). Declarations only; nothing here needs HIP's
 * headers (an exec is HIP's hipGraphExec_t, passed as void *).
 *
 * Structs are versioned by size: set struct_size to sizeof the struct you
 * have; the interposer fills no more than that. Every call is
 * thread-safe and never aborts the process. */
#ifndef RELAUNCH_HIPGRAPH_H
#define RELAUNCH_HIPGRAPH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RL_HIPGRAPH_API_VERSION 1

/* Statuses. */
#define RL_HIPGRAPH_OK 0
#define RL_HIPGRAPH_INVALID_ARGUMENT 1 /* null struct or struct_size too small */
#define RL_HIPGRAPH_UNKNOWN_EXEC 2     /* not instantiated under the interposer, or destroyed */
#define RL_HIPGRAPH_SHADOW_DISABLED 3  /* an internal panic disabled the interposer: all on HIP */

/* What keeps an exec on the real HIP (the reason text says exactly what). */
typedef enum rl_hipgraph_reason {
    RL_HIPGRAPH_REPLAYED = 0,      /* relaunch replays it */
    RL_HIPGRAPH_DISABLED = 1,      /* replay switched off (rl_hipgraph_set_replay) */
    RL_HIPGRAPH_DEVICE = 2,        /* opening the relaunch device, or not the application's GPU */
    RL_HIPGRAPH_DEVICE_LOST = 3,   /* a memory fault lost the GPU for relaunch */
    RL_HIPGRAPH_MODULE = 4,        /* the module or code object */
    RL_HIPGRAPH_KERNEL = 5,        /* a kernel node's launch (arguments, geometry, function) */
    RL_HIPGRAPH_TRANSFER = 6,      /* a memset or memcpy node */
    RL_HIPGRAPH_GRAPH = 7,         /* the graph's structure (host nodes, events, unseen nodes) */
    RL_HIPGRAPH_CAPTURE = 8,       /* stream capture */
    RL_HIPGRAPH_CHANGED = 9,       /* a change through a call the interposer does not follow */
    RL_HIPGRAPH_UPDATE = 10,       /* a patch or update of the exec that is not replayed */
    RL_HIPGRAPH_STREAM_ORDER = 11, /* ordering replays with the stream */
    RL_HIPGRAPH_INTERNAL = 12      /* relaunch or a replay failed, or an internal panic */
} rl_hipgraph_reason_t;

typedef struct rl_hipgraph_exec_info {
    size_t struct_size;         /* in: sizeof(rl_hipgraph_exec_info_t) */
    int32_t replayed;           /* 1: the next launch replays through relaunch */
    int32_t reason;             /* rl_hipgraph_reason_t */
    uint64_t launches_replayed; /* launches relaunch replayed */
    uint64_t launches_on_hip;   /* launches the real hipGraphLaunch ran */
    uint64_t launches_failed;   /* replays that failed (the launch returned an error) */
    size_t reason_len;          /* length of the reason text, without the NUL */
    uint32_t lanes;             /* hardware queues a replay uses (0: not replayed) */
} rl_hipgraph_exec_info_t;

typedef struct rl_hipgraph_counters {
    size_t struct_size; /* in: sizeof(rl_hipgraph_counters_t) */
    uint64_t execs_replayed;
    uint64_t execs_on_hip;
    uint64_t launches_replayed;
    uint64_t launches_on_hip;
    uint64_t launches_failed;
    int32_t replay_enabled;
} rl_hipgraph_counters_t;

/* RL_HIPGRAPH_API_VERSION of the loaded interposer. */
uint32_t rl_hipgraph_api_version(void);

/* Process totals. */
int rl_hipgraph_counters(rl_hipgraph_counters_t *out);

/* Writes up to `capacity` live exec handles (instantiated under the
 * interposer, in handle order) to `out`; returns how many there are
 * (SIZE_MAX when the interposer is disabled). Call with (NULL, 0) to size
 * the array. */
size_t rl_hipgraph_execs(void **out, size_t capacity);

/* One exec: replayed or not, the reason's category, its text (into
 * `reason`, up to reason_capacity - 1 bytes and a NUL; may be NULL) and
 * its launch counts. */
int rl_hipgraph_exec_info(void *exec, rl_hipgraph_exec_info_t *info, char *reason,
                          size_t reason_capacity);

/* Switch replay off (0) or on (non-zero); returns whether it was on. Off,
 * every launch runs on the real HIP; execs keep following the
 * application's updates, so switching back on replays them current. */
int rl_hipgraph_set_replay(int enabled);

#ifdef __cplusplus
}
#endif

#endif /* RELAUNCH_HIPGRAPH_H */
