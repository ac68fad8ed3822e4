// The reference decode step (the graph `relaunch demo` replays) built as a
// hipGraph from the same code objects, timed per token. Run plainly it
// measures hipGraph; run under the interposer
// (LD_PRELOAD=librelaunch_hipgraph.so) it measures relaunch through HIP;
// `relaunch demo` measures relaunch directly. See
// docs/hardware-validation.md for the commands.
//
//   decode_hipgraph DECODE.co [LAYERS [SEQUENCES [TOKENS]]]
//
// DECODE.co: tests/kernels/build/<target>/decode.co (or your own build).
// Per sequence and layer the twelve ops of lanes/src/reference.rs (rmsnorm,
// qkv matvec, rope, kv_append, attention, output matvec, residual add,
// rmsnorm, gate/up matvec, silu_mul, down matvec, residual add), then the
// sampler: one kernel node per dispatch, the kernel arguments and geometry
// of src/cli/demo/device_graph.rs (64-wide workgroups, one work-item per
// output element; the sampler one work-item). Each sequence's ops form a
// chain (each depends on the one before: at least the order the reference
// derives from the ops' buffer accesses); sequences are independent. Per
// token the 3 x layers x sequences position arguments (rope, kv_append,
// attention) are patched with hipGraphExecKernelNodeSetParams, then
// hipGraphLaunch and hipStreamSynchronize; the median over the tokens after
// the first is printed.
//
// Builds against the public HIP headers (Debian's libamdhip64-dev):
//   c++ -std=c++17 -O2 -D__HIP_PLATFORM_AMD__ bench/hip/decode_hipgraph.cpp -lamdhip64
#include <hip/hip_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

namespace {

// The model shape of src/cli/demo/model.rs.
constexpr unsigned HIDDEN = 64, HEAD_DIM = 16, FFN = 128, VOCAB = 64, CAPACITY = 64;
constexpr float EPS = 1e-5f;

void check(hipError_t e, const char *what) {
    if (e != hipSuccess) {
        std::fprintf(stderr, "decode_hipgraph: %s failed with %d\n", what, static_cast<int>(e));
        std::exit(1);
    }
}

// A device buffer of `floats` floats filled with small deterministic values.
void *buffer(size_t floats, unsigned seed) {
    void *p = nullptr;
    check(hipMalloc(&p, floats * sizeof(float)), "hipMalloc");
    std::vector<float> host(floats);
    for (size_t i = 0; i < floats; i++) host[i] = 0.01f * static_cast<float>((i * 7 + seed * 13) % 17) - 0.08f;
    check(hipMemcpy(p, host.data(), floats * sizeof(float), hipMemcpyHostToDevice), "hipMemcpy");
    return p;
}

// One node's arguments: the values live here for the graph's lifetime,
// `params` points at them in kernel-argument order.
struct Args {
    std::vector<uint64_t> ptrs;
    std::vector<uint32_t> words;  // uint and float arguments, bit for bit
    std::vector<void *> params;
    unsigned *pos = nullptr;  // the position argument, when the kernel has one
};

struct Builder {
    hipGraph_t graph;
    std::deque<Args> args;  // stable addresses
    std::vector<hipGraphNode_t> pos_nodes;
    std::vector<hipKernelNodeParams> pos_params;
    std::vector<Args *> pos_args;
    size_t nodes = 0;

