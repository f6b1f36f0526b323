//! The CPU reference (`ascendcl::reference`) alone: accuracy against golden values and
//! correctly rounded sweeps, linear algebra, pointwise semantics, the training example's
//! CPU half. Pure CPU arithmetic: no test here reaches the simulator, so none holds a gate
//! (a file that does belongs in another binary).

#[path = "../reference_golden/mod.rs"]
mod reference_golden;

mod accuracy;
mod linear;
mod pointwise;
mod semantics;
mod training;
