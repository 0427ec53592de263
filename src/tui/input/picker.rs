//! The `@` file picker: `@` typed at the start of a word opens it over the
//! workspace's files (listed off the UI thread by the run loop, the walk
//! and deny list of `list_files`), the text typed after the `@` filters them
//! by a subsequence score, Up/Down select, Enter/Tab put the path (and a
//! space) in place of `@query`, Esc closes it leaving what was typed.
//!
//! What must stay true: an `@` inside a word (an email address) never opens
//! it; nothing here walks the disk; a key the picker does not take goes to
//! the input as usual.

use crate::tui::render::text::{sanitize, truncate};
use crate::tui::render::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

/// The workspace the picker lists (shared with the walk off the UI thread).
#[derive(Clone)]
pub struct FileSource(pub std::sync::Arc<crate::tools::Workspace>);

impl std::fmt::Debug for FileSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FileSource")
    }
}

/// Extensions of files that are not text (images, archives, compiled code,
/// fonts, media, databases): a task has no use for their path in the
/// picker. Judged by name, so listing stays one walk of the folder.
const BINARY: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "bmp", "ico", "webp", "tiff", "psd", "pdf", "zip", "gz", "tgz",
    "bz2", "xz", "zst", "7z", "rar", "tar", "jar", "war", "class", "pyc", "pyo", "so", "dylib",
    "dll", "exe", "o", "a", "lib", "obj", "bin", "wasm", "woff", "woff2", "ttf", "otf", "eot",
    "mp3", "mp4", "wav", "ogg", "flac", "mov", "avi", "mkv", "webm", "sqlite", "db", "npy", "pkl",
];

/// Whether `path` names a file of a binary kind (by its extension).
pub fn binary_kind(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && BINARY.contains(&ext.to_ascii_lowercase().as_str())
    })
}

/// Most matches listed.
pub const SHOWN: usize = 8;

#[derive(Debug, Default)]
pub struct Picker {
    /// The workspace's files; `None` while they are being listed.
    files: Option<Vec<String>>,
    /// More files exist than were listed.
    more: bool,
    /// What was typed after the `@`.
    query: String,
    /// Indices into `files`, best first.
    matches: Vec<usize>,
    selected: usize,
}

impl Picker {
    pub fn new() -> Picker {
        Picker::default()
    }

    /// The workspace's files arrived.
    pub fn set_files(&mut self, mut files: Vec<String>, more: bool) {
        files.retain(|f| !binary_kind(f));
        self.files = Some(files);
        self.more = more;
        self.refilter();
    }

    pub fn set_query(&mut self, query: &str) {
        if query != self.query {
            self.query = query.to_string();
            self.refilter();
        }
    }

    pub fn query(&self) -> &str {
        &self.query
    }

    fn refilter(&mut self) {
        let Some(files) = &self.files else {
            return;
        };
        let mut scored: Vec<(i64, usize)> = files
            .iter()
            .enumerate()
            .filter_map(|(i, f)| score(&self.query, f).map(|s| (s, i)))
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(files[a.1].len().cmp(&files[b.1].len())));
        self.matches = scored.into_iter().map(|(_, i)| i).collect();
        self.selected = 0;
    }

    /// Move the selection by `delta` (clamped).
    pub fn move_by(&mut self, delta: isize) {
        let last = self.matches.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }

    /// The selected path, if any.
    pub fn chosen(&self) -> Option<&str> {
        let files = self.files.as_ref()?;
        let i = *self.matches.get(self.selected)?;
        files.get(i).map(String::as_str)
    }

    /// The first match shown: the list scrolls to keep the selection in view.
    fn top(&self) -> usize {
        self.selected.saturating_sub(SHOWN - 1)
    }

    /// The matches shown, best first, the selected one among them.
    pub fn shown(&self) -> Vec<&str> {
        let Some(files) = &self.files else {
            return Vec::new();
        };
        self.matches
            .iter()
            .skip(self.top())
            .take(SHOWN)
            .filter_map(|&i| files.get(i).map(String::as_str))
            .collect()
    }

    /// Draw the list just above `input` (the input box's outer rectangle).
    pub fn render(&self, input: Rect, buf: &mut Buffer) {
        let lines: Vec<(String, ratatui::style::Style)> = match &self.files {
            None => vec![(" listing the workspace's files…".into(), theme::MENU)],
            Some(_) if self.matches.is_empty() => {
                vec![(
                    format!(" no file matches “{}”", sanitize(&self.query)),
                    theme::MENU,
                )]
            }
            Some(_) => self
                .shown()
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let style = if self.top() + i == self.selected {
                        theme::SELECTED
                    } else {
                        theme::MENU
                    };
                    (format!(" {}", sanitize(f)), style)
                })
                .collect(),
        };
        let more = if self.more {
            " (first 20,000 files)"
        } else {
            ""
        };
        let title = format!(
            " @ files · {} match{} · ↑↓ Enter/Tab insert · Esc closes{more} ",
            self.matches.len(),
            if self.matches.len() == 1 { "" } else { "es" }
        );
        let height = (lines.len() as u16 + 1).min(input.y);
        if height < 2 {
            return;
        }
        let width = input.width;
        let area = Rect {
            x: input.x,
            y: input.y - height,
            width,
            height,
        };
        ratatui::widgets::Widget::render(ratatui::widgets::Clear, area, buf);
        buf.set_style(area, theme::MENU);
        let w = width as usize;
        buf.set_line(
            area.x,
            area.y,
            &Line::styled(truncate(&title, w), theme::MENU_KEY),
            width,
        );
        for (i, (text, style)) in lines.iter().take(height as usize - 1).enumerate() {
            let y = area.y + 1 + i as u16;
            buf.set_style(
                Rect {
                    y,
                    height: 1,
                    ..area
                },
                *style,
            );
            buf.set_line(area.x, y, &Line::styled(truncate(text, w), *style), width);
        }
    }
}

