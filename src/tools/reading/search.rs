//! `search_text {pattern, path, glob?, ignore_case}`: a regular expression
//! (the `regex` crate's syntax) searched line by line in the text files
//! under a folder, with the walk of `list_files` (same skips) and the deny
//! list. A first pass over the tree, on every core, only counts matching
//! lines per file; a second pass re-reads the few files whose lines are shown,
//! through the workspace's full checks, and redacts credentials there on the
//! whole file, exactly as `read_file` would show them.
//!
//! What must stay true: a denied, binary, non-UTF-8 or special file is never
//! searched, and a multiply linked one never matches (it reads as text
//! without a match, whatever it holds, so the counts tell nothing of it);
//! no line reaches the model unredacted; at most [`MAX_MATCHES`] matches of
//! at most [`MAX_LINE_CHARS`] characters.

use crate::tools::ToolOutput;
use crate::tools::reading::search_read::{Looked, Reader};
use crate::tools::reading::text::{MAX_SCAN_BYTES, decode_text, to_lf};
use crate::tools::reading::walk::{groups, in_parallel_with, parts, relative_to, split, walker_of};
use crate::tools::redact::{redact, redact_range};
use crate::tools::workspace::{PathError, RelPath, Workspace};
use globset::GlobMatcher;
use regex::{Regex, RegexBuilder};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Most matches returned.
pub const MAX_MATCHES: usize = 200;
/// Longest line text returned, in characters.
pub const MAX_LINE_CHARS: usize = 300;

/// The arguments of a `search_text` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchArgs {
    pub pattern: String,
    pub path: String,
    pub glob: Option<String>,
    pub ignore_case: bool,
}

pub fn search_text(ws: &Workspace, args: &SearchArgs) -> ToolOutput {
    search(ws, args).unwrap_or_else(|e| ToolOutput::error(e.0))
}

/// What the first pass found, in one part of the tree or in all of it.
#[derive(Default)]
struct Tally {
    /// Files with matches and their count of matching lines.
    hits: Vec<(String, usize)>,
    searched: usize,
    skipped: usize,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.hits.extend(other.hits);
        self.searched += other.searched;
        self.skipped += other.skipped;
    }
}

fn search(ws: &Workspace, args: &SearchArgs) -> Result<ToolOutput, PathError> {
    let regex = RegexBuilder::new(&args.pattern)
        .case_insensitive(args.ignore_case)
        .multi_line(true)
        .crlf(true)
        .build()
        .map_err(|e| {
            PathError(format!(
                "the pattern is not a valid regular expression: {e}"
            ))
        })?;
    let glob = match &args.glob {
        None => None,
        Some(g) => Some(
            globset::GlobBuilder::new(g)
                .literal_separator(g.contains('/'))
                .build()
                .map_err(|e| PathError(format!("the glob {g:?} is not valid: {e}")))?
                .compile_matcher(),
        ),
    };
    let rel = Workspace::check(&args.path)?;
    ws.deny().check(&rel)?;
    let Some(meta) = ws.metadata(&rel)? else {
        return Err(PathError(format!(
            "{} does not exist; use list_files to see what exists",
            rel.display()
        )));
    };
    let staged_only = ws.stage().is_some() && ws.real_dir(&rel).is_err() && meta.is_dir();
    let mut tally = if staged_only {
        // A folder only the stage has: its staged files are all there is.
        Tally::default()
    } else if meta.is_dir() {
        first_pass(ws, &ws.real_dir(&rel)?, &regex, glob.as_ref())
    } else if ws.stage().is_some() {
        // One file, maybe staged: the staged pass below reads it.
        Tally::default()
    } else {
        let mut one = Tally::default();
        let search = Search::new(ws, &regex, glob.as_ref());
        search.look(
            &ws.root().join(rel.as_path()),
            &mut Reader::default(),
            &mut one,
        );
        one
    };
    if let Some(stage) = ws.stage() {
        staged_pass(ws, stage, &rel, &regex, glob.as_ref(), &mut tally);
    }
    let mut hits = tally.hits;
    hits.sort();
    let total: usize = hits.iter().map(|(_, n)| n).sum();
    let mut matches: Vec<Value> = Vec::new();
    for (path, _) in &hits {
        if matches.len() >= MAX_MATCHES {
            break;
        }
        let Ok(file) = Workspace::check(path) else {
            continue;
        };
        shown_lines(ws, &file, &regex, &mut matches);
    }
    matches.truncate(MAX_MATCHES);
    let truncated = total > matches.len();
    let searched = tally.searched;
    let summary = match total {
        0 => format!("no matches in {searched} files"),
        1 => "1 match".into(),
        n if truncated => format!("{} of {n} matches", matches.len()),
        n => format!("{n} matches in {} files", hits.len()),
    };
    let mut payload = json!({
        "pattern": args.pattern,
        "path": rel.display(),
        "matches": matches,
        "total": total,
        "truncated": truncated,
        "files_searched": searched,
    });
    if truncated {
        payload["note"] = json!(format!(
            "showing the first {} of {total} matching lines (sorted by path and line); \
             narrow the pattern, the path or the glob to see the rest",
            matches.len()
        ));
    }
    let skipped = tally.skipped;
    if skipped > 0 {
        payload["skipped_files"] = json!(skipped);
    }
    Ok(ToolOutput::ok(summary, payload))
}

