//! `scafo apps`: list, show, block, unblock, labels, retire, unretire,
//! selector, replicas, domains add|remove, trust, delete.

use anyhow::anyhow;
use reqwest::Method;
use serde_json::{Map, Value, json};

use super::{Failure, block_on};
use crate::cli::{AppsCommand, DomainsCommand, GlobalArgs};
use crate::client::Client;
use crate::config::process_env;
use crate::ui;

pub fn run(global: &GlobalArgs, command: &AppsCommand) -> Result<(), Failure> {
    let client = Client::resolve(global, &process_env)?;
    block_on(async {
        let (path, method, body) = match command {
            AppsCommand::List => return list(global, &client).await,
            AppsCommand::Show { name } => return show(global, &client, name).await,
            AppsCommand::Block { name } => {
                ui::confirm(
                    &format!("block {name} (it stops serving and refuses deploys)"),
                    global.yes,
                )?;
                (format!("/v1/applications/{name}/block"), Method::POST, None)
            }
            AppsCommand::Unblock { name } => (
                format!("/v1/applications/{name}/unblock"),
                Method::POST,
                None,
            ),
            AppsCommand::Labels { name, labels } => (
                format!("/v1/applications/{name}/labels"),
                Method::POST,
                Some(json!({"labels": pairs(labels)?})),
            ),
            AppsCommand::Retire { name } => (
                format!("/v1/applications/{name}/retire"),
                Method::POST,
                None,
            ),
            AppsCommand::Unretire { name } => (
                format!("/v1/applications/{name}/unretire"),
                Method::POST,
                None,
            ),
            AppsCommand::Selector {
                name,
                pairs: given,
                clear,
            } => {
                let selector = if *clear { Value::Null } else { pairs(given)? };
                (
                    format!("/v1/applications/{name}/selector"),
                    Method::POST,
                    Some(json!({"selector": selector})),
                )
            }
            AppsCommand::Replicas { name, replicas } => {
                let value = match replicas.as_str() {
                    "all" => json!("all"),
                    n => json!(n.parse::<u64>().map_err(|_| Failure::Usage(anyhow!(
                        "replicas {n:?}: a whole number or all"
                    )))?),
                };
                (
                    format!("/v1/applications/{name}/replicas"),
                    Method::POST,
                    Some(json!({"replicas": value})),
                )
            }
            AppsCommand::Domains(DomainsCommand::Add {
                name,
                host,
                wildcard,
            }) => {
                let query = if *wildcard { "?wildcard=1" } else { "" };
                (
                    format!("/v1/applications/{name}/domains/{host}{query}"),
                    Method::POST,
                    None,
                )
            }
            AppsCommand::Domains(DomainsCommand::Remove { name, host }) => (
                format!("/v1/applications/{name}/domains/{host}"),
                Method::DELETE,
                None,
            ),
            AppsCommand::Trust {
                name,
                issuers,
                subjects,
            } => {
                if issuers.len() != subjects.len() {
                    return Err(Failure::Usage(anyhow!(
                        "give --issuer and --subject in pairs"
                    )));
                }
                let trust: Vec<Value> = issuers
                    .iter()
                    .zip(subjects)
                    .map(|(i, s)| json!({"issuer": i, "subject": s}))
                    .collect();
                (
                    format!("/v1/applications/{name}/trust"),
                    Method::POST,
                    Some(json!({"trust": trust})),
                )
            }
            AppsCommand::Delete { name, force } => {
                ui::confirm(
                    &format!("delete {name} with its claims, deploy records and artifacts"),
                    global.yes,
                )?;
                let query = if *force { "?force=1" } else { "" };
                let answer: Value = client
                    .call(
                        Method::DELETE,
                        &format!("/v1/applications/{name}{query}"),
                        None::<&()>,
                    )
                    .await?;
                if global.json {
                    return ui::print_json(&answer);
                }
                println!("deleted {name}");
                return Ok(());
            }
        };
        let answer: Value = client.call(method, &path, body.as_ref()).await?;
        if global.json {
            return ui::print_json(&answer);
        }
        describe(&answer["application"]);
        if let Some(hosts) = answer["platformHosts"].as_array() {
            let hosts: Vec<&str> = hosts.iter().filter_map(Value::as_str).collect();
            println!("platform hosts: {}", hosts.join(", "));
        }
        Ok(())
    })
}

