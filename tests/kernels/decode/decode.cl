// The decode-step kernels as one translation unit: one code object with
// one metadata note holds them all (linking several objects would give
// several notes, which code-object readers refuse).
#include "norm.cl"
#include "matvec.cl"
#include "rope.cl"
#include "attention.cl"
#include "elementwise.cl"
#include "sampler.cl"
