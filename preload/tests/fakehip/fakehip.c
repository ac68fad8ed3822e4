/* A stand-in "real HIP" (libamdhip64.so) for the interposer's tests, on a
 * machine without HIP. It runs over the HSA runtime named by
 * RELAUNCH_HSA_LIB (the simulated device's cdylib): hipMalloc allocates
 * fine-grained host memory that the GPU agent may access, hipMemcpy is a
 * memcpy (simulated device memory is host memory). Modules keep their
 * names; graphs record nodes and edges and count calls. hipGraphLaunch
 * does not run kernels: it only counts (fakehip_launches()), so a test can
 * tell a relaunch replay (effects visible, count unchanged) from a
 * fall-through (count + 1). Only what the test app needs is here. Its
 * streams are in fakestream.h, stream capture, launches and events in
 * fakecapture.h (one translation unit: they share its statics). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_min.h"
#include "fakestream.h"

enum { hipSuccess = 0, hipErrorInvalidValue = 1, hipErrorOutOfMemory = 2,
       hipErrorNotInitialized = 3, hipErrorInvalidHandle = 400 };

typedef struct { uint64_t handle; } hsa_agent_t;
typedef struct { uint64_t handle; } hsa_amd_memory_pool_t;
typedef int hsa_status_t;

static struct {
    void *lib;
    hsa_agent_t cpu, gpu;
    int have_cpu, have_gpu;
    hsa_amd_memory_pool_t pool;
    int have_pool;
    hsa_status_t (*agent_get_info)(hsa_agent_t, uint32_t, void *);
    hsa_status_t (*pool_get_info)(hsa_amd_memory_pool_t, uint32_t, void *);
    hsa_status_t (*pool_allocate)(hsa_amd_memory_pool_t, size_t, uint32_t, void **);
    hsa_status_t (*pool_free)(void *);
    hsa_status_t (*allow_access)(uint32_t, const hsa_agent_t *, const uint32_t *, const void *);
} hsa;

static long launches, instantiations;

long fakehip_launches(void) { return launches; }
long fakehip_instantiations(void) { return instantiations; }

static hsa_status_t on_agent(hsa_agent_t agent, void *data) {
    (void)data;
    uint32_t type = 99;
    hsa.agent_get_info(agent, 17 /* HSA_AGENT_INFO_DEVICE */, &type);
    if (type == 0 && !hsa.have_cpu) { hsa.cpu = agent; hsa.have_cpu = 1; }
    if (type == 1 && !hsa.have_gpu) { hsa.gpu = agent; hsa.have_gpu = 1; }
    return 0;
}

static hsa_status_t on_pool(hsa_amd_memory_pool_t pool, void *data) {
    (void)data;
    uint32_t segment = 99, flags = 0;
    uint8_t alloc = 0;
    hsa.pool_get_info(pool, 0 /* SEGMENT */, &segment);
    hsa.pool_get_info(pool, 1 /* GLOBAL_FLAGS */, &flags);
    hsa.pool_get_info(pool, 5 /* RUNTIME_ALLOC_ALLOWED */, &alloc);
    if (segment == 0 && (flags & 2 /* FINE_GRAINED */) && alloc) {
        hsa.pool = pool;
        hsa.have_pool = 1;
        return 1; /* HSA_STATUS_INFO_BREAK */
    }
    return 0;
}

#define LOAD(field, name) \
    if (!(*(void **)&hsa.field = dlsym(hsa.lib, name))) { \
        fprintf(stderr, "fakehip: %s missing in the HSA runtime\n", name); return hipErrorNotInitialized; }

