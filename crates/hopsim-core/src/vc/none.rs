//! No policy: every VC is allowed everywhere. Not deadlock-free on rings; it exists to show
//! that the watchdog catches the deadlock that a dateline prevents.

use super::{mask_all, VcPolicy};
use crate::route::{Hop, RouteState};

pub struct AnyVc {
    all: u32,
}

impl AnyVc {
    pub fn new(vcs: usize) -> Self {
        AnyVc { all: mask_all(vcs) }
    }
}

impl VcPolicy for AnyVc {
    fn name(&self) -> &'static str {
        "none"
    }
    fn allowed(&self, _state: &RouteState, _hop: &Hop) -> u32 {
        self.all
    }
    fn all(&self) -> u32 {
        self.all
    }
}

pub const KIND: super::PolicyKind = super::PolicyKind {
    name: "none",
    about: "every VC everywhere: not deadlock-free, to show the deadlock a policy prevents",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    build: |cx| Ok(std::sync::Arc::new(AnyVc::new(cx.vcs()))),
};
