// A kernel built at -O0 that does read an input plain -O0 enables for
// every kernel (clang has no builtin for the dispatch id; the reader's
// unit tests and tests/it/public_aql.rs cover reading that one): the PM4 path has no value for these, and the reader's proof
// must not call them unread. Built by relaunch_testsupport::asm::hip_o0_plain
// (-nogpuinc: clang's builtins only).
#define __global__ __attribute__((global))

// The address of the queue it was dispatched on.
extern "C" __global__ void reads_queue_ptr(unsigned long long *out) {
    out[__builtin_amdgcn_workitem_id_x()] =
        (unsigned long long)__builtin_amdgcn_queue_ptr();
}
