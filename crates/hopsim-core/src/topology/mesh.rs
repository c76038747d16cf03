//! n-dimensional mesh: the torus grid without wrap-around links; border ports stay unconnected.

use super::torus::Grid;
use crate::error::SpecResult;
use crate::spec::Spec;

pub const KIND: super::Kind = super::Kind {
    name: "mesh",
    about: "the torus grid without its wrap-around links",
    keys: &[
        super::Key { name: "dims", default: "required", meaning: "switches per dimension, e.g. [8, 8]; 1 to 16 dimensions" },
        super::servers_per_switch_key!("1"),
    ],
    build: |spec| Ok(std::sync::Arc::new(build(spec)?)),
};

pub fn build(spec: &Spec) -> SpecResult<Grid> {
    Grid::from_spec(spec, false)
}
