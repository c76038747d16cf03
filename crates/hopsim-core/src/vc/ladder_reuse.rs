//! Ladder with reused VCs: at hop i any VC class j <= i, join-shortest-queue among them
//! (the class layout and the deadlock argument are in `ladder.rs`).

use super::ladder::Ladder;

pub fn build(vcs: usize, steps: usize) -> Option<Ladder> {
    Ladder::new(vcs, steps, true)
}

pub const KIND: super::PolicyKind = super::PolicyKind {
    name: "ladder_reuse",
    about: "ladder whose i-th hop may take any class up to i",
    keys: super::ladder::LadderKeys::KEYS,
    defaults: super::ladder::LadderKeys::defaults,
    build: |cx| super::ladder::checked(cx, true),
};
