//! The command line itself: version and help, configuration refusals with
//! exit code 2 naming the key, and the committed completions and man pages
//! kept current (`SCAFO_BLESS=1` rewrites them).

use std::path::Path;
use std::process::Output;

use crate::util::{REPO, scafo};

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = scafo();
    command.args(args).envs(env.iter().copied());
    command.output().expect("run scafo")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn version_and_help() {
    let output = run(&["--version"], &[]);
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        format!("scafo {}", env!("CARGO_PKG_VERSION"))
    );
    let output = run(&["sail", "--help"], &[]);
    let help = String::from_utf8_lossy(&output.stdout);
    for flag in [
        "--node-id",
        "--listen",
        "--bucket",
        "--state-dir",
        "--ingress-token",
        "--label",
        "--log-format",
        "--config",
    ] {
        assert!(help.contains(flag), "sail --help lists {flag}");
    }
    assert_eq!(run(&["frobnicate"], &[]).status.code(), Some(2));
}

#[test]
fn invalid_configuration_refuses_to_start_naming_the_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state");
    let state = state.to_str().expect("utf8");
    let unknown = dir.path().join("unknown.toml");
    std::fs::write(&unknown, "[api]\nlisten = \"127.0.0.1:0\"\nport = 7070\n").expect("write");
    let typo = dir.path().join("typo.toml");
    std::fs::write(&typo, "[node\nid = 1\n").expect("write");
    let unknown = unknown.to_str().expect("utf8");
    let typo = typo.to_str().expect("utf8");
    // (flags, environment, what stderr must say)
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: &[Case] = &[
        (
            &["--node-id", "Bad_Id"],
            &[],
            "invalid node.id (from flag --node-id): must be 1-63 characters",
        ),
        (
            &["--listen", "localhost"],
            &[],
            "invalid api.listen (from flag --listen)",
        ),
        (
            &[],
            &[("SCAFO_API_JSONBYTES", "lots")],
            "invalid api.jsonBytes (from environment SCAFO_API_JSONBYTES): must be a whole number",
        ),
        (
            &["--bucket", "s3://No"],
            &[],
            "invalid registry.bucket (from flag --bucket)",
        ),
        (
            &["--label", "region"],
            &[],
            "invalid node.labels (from flag --label)",
        ),
        (
            &["--config", unknown],
            &[],
            "unknown key `api.port` in config file",
        ),
        (&["--config", typo], &[], "cannot read config file"),
        (
            &["--config", "/nonexistent/scafo.toml"],
            &[],
            "cannot read config file /nonexistent/scafo.toml",
        ),
        (
            &["--log-format", "xml"],
            &[],
            "invalid log.format (from flag --log-format): must be text or json",
        ),
    ];
    for (args, env, expected) in cases {
        let mut all = vec!["sail", "--state-dir", state];
        all.extend_from_slice(args);
        let output = run(&all, env);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(expected),
            "{args:?}: {:?} should contain {expected:?}",
            stderr(&output)
        );
    }
    assert!(!Path::new(state).exists(), "a refused start writes nothing");
}

#[test]
fn completions_print_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let output = run(&["completions", shell], &[]);
        assert!(output.status.success(), "{shell}");
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("sail"),
            "{shell}"
        );
    }
    assert_eq!(run(&["completions", "tcsh"], &[]).status.code(), Some(2));
}

#[test]
fn committed_completions_and_man_pages_are_current() {
    let bless = std::env::var_os("SCAFO_BLESS").is_some();
    let mut stale = Vec::new();
    for (name, content) in scafo::cli::generated_files() {
        let path = Path::new(REPO).join(&name);
        if std::fs::read(&path).ok().as_deref() == Some(content.as_slice()) {
            continue;
        }
        if bless {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, content).expect("write");
        } else {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files {stale:?}: run `SCAFO_BLESS=1 cargo test committed_completions` and review the diff"
    );
}
