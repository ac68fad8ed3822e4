//! The lanes crate's integration tests, one binary (one link).

mod compile;
mod lower;
mod props;
mod record;
mod reference;
mod seed;
mod shapes;
