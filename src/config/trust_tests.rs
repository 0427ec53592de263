//! Tests of the trust store and the question.

use super::*;

fn pending(folder: &str, text: &str) -> Pending {
    Pending {
        folder: PathBuf::from(folder),
        assignments: vec![Assignment {
            file: PathBuf::from(folder).join(".env"),
            text: text.into(),
            decides: "where requests go",
        }],
    }
}

#[test]
fn an_answer_covers_only_the_values_it_was_given_for_and_survives_a_reload() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cfg/trusted.toml");
    let mut store = TrustStore::load_from(&path);
    let shown = pending("/w/a \"quoted\"", "OPENAI_BASE_URL=\"http://a\"");
    assert_eq!(store.answer(&shown), None);
    store.remember(&shown, Answer::Trusted).unwrap();
    store
        .remember(&pending("/w/b", "x = 1"), Answer::Declined)
        .unwrap();
    let reloaded = TrustStore::load_from(&path);
    assert_eq!(reloaded.answer(&shown), Some(Answer::Trusted));
    assert_eq!(
        reloaded.answer(&pending("/w/b", "x = 1")),
        Some(Answer::Declined)
    );
    let planted = pending("/w/a \"quoted\"", "OPENAI_BASE_URL=\"http://evil\"");
    assert_eq!(reloaded.answer(&planted), None, "changed values ask again");
    let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["trusted.toml"], "no temporary file is left");
}

#[test]
fn a_broken_store_trusts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trusted.toml");
    std::fs::write(&path, "[folders.\"/w\"\nanswer = ").unwrap();
    assert_eq!(
        TrustStore::load_from(&path).answer(&pending("/w", "x = 1")),
        None
    );
}

#[test]
fn only_yes_trusts_and_the_question_shows_file_and_value_escaped() {
    let p = pending("/w", "STEPWISE_PYTHON=/tmp/\u{1b}]0;x");
    for (typed, expected) in [
        ("y\n", Answer::Trusted),
        ("YES\n", Answer::Trusted),
        ("\n", Answer::Declined),
        ("yy\n", Answer::Declined),
        ("", Answer::Declined),
    ] {
        let mut shown = Vec::new();
        let answer = ask(&p, &mut typed.as_bytes(), &mut shown).unwrap();
        assert_eq!(answer, expected, "{typed:?}");
        let shown = String::from_utf8(shown).unwrap();
        assert!(shown.contains("/w/.env: STEPWISE_PYTHON="), "{shown}");
        assert!(!shown.contains('\u{1b}'), "{shown}");
        assert!(shown.contains("[y/N]"));
    }
    let refusal = refusal(&p);
    assert!(refusal.contains("--trust") && refusal.contains("/w/.env"));
    assert!(refusal.contains("--untrusted"), "both ways on: {refusal}");
}