hipError_t hipInit(unsigned int flags) {
    (void)flags;
    if (hsa.lib) return hipSuccess;
    const char *path = getenv("RELAUNCH_HSA_LIB");
    if (!path) { fprintf(stderr, "fakehip: set RELAUNCH_HSA_LIB\n"); return hipErrorNotInitialized; }
    hsa.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!hsa.lib) { fprintf(stderr, "fakehip: %s\n", dlerror()); return hipErrorNotInitialized; }
    hsa_status_t (*init)(void);
    hsa_status_t (*iterate_agents)(hsa_status_t (*)(hsa_agent_t, void *), void *);
    hsa_status_t (*iterate_pools)(hsa_agent_t, hsa_status_t (*)(hsa_amd_memory_pool_t, void *), void *);
    *(void **)&init = dlsym(hsa.lib, "hsa_init");
    *(void **)&iterate_agents = dlsym(hsa.lib, "hsa_iterate_agents");
    *(void **)&iterate_pools = dlsym(hsa.lib, "hsa_amd_agent_iterate_memory_pools");
    if (!init || !iterate_agents || !iterate_pools) return hipErrorNotInitialized;
    LOAD(agent_get_info, "hsa_agent_get_info");
    LOAD(pool_get_info, "hsa_amd_memory_pool_get_info");
    LOAD(pool_allocate, "hsa_amd_memory_pool_allocate");
    LOAD(pool_free, "hsa_amd_memory_pool_free");
    LOAD(allow_access, "hsa_amd_agents_allow_access");
    if (init() != 0) return hipErrorNotInitialized;
    iterate_agents(on_agent, NULL);
    if (!hsa.have_cpu || !hsa.have_gpu) return hipErrorNotInitialized;
    iterate_pools(hsa.cpu, on_pool, NULL);
    return hsa.have_pool ? hipSuccess : hipErrorNotInitialized;
}

/* The most recent allocations, freed ones included (what a host-run graph
 * may touch, see FAKEHIP_HOST_GRAPHS); slots are reused round-robin. */
#define MAX_ALLOCS 256
static struct { char *base; size_t size; } allocs[MAX_ALLOCS];
static size_t next_alloc;

__attribute__((unused)) static int allocated(const void *p, size_t len) {
    for (size_t i = 0; i < MAX_ALLOCS; i++)
        if (allocs[i].base && (const char *)p >= allocs[i].base &&
            (const char *)p + len <= allocs[i].base + allocs[i].size)
            return 1;
    return 0;
}

/* Static: the allocators share it without calling each other through the
 * exported (interposable) symbols. */
static hipError_t pool_alloc(void **ptr, size_t size) {
    if (!ptr || !hsa.have_pool) return hipErrorInvalidValue;
    if (hsa.pool_allocate(hsa.pool, size, 0, ptr) != 0) return hipErrorOutOfMemory;
    if (hsa.allow_access(1, &hsa.gpu, NULL, *ptr) != 0) return hipErrorInvalidValue;
    memset(*ptr, 0, size);
    allocs[next_alloc].base = *ptr;
    allocs[next_alloc].size = size;
    next_alloc = (next_alloc + 1) % MAX_ALLOCS;
    return hipSuccess;
}

hipError_t hipMalloc(void **ptr, size_t size) { return pool_alloc(ptr, size); }

hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags) {
    (void)flags;
    return pool_alloc(ptr, size);
}

/* Stream-ordered and managed allocations: pool memory like hipMalloc's
 * (the fake's streams need no ordering for them). */
hipError_t hipMallocAsync(void **ptr, size_t size, void *stream) {
    (void)stream;
    return pool_alloc(ptr, size);
}

hipError_t hipFreeAsync(void *ptr, void *stream) {
    fake_stream_sync(stream);
    return ptr && hsa.pool_free(ptr) != 0 ? hipErrorInvalidValue : hipSuccess;
}

hipError_t hipMallocManaged(void **ptr, size_t size, unsigned int flags) {
    (void)flags;
    return pool_alloc(ptr, size);
}

/* Registration only succeeds; the device pointer it reports is another
 * address than the host one (as HIP's may be), so a copy naming the host
 * address must not be replayed. */
