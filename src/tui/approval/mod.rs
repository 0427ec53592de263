//! The approval component: the queue of the core's requests (`queue`), the
//! review of the front request's hunks and edited version (`review`, a
//! patch's files in `files`). The prompt's keys and the decisions that go
//! back to the core are the App's (`app::prompt`, `app::record`): nothing
//! here reads the App.

pub mod files;
pub mod queue;
pub mod review;

pub use queue::{ARMING, Answered, Approvals, Confirm};