/// Whether an `@` just typed after `before` (the line before it) starts a word.
pub fn opens_after(before: &str) -> bool {
    before.chars().next_back().is_none_or(char::is_whitespace)
}

/// A subsequence score of `query` in `path` (case-insensitive): `None` when
/// the letters do not all appear in order; higher for letters next to each
/// other and at the start of a name.
pub fn score(query: &str, path: &str) -> Option<i64> {
    // One pass over the path, no allocation: it runs for every file at
    // every key typed.
    let mut total = 0i64;
    let mut last: Option<usize> = None;
    let mut chars = path.chars().enumerate();
    let mut before: Option<char> = None;
    for q in query.chars().flat_map(char::to_lowercase) {
        loop {
            let (i, c) = chars.next()?;
            let prev = before.replace(c);
            if !same_letter(c, q) {
                continue;
            }
            total += 1;
            if last.is_some_and(|l| l + 1 == i) {
                total += 5;
            }
            if prev.is_none_or(|b| matches!(b, '/' | '_' | '-' | '.')) {
                total += 3;
            }
            last = Some(i);
            break;
        }
    }
    Some(total)
}

/// `c` is the lowercase letter `q`, case aside.
fn same_letter(c: char, q: char) -> bool {
    if c.is_ascii() {
        c.to_ascii_lowercase() == q
    } else {
        c.to_lowercase().eq(std::iter::once(q))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subsequence_score_prefers_adjacent_letters_and_name_starts() {
        assert_eq!(score("xyz", "calculator.py"), None);
        assert!(score("calc", "calculator.py") > score("calc", "c_a_l_c.txt"));
        assert!(score("tc", "test_calculator.py").is_some());
        assert_eq!(score("", "a"), Some(0));
        assert!(score("CALC", "calculator.py").is_some(), "case-insensitive");
    }

    #[test]
    fn an_at_inside_a_word_does_not_open() {
        assert!(opens_after(""));
        assert!(opens_after("look at "));
        assert!(!opens_after("mail me at bob"));
    }

    #[test]
    fn binary_files_are_left_out() {
        let mut p = Picker::new();
        let files = [
            "logo.PNG",
            "calculator.py",
            "__pycache__/c.cpython-312.pyc",
            ".db",
            "notes.txt",
        ];
        p.set_files(files.map(String::from).to_vec(), false);
        assert_eq!(p.shown(), [".db", "notes.txt", "calculator.py"]);
    }

    #[test]
    fn the_list_scrolls_with_its_selection() {
        let mut p = Picker::new();
        let files: Vec<String> = (0..20).map(|i| format!("src/file{i:02}.rs")).collect();
        p.set_files(files, false);
        p.move_by(12);
        let chosen = p.chosen().map(str::to_string).expect("a selection");
        let shown = p.shown();
        assert_eq!(shown.len(), SHOWN);
        assert_eq!(shown.last().copied(), Some(chosen.as_str()), "{shown:?}");
        let mut buf = Buffer::empty(Rect::new(0, 0, 40, 20));
        p.render(Rect::new(0, 19, 40, 1), &mut buf);
        let row = (0..20u16)
            .find(|&y| {
                (0..40u16)
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
                    .contains(&chosen)
            })
            .expect("the selected file is drawn");
        assert_eq!(buf[(1, row)].bg, theme::SELECTED.bg.expect("a background"));
        p.move_by(-20);
        assert_eq!(p.shown().first().copied(), p.chosen());
    }

    #[test]
    fn filtering_and_choosing() {
        let mut p = Picker::new();
        assert_eq!(p.chosen(), None, "still listing");
        p.set_files(
            vec![
                "calculator.py".into(),
                "test_calculator.py".into(),
                "README.md".into(),
            ],
            false,
        );
        assert_eq!(p.shown().len(), 3);
        p.set_query("calc");
        assert_eq!(p.shown(), ["calculator.py", "test_calculator.py"]);
        p.move_by(1);
        assert_eq!(p.chosen(), Some("test_calculator.py"));
        p.move_by(5);
        assert_eq!(p.chosen(), Some("test_calculator.py"));
        p.set_query("zzz");
        assert_eq!(p.chosen(), None);
    }
}
