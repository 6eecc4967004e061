//! `scafo deploy [DIR]`: pack the project (the config of the packed copy
//! edited by `--env`, `--var`, `--no-bundle`), upload it with a byte progress
//! bar, then follow the deploy until it is live or failed.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::Duration;

use anyhow::anyhow;
use indicatif::{ProgressBar, ProgressStyle};
use reqwest::Method;
use serde_json::{Map, Value, json};

use super::pack::{self, Edits};
use super::{Failure, block_on};
use crate::cli::{DeployArgs, GlobalArgs};
use crate::client::github::GithubOidc;
use crate::client::{Client, Credential};
use crate::config::process_env;
use crate::registry::{DeployState, DeployStatus, Replicas};
use crate::ui;
use crate::wire::answers::{DaemonState, DeployAnswer};
use crate::wire::deploy_meta;

pub fn run(global: &GlobalArgs, args: &DeployArgs) -> Result<(), Failure> {
    let usage = |e: anyhow::Error| Failure::Usage(e);
    let project = pack::open(&args.dir).map_err(usage)?;
    let vars = args
        .vars
        .iter()
        .map(|v| pack::parse_var(v).map_err(|e| Failure::Usage(anyhow!(e))))
        .collect::<Result<Vec<_>, _>>()?;
    let edits = Edits {
        name: args.name.as_deref(),
        env: args.env.as_deref(),
        vars,
        no_bundle: args.no_bundle,
    };
    let (name, config_text) = pack::edit(&project, &edits).map_err(usage)?;
    let meta = metadata(args)?;
    let files = pack::files(&project.root).map_err(usage)?;
    let archive = pack::pack(&project, &files, &config_text).map_err(Failure::Refused)?;
    // What the node would refuse is refused here, before the upload.
    crate::artifact::inspect_reader(archive.as_slice(), u64::MAX)
        .map_err(|e| Failure::Usage(anyhow!("{}: {e}", args.dir.display())))?;
    let mut client = Client::resolve(global, &process_env)?;
    if args.oidc {
        if global.key.is_some() || global.token.is_some() {
            return Err(Failure::Usage(anyhow!(
                "--oidc authenticates with the job's ID token: drop --key/--token"
            )));
        }
        let audience = args
            .audience
            .as_deref()
            .unwrap_or(crate::auth::token::AUDIENCE);
        let github = GithubOidc::from_env(&process_env, audience)?;
        client = client.with_credential(Credential::Github(Box::new(github)));
    }
    block_on(async {
        ui::say(
            global.quiet,
            format!(
                "deploying {name}: {} files, {} bytes packed",
                files.len(),
                archive.len()
            ),
        );
        let accepted = upload(global, &client, &name, &meta, archive).await?;
        let id = accepted.deploy.id.clone();
        ui::say(global.quiet, format!("accepted as {id}"));
        if args.detach {
            if global.json {
                return ui::print_json(&accepted.deploy);
            }
            println!("{id}");
            return Ok(());
        }
        let status = follow(global, &client, &id.to_string()).await?;
        if global.json {
            ui::print_json(&status)?;
        } else if status.state == DeployState::Live {
            println!("{} is live", status.id);
            for url in &status.urls {
                println!("  {url}");
            }
            // Where the node asked serves it, for a machine without an ingress
            // (a workload token may not read the node's state).
            if !client.credential().is_some_and(Credential::is_workload)
                && let Ok(state) = client.get::<DaemonState>("/v1/state").await
                && let Some(here) = state.applications.iter().find(|a| a.name == name)
                && let Some(url) = &here.url
            {
                println!("  node {}: {url}", state.node.id);
            }
        }
        match status.state {
            DeployState::Live => Ok(()),
            state => Err(Failure::Refused(anyhow!(
                "deploy {} {}{}{}",
                status.id,
                state.as_str(),
                status
                    .code
                    .as_deref()
                    .map(|c| format!(" [{c}]"))
                    .unwrap_or_default(),
                status
                    .detail
                    .as_deref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default(),
            ))),
        }
    })
}

