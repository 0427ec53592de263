//! The sandbox against plants, through the real binary: what a hostile
//! test suite leaves in the workspace for code outside (or a later run) to
//! execute. A planted `.git` or `.pyc`, compiled files that would run
//! instead of the reviewed source, installed packages rewritten, files
//! hard-linked out of the workspace, and floods that hide what a run did.
//! Each test lets the mock model ask for an approved `run_tests` of a test
//! file that tries it.

use crate::sandbox::{kernel_lacks, output_of, run_in, run_with_env, setup};
use crate::sandbox_hardening::lacks;
use serde_json::json;
use std::path::Path;

/// Escape: a test planted a `.git` with `core.fsmonitor` (the
/// user's next `git status` ran it), a `.pyc` that ran instead of the
/// reviewed source, a self-ignored folder and a symbolic link, and nothing
/// reported them. A nested repository's `.git`
/// is read-only now, the plants are reported first, and a Python the test
/// starts with bytecode writing turned back on writes none into an existing
/// `__pycache__` (covered for the run); one it makes is reported.
#[tokio::test]
async fn planted_git_and_pyc_are_reported_and_nested_git_is_read_only() {
    if kernel_lacks(true, false) || lacks(|s| s.workspace) {
        return;
    }
    let body = "import subprocess, sys\n\
        try:\n\
        \x20   open('vendor/lib/.git/config', 'a').write('[core]\\n\\tfsmonitor = touch /tmp/owned\\n')\n\
        \x20   print('NESTED written')\n\
        except OSError as e:\n\
        \x20   print('NESTED', e.errno)\n\
        os.makedirs('.git', exist_ok=True)\n\
        open('.git/config', 'w').write('[core]\\n\\tfsmonitor = touch /tmp/owned\\n')\n\
        os.makedirs('pkg/__pycache__', exist_ok=True)\n\
        open('pkg/__pycache__/mod.cpython-311.pyc', 'wb').write(b'planted')\n\
        env = {k: v for k, v in os.environ.items() if k != 'PYTHONDONTWRITEBYTECODE'}\n\
        subprocess.run([sys.executable, '-c', 'import helper, fresh.helper2'], env=env, check=True)\n\
        os.makedirs('quiet', exist_ok=True)\n\
        open('quiet/.gitignore', 'w').write('*\\n')\n\
        open('quiet/payload.py', 'w').write('x')\n\
        os.symlink('/etc/passwd', 'passwd-link')\n\
        print('PREFIX', os.environ.get('PYTHONPYCACHEPREFIX'))\n";
    let s = setup(body, "");
    let ws = s.ws.path();
    std::fs::create_dir_all(ws.join("vendor/lib/.git")).unwrap();
    std::fs::write(ws.join("vendor/lib/.git/config"), "[core]\n").unwrap();
    std::fs::write(ws.join("helper.py"), "X = 1\n").unwrap();
    std::fs::create_dir_all(ws.join("__pycache__")).unwrap();
    std::fs::create_dir_all(ws.join("fresh")).unwrap();
    std::fs::write(ws.join("fresh/helper2.py"), "Y = 1\n").unwrap();
    std::fs::create_dir_all(ws.join("pkg")).unwrap();
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    let output = output_of(&result);
    assert_eq!(result["success"], true, "{result}");
    assert!(output.contains("NESTED 30"), "{output}");
    assert_eq!(
        std::fs::read_to_string(ws.join("vendor/lib/.git/config")).unwrap(),
        "[core]\n"
    );
    let summary = result["summary"].as_str().unwrap_or_default();
    assert!(
        summary.starts_with("WARNING: the run wrote what would run later"),
        "{result}"
    );
    assert!(
        summary.contains(".git/config (git metadata)")
            && summary.contains("pkg/__pycache__/mod.cpython-311.pyc"),
        "{result}"
    );
    // A self-ignored folder and a symbolic link are named too, and none of
    // it is in the workspace.
    let notes = result["sandbox_notes"].to_string();
    assert!(
        notes.contains("quiet/.gitignore") && summary.contains("passwd-link (a symbolic link)"),
        "{result}"
    );
    for planted in [".git", "quiet", "passwd-link", "pkg/__pycache__"] {
        assert!(
            !ws.join(planted).exists(),
            "{planted} reached the workspace"
        );
    }
    // Python keeps its own compiled library (no prefix), and the covered
    // `__pycache__` took no bytecode; the one the run made is a plant.
    assert!(output.contains("PREFIX None"), "{output}");
    let written = std::fs::read_dir(ws.join("__pycache__")).unwrap().count();
    assert_eq!(written, 0, "helper.py was compiled into the workspace");
    assert!(summary.contains("fresh/__pycache__/helper2."), "{result}");
}

