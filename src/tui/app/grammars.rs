//! Syntax grammars made ready off the UI thread (see
//! `render::highlight_warm`): the App asks for them through effects and
//! hears back through `Msg::GrammarReady`, which asks for a frame like any
//! message; until then code blocks of that language are shown plain.

use crate::tui::app::{App, Effect};

impl App {
    /// Compile grammars on a worker, never on the UI thread (the real app
    /// and the bench; without it they load on first use, inline).
    pub fn set_grammars_off_thread(&mut self) {
        self.conversation.grammars().set_off_thread();
    }

    /// The grammars wanted since the last effects were taken, as effects.
    pub(in crate::tui) fn queue_warm_ups(&mut self) {
        for (lang, sample) in self.conversation.grammars().take_wanted() {
            self.effect(Effect::WarmGrammar { lang, sample });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentEvent;
    use crate::tui::app::Msg;
    use crate::tui::render::highlight_warm;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    /// Whether `fn` of `fn main` has another colour than `main`.
    fn keyword_stands_out(term: &Terminal<TestBackend>) -> bool {
        let buf = term.backend().buffer();
        for y in 0..buf.area.height {
            let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
            if let Some(x) = row.find("fn main") {
                let x = u16::try_from(x).unwrap_or(0);
                return buf[(x, y)].fg != buf[(x + 3, y)].fg;
            }
        }
        panic!("no `fn main` on screen");
    }

    #[test]
    fn a_block_is_plain_until_its_grammar_is_ready_then_coloured() {
        let mut app = App::new("m", "~/w");
        app.set_grammars_off_thread();
        let text = "Here:\n\n```rust\nfn main() {\n    let x = 1;\n}\n```\n".to_string();
        app.update(Msg::Agent(AgentEvent::AssistantDelta { text }));
        app.update(Msg::Agent(AgentEvent::AssistantMessage {
            text: String::new(),
        }));
        let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
        term.draw(|f| crate::tui::prepare_and_draw(f, &mut app))
            .unwrap();
        assert!(!keyword_stands_out(&term), "plain while not ready");
        assert!(!app.colouring_due(), "no frames spent waiting");
        // The App asks for the grammar once, as an effect for the run loop.
        let wanted: Vec<(String, Vec<String>)> = (app.take_effects().into_iter())
            .filter_map(|e| match e {
                Effect::WarmGrammar { lang, sample } => Some((lang, sample)),
                _ => None,
            })
            .collect();
        assert_eq!(wanted.len(), 1, "{wanted:?}");
        let (lang, sample) = wanted.into_iter().next().unwrap();
        assert_eq!(lang, "rust");
        assert!(sample.iter().any(|l| l.contains("fn main")));
        term.draw(|f| crate::tui::prepare_and_draw(f, &mut app))
            .unwrap();
        assert!(app.take_effects().is_empty(), "asked for once");
        assert!(!keyword_stands_out(&term), "still plain");
        // The worker's answer (what the run loop does off the UI thread).
        let known = highlight_warm::warm(&lang, &sample);
        app.update(Msg::GrammarReady { lang, known });
        // Coloured on the UI's worker: frames look for the result.
        let waited = std::time::Instant::now();
        while waited.elapsed() < std::time::Duration::from_secs(20) {
            term.draw(|f| crate::tui::prepare_and_draw(f, &mut app))
                .unwrap();
            if !app.colouring_due() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(keyword_stands_out(&term), "coloured once ready");
    }
}