/// The `X-Scafo-Deploy` object: source (git), message, placement intent.
fn metadata(args: &DeployArgs) -> Result<Map<String, Value>, Failure> {
    let mut meta = Map::new();
    if let Some(source) = git_source(&args.dir) {
        meta.insert("source".into(), source);
    }
    if let Some(message) = &args.message {
        meta.insert("message".into(), Value::String(message.clone()));
    }
    if !args.selector.is_empty() {
        let mut selector = Map::new();
        for pair in &args.selector {
            let (k, v) = pair
                .split_once('=')
                .filter(|(k, v)| crate::names::is_node_label(k, v))
                .ok_or_else(|| {
                    Failure::Usage(anyhow!(
                        "--selector {pair:?}: expected KEY=VALUE ({})",
                        crate::names::NODE_LABEL_RULE
                    ))
                })?;
            selector.insert(k.to_owned(), Value::String(v.to_owned()));
        }
        meta.insert("selector".into(), Value::Object(selector));
    }
    if let Some(replicas) = &args.replicas {
        let value = if replicas == "all" {
            json!("all")
        } else {
            json!(replicas.parse::<u64>().unwrap_or(0))
        };
        if Replicas::from_json(&value).is_none() {
            return Err(Failure::Usage(anyhow!(
                "--replicas {replicas:?}: {}",
                crate::registry::REPLICAS_RULE
            )));
        }
        meta.insert("replicas".into(), value);
    }
    Ok(meta)
}

/// The commit, branch and dirty flag when the project is in a git work tree.
fn git_source(dir: &std::path::Path) -> Option<Value> {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let commit = git(&["rev-parse", "HEAD"])?;
    let branch = git(&["rev-parse", "--abbrev-ref", "HEAD"]).unwrap_or_default();
    let dirty = git(&["status", "--porcelain"]).is_some_and(|s| !s.is_empty());
    Some(json!({"git": {"commit": commit, "branch": branch, "dirty": dirty}}))
}

async fn upload(
    global: &GlobalArgs,
    client: &Client,
    name: &str,
    meta: &Map<String, Value>,
    archive: Vec<u8>,
) -> Result<DeployAnswer, Failure> {
    let total = archive.len() as u64;
    let bar = if std::io::stderr().is_terminal() && !global.quiet && !global.json {
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template(
                "uploading {bar:30} {bytes}/{total_bytes} {bytes_per_sec}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    let chunks: Vec<Vec<u8>> = archive.chunks(64 * 1024).map(<[u8]>::to_vec).collect();
    let progress = bar.clone();
    let stream = futures_util::stream::iter(chunks.into_iter().map(move |chunk| {
        progress.inc(chunk.len() as u64);
        Ok::<_, std::io::Error>(chunk)
    }));
    let header = deploy_meta::encode(meta);
    let answer = client
        .request(
            Method::POST,
            &format!("/v1/applications/{name}/deploys"),
            |request| {
                request
                    .header(deploy_meta::HEADER, header)
                    .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
                    .header(reqwest::header::CONTENT_LENGTH, total)
                    .timeout(Duration::from_secs(600))
                    .body(reqwest::Body::wrap_stream(stream))
            },
        )
        .await;
    bar.finish_and_clear();
    answer
}

/// Polls the deploy until it is terminal, naming each state it enters.
async fn follow(global: &GlobalArgs, client: &Client, id: &str) -> Result<DeployStatus, Failure> {
    let spinner = if std::io::stderr().is_terminal() && !global.quiet && !global.json {
        let spinner = ProgressBar::new_spinner();
        spinner.enable_steady_tick(Duration::from_millis(100));
        spinner
    } else {
        ProgressBar::hidden()
    };
    let mut last = None;
    loop {
        let status: DeployStatus = client.get(&format!("/v1/deploys/{id}")).await?;
        if last != Some(status.state) {
            let mut line = status.state.as_str().to_owned();
            let starting: BTreeMap<_, _> = status
                .nodes
                .iter()
                .filter(|(_, p)| p.state != "live")
                .collect();
            if status.state == DeployState::Activating && !starting.is_empty() {
                line.push_str(&format!(
                    " on {}",
                    starting
                        .keys()
                        .map(|k| k.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            if spinner.is_hidden() {
                ui::say(global.quiet, &line);
            } else {
                spinner.set_message(line);
            }
            last = Some(status.state);
        }
        if status.state.is_terminal() {
            spinner.finish_and_clear();
            return Ok(status);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
