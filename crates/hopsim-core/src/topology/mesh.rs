//! n-dimensional mesh: the torus grid without wrap-around links; border ports stay unconnected.

use super::torus::Grid;
use crate::error::SpecResult;
use crate::spec::Spec;

pub fn build(spec: &Spec) -> SpecResult<Grid> {
    Grid::from_spec(spec, false)
}
