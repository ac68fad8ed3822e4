// Shared by the decode-step kernels (tests/kernels/decode/*.cl).
// Contraction is off so each kernel rounds exactly where its source says
// (the host twins and the CPU oracle do the same operations in the same
// order); -cl-fp32-correctly-rounded-divide-sqrt in the build makes / and
// sqrt exact too. exp/exp2/sin/cos remain approximations on hardware, so
// hardware results are compared with a tolerance.
#ifndef RELAUNCH_DECODE_H
#define RELAUNCH_DECODE_H

#pragma OPENCL FP_CONTRACT OFF

// Every element-wise kernel runs in 64-wide workgroups. Declaring it lets
// clang fold the workgroup size, so the kernels take no hidden arguments
// (20-40 byte kernarg blocks instead of 288).
#define DECODE_BLOCK 64
#define DECODE_KERNEL __kernel __attribute__((reqd_work_group_size(DECODE_BLOCK, 1, 1)))

// log2(10000): the rotary embedding base.
#define ROPE_LOG2_THETA 13.287712f

// The global work-item index along x (grids start at 0: no global offset).
static inline uint decode_item(void) {
    return __builtin_amdgcn_workgroup_id_x() * DECODE_BLOCK + __builtin_amdgcn_workitem_id_x();
}

#endif