    // Arguments: `p` pointers then `w` 32-bit words, in declaration order
    // given by `order` ('p' or 'w' per argument).
    hipGraphNode_t add(hipFunction_t f, const char *order, std::vector<void *> ptrs,
                       std::vector<uint32_t> words, unsigned items, unsigned block, hipGraphNode_t dep,
                       int pos_word) {
        args.emplace_back();
        Args &a = args.back();
        for (void *p : ptrs) a.ptrs.push_back(reinterpret_cast<uint64_t>(p));
        a.words = std::move(words);
        size_t pi = 0, wi = 0;
        for (const char *c = order; *c; c++) {
            if (*c == 'p') a.params.push_back(&a.ptrs[pi++]);
            else a.params.push_back(&a.words[wi++]);
        }
        if (pos_word >= 0) a.pos = &a.words[static_cast<size_t>(pos_word)];
        hipKernelNodeParams p{};
        p.func = reinterpret_cast<void *>(f);
        p.gridDim = dim3(items / block, 1, 1);
        p.blockDim = dim3(block, 1, 1);
        p.sharedMemBytes = 0;
        p.kernelParams = a.params.data();
        p.extra = nullptr;
        hipGraphNode_t node;
        check(hipGraphAddKernelNode(&node, graph, dep ? &dep : nullptr, dep ? 1 : 0, &p),
              "hipGraphAddKernelNode");
        nodes++;
        if (a.pos) {
            pos_nodes.push_back(node);
            pos_params.push_back(p);
            pos_args.push_back(&a);
        }
        return node;
    }
};

uint32_t bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 2 || argc > 5) {
        std::fprintf(stderr, "usage: %s DECODE.co [LAYERS [SEQUENCES [TOKENS]]]\n", argv[0]);
        return 2;
    }
    const unsigned layers = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 4;
    const unsigned sequences = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 1;
    const unsigned tokens = argc > 4 ? static_cast<unsigned>(std::atoi(argv[4])) : 32;
    if (layers == 0 || sequences == 0 || tokens < 2 || tokens > CAPACITY) {
        std::fprintf(stderr, "decode_hipgraph: need LAYERS >= 1, SEQUENCES >= 1, 2 <= TOKENS <= %u\n", CAPACITY);
        return 2;
    }
    check(hipInit(0), "hipInit");
    hipModule_t module;
    check(hipModuleLoad(&module, argv[1]), "hipModuleLoad");
    auto fn = [&](const char *name) {
        hipFunction_t f;
        check(hipModuleGetFunction(&f, module, name), name);
        return f;
    };
    hipFunction_t rmsnorm = fn("rmsnorm"), matvec = fn("matvec"), rope = fn("rope"), kv_append = fn("kv_append"),
                  attention = fn("attention"), residual = fn("residual_add"), silu_mul = fn("silu_mul"),
                  sampler = fn("sampler");

    struct Layer { void *attn_norm, *wqkv, *wo, *mlp_norm, *w_gate_up, *w_down; };
    std::vector<Layer> w;
    for (unsigned l = 0; l < layers; l++)
        w.push_back({buffer(HIDDEN, l), buffer(3 * HIDDEN * HIDDEN, l + 1), buffer(HIDDEN * HIDDEN, l + 2),
                     buffer(HIDDEN, l + 3), buffer(2 * FFN * HIDDEN, l + 4), buffer(FFN * HIDDEN, l + 5)});
    void *final_norm = buffer(HIDDEN, 91), *lm_head = buffer(HIDDEN * VOCAB, 92);

    Builder b;
    check(hipGraphCreate(&b.graph, 0), "hipGraphCreate");
    for (unsigned s = 0; s < sequences; s++) {
        void *hidden = buffer(HIDDEN, 100 + s), *normed = buffer(HIDDEN, 0), *qkv = buffer(3 * HIDDEN, 0),
             *attn_out = buffer(HIDDEN, 0), *proj_out = buffer(HIDDEN, 0), *gate_up = buffer(2 * FFN, 0),
             *act = buffer(FFN, 0), *token = buffer(1, 0);
        char *qkv_bytes = static_cast<char *>(qkv);
        hipGraphNode_t prev = nullptr;
        for (unsigned l = 0; l < layers; l++) {
            void *kv = buffer(2 * CAPACITY * HIDDEN, 0);
            const Layer &L = w[l];
            prev = b.add(rmsnorm, "pppww", {normed, hidden, L.attn_norm}, {HIDDEN, bits(EPS)}, HIDDEN, 64, prev, -1);
            prev = b.add(matvec, "pppww", {qkv, normed, L.wqkv}, {3 * HIDDEN, HIDDEN}, 3 * HIDDEN, 64, prev, -1);
            prev = b.add(rope, "pwww", {qkv}, {HIDDEN, HEAD_DIM, 0}, HIDDEN, 64, prev, 2);
            prev = b.add(kv_append, "ppwww", {kv, qkv_bytes + HIDDEN * sizeof(float)}, {HIDDEN, CAPACITY, 0}, HIDDEN,
                         64, prev, 2);
            prev = b.add(attention, "pppwwww", {attn_out, qkv, kv}, {HIDDEN, HEAD_DIM, CAPACITY, 0}, HIDDEN, 64, prev,
                         3);
            prev = b.add(matvec, "pppww", {proj_out, attn_out, L.wo}, {HIDDEN, HIDDEN}, HIDDEN, 64, prev, -1);
            prev = b.add(residual, "ppw", {hidden, proj_out}, {HIDDEN}, HIDDEN, 64, prev, -1);
            prev = b.add(rmsnorm, "pppww", {normed, hidden, L.mlp_norm}, {HIDDEN, bits(EPS)}, HIDDEN, 64, prev, -1);
            prev = b.add(matvec, "pppww", {gate_up, normed, L.w_gate_up}, {2 * FFN, HIDDEN}, 2 * FFN, 64, prev, -1);
            prev = b.add(silu_mul, "ppw", {act, gate_up}, {FFN}, FFN, 64, prev, -1);
            prev = b.add(matvec, "pppww", {proj_out, act, L.w_down}, {HIDDEN, FFN}, HIDDEN, 64, prev, -1);
            prev = b.add(residual, "ppw", {hidden, proj_out}, {HIDDEN}, HIDDEN, 64, prev, -1);
        }
        b.add(sampler, "ppppwww", {token, hidden, final_norm, lm_head}, {HIDDEN, VOCAB, bits(EPS)}, 1, 1, prev, -1);
    }
    hipGraphExec_t exec;
    check(hipGraphInstantiate(&exec, b.graph, nullptr, nullptr, 0), "hipGraphInstantiate");
    hipStream_t stream;
    check(hipStreamCreate(&stream), "hipStreamCreate");

    std::vector<double> us;
    for (unsigned t = 0; t < tokens; t++) {
        auto start = std::chrono::steady_clock::now();
        for (size_t i = 0; i < b.pos_nodes.size(); i++) {
            // The params point at the node's argument storage: update the
            // position there, then hand HIP the same parameters.
            *b.pos_args[i]->pos = t;
            check(hipGraphExecKernelNodeSetParams(exec, b.pos_nodes[i], &b.pos_params[i]),
                  "hipGraphExecKernelNodeSetParams");
        }
        check(hipGraphLaunch(exec, stream), "hipGraphLaunch");
        check(hipStreamSynchronize(stream), "hipStreamSynchronize");
        auto end = std::chrono::steady_clock::now();
        us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
    }
    std::vector<double> steady(us.begin() + 1, us.end());
    std::sort(steady.begin(), steady.end());
    double median = steady[steady.size() / 2];
    std::printf("decode_hipgraph layers=%u sequences=%u nodes=%zu position_patches=%zu tokens=%u median_us=%.1f\n",
                layers, sequences, b.nodes, b.pos_nodes.size(), tokens, median);
    check(hipGraphExecDestroy(exec), "hipGraphExecDestroy");
    check(hipGraphDestroy(b.graph), "hipGraphDestroy");
    return 0;
}
