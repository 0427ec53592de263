//! The trust question on a real session: asked as a permission request on
//! the session id the client was given, when its first prompt arrives
//! (never inside `session/new`, whose id the client does not know yet),
//! showing the file and the values; what the answer does to the session.
//!
//! What must stay true: anything but an allow leaves the guarded values
//! withheld, and the client is told what was withheld and why (an
//! `agent_message_chunk`); a file that changed while it was asked is not
//! applied; the question is asked once per session.

use super::map;
use super::permission;
use super::rpc::{Outbox, RpcError};
use super::start::{Question, Start, Trust, trusted_config};
use crate::config::trust::{Answer, Pending, TrustStore};
use crate::config::{Config, ResumeFrom};
use agent_client_protocol_schema::v1::{RequestPermissionRequest, SessionNotification};

/// What the first prompt does about the folder's trust.
pub(super) enum Settled {
    /// Go on with the session as it is.
    AsIs,
    /// The folder was trusted: the session goes on with this configuration.
    Rebuild(Box<Config>),
}

/// Settle the session's trust at its first prompt (`resume`: how the
/// rebuilt session finds its transcript again).
pub(super) async fn settle(
    start: &Start,
    out: &Outbox,
    session: &str,
    trust: &mut Trust,
    resume: Option<ResumeFrom>,
) -> Result<Settled, RpcError> {
    let say = |text: String| {
        out.notify(
            "session/update",
            SessionNotification::new(session.to_string(), map::message(&text)),
        );
    };
    match std::mem::replace(trust, Trust::Settled) {
        Trust::Settled => Ok(Settled::AsIs),
        Trust::Withheld(pending) => {
            say(withheld(&pending, "this folder is not trusted"));
            Ok(Settled::AsIs)
        }
        Trust::Ask(question) => {
            if ask(out, session, &question).await == Answer::Declined {
                for p in &question.pending {
                    tracing::warn!(
                        "not applying what {} says about where requests go or what runs (folder not trusted)",
                        p.folder.display()
                    );
                }
                say(withheld(&question.pending, "the folder was not trusted"));
                return Ok(Settled::AsIs);
            }
            match trusted_config(start, &question, resume)? {
                Some(config) => Ok(Settled::Rebuild(Box::new(config))),
                None => {
                    let why = "the project file changed while its trust was asked";
                    say(withheld(&question.pending, why));
                    Ok(Settled::AsIs)
                }
            }
        }
    }
}

/// What the client is told about withheld values.
pub(super) fn withheld(pending: &[Pending], why: &str) -> String {
    let lines: Vec<String> = pending.iter().flat_map(Pending::lines).collect();
    format!(
        "stepwise runs with your own settings, not with these, because {why}:\n{}\n\n",
        lines.join("\n")
    )
}

/// Ask the client whether to trust the question's folders, on the session
/// it was given (`session`), remembering the answer when it says so.
async fn ask(out: &Outbox, session: &str, question: &Question) -> Answer {
    let mut store = TrustStore::load();
    let mut answer = Answer::Trusted;
    for (n, pending) in question.pending.iter().enumerate() {
        let options = permission::trust_options();
        let request = RequestPermissionRequest::new(
            session.to_string(),
            permission::trust_call(&format!("trust-{n}"), pending),
            options.clone(),
        );
        let reply = out.request("session/request_permission", request).await;
        let (given, remember) = permission::trust_answer(permission::choice(&reply, &options));
        if remember && let Err(e) = store.remember(pending, given) {
            tracing::warn!("cannot remember the trust answer: {e}");
        }
        if given == Answer::Declined {
            answer = Answer::Declined;
        }
    }
    answer
}
