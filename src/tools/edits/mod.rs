//! Changing files: single edits (`edit`), patches as `git diff` writes them and
//! as models get them wrong (`patch`, applied by `patch_apply`), and choosing
//! hunks of one (`patch_select`).
//!
//! What must stay true: an edit or a patch is written only as prepared and
//! approved, a patch all or nothing (files already written are rolled back when
//! a later one fails).

pub mod edit;
pub mod patch;
pub mod patch_apply;
pub mod patch_select;