/// Escape: a `.pyc` in the workspace (planted by an earlier run, or
/// shipped with the repository; unchecked-hash ones are never compared
/// with their source) ran instead of the reviewed source, so the tests
/// judged other code than the user had approved. Every `__pycache__` is
/// covered for the run, also one behind a link or one holding another,
/// and Python keeps its own compiled library (no prefix).
#[tokio::test]
async fn a_compiled_file_in_the_workspace_never_runs_instead_of_its_source() {
    if kernel_lacks(true, false) || lacks(|s| s.workspace) {
        return;
    }
    let body = "import fake, pkg.mod, linked\n\
        print('FAKE', fake.X, pkg.mod.X, linked.X)\n\
        print('PREFIX', os.environ.get('PYTHONPYCACHEPREFIX'))\n";
    let s = setup(body, "");
    let ws = s.ws.path();
    // Each module's `X = 2` compiled unchecked, then its source set to
    // `X = 1`: outside the sandbox, Python runs the compiled `X = 2`.
    let plant = "import os, py_compile\n\
        os.makedirs('pkg', exist_ok=True)\n\
        open('pkg/__init__.py', 'w').close()\n\
        os.makedirs('assets/c', exist_ok=True)\n\
        os.symlink('assets/c', '__pycache__')\n\
        for name in ('fake', 'pkg/mod', 'linked'):\n\
        \x20   open(name + '.py', 'w').write('X = 2\\n')\n\
        \x20   py_compile.compile(name + '.py', invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)\n\
        \x20   open(name + '.py', 'w').write('X = 1\\n')\n\
        os.makedirs('pkg/__pycache__/deeper/__pycache__', exist_ok=True)\n";
    let python = |code: &str| {
        let out = std::process::Command::new("python3")
            .args(["-c", code])
            .current_dir(ws)
            .env_remove("PYTHONPYCACHEPREFIX")
            .env_remove("PYTHONDONTWRITEBYTECODE")
            .env_remove("SOURCE_DATE_EPOCH")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    python(plant);
    let compiled = std::fs::read_dir(ws.join("assets/c")).unwrap().count();
    assert_eq!(compiled, 2, "fake and linked compiled through the link");
    let outside = python("import fake, pkg.mod, linked; print(fake.X, pkg.mod.X, linked.X)");
    assert_eq!(outside, "2 2 2\n", "the plants work outside");
    // A prefix in the user's environment would lead Python past the covers.
    let prefix = ws.join("elsewhere");
    let envs: &[(&str, &Path)] = &[("PYTHONPYCACHEPREFIX", &prefix)];
    let (_, result) = run_with_env(&s, "unittest", envs).await;
    let output = output_of(&result);
    assert_eq!(result["success"], true, "{result}");
    assert!(output.contains("FAKE 1 1 1"), "{output}");
    // The covers did it, not a prefix (the user's or one that would make
    // Python compile its whole library on every run).
    assert!(output.contains("PREFIX None"), "{output}");
}

/// Escape: a uv-made `.venv` is hard-linked into uv's cache; a test
/// appended code to a package file there and another project's `import six`
/// ran it. A package folder is the run's own throwaway layer now (the write
/// is copied up, never made through the link); linked files elsewhere are
/// read-only for the run, and past a bound the run is refused, naming them.
#[tokio::test]
async fn hard_linked_files_cannot_change_their_other_copies() {
    if kernel_lacks(true, false) || lacks(|s| s.workspace) {
        return;
    }
    let body = "p = '.venv/lib/python3/site-packages/six.py'\n\
        try:\n\
        \x20   open(p, 'a').write('\\nimport os; os.system(\"touch /tmp/owned\")\\n')\n\
        \x20   print('APPENDED')\n\
        except OSError as e:\n\
        \x20   print('REFUSED', e.errno)\n\
        print('READ', open(p).read().strip())\n";
    let s = setup(body, "");
    // uv's cache, outside the workspace, and the venv's link to it.
    let cache = s.home.path().join(".cache/uv/archive-v0/abc/six.py");
    std::fs::create_dir_all(cache.parent().unwrap()).unwrap();
    std::fs::write(&cache, "SIX = 1").unwrap();
    let venv = s.ws.path().join(".venv/lib/python3/site-packages");
    std::fs::create_dir_all(&venv).unwrap();
    std::fs::hard_link(&cache, venv.join("six.py")).unwrap();
    // Another linked file, outside any package folder.
    let vendored = s.ws.path().join("vendor/six.py");
    std::fs::create_dir_all(vendored.parent().unwrap()).unwrap();
    std::fs::hard_link(&cache, &vendored).unwrap();
    let vendor_body = "try:\n\
        \x20   open('vendor/six.py', 'a').write('planted')\n\
        except OSError as e:\n\
        \x20   print('VENDOR REFUSED', e.errno)\n";
    let test = s.ws.path().join("test_escape.py");
    let source = std::fs::read_to_string(&test).unwrap();
    let indented: String = vendor_body
        .lines()
        .map(|l| format!("        {l}\n"))
        .collect();
    std::fs::write(&test, format!("{source}{indented}")).unwrap();
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    let output = output_of(&result);
    assert_eq!(result["success"], true, "{result}");
    assert!(output.contains("APPENDED"), "{output}");
    assert_eq!(std::fs::read_to_string(&cache).unwrap(), "SIX = 1");
    let in_venv = std::fs::read_to_string(venv.join("six.py")).unwrap();
    assert_eq!(in_venv, "SIX = 1", "the layer went with the run");
    // Written through the other link, the file was copied into the run's
    // layer: named, not kept (it is code), and its other copy untouched.
    if lacks(|s| s.layer) {
        assert!(output.contains("VENDOR REFUSED 30"), "{output}");
        return;
    }
    assert!(!output.contains("VENDOR REFUSED"), "{output}");
    assert!(
        result["sandbox_notes"]
            .to_string()
            .contains("vendor/six.py ("),
        "{result}"
    );
    assert_eq!(std::fs::read_to_string(&vendored).unwrap(), "SIX = 1");

    // However many files are linked, none needs a bind of its own.
    let many = s.ws.path().join("vendor/many");
    std::fs::create_dir_all(&many).unwrap();
    for i in 0..=stepwise::tools::sandbox::plants::MAX_LINKED {
        std::fs::hard_link(&cache, many.join(format!("f{i}.py"))).unwrap();
    }
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(std::fs::read_to_string(&cache).unwrap(), "SIX = 1");
}

/// Escape: a test rewrote an installed package (`node_modules`, a virtual
/// environment of any name) or planted a `.pyc` in one, and the user's next
/// `npm test` or `python` outside the sandbox ran it; the snapshot does not
/// look into `node_modules`. Each package folder is a throwaway layer for
/// the run: writes work (vite's cache), and nothing of them is left.
#[tokio::test]
async fn installed_packages_are_a_throwaway_layer_for_the_run() {
    if kernel_lacks(true, false) || lacks(|s| s.workspace) {
        return;
    }
    let body = "index = 'node_modules/left-pad/index.js'\n\
        open(index, 'a').write('require(\"child_process\").exec(\"id\")')\n\
        os.makedirs('node_modules/.vite/vitest', exist_ok=True)\n\
        open('node_modules/.vite/vitest/results.json', 'w').write('{}')\n\
        cache = 'env/lib/python3/site-packages/__pycache__'\n\
        os.makedirs(cache, exist_ok=True)\n\
        open(cache + '/six.cpython-311.pyc', 'wb').write(b'planted')\n\
        os.remove('env/lib/python3/site-packages/six.py')\n\
        print('INSIDE', 'exec' in open(index).read(), os.path.exists('env/lib/python3/site-packages/six.py'))\n";
    let s = setup(body, "");
    let pad = s.ws.path().join("node_modules/left-pad");
    std::fs::create_dir_all(&pad).unwrap();
    std::fs::write(pad.join("index.js"), "module.exports = 1;\n").unwrap();
    let site = s.ws.path().join("env/lib/python3/site-packages");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(s.ws.path().join("env/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    std::fs::write(site.join("six.py"), "SIX = 1\n").unwrap();
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    let output = output_of(&result);
    assert_eq!(result["success"], true, "{result}");
    assert!(output.contains("INSIDE True False"), "{output}");
    let index = std::fs::read_to_string(pad.join("index.js")).unwrap();
    assert_eq!(index, "module.exports = 1;\n");
    assert!(!s.ws.path().join("node_modules/.vite").exists());
    assert!(!site.join("__pycache__").exists());
    assert_eq!(
        std::fs::read_to_string(site.join("six.py")).unwrap(),
        "SIX = 1\n"
    );
    let changed = result.get("changed_files");
    assert!(changed.is_none_or(|c| c == &json!([])), "{result}");
}

/// Escape: a run that floods the workspace with files pushes what it
/// really changed past what the snapshot and the plant search look at.
/// Through the layer nothing is past anything: the code written after the
/// flood is named and not kept. Without a layer (the sandbox off), the
/// flood is reported at the top of the result, like a plant.
#[tokio::test]
async fn a_run_that_floods_the_workspace_is_reported() {
    let body = "os.makedirs('flood', exist_ok=True)\n\
        for i in range(20100):\n\
        \x20   open(f'flood/{i}', 'w').close()\n\
        open('zz_later.py', 'w').write('import os')\n";
    if !(kernel_lacks(true, false) || lacks(|s| s.layer)) {
        let s = setup(body, "");
        let (_, result) = run_with_env(&s, "unittest", &[]).await;
        let notes = result["sandbox_notes"].to_string();
        assert!(
            notes.contains("zz_later.py (written with more files than can be reviewed at once)")
                && notes.contains("20100 other files"),
            "{result}"
        );
        assert!(!s.ws.path().join("zz_later.py").exists());
    }
    let s = setup(body, "[sandbox]\nmode = \"off\"\n");
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    let summary = result["summary"].as_str().unwrap_or_default();
    assert!(summary.starts_with("WARNING: the run planted"), "{summary}");
    assert!(summary.contains("the snapshot stopped there"), "{summary}");
}

/// Escape, the way it was found: a hostile `make test` in a workspace that
/// is a subfolder of a repository. It tried the repository's own `.git`
/// (outside the workspace), then planted a `.git` with `core.fsmonitor` in
/// the workspace, where the user's next `git status` would run it, and a
/// `.pyc` beside the reviewed source.
#[tokio::test]
async fn a_hostile_make_test_in_a_subfolder_of_a_repository_is_reported_and_kept_out() {
    if kernel_lacks(true, false) || lacks(|s| s.workspace) {
        return;
    }
    let have = |tool: &str| {
        std::process::Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !have("make") || !have("git") {
        eprintln!("skipped: make or git is not installed here");
        return;
    }
    let s = setup("pass\n", "");
    let repo = s.ws.path();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(repo)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    git(&["init", "-q"]);
    let config_before = std::fs::read_to_string(repo.join(".git/config")).unwrap();
    let ws = repo.join("app");
    std::fs::create_dir_all(ws.join(".stepwise")).unwrap();
    std::fs::write(
        ws.join(".stepwise/stepwise.toml"),
        "[test_commands]\nunit = [\"make\", \"test\"]\n",
    )
    .unwrap();
    std::fs::write(ws.join("app.py"), "X = 1\n").unwrap();
    std::fs::write(
        ws.join("Makefile"),
        "test:\n\tpython3 attack.py\n\t@echo ALL TESTS PASSED\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("attack.py"),
        "import os\n\
         try:\n\
         \x20   open('../.git/config', 'a').write('[core]\\n\\tfsmonitor = touch /tmp/owned\\n')\n\
         \x20   print('PARENT written')\n\
         except OSError as e:\n\
         \x20   print('PARENT', e.errno)\n\
         os.makedirs('.git', exist_ok=True)\n\
         open('.git/HEAD', 'w').write('ref: refs/heads/main\\n')\n\
         open('.git/config', 'w').write('[core]\\n\\tfsmonitor = touch /tmp/owned\\n')\n\
         open('.git/pyvenv.cfg', 'w').write('home = /usr\\n')\n\
         os.makedirs('lib/node_modules/left-pad', exist_ok=True)\n\
         open('lib/node_modules/left-pad/index.js', 'w').write('planted')\n\
         os.makedirs('__pycache__', exist_ok=True)\n\
         open('__pycache__/app.cpython-311.pyc', 'wb').write(b'planted')\n",
    )
    .unwrap();
    let (out, result) = run_in(&s, &ws, "unit", &[]).await;
    let output = output_of(&result);
    assert!(
        output.contains("PARENT 30") || output.contains("PARENT 13"),
        "{output}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/config")).unwrap(),
        config_before
    );
    let summary = result["summary"].as_str().unwrap_or_default();
    // The .git as a .git (not as a folder of packages), the .pyc beside it.
    assert!(
        summary.starts_with(
            "WARNING: the run wrote what would run later, and none of it reached the workspace: .git/HEAD (git metadata)"
        ) && summary.contains("__pycache__/app.cpython-311.pyc (compiled Python)"),
        "{result}"
    );
    // A folder made to look like installed packages hides nothing: the
    // planted .git above has a pyvenv.cfg, and a new node_modules is
    // itself named.
    assert!(
        summary.contains("lib/node_modules/left-pad/index.js (a new folder of installed packages)"),
        "{result}"
    );
    for planted in [".git", "lib", "__pycache__"] {
        assert!(
            !ws.join(planted).exists(),
            "{planted} reached the workspace"
        );
    }
    // A plant keeps the run from counting as clean, whatever make said:
    // the model's answer after it is refused by the gate.
    assert!(output.contains("ALL TESTS PASSED"), "{output}");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("Final answer refused"), "{printed}");
}

/// Escape (against the covers themselves): a `__pycache__` link leading
/// out of the workspace (`/dev`) or to the workspace itself would cover
/// what the run needs. Such a link is not covered; Python is pointed away
/// from every `__pycache__` with a prefix instead, and the run works.
#[tokio::test]
async fn a_pycache_link_out_of_the_workspace_is_not_covered() {
    if kernel_lacks(true, false) || lacks(|s| s.workspace) {
        return;
    }
    let body = "open('/dev/null', 'w').write('x')\n\
        print('FILES', 'test_escape.py' in os.listdir('.'), 'test_escape.py' in os.listdir('__pycache__'))\n\
        print('PREFIX', os.environ.get('PYTHONPYCACHEPREFIX', '').startswith(os.environ['TMPDIR']))\n";
    let s = setup(body, "");
    let ws = s.ws.path();
    std::fs::create_dir_all(ws.join("lib")).unwrap();
    std::os::unix::fs::symlink("/dev", ws.join("lib/__pycache__")).unwrap();
    std::os::unix::fs::symlink(".", ws.join("__pycache__")).unwrap();
    let (_, result) = run_with_env(&s, "unittest", &[]).await;
    let output = output_of(&result);
    assert_eq!(result["success"], true, "{result}");
    // The workspace is not covered, neither by its own name nor by the link.
    assert!(output.contains("FILES True True"), "{output}");
    assert!(output.contains("PREFIX True"), "{output}");
}
