//! The diff pane's parts: `view` (cached rows, scroll, review marks), `rows`
//! (a diff as colored rows), `inline` (word highlights), `live` (previews of
//! edits still streaming in), `source` (which diffs, as rows), `mcp_call`
//! (the rows of an MCP call's prompt) and `syntax_jobs`. Which diff the pane
//! shows for the App's state, and its title, is decided by the view
//! (`view::diff_pane`), which reads the App; nothing here does.

pub mod inline;
pub mod live;
pub mod live_patch;
pub mod mcp_call;
pub mod rows;
pub mod source;
#[cfg(test)]
mod style_tests;
pub mod syntax_jobs;
pub mod view;

use crate::present::numbers::thousands;

/// ` · lines 120–160 of 10,000` when the diff is taller than the pane.
pub fn position(total: usize, top: usize, height: usize) -> String {
    if total <= height || height == 0 {
        return String::new();
    }
    let last = (top + height).min(total);
    format!(
        " · lines {}–{} of {}",
        thousands(top + 1),
        thousands(last),
        thousands(total)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_long_diff_says_where_the_view_is() {
        assert_eq!(super::position(10, 0, 20), "");
        assert_eq!(
            super::position(10_000, 119, 41),
            " · lines 120–160 of 10,000"
        );
        assert_eq!(super::position(50, 40, 20), " · lines 41–50 of 50");
    }
}
