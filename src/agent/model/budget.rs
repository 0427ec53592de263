//! Keeping one tool result inside what is left of the context budget: the
//! results that can grow without bound (each tool names its field, a
//! `registry::Cut`: `read_file` content, `list_files` entries, `run_tests`
//! output) are cut to their head, with a note saying what
//! was left out and how to ask for the rest. Whatever is cut stays valid JSON
//! with the tool's usual fields; results that fit are sent byte for byte.

use crate::tools::calls::registry::Cut;
use serde_json::{Value, json};

/// The text of `body` to send to the model: unchanged when `fits` accepts it,
/// otherwise with its cuttable field shortened to the longest head that fits
/// (at least an empty one, with the note).
pub fn fit_result(cut: Option<Cut>, body: &Value, fits: impl Fn(&str) -> bool) -> String {
    let text = body.to_string();
    if fits(&text) {
        return text;
    }
    let Some(Cut { field, how }) = cut else {
        return text;
    };
    match body.get(field) {
        Some(Value::String(s)) => {
            let chars: Vec<(usize, char)> = s.char_indices().collect();
            let cut_at = |n: usize| chars.get(n).map_or(s.len(), |&(i, _)| i);
            let build = |n: usize| cut_string(body, field, s, cut_at(n), how);
            let n = longest(chars.len(), |n| fits(&build(n)));
            // Prefer ending at a line break when one is near.
            let end = cut_at(n);
            let end = match s[..end].rfind('\n') {
                Some(nl) if nl + 1 >= end / 2 => nl + 1,
                _ => end,
            };
            cut_string(body, field, s, end, how)
        }
        Some(Value::Array(items)) => {
            let build = |n: usize| cut_array(body, field, items, n, how);
            build(longest(items.len(), |n| fits(&build(n))))
        }
        _ => text,
    }
}

/// The largest `n` in `0..total` (or 0) for which `ok(n)` holds, assuming
/// `ok` holds up to some point and not after it.
fn longest(total: usize, ok: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, total);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if ok(mid) { lo = mid } else { hi = mid - 1 }
    }
    lo
}

fn cut_string(body: &Value, field: &str, s: &str, end: usize, how: &str) -> String {
    let head = &s[..end];
    let note = format!(
        "cut to fit the context window: showing the first {} of {} lines ({} of {} bytes); {how}",
        head.lines().count(),
        s.lines().count(),
        head.len(),
        s.len()
    );
    let mut cut = body.clone();
    // A ranged read says exactly where to go on.
    let note = match body.get("start_line").and_then(Value::as_u64) {
        Some(start) => {
            let shown = head.lines().count() as u64;
            cut["end_line"] = json!((start + shown).saturating_sub(1));
            format!("{note}; the next offset is {}", start + shown)
        }
        None => note,
    };
    cut[field] = json!(head);
    cut["truncated"] = json!(true);
    cut["note"] = json!(note);
    cut.to_string()
}

fn cut_array(body: &Value, field: &str, items: &[Value], n: usize, how: &str) -> String {
    let note = format!(
        "cut to fit the context window: showing the first {n} of {} entries; {how}",
        items.len()
    );
    let mut cut = body.clone();
    cut[field] = Value::Array(items[..n].to_vec());
    cut["truncated"] = json!(true);
    cut["note"] = json!(note);
    cut.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A built-in tool's result fitted with that tool's own cut.
    fn fit_result(tool: &str, body: &Value, fits: impl Fn(&str) -> bool) -> String {
        let cut = crate::tools::Registry::default().cut(tool);
        super::fit_result(cut, body, fits)
    }

    fn lines(n: usize) -> String {
        (0..n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn a_result_that_fits_is_sent_unchanged() {
        let body = json!({"success": true, "path": "a.py", "content": lines(50)});
        assert_eq!(fit_result("read_file", &body, |_| true), body.to_string());
    }

    #[test]
    fn a_large_read_keeps_its_head_up_to_a_line_and_says_how_to_go_on() {
        let body = json!({"success": true, "path": "a.py", "content": lines(5000)});
        let text = fit_result("read_file", &body, |t| t.len() <= 2_000);
        assert!(text.len() <= 2_000, "{}", text.len());
        let cut: Value = serde_json::from_str(&text).unwrap();
        let content = cut["content"].as_str().unwrap();
        assert!(content.starts_with("line 0\nline 1\n") && content.ends_with('\n'));
        assert!(lines(5000).starts_with(content));
        let note = cut["note"].as_str().unwrap();
        assert!(
            note.contains("of 5000 lines") && note.contains("replace_text"),
            "{note}"
        );
        assert!(note.contains("`offset`"), "{note}");
        assert_eq!(
            (cut["path"].as_str(), cut["truncated"].as_bool()),
            (Some("a.py"), Some(true))
        );
    }

    #[test]
    fn listings_and_test_output_are_cut_too_but_other_results_are_not() {
        let files: Vec<String> = (0..1000).map(|i| format!("dir/file{i}.py")).collect();
        let listing = json!({"success": true, "path": ".", "files": files, "truncated": false});
        let cut: Value =
            serde_json::from_str(&fit_result("list_files", &listing, |t| t.len() < 1_500)).unwrap();
        let kept = cut["files"].as_array().unwrap().len();
        assert!(kept > 10 && kept < 1000, "{kept}");
        assert!(cut["note"].as_str().unwrap().contains("subfolder"));

        let run = json!({"success": false, "output": "x".repeat(10_000), "returncode": 1});
        let text = fit_result("run_tests", &run, |t| t.len() < 1_000);
        assert!(text.len() < 1_000 && text.contains("run fewer tests"));

        let write = json!({"success": true, "diff": "y".repeat(10_000)});
        assert_eq!(
            fit_result("write_file", &write, |_| false),
            write.to_string()
        );
    }

    #[test]
    fn a_cut_ranged_read_names_the_next_offset() {
        let body = json!({"success": true, "content": lines(3000), "start_line": 101, "end_line": 3100, "total_lines": 9000});
        let cut: Value =
            serde_json::from_str(&fit_result("read_file", &body, |t| t.len() <= 2_000)).unwrap();
        let shown = cut["content"].as_str().unwrap().lines().count() as u64;
        assert_eq!(cut["end_line"], json!(100 + shown));
        let note = cut["note"].as_str().unwrap();
        assert!(
            note.contains(&format!("next offset is {}", 101 + shown)),
            "{note}"
        );
    }

    #[test]
    fn multibyte_text_is_cut_on_character_boundaries() {
        let body = json!({"success": true, "content": "é".repeat(3000)});
        let text = fit_result("read_file", &body, |t| t.len() <= 1_000);
        let cut: Value = serde_json::from_str(&text).unwrap();
        assert!(cut["content"].as_str().unwrap().chars().all(|c| c == 'é'));
    }
}
