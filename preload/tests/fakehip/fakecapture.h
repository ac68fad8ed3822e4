/* The fake HIP's stream capture, module launches and events: part of
 * fakehip.c (its statics: the graphs, add_node, the stream helpers), kept
 * in its own file for size. Included once, by fakehip.c, after the graph
 * calls. */
#ifndef RELAUNCH_FAKECAPTURE_H
#define RELAUNCH_FAKECAPTURE_H
/* ---- Stream capture and module launches (helper "capture") ----
 * A capture table keyed by stream: hipStreamBeginCapture starts a graph,
 * hipModuleLaunchKernel on a capturing stream records a kernel node that
 * depends on the stream's pending dependencies (the node captured before
 * it, plus nodes joined through hipStreamWaitEvent), hipStreamEndCapture
 * returns the graph. Events model the fork/join of cross-stream capture:
 * a stream that waits on an event recorded during a capture joins that
 * capture. Outside a capture, hipModuleLaunchKernel only counts
 * (fakehip_kernel_launches()). The graph is built with static helpers, not
 * through the exported hipGraph* calls, which the interposer would see. */
#define MAX_CAPTURES 16
#define MAX_DEPS 8
struct capture {
    void *stream;
    struct graph *graph;
    int origin; /* began the capture (1) or joined it (0) */
    int invalidated; /* an illegal call during the capture (EndCapture fails) */
    size_t ndeps;
    struct node *deps[MAX_DEPS];
};
struct event { struct graph *graph; size_t ndeps; struct node *deps[MAX_DEPS]; struct fake_event_state done; };

static struct capture captures[MAX_CAPTURES];
static long kernel_launches;

long fakehip_kernel_launches(void) { return kernel_launches; }

static struct capture *capture_of(void *stream) {
    for (int i = 0; i < MAX_CAPTURES; i++)
        if (captures[i].graph && captures[i].stream == stream) return &captures[i];
    return NULL;
}

static struct capture *capture_slot(void) {
    for (int i = 0; i < MAX_CAPTURES; i++)
        if (!captures[i].graph) return &captures[i];
    return NULL;
}

hipError_t hipStreamBeginCapture(void *stream, hipStreamCaptureMode mode) {
    if ((unsigned)mode > hipStreamCaptureModeRelaxed || capture_of(stream))
        return hipErrorInvalidValue;
    struct capture *c = capture_slot();
    if (!c) return hipErrorOutOfMemory;
    memset(c, 0, sizeof *c);
    c->stream = stream;
    c->graph = calloc(1, sizeof(struct graph));
    c->origin = 1;
    return hipSuccess;
}

/* Capture into an existing graph (dependencies ignored: the fake only
 * counts). */
hipError_t hipStreamBeginCaptureToGraph(void *stream, void *graph, void *const *deps, const void *data, size_t ndeps,
                                        hipStreamCaptureMode mode) {
    (void)deps; (void)data; (void)ndeps;
    if (!graph || (unsigned)mode > hipStreamCaptureModeRelaxed || capture_of(stream)) return hipErrorInvalidValue;
    struct capture *c = capture_slot();
    if (!c) return hipErrorOutOfMemory;
    memset(c, 0, sizeof *c);
    c->stream = stream;
    c->graph = graph;
    c->origin = 1;
    return hipSuccess;
}

hipError_t hipStreamEndCapture(void *stream, void **graph) {
    struct capture *c = capture_of(stream);
    if (!graph || !c || !c->origin) return hipErrorInvalidValue;
    struct graph *g = c->graph;
    int invalidated = c->invalidated;
    for (int i = 0; i < MAX_CAPTURES; i++) /* joined streams leave with it */
        if (captures[i].graph == g) memset(&captures[i], 0, sizeof captures[i]);
    if (invalidated) {
        *graph = NULL;
        return 901; /* hipErrorStreamCaptureInvalidated */
    }
    *graph = g;
    return hipSuccess;
}

/* Synchronizing a capturing stream is illegal: refused with
 * hipErrorStreamCaptureUnsupported (900) and the capture invalidated, as
 * HIP does. */
hipError_t hipStreamSynchronize(void *stream) {
    struct capture *c = capture_of(stream);
    if (c) {
        c->invalidated = 1;
        return 900;
    }
    fake_stream_sync(stream);
    return hipSuccess;
}

/* Appends a node to capture `c`'s graph after the stream's dependencies. */
static hipError_t capture_append(struct capture *c, const hipKernelNodeParams *params) {
    struct graph *g = c->graph;
    if (g->nodes == MAX_NODES) return hipErrorOutOfMemory;
    struct node *n = calloc(1, sizeof *n);
    if (params) n->params = *params;
    g->node[g->nodes++] = n;
    g->edges += c->ndeps;
    c->ndeps = 1;
    c->deps[0] = n;
    return hipSuccess;
}

/* fakestream.h's async copies and fills on a capturing stream: a node. */
static int fake_capture_transfer(void *stream) {
    struct capture *c = capture_of(stream);
    return c && capture_append(c, NULL) == hipSuccess;
}

