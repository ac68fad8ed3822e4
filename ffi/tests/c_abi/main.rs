//! The C side of the ABI, end to end: the examples compiled with `cc`
//! against the built `librelaunch.so` and run on the simulated device,
//! two of them under valgrind, and the installed SDK consumed through
//! pkg-config and CMake. Tools that are missing skip their test with a
//! printed note (CI installs them).

mod support;

mod deny;
mod examples;
mod guide_recipes;
mod install;
mod real_rocr;
mod sdk;
mod seed;
mod valgrind;
