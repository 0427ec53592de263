//! The wording of a staged task's review, the same in every front end.

use crate::text::sanitize::sanitize;

/// One line: what of the stage was written into the workspace, what was
/// not, and where the stage stands now.
pub fn stage_reviewed_line(
    stage: &str,
    written: &[String],
    not_written: &[String],
    kept: bool,
) -> String {
    let names = |list: &[String]| {
        list.iter()
            .map(|p| sanitize(p).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut line = match written.len() {
        0 => "Nothing of the stage was written into the workspace".to_string(),
        _ => format!("Written into the workspace: {}", names(written)),
    };
    if !not_written.is_empty() {
        line.push_str(&format!("; not written: {}", names(not_written)));
    }
    if kept {
        line.push_str(&format!(
            ". The stage is kept: `stepwise stage apply {stage}` writes it, `stepwise stage discard {stage}` drops it, and the next staged task goes on in it."
        ));
    } else {
        line.push('.');
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_stage_says_how_to_apply_or_drop_it() {
        let kept = stage_reviewed_line("17-1-0", &[], &["a.py (conflict)".into()], true);
        assert!(
            kept.starts_with("Nothing of the stage was written"),
            "{kept}"
        );
        assert!(kept.contains("not written: a.py (conflict)"), "{kept}");
        assert!(kept.contains("stepwise stage apply 17-1-0"), "{kept}");
        let done = stage_reviewed_line("17-1-0", &["b.py".into()], &[], false);
        assert_eq!(done, "Written into the workspace: b.py.");
    }
}
