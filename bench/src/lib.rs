//! The benchmark shapes, as a library so tests can check the bytes the
//! benchmarks time (`bench/tests/`); the benchmarks are the binary.

pub mod shapes;
