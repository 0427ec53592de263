//! The test subprocess never sees secrets. In its own test binary because it
//! sets process environment variables, which must not race other threads.

// Tests may panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;
use stepwise::tools::Workspace;
use stepwise::tools::testing::test_runner::run_tests;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn the_test_process_sees_no_secrets() {
    // SAFETY: set before any test subprocess of this test binary reads it; the
    // variables are unique to this test.
    unsafe {
        std::env::set_var("OPENAI_API_KEY", "sk-should-not-leak");
        std::env::set_var("STEPWISE_TEST_TOKEN", "tok-should-not-leak");
    }
    let body = "import os, unittest\n\
        class T(unittest.TestCase):\n\
        \x20   def test_env(self):\n\
        \x20       print('ENV', sorted(k for k in os.environ if 'KEY' in k or 'TOKEN' in k))\n\
        \x20       self.assertNotIn('OPENAI_API_KEY', os.environ)\n\
        \x20       self.assertNotIn('STEPWISE_TEST_TOKEN', os.environ)\n\
        \x20       self.assertIn('PATH', os.environ)\n";
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("test_env.py"), body).unwrap();
    let ws = Workspace::open(tmp.path()).unwrap();
    let out = run_tests(
        ws.root(),
        &stepwise::tools::TestCommands::detect(&ws, &[])
            .get("unittest")
            .cloned()
            .unwrap(),
        Duration::from_secs(60),
        &CancellationToken::new(),
    )
    .await;
    assert!(out.success, "{}", out.body);
    assert_eq!(out.body["returncode"], 0);
    assert!(!out.body.to_string().contains("should-not-leak"));
}
