// Prints through the runtime's printf buffer, so its metadata lists
// hidden_printf_buffer, which the direct PM4 path cannot fill: refused.
// There are no ROCm device libraries here (-nogpulib), so this file brings
// its own __printf_alloc: it only hands back the buffer pointer the runtime
// put in the implicit arguments (V5 layout: 72 bytes after the explicit ones).
// Kernarg layout: 0 p (global uint*), then hidden arguments.
__global char *__printf_alloc(uint bytes) {
    __constant char *implicit = (__constant char *)__builtin_amdgcn_implicitarg_ptr();
    return *(__global char *__constant *)(implicit + 72);
}

__kernel void uses_printf(__global uint *p) {
    printf("value %u\n", p[0]);
}