/// Upper-level files searched per job.
const FILES_PER_JOB: usize = 256;

/// One job of the first pass: some files of the upper folders, or some
/// folders walked whole.
enum Part<'a> {
    Files(&'a [PathBuf]),
    Tree(&'a [PathBuf]),
}

/// What every job needs to look at a file.
struct Search<'a> {
    ws: &'a Workspace,
    regex: &'a Regex,
    glob: Option<&'a GlobMatcher>,
    /// The glob names a path (it holds a `/`), not a file name.
    by_path: bool,
}

/// Count matching lines in every searchable file under the folder `start`,
/// on every core: the tree is cut into parts (see [`split`]), each walked
/// by one thread with one read buffer it reuses.
fn first_pass(ws: &Workspace, start: &Path, regex: &Regex, glob: Option<&GlobMatcher>) -> Tally {
    let search = Search::new(ws, regex, glob);
    let mut tally = Tally::default();
    let cut = split(ws.deny(), ws.root(), start, parts());
    let parts: Vec<Part> = cut
        .files
        .chunks(FILES_PER_JOB)
        .map(Part::Files)
        .chain(groups(&cut.folders).into_iter().map(Part::Tree))
        .collect();
    let done = in_parallel_with(&parts, Reader::default, |reader, part| {
        let mut found = Tally::default();
        match part {
            Part::Files(files) => {
                for file in *files {
                    search.look(file, reader, &mut found);
                }
            }
            Part::Tree(folders) => {
                for entry in walker_of(ws.root(), folders)
                    .into_iter()
                    .flat_map(|w| w.build().flatten())
                {
                    if entry.file_type().is_some_and(|t| t.is_file()) {
                        search.look(entry.path(), reader, &mut found);
                    }
                }
            }
        }
        found
    });
    for found in done {
        tally.add(found);
    }
    tally
}

impl<'a> Search<'a> {
    fn new(ws: &'a Workspace, regex: &'a Regex, glob: Option<&'a GlobMatcher>) -> Self {
        Search {
            ws,
            regex,
            glob,
            by_path: glob.is_some_and(|g| g.glob().glob().contains('/')),
        }
    }

    /// Count the matching lines of the file at `path` (found by a walk) if
    /// the glob selects it and it is a searchable text file.
    fn look(&self, path: &Path, reader: &mut Reader, found: &mut Tally) {
        let relative = relative_to(self.ws.root(), path);
        let name = path.file_name().unwrap_or_default();
        let selected = self.glob.is_none_or(|g| {
            if self.by_path {
                g.is_match(relative)
            } else {
                g.is_match(name)
            }
        });
        if !selected
            || self
                .ws
                .deny()
                .denies_walked(relative, &name.to_string_lossy())
        {
            return;
        }
        match reader.count(self.ws, relative, self.regex) {
            Looked::Searched(n) => {
                found.searched += 1;
                if n > 0 {
                    found
                        .hits
                        .push((relative.to_string_lossy().into_owned(), n));
                }
            }
            Looked::Skipped => found.skipped += 1,
        }
    }
}