hipError_t hipHostRegister(void *ptr, size_t size, unsigned int flags) {
    (void)flags;
    return ptr && size ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hipHostUnregister(void *ptr) { return ptr ? hipSuccess : hipErrorInvalidValue; }

hipError_t hipHostGetDevicePointer(void **device, void *host, unsigned int flags) {
    if (!device || !host || flags) return hipErrorInvalidValue;
    *device = (char *)host + ((size_t)1 << 40);
    return hipSuccess;
}

hipError_t hipHostFree(void *ptr) { return ptr && hsa.pool_free(ptr) != 0 ? hipErrorInvalidValue : hipSuccess; }

hipError_t hipFree(void *ptr) { return ptr && hsa.pool_free(ptr) != 0 ? hipErrorInvalidValue : hipSuccess; }

/* Synchronous: after the work queued on every stream (HIP's blocking
 * legacy default stream). */
hipError_t hipMemcpy(void *dst, const void *src, size_t bytes, int kind) {
    (void)kind;
    fake_device_sync();
    memmove(dst, src, bytes);
    return hipSuccess;
}

/* One device, 0, at the simulated gfx1201's PCI address (1201:e0:00.0), or
 * at FAKEHIP_PCI_BUS_ID when set (a test of a mismatched device). */
hipError_t hipGetDevice(int *device) {
    if (!device) return hipErrorInvalidValue;
    *device = 0;
    return hipSuccess;
}

hipError_t hipDeviceGetPCIBusId(char *bus_id, int len, int device) {
    const char *at = getenv("FAKEHIP_PCI_BUS_ID");
    if (!at) at = "1201:e0:00.0";
    if (!bus_id || device != 0 || len <= (int)strlen(at)) return hipErrorInvalidValue;
    strcpy(bus_id, at);
    return hipSuccess;
}

/* Modules: the handle owns the names of kernels asked for. */
struct module { const void *image; };
struct function { struct module *module; char name[64]; };

/* Static: the loaders share it without calling each other through the
 * exported (interposable) symbols. */
static hipError_t load_image(void **module, const void *image) {
    if (!module || !image) return hipErrorInvalidValue;
    struct module *m = calloc(1, sizeof *m);
    m->image = image;
    *module = m;
    return hipSuccess;
}

hipError_t hipModuleLoadData(void **module, const void *image) { return load_image(module, image); }

/* Options are the JIT's: ignored by this fake. */
hipError_t hipModuleLoadDataEx(void **module, const void *image, unsigned int n, void *options, void **values) {
    (void)n; (void)options; (void)values;
    return load_image(module, image);
}

/* The file's bytes are kept for the module's lifetime (leaked: a fake). */
hipError_t hipModuleLoad(void **module, const char *path) {
    if (!module || !path) return hipErrorInvalidValue;
    FILE *file = fopen(path, "rb");
    if (!file) return hipErrorInvalidValue;
    static unsigned char loaded[1 << 20];
    size_t len = fread(loaded, 1, sizeof loaded, file);
    fclose(file);
    if (len == 0) return hipErrorInvalidValue;
    void *copy = malloc(len);
    memcpy(copy, loaded, len);
    return load_image(module, copy);
}

hipError_t hipModuleGetFunction(void **function, void *module, const char *name) {
    if (!function || !module || !name || strlen(name) >= 64) return hipErrorInvalidValue;
    struct function *f = calloc(1, sizeof *f);
    f->module = module;
    strcpy(f->name, name);
    *function = f;
    return hipSuccess;
}

hipError_t hipModuleUnload(void *module) { free(module); return hipSuccess; }

hipError_t hipStreamCreate(void **stream) {
    if (!stream) return hipErrorInvalidValue;
    *stream = fake_stream_new();
    return *stream ? hipSuccess : hipErrorOutOfMemory;
}
hipError_t hipStreamDestroy(void *stream) { fake_stream_sync(stream); return hipSuccess; }

/* Graphs: nodes and edges are recorded (counts only matter). */
#define MAX_NODES 1024
struct node { hipKernelNodeParams params; };
struct graph { size_t nodes, edges; struct node *node[MAX_NODES]; };
struct exec { struct graph *graph; };

hipError_t hipGraphCreate(void **graph, unsigned int flags) {
    (void)flags;
    *graph = calloc(1, sizeof(struct graph));
    return hipSuccess;
}

hipError_t hipGraphDestroy(void *graph) {
    struct graph *g = graph;
    for (size_t i = 0; i < g->nodes; i++) free(g->node[i]);
    free(g);
    return hipSuccess;
}

/* Static, so hipGraphAddEmptyNode adds a node without going through the
 * exported (interposable) hipGraphAddKernelNode: the interposer must not
 * see it (its graph then fails the node-count check). */
static hipError_t add_node(void **node, void *graph, void *const *deps, size_t ndeps,
                           const hipKernelNodeParams *params) {
    struct graph *g = graph;
    if (!node || !g || !params || g->nodes == MAX_NODES || (ndeps && !deps)) return hipErrorInvalidValue;
    struct node *n = calloc(1, sizeof *n);
    n->params = *params;
    g->node[g->nodes++] = n;
    g->edges += ndeps;
    *node = n;
    return hipSuccess;
}

hipError_t hipGraphAddKernelNode(void **node, void *graph, void *const *deps, size_t ndeps,
                                 const hipKernelNodeParams *params) {
    return add_node(node, graph, deps, ndeps, params);
}

/* Changes to nodes after they were added: parameters are kept, the rest
 * is accepted and ignored (the fake never runs kernels). */
hipError_t hipGraphKernelNodeSetParams(void *node, const hipKernelNodeParams *params) {
    if (!node || !params) return hipErrorInvalidValue;
    ((struct node *)node)->params = *params;
    return hipSuccess;
}

hipError_t hipGraphNodeSetEnabled(void *exec, void *node, unsigned int enabled) {
    (void)enabled;
    return exec && node ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hipGraphKernelNodeSetAttribute(void *node, int attr, const void *value) {
    (void)attr;
    return node && value ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hipGraphAddEmptyNode(void **node, void *graph, void *const *deps, size_t ndeps) {
    hipKernelNodeParams none;
    memset(&none, 0, sizeof none);
    return add_node(node, graph, deps, ndeps, &none);
}

/* Not intercepted by the interposer (a node it cannot see). */
hipError_t hipGraphAddMemFreeNode(void **node, void *graph, void *const *deps, size_t ndeps, void *dptr) {
    if (!dptr) return hipErrorInvalidValue;
    hipKernelNodeParams none;
    memset(&none, 0, sizeof none);
    return add_node(node, graph, deps, ndeps, &none); /* static: not through an interposable symbol */
}

/* Counted as one node, as HIP does (the child is not run: the fake never
 * runs graphs). */
hipError_t hipGraphAddChildGraphNode(void **node, void *graph, void *const *deps, size_t ndeps, void *child) {
    if (!child) return hipErrorInvalidValue;
    hipKernelNodeParams none;
    memset(&none, 0, sizeof none);
    return add_node(node, graph, deps, ndeps, &none);
}

/* The callback is not run: the fake never runs graphs. */
hipError_t hipGraphAddHostNode(void **node, void *graph, void *const *deps, size_t ndeps,
                               const hipHostNodeParams *params) {
    if (!params || !params->fn) return hipErrorInvalidValue;
    hipKernelNodeParams none;
    memset(&none, 0, sizeof none);
    return add_node(node, graph, deps, ndeps, &none);
}

/* Memset, memcpy and event nodes: recorded (counts only; the fake never
 * runs graphs). */
hipError_t hipGraphAddMemsetNode(void **node, void *graph, void *const *deps, size_t ndeps,
                                 const hipMemsetParams *params) {
    if (!params || !params->dst) return hipErrorInvalidValue;
    hipKernelNodeParams none;
    memset(&none, 0, sizeof none);
    return add_node(node, graph, deps, ndeps, &none);
}

hipError_t hipGraphAddMemcpyNode(void **node, void *graph, void *const *deps, size_t ndeps,
                                 const hipMemcpy3DParms *params) {
    if (!params) return hipErrorInvalidValue;
    hipKernelNodeParams none;
    memset(&none, 0, sizeof none);
    return add_node(node, graph, deps, ndeps, &none);
}

hipError_t hipGraphAddMemcpyNode1D(void **node, void *graph, void *const *deps, size_t ndeps, void *dst,
                                   const void *src, size_t count, int kind) {
    (void)count; (void)kind;
    if (!dst || !src) return hipErrorInvalidValue;
    hipKernelNodeParams none;
    memset(&none, 0, sizeof none);
    return add_node(node, graph, deps, ndeps, &none);
}

hipError_t hipGraphAddEventRecordNode(void **node, void *graph, void *const *deps, size_t ndeps, void *event) {
    if (!event) return hipErrorInvalidValue;
    hipKernelNodeParams none;
    memset(&none, 0, sizeof none);
    return add_node(node, graph, deps, ndeps, &none);
}

hipError_t hipGraphAddEventWaitNode(void **node, void *graph, void *const *deps, size_t ndeps, void *event) {
    if (!event) return hipErrorInvalidValue;
    hipKernelNodeParams none;
    memset(&none, 0, sizeof none);
    return add_node(node, graph, deps, ndeps, &none);
}

hipError_t hipGraphAddDependencies(void *graph, void *const *from, void *const *to, size_t count) {
    struct graph *g = graph;
    if (!g || (count && (!from || !to))) return hipErrorInvalidValue;
    g->edges += count;
    return hipSuccess;
}

/* With `nodes` null: the count; else up to *count handles, in the order
 * the nodes were made. */
hipError_t hipGraphGetNodes(void *graph, void **nodes, size_t *count) {
    struct graph *g = graph;
    if (!g || !count) return hipErrorInvalidValue;
    if (nodes) {
        size_t n = *count < g->nodes ? *count : g->nodes;
        for (size_t i = 0; i < n; i++) nodes[i] = g->node[i];
        *count = n;
        return hipSuccess;
    }
    *count = g->nodes;
    return hipSuccess;
}

hipError_t hipGraphGetEdges(void *graph, void **from, void **to, size_t *count) {
    struct graph *g = graph;
    if (!g || !count || from || to) return hipErrorInvalidValue; /* counting only */
    *count = g->edges;
    return hipSuccess;
}

/* Static, so both instantiate entry points share it without one calling
 * the other through its exported (interposable) symbol. */
static hipError_t instantiate(void **exec, void *graph) {
    if (!exec || !graph) return hipErrorInvalidValue;
    struct exec *x = calloc(1, sizeof *x);
    x->graph = graph;
    *exec = x;
    instantiations++;
    return hipSuccess;
}

hipError_t hipGraphInstantiate(void **exec, void *graph, void **error_node, char *log, size_t log_size) {
    (void)error_node; (void)log; (void)log_size;
    return instantiate(exec, graph);
}

hipError_t hipGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags) {
    (void)flags;
    return instantiate(exec, graph);
}

hipError_t hipGraphExecKernelNodeSetParams(void *exec, void *node, const hipKernelNodeParams *params) {
    if (!exec || !node || !params) return hipErrorInvalidValue;
    ((struct node *)node)->params = *params;
    return hipSuccess;
}


hipError_t hipGraphExecDestroy(void *exec) { free(exec); return hipSuccess; }

/* hipGraphExecUpdate: the same node and edge counts are taken (the exec
 * then runs the new graph's parameters); anything else is refused with
 * hipErrorGraphExecUpdateFailure (910) and
 * hipGraphExecUpdateErrorTopologyChanged (2), the exec unchanged. */
hipError_t hipGraphExecUpdate(void *exec, void *graph, void **error_node, int *result) {
    struct exec *x = exec;
    struct graph *g = graph;
    if (!x || !g || !result) return hipErrorInvalidValue;
    if (error_node) *error_node = NULL;
    if (g->nodes != x->graph->nodes || g->edges != x->graph->edges) {
        *result = 2;
        return 910;
    }
    x->graph = g;
    *result = 0;
    return hipSuccess;
}

#include "fakecapture.h"

/* ---- static registration (begin) ----
 * __hipRegisterFatBinary checks the HIPF wrapper and hands out a module
 * handle; __hipRegisterFunction records nothing (the fake's graph calls
 * accept any `func`, so a host stub needs no lookup here). Every call is
 * counted (fakehip_registrations()) so a test can tell the registration
 * reached the real HIP through the interposer. */
static long registrations;

long fakehip_registrations(void) { return registrations; }

void **__hipRegisterFatBinary(const void *data) {
    const hipFatBinaryWrapper *w = data;
    if (!w || w->magic != 0x48495046u || !w->binary) return NULL;
    registrations++;
    return calloc(1, sizeof(void *));
}

void __hipRegisterFunction(void **modules, const void *host, char *device_function, const char *device_name,
                           unsigned int thread_limit, uint3 *tid, uint3 *bid, dim3 *block, dim3 *grid,
                           int *wsize) {
    (void)device_function; (void)thread_limit; (void)tid; (void)bid; (void)block; (void)grid; (void)wsize;
    if (modules && host && device_name) registrations++;
}

void __hipUnregisterFatBinary(void **modules) {
    if (modules) registrations++;
    free(modules);
}

/* Device variables: accepted and ignored (the fake runs no kernels). */
void __hipRegisterVar(void **modules, void *var, char *host_var, char *device_var, int ext, size_t size,
                      int constant, int global) {
    (void)var; (void)host_var; (void)ext; (void)size; (void)constant; (void)global;
    if (modules && device_var) registrations++;
}

static unsigned char fake_global[64];

hipError_t hipModuleGetGlobal(void **dptr, size_t *bytes, void *module, const char *name) {
    if (!module || !name) return hipErrorInvalidValue;
    if (dptr) *dptr = fake_global;
    if (bytes) *bytes = sizeof fake_global;
    return hipSuccess;
}
/* ---- static registration (end) ---- */
