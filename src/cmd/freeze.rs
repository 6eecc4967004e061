//! `scafo freeze [--reason R]`, `scafo freeze status`, `scafo freeze lift`.

use reqwest::Method;
use serde_json::json;

use super::{Failure, block_on};
use crate::cli::{FreezeArgs, FreezeCommand, GlobalArgs};
use crate::client::{self, Client};
use crate::config::process_env;
use crate::registry::FreezeRecord;
use crate::ui;
use crate::wire::answers::{FreezeAnswer, Lifted};

pub fn run(global: &GlobalArgs, args: &FreezeArgs) -> Result<(), Failure> {
    let client = Client::resolve(global, &process_env)?;
    block_on(async {
        match args.action {
            None => freeze(global, &client, args.reason.as_deref()).await,
            Some(FreezeCommand::Status) => status(global, &client).await,
            Some(FreezeCommand::Lift) => lift(global, &client).await,
        }
    })
}

fn describe(freeze: &FreezeRecord) -> String {
    let mut text = format!("since {} by {}", freeze.frozen_at, freeze.by);
    if let Some(reason) = &freeze.reason {
        text.push_str(&format!(": {reason}"));
    }
    text
}

async fn freeze(global: &GlobalArgs, client: &Client, reason: Option<&str>) -> Result<(), Failure> {
    let body = reason.map(|reason| json!({"reason": reason}));
    let answer: FreezeAnswer = client
        .call(Method::POST, "/v1/fleet/freeze", body.as_ref())
        .await?;
    if global.json {
        return ui::print_json(&answer);
    }
    if answer.created == Some(true) {
        println!(
            "deploys are frozen fleet-wide ({})",
            describe(&answer.freeze)
        );
    } else {
        println!(
            "deploys were already frozen ({}); nothing changed",
            describe(&answer.freeze)
        );
    }
    Ok(())
}

async fn status(global: &GlobalArgs, client: &Client) -> Result<(), Failure> {
    let answer = match client.get::<FreezeAnswer>("/v1/fleet/freeze").await {
        Ok(answer) => Some(answer),
        Err(failure) if client::is_status(&failure, reqwest::StatusCode::NOT_FOUND) => None,
        Err(failure) => return Err(failure),
    };
    if global.json {
        return ui::print_json(&json!({"freeze": answer.map(|a| a.freeze)}));
    }
    match answer {
        Some(answer) => println!("deploys are frozen {}", describe(&answer.freeze)),
        None => println!("deploys are not frozen"),
    }
    Ok(())
}

async fn lift(global: &GlobalArgs, client: &Client) -> Result<(), Failure> {
    ui::confirm("lift the deploy freeze", global.yes)?;
    let answer: Lifted = client
        .call(Method::DELETE, "/v1/fleet/freeze", None::<&()>)
        .await?;
    if global.json {
        return ui::print_json(&answer);
    }
    println!(
        "{}",
        if answer.lifted {
            "lifted: nodes take deploys again"
        } else {
            "deploys were not frozen"
        }
    );
    Ok(())
}
