//! Text hygiene every layer shares, at the bottom of the crate: the one
//! sanitizer (`sanitize`) every untrusted string passes before any front end
//! shows it, number formatting (`numbers`), credential redaction (`redact`)
//! the scrubbing of known secrets from whatever leaves stepwise
//! (`scrub`), and the end of a long output (`tail`).
//!
//! What must stay true: nothing here imports anything of stepwise, so every
//! module above (the configuration, the tools, the core, the front ends)
//! may use it without an import cycle (`tests/core/architecture.rs`).

pub mod numbers;
pub mod redact;
pub mod sanitize;
pub mod scrub;
pub mod tail;
