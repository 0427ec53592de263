//! Fuzz the live-preview scanner of streaming tool arguments: any text, cut
//! at any character boundary, yields a partial field or nothing, never a
//! panic (one malformed reply must not end the session).

#![no_main]

use libfuzzer_sys::fuzz_target;
use stepwise::agent::model::live::partial_field;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for key in ["path", "content", ""] {
        let _ = partial_field(&text, key);
    }
    for (i, _) in text.char_indices() {
        let _ = partial_field(&text[..i], "path");
    }
});
