//! n-dimensional mesh: the torus grid without wrap-around links; border ports stay unconnected.

use super::torus::Grid;
use crate::error::SpecResult;
use crate::spec::Spec;

pub const KIND: super::Kind = super::Kind {
    name: "mesh",
    about: "the torus grid without its wrap-around links",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    servers_per_switch: "1",
    build: |spec| Ok(std::sync::Arc::new(build(spec)?)),
};

keys! {
    /// The keys of a mesh, read from `[topology]`.
    struct Keys {
        /// switches per dimension, e.g. [8, 8]; 1 to 16 dimensions
        dims: Option<Vec<usize>> = "required" => None,
    }
}

pub fn build(spec: &Spec) -> SpecResult<Grid> {
    let Keys { dims } = super::own_keys(spec)?;
    Grid::from_spec(spec, dims.unwrap_or_default(), false)
}
