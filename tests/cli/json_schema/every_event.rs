//! One of each `AgentEvent`, for the schema test: the match at the end has
//! no wildcard, so a new variant does not compile until it is built here
//! (and then the schema test asks for its row in docs/json-events.md).

use stepwise::agent::*;
use stepwise::diff::FileDiff;
use stepwise::tools::ToolName;

pub fn diff() -> FileDiff {
    FileDiff::compute("calculator.py", Some("a\nb\n"), "a\nc\n")
}

/// One of each event, built here. The match below has no wildcard: a new
/// variant does not compile until it is built here (and documented).
pub fn every_event() -> Vec<AgentEvent> {
    let usage = stepwise::llm::TokenUsage::default();
    let request = |action| {
        AgentEvent::ApprovalRequested(ApprovalRequest {
            step: 1,
            call_id: "c".into(),
            tool: ToolName::WRITE_FILE.into(),
            action,
            allow_for_task: true,
            reply: tokio::sync::oneshot::channel().0,
        })
    };
    let receipt = Receipt {
        tests: Some(TestReceipt {
            command: "python3 -m unittest".into(),
            exit_code: Some(0),
            summary: "5 passed".into(),
            sandbox: "sandboxed".into(),
            passed: true,
            verified: stepwise::tools::testing::test_run::Verified::ExitCodeAndSummary,
        }),
        files: vec![FileStat {
            path: "a.py".into(),
            added: 1,
            removed: 0,
            created: true,
            by: Some("mcp filesystem".into()),
        }],
        diff_hash: "abc".into(),
        no_tool_used: false,
        no_test_command: false,
        changed_by_tests: vec![stepwise::tools::reading::snapshot::RunChange {
            path: "b.py".into(),
            change: stepwise::tools::reading::snapshot::Touch::Created,
            before: None,
            after: None,
            contents_known: true,
        }],
        kept_out: vec!["__pycache__/a.cpython-311.pyc (compiled Python)".into()],
        rewritten_by_every_run: vec!["report.txt".into()],
        tests_changed: vec![stepwise::tools::testing::test_infra::InfraChange {
            path: "conftest.py".into(),
            what: "test setup",
        }],
    };
    let events = vec![
        AgentEvent::SessionReady {
            rules: vec!["AGENTS.md".into()],
            sandbox: "sandboxed".into(),
            limits: "memory, processes and disk for the whole run".into(),
        },
        AgentEvent::TaskStarted {
            task: "t".into(),
            max_steps: 20,
            rules: vec![],
        },
        AgentEvent::ModelRequest { steps_done: 0 },
        AgentEvent::AssistantDelta { text: "a".into() },
        AgentEvent::AssistantMessage { text: "a".into() },
        AgentEvent::Usage(usage),
        AgentEvent::Retrying {
            retry: 1,
            max_retries: 4,
            delay_ms: 10,
            error: "HTTP 500".into(),
        },
        AgentEvent::ToolCallStreaming {
            index: 0,
            tool: ToolId::parse("write_file"),
            preview: stepwise::tools::calls::registry::LivePreview::WriteFile,
            fragment: "{".into(),
        },
        AgentEvent::LiveEditBase {
            index: 0,
            tool: ToolName::WRITE_FILE.into(),
            path: "a".into(),
            old: None,
        },
        AgentEvent::StepStarted {
            step: 1,
            max_steps: 20,
        },
        AgentEvent::ToolCallProposed {
            step: 1,
            call_id: "c".into(),
            tool: ToolName::WRITE_FILE.into(),
            kind: stepwise::agent::CallKind::Edit,
            target: "a".into(),
            arguments: serde_json::json!({}),
            diff: Some(diff()),
            needs_approval: true,
        },
        request(ApprovalAction::Edit {
            path: "a".into(),
            diff: diff(),
            proposed: String::new(),
            original: None,
        }),
        request(ApprovalAction::Patch {
            files: vec![diff()],
        }),
        request(ApprovalAction::Delete {
            path: "a".into(),
            diff: diff(),
        }),
        request(ApprovalAction::Undo {
            files: vec![diff()],
        }),
        request(ApprovalAction::KeepRunOutput {
            files: vec![diff()],
            code: true,
        }),
        request(ApprovalAction::ApplyStage {
            stage: "1-2-0".into(),
            files: vec![diff()],
            conflicts: vec!["b".into()],
            patch: String::new(),
        }),
        AgentEvent::StageChanged {
            stage: Some("1-2-0".into()),
            message: "Staged.".into(),
        },
        AgentEvent::StageReviewed {
            stage: "1-2-0".into(),
            written: vec!["a".into()],
            not_written: vec!["b (declined)".into()],
            kept: true,
        },
        request(ApprovalAction::RunTests {
            command: vec!["python3".into()],
            sandbox: "sandboxed".into(),
        }),
        request(ApprovalAction::McpCall {
            server: "t".into(),
            tool: "echo".into(),
            arguments: "{}".into(),
        }),
        AgentEvent::ToolRunning {
            step: 1,
            call_id: "c".into(),
            auto_approved: false,
        },
        AgentEvent::ToolFinished {
            step: 1,
            call_id: "c".into(),
            tool: ToolId::parse("nope"),
            status: CallStatus::Ok,
            summary: "s".into(),
            result: serde_json::json!({"success": true}),
            coloured_output: None,
        },
        AgentEvent::ProtocolRepair {
            attempt: 1,
            error: "e".into(),
            cut_at_limit: false,
        },
        AgentEvent::GateRefused {
            step: 2,
            reason: "r".into(),
        },
        AgentEvent::FinalAnswer {
            text: "done".into(),
            receipt,
        },
        AgentEvent::SessionDiff {
            files: vec![diff()],
            git: Some(GitStatus {
                branch: Some("main".into()),
                other_dirty: vec![],
            }),
        },
        AgentEvent::UndoFinished {
            reverted: vec![],
            error: None,
        },
        AgentEvent::SessionFiles {
            files: vec!["a.py".into()],
        },
        AgentEvent::ModelsListed {
            current: "m".into(),
            models: vec!["m".into()],
            error: None,
        },
        AgentEvent::Error {
            message: "m".into(),
        },
        AgentEvent::ResumeRefused {
            message: "m".into(),
        },
        AgentEvent::ScopesChanged {
            approved: vec![ToolName::RUN_TESTS.into(), ToolId::mcp("fs", "write_file")],
        },
        AgentEvent::TaskFinished {
            reason: FinishReason::Error("e".into()),
            steps: 1,
            usage,
            cost_usd: None,
        },
        AgentEvent::Cost {
            request_usd: 0.1,
            task_usd: 0.1,
            session_usd: 0.1,
        },
        AgentEvent::Compacted {
            before_tokens: 2,
            after_tokens: 1,
            elided: 1,
            summarized: 0,
        },
        AgentEvent::ModelChanged { model: "m".into() },
        AgentEvent::SessionRestored {
            session: "2026-12-01T09-00-00Z".into(),
            entries: vec![
                RestoredEntry::User { text: "t".into() },
                RestoredEntry::Assistant { text: "a".into() },
                RestoredEntry::Tool {
                    name: "read_file".into(),
                    arguments: "{}".into(),
                    call_id: "c1".into(),
                    call_kind: stepwise::agent::CallKind::Read,
                    target: "a.py".into(),
                    status: Some(CallStatus::Ok),
                    detail: String::new(),
                    summary: String::new(),
                    edited: false,
                    output: String::new(),
                },
                RestoredEntry::Gate { text: "g".into() },
                RestoredEntry::Notice { text: "n".into() },
            ],
            tasks: 1,
            steps: 2,
            usage,
            cost_usd: None,
        },
        AgentEvent::TaskCutOff {
            files: vec!["calculator.py".into()],
        },
        AgentEvent::McpServer(stepwise::mcp::ServerReport {
            server: "t".into(),
            state: stepwise::mcp::ServerState::Running,
            tools: vec!["mcp__t__echo".into()],
            message: None,
        }),
    ];
    for event in &events {
        match event {
            AgentEvent::SessionReady { .. }
            | AgentEvent::TaskStarted { .. }
            | AgentEvent::ModelRequest { .. }
            | AgentEvent::AssistantDelta { .. }
            | AgentEvent::AssistantMessage { .. }
            | AgentEvent::Usage(_)
            | AgentEvent::Retrying { .. }
            | AgentEvent::ToolCallStreaming { .. }
            | AgentEvent::LiveEditBase { .. }
            | AgentEvent::StepStarted { .. }
            | AgentEvent::ToolCallProposed { .. }
            | AgentEvent::ApprovalRequested(_)
            | AgentEvent::ToolRunning { .. }
            | AgentEvent::ToolFinished { .. }
            | AgentEvent::ProtocolRepair { .. }
            | AgentEvent::GateRefused { .. }
            | AgentEvent::FinalAnswer { .. }
            | AgentEvent::SessionDiff { .. }
            | AgentEvent::UndoFinished { .. }
            | AgentEvent::StageReviewed { .. }
            | AgentEvent::StageChanged { .. }
            | AgentEvent::SessionFiles { .. }
            | AgentEvent::ModelsListed { .. }
            | AgentEvent::SessionRestored { .. }
            | AgentEvent::TaskCutOff { .. }
            | AgentEvent::Error { .. }
            | AgentEvent::ResumeRefused { .. }
            | AgentEvent::ScopesChanged { .. }
            | AgentEvent::TaskFinished { .. }
            | AgentEvent::Cost { .. }
            | AgentEvent::Compacted { .. }
            | AgentEvent::ModelChanged { .. } => {}
            AgentEvent::McpServer(_) => {}
        }
    }
    events
}
