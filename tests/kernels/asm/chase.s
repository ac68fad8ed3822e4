// Hand-written kernels for the certifier (assembled by tests/certify_asm.rs
// with llvm-mc-19 and ld.lld-19). TARGET and the user-SGPR layout are
// substituted by the test: @TARGET@, @PSB@ (1: private segment buffer in
// s[0:3], kernarg pointer in s[4:5]), @KA@ (the kernarg pair's first SGPR).
//
// chase(uint **pp, uint *out): reads a pointer from the buffer pp points to
// (vector load) and s_loads through it: not VMEM-only.
// direct(uint *out, uint v): reads its arguments only: VMEM-only.
  .amdgcn_target "amdgcn-amd-amdhsa--@TARGET@"
  .text
  .globl chase
  .p2align 8
  .type chase,@function
chase:
  s_load_dwordx2 s[8:9], s[@KA@:@KA1@], 0x0
  s_load_dwordx2 s[14:15], s[@KA@:@KA1@], 0x8
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v0, 0
  global_load_dwordx2 v[2:3], v0, s[8:9]
  s_waitcnt vmcnt(0)
  v_readfirstlane_b32 s10, v2
  v_readfirstlane_b32 s11, v3
  s_load_dword s12, s[10:11], 0x0
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v1, s12
  global_store_dword v0, v1, s[14:15]
  s_endpgm
.Lchase_end:
  .size chase, .Lchase_end-chase

  .globl direct
  .p2align 8
  .type direct,@function
direct:
  s_load_dwordx2 s[8:9], s[@KA@:@KA1@], 0x0
  s_load_dword s10, s[@KA@:@KA1@], 0x8
  s_mov_b64 s[12:13], s[@KA@:@KA1@]
  s_cmp_eq_u32 s@KA@, 0
  s_cbranch_scc1 .Lskip
  s_load_dword s11, s[12:13], 0xc
.Lskip:
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v0, 0
  v_mov_b32 v1, s10
  global_store_dword v0, v1, s[8:9]
  s_endpgm
.Ldirect_end:
  .size direct, .Ldirect_end-direct

  .rodata
  .p2align 6
  .amdhsa_kernel chase
    .amdhsa_user_sgpr_private_segment_buffer @PSB@
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_user_sgpr_count @USER@
    .amdhsa_kernarg_size 16
    .amdhsa_next_free_vgpr 4
    .amdhsa_next_free_sgpr 16
    .amdhsa_wavefront_size32 1
  .end_amdhsa_kernel
  .amdhsa_kernel direct
    .amdhsa_user_sgpr_private_segment_buffer @PSB@
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_user_sgpr_count @USER@
    .amdhsa_kernarg_size 16
    .amdhsa_next_free_vgpr 4
    .amdhsa_next_free_sgpr 16
    .amdhsa_wavefront_size32 1
  .end_amdhsa_kernel

  .amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--@TARGET@
amdhsa.kernels:
  - .name: chase
    .symbol: chase.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .sgpr_count: 16
    .vgpr_count: 4
    .max_flat_workgroup_size: 64
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }
  - .name: direct
    .symbol: direct.kd
    .kernarg_segment_size: 16
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .sgpr_count: 16
    .vgpr_count: 4
    .max_flat_workgroup_size: 64
    .args:
      - { .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }
      - { .offset: 8, .size: 4, .value_kind: by_value }
...
  .end_amdgpu_metadata
