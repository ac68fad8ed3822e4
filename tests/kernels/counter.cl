// Every work-item adds 1 to one u32: the result counts dispatched work-items.
// Kernarg layout: 0 counter (global uint*); 8 bytes, no hidden arguments used.
__kernel void counter(__global uint *counter) {
    __atomic_fetch_add(counter, 1u, __ATOMIC_RELAXED);
}
