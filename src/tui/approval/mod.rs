//! The approval component: the queue of the core's requests (`queue`), the
//! review of the front request's hunks and edited version (`review`, a
//! patch's files in `files`), and the
//! prompt's keys and the decisions that go back to the core (`prompt`).

pub mod files;
mod prompt;
pub mod queue;
pub(in crate::tui) mod record;
pub mod review;

pub use queue::{ARMING, Answered, Approvals, Confirm};