/// `KEY=VALUE` arguments as a JSON object of strings.
fn pairs(given: &[String]) -> Result<Value, Failure> {
    let mut map = Map::new();
    for pair in given {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| Failure::Usage(anyhow!("{pair:?}: expected KEY=VALUE")))?;
        map.insert(k.to_owned(), Value::String(v.to_owned()));
    }
    Ok(Value::Object(map))
}

fn state_of(app: &Value) -> String {
    if app["blocked"] == true {
        "blocked".into()
    } else if let Some(until) = app["retired"]["graceUntil"].as_str() {
        format!("retired (until {until})")
    } else {
        "-".into()
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        Value::Object(map) if map.is_empty() => "-".into(),
        Value::Array(items) if items.is_empty() => "-".into(),
        Value::Array(items) => items.iter().map(text).collect::<Vec<_>>().join(","),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(","),
        other => other.to_string(),
    }
}

fn domains(app: &Value) -> String {
    let hosts: Vec<String> = app["domains"]
        .as_array()
        .map(|d| {
            d.iter()
                .map(|d| {
                    format!(
                        "{}{}",
                        d["host"].as_str().unwrap_or_default(),
                        if d["wildcard"] == true { " (+*)" } else { "" }
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    if hosts.is_empty() {
        "-".into()
    } else {
        hosts.join(", ")
    }
}

async fn list(global: &GlobalArgs, client: &Client) -> Result<(), Failure> {
    let answer: Value = client.get("/v1/applications").await?;
    if global.json {
        return ui::print_json(&answer);
    }
    let rows: Vec<Vec<String>> = answer["applications"]
        .as_array()
        .map(|apps| {
            apps.iter()
                .map(|app| {
                    vec![
                        text(&app["name"]),
                        text(&app["release"]["live"]),
                        text(&app["replicas"]),
                        text(&app["selector"]),
                        domains(app),
                        state_of(app),
                    ]
                })
                .collect()
        })
        .unwrap_or_default();
    println!(
        "{}",
        ui::table(
            &["NAME", "LIVE", "REPLICAS", "SELECTOR", "DOMAINS", "STATE"],
            &rows
        )
    );
    if answer["scoped"] == true {
        ui::say(
            global.quiet,
            "(scoped: only the applications this key reaches)",
        );
    }
    Ok(())
}

async fn show(global: &GlobalArgs, client: &Client, name: &str) -> Result<(), Failure> {
    let answer: Value = client.get(&format!("/v1/applications/{name}")).await?;
    if global.json {
        return ui::print_json(&answer);
    }
    describe(&answer["application"]);
    Ok(())
}

fn describe(app: &Value) {
    println!("{}", text(&app["name"]));
    let placement = &app["placement"];
    let rows = [
        ("live", text(&app["release"]["live"])),
        ("pending", text(&app["release"]["pending"])),
        ("state", state_of(app)),
        ("replicas", text(&app["replicas"])),
        ("selector", text(&app["selector"])),
        (
            "placement",
            format!(
                "{}{}",
                text(&placement["nodes"]),
                placement["reason"]
                    .as_str()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default()
            ),
        ),
        ("domains", domains(app)),
        ("labels", text(&app["labels"])),
        (
            "trust",
            app["trust"]
                .as_array()
                .map(|t| {
                    t.iter()
                        .map(|e| format!("{} {}", text(&e["issuer"]), text(&e["subject"])))
                        .collect::<Vec<_>>()
                        .join("; ")
                })
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "-".into()),
        ),
        ("updated", text(&app["updatedAt"])),
    ];
    for (key, value) in rows {
        if key == "labels" && app.get("labels").is_none() {
            continue;
        }
        println!("  {key:<10} {value}");
    }
}