/// In a staged task: the walk saw the workspace, so what the stage changed
/// under `rel` replaces it. Staged and deleted files leave the walk's
/// hits; each staged file (and, for a search of one file, that file) is
/// counted through the workspace's staged reads.
fn staged_pass(
    ws: &Workspace,
    stage: &crate::tools::stage::Stage,
    rel: &RelPath,
    regex: &Regex,
    glob: Option<&GlobMatcher>,
    tally: &mut Tally,
) {
    use crate::tools::stage::Lookup;
    let top = matches!(rel.as_path().to_str(), Some("" | "."));
    let under = |p: &Path| top || p.starts_with(rel.as_path());
    tally
        .hits
        .retain(|(p, _)| stage.lookup(Path::new(p)) == Lookup::NotStaged);
    let mut paths: Vec<String> = stage
        .paths()
        .into_iter()
        .filter(|(path, deleted)| !deleted && under(Path::new(path)))
        .map(|(path, _)| path)
        .collect();
    // A search of one file the stage did not touch reads it all the same.
    if ws.metadata(rel).ok().flatten().is_some_and(|m| m.is_file())
        && !paths.iter().any(|p| Path::new(p) == rel.as_path())
    {
        paths.push(rel.display());
    }
    let by_path = glob.is_some_and(|g| g.glob().glob().contains('/'));
    for path in paths {
        let path_ref = Path::new(&path);
        let name = path_ref.file_name().unwrap_or_default();
        let selected = glob.is_none_or(|g| match by_path {
            true => g.is_match(path_ref),
            false => g.is_match(name),
        });
        if !selected || ws.deny().denies_walked(path_ref, &name.to_string_lossy()) {
            continue;
        }
        let Ok(file) = Workspace::check(&path) else {
            continue;
        };
        let text = ws
            .read_bytes(&file, MAX_SCAN_BYTES)
            .ok()
            .flatten()
            .and_then(|b| decode_text(&file, b).ok());
        match text {
            Some(text) => {
                tally.searched += 1;
                let n = crate::tools::reading::search_read::count_lines(regex, &text);
                if n > 0 {
                    tally.hits.push((path, n));
                }
            }
            None => tally.skipped += 1,
        }
    }
}

/// Append the matching lines of one file, redacted and cut, to `out`.
fn shown_lines(ws: &Workspace, rel: &RelPath, regex: &Regex, out: &mut Vec<Value>) {
    let Ok(Some(bytes)) = ws.read_bytes(rel, MAX_SCAN_BYTES) else {
        return;
    };
    let Ok(text) = decode_text(rel, bytes) else {
        return;
    };
    let view = to_lf(&text);
    let hidden = redact(&view).hidden;
    let mut line_no = 1;
    let mut counted_to = 0;
    let mut at = 0;
    while at <= view.len() && out.len() < MAX_MATCHES {
        let Some(m) = regex.find_at(&view, at) else {
            break;
        };
        let line_start = view[..m.start()].rfind('\n').map_or(0, |i| i + 1);
        let line_end = view[m.start()..]
            .find('\n')
            .map_or(view.len(), |i| m.start() + i);
        line_no += memchr::memchr_iter(b'\n', &view.as_bytes()[counted_to..line_start]).count();
        counted_to = line_start;
        let (shown, _) = redact_range(&view, &hidden, line_start..line_end);
        let shown = shown.trim_end_matches('\r');
        let cut: String = shown.chars().take(MAX_LINE_CHARS).collect();
        out.push(json!({"path": rel.display(), "line": line_no, "text": cut}));
        at = line_end + 1;
    }
}
