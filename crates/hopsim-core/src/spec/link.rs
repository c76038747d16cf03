//! `[link.<class>]`: a link class's own latency and bandwidth, over the `[link]` defaults.

use super::LinkSpec;
use crate::error::{SpecError, SpecResult};
use super::link_class::{LinkClass, LINK_CLASS_NAMES};
use serde::Deserialize;

#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkClassSpec {
    pub latency: Option<u32>,
    pub gbytes_per_s: Option<f64>,
}

/// Bandwidths are compared as whole kB/s, so ratios like 5.25 / 4.7 are exact fractions.
pub const MAX_GBYTES_PER_S: f64 = 4000.0;

pub fn check_bandwidth(key: &str, g: f64) -> SpecResult<()> {
    if !(1e-6..=MAX_GBYTES_PER_S).contains(&g) {
        return Err(SpecError::new(key, g, format!("must be a bandwidth in GB/s between 0.000001 and {MAX_GBYTES_PER_S}")));
    }
    Ok(())
}

impl LinkSpec {
    /// The `[link.<class>]` tables, checked: known class names, known keys, ranges. Whether
    /// the topology has the class is checked where the links are built.
    pub fn class_specs(&self) -> SpecResult<Vec<(LinkClass, LinkClassSpec)>> {
        let mut out = Vec::with_capacity(self.classes.len());
        for (name, value) in &self.classes {
            let key = format!("link.{name}");
            let class = LinkClass::from_name(name).ok_or_else(|| {
                SpecError::new(&key, value.to_string(), format!("unknown key; allowed keys: latency, gbytes_per_s, or a table per link class: {LINK_CLASS_NAMES}"))
            })?;
            if !value.is_object() {
                return Err(SpecError::new(&key, value.to_string(), "must be a table with latency and/or gbytes_per_s"));
            }
            let spec = LinkClassSpec::deserialize(value).map_err(|e| {
                let msg = e.to_string().replace("unknown field", "unknown key").replace("expected one of", "allowed keys:").replace('`', "");
                SpecError::new(&key, value.to_string(), msg)
            })?;
            if let Some(l) = spec.latency.filter(|&l| l == 0 || l > 10_000) {
                return Err(SpecError::new(format!("{key}.latency"), l, "must be between 1 and 10000 cycles"));
            }
            if let Some(g) = spec.gbytes_per_s {
                check_bandwidth(&format!("{key}.gbytes_per_s"), g)?;
                if self.gbytes_per_s.is_none() {
                    return Err(SpecError::new(
                        format!("{key}.gbytes_per_s"),
                        g,
                        "needs link.gbytes_per_s too: the bandwidth of the classes it does not set, against which this one is slower or faster",
                    ));
                }
            }
            out.push((class, spec));
        }
        Ok(out)
    }
}