#ifdef FAKEHIP_HOST_GRAPHS
/* Built with FAKEHIP_HOST_GRAPHS (a second libamdhip64.so for the
 * lost-device test): the stream memory operations are left out, and a
 * graph launch runs its `counter` nodes on the host, each adding
 * grid x block work-items to the u32 its first argument points at, so an
 * app whose graphs fell through to "HIP" still gets results. An argument
 * outside memory this fake allocated is reported as HIP reports a GPU
 * fault (hipErrorIllegalAddress), without touching it. */
enum { hipErrorIllegalAddress = 700 };

static hipError_t host_run(const struct graph *g) {
    for (size_t i = 0; i < g->nodes; i++) {
        const hipKernelNodeParams *p = &g->node[i]->params;
        const struct function *f = p->func;
        if (!f || strcmp(f->name, "counter") != 0 || !p->kernelParams) continue;
        uint32_t *counter = *(uint32_t **)p->kernelParams[0];
        if (!allocated(counter, sizeof *counter)) return hipErrorIllegalAddress;
        *counter += p->gridDim.x * p->gridDim.y * p->gridDim.z * p->blockDim.x * p->blockDim.y *
                    p->blockDim.z;
    }
    return hipSuccess;
}
#endif

/* Counted (the fake never runs kernels, unless built to, above); on a
 * capturing stream the launch becomes a node of the capture (a
 * child-graph node in HIP). */
hipError_t hipGraphLaunch(void *exec, void *stream) {
    if (!exec) return hipErrorInvalidHandle;
    struct capture *c = capture_of(stream);
    if (c) return capture_append(c, NULL);
    launches++;
#ifdef FAKEHIP_HOST_GRAPHS
    fake_stream_sync(stream);
    return host_run(((struct exec *)exec)->graph);
#else
    return hipSuccess;
#endif
}

hipError_t hipStreamIsCapturing(void *stream, hipStreamCaptureStatus *status) {
    if (!status) return hipErrorInvalidValue;
    *status = capture_of(stream) ? hipStreamCaptureStatusActive : hipStreamCaptureStatusNone;
    return hipSuccess;
}

/* A launch: a node of the stream's capture, else counted. Static, so the
 * two launch entry points share it without calling each other through the
 * exported (interposable) symbols. */
static hipError_t launch(void *f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                         unsigned int by, unsigned int bz, unsigned int shared, void *stream,
                         void **kernel_params, void **extra) {
    if (!f) return hipErrorInvalidValue; /* both argument forms may be null: a kernel without arguments */
    struct capture *c = capture_of(stream);
    if (!c) {
        kernel_launches++;
        return hipSuccess;
    }
    hipKernelNodeParams p = {{bx, by, bz}, extra, f, {gx, gy, gz}, kernel_params, shared};
    return capture_append(c, &p);
}

hipError_t hipModuleLaunchKernel(void *f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                 unsigned int by, unsigned int bz, unsigned int shared, void *stream,
                                 void **kernel_params, void **extra) {
    return launch(f, gx, gy, gz, bx, by, bz, shared, stream, kernel_params, extra);
}

/* hipLaunchKernel (a host stub, dim3 by value, size_t dynamic LDS). */
hipError_t hipLaunchKernel(const void *stub, dim3 grid, dim3 block, void **args, size_t shared, void *stream) {
    if (shared > 0xffffffffu) return hipErrorInvalidValue;
    return launch((void *)stub, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned int)shared, stream,
                  args, NULL);
}

hipError_t hipEventCreate(void **event) {
    if (!event) return hipErrorInvalidValue;
    *event = calloc(1, sizeof(struct event));
    return hipSuccess;
}

hipError_t hipEventDestroy(void *event) { free(event); return hipSuccess; }

hipError_t hipEventRecord(void *event, void *stream) {
    struct event *e = event;
    if (!e) return hipErrorInvalidValue;
    struct capture *c = capture_of(stream);
    e->graph = NULL;
    e->ndeps = 0;
    if (c) {
        e->graph = c->graph;
        e->ndeps = c->ndeps;
        memcpy(e->deps, c->deps, sizeof e->deps);
        return hipSuccess;
    }
    /* Outside a capture: completes when the stream reaches it. */
    return fake_event_record(&e->done, stream);
}

hipError_t hipEventSynchronize(void *event) {
    struct event *e = event;
    if (!e) return hipErrorInvalidValue;
    fake_event_sync(&e->done);
    return hipSuccess;
}

hipError_t hipStreamWaitEvent(void *stream, void *event, unsigned int flags) {
    struct event *e = event;
    if (!e || flags) return hipErrorInvalidValue;
    if (!e->graph) return hipSuccess; /* recorded outside a capture: nothing to join */
    struct capture *c = capture_of(stream);
    if (!c) {
        if (!(c = capture_slot())) return hipErrorOutOfMemory;
        memset(c, 0, sizeof *c);
        c->stream = stream;
        c->graph = e->graph;
    } else if (c->graph != e->graph) {
        return hipErrorInvalidValue; /* merging two captures: not modelled */
    }
    for (size_t i = 0; i < e->ndeps; i++) {
        int seen = 0;
        for (size_t j = 0; j < c->ndeps; j++) seen |= c->deps[j] == e->deps[i];
        if (!seen && c->ndeps < MAX_DEPS) c->deps[c->ndeps++] = e->deps[i];
    }
    return hipSuccess;
}
/* ---- end of stream capture ---- */

#endif
