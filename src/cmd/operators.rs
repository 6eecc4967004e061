//! `scafo operators`: keygen, list, add, remove, rotate, whoami.

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use reqwest::Method;
use serde_json::json;

use super::{Failure, block_on};
use crate::auth::SecretKey;
use crate::cli::{GlobalArgs, OperatorsCommand, RoleArg};
use crate::client::{self, Client, Credential};
use crate::config::process_env;
use crate::names::OperatorId;
use crate::registry::TrustedOperator;
use crate::ui;
use crate::wire::answers::{OperatorAnswer, OperatorList, Removed};

pub fn run(global: &GlobalArgs, command: &OperatorsCommand) -> Result<(), Failure> {
    if let OperatorsCommand::Keygen { id, out } = command {
        return keygen(global, id.as_deref(), out.as_deref());
    }
    let client = Client::resolve(global, &process_env)?;
    block_on(async {
        match command {
            OperatorsCommand::Keygen { .. } => Ok(()),
            OperatorsCommand::List => list(global, &client).await,
            OperatorsCommand::Add {
                id,
                public_key,
                role,
                apps,
            } => add(global, &client, id, public_key, *role, apps).await,
            OperatorsCommand::Remove { id } => remove(global, &client, id).await,
            OperatorsCommand::Rotate => rotate(global, &client).await,
            OperatorsCommand::Whoami => whoami(global, &client).await,
        }
    })
}

fn keygen(global: &GlobalArgs, id: Option<&str>, out: Option<&Path>) -> Result<(), Failure> {
    let id = match id {
        Some(id) => {
            OperatorId::parse(id).map_err(|rule| Failure::Usage(anyhow!("--id {id:?}: {rule}")))?
        }
        None => OperatorId::parse(&format!("op-{}", &crate::registry::new_nonce()[..8]))
            .map_err(|rule| Failure::Refused(anyhow!(rule)))?,
    };
    let path = match out {
        Some(path) => path.to_owned(),
        None => {
            let dir = client::config_dir(&process_env).join("keys");
            std::fs::create_dir_all(&dir)
                .map_err(|e| Failure::Refused(anyhow!("cannot create {}: {e}", dir.display())))?;
            dir.join(format!("{id}.jwk"))
        }
    };
    let key =
        SecretKey::generate(Some(id.to_string())).map_err(|e| Failure::Refused(anyhow!("{e}")))?;
    key.write_new(&path)
        .map_err(|e| Failure::Refused(e.into()))?;
    let public = key.public();
    ui::say(
        global.quiet,
        format!(
            "wrote key {id} to {} (mode 0600); give an admin the public key below",
            path.display()
        ),
    );
    ui::print_json(&json!({"kty": public.kty, "crv": public.crv, "x": public.x, "kid": id}))
}

fn scope_text(operator: &TrustedOperator) -> String {
    operator
        .applications
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn role_text(operator: &TrustedOperator) -> &'static str {
    match operator.role {
        crate::registry::Role::Admin => "admin",
        crate::registry::Role::Operator => "operator",
    }
}

async fn list(global: &GlobalArgs, client: &Client) -> Result<(), Failure> {
    let answer: OperatorList = client.get("/v1/operators").await?;
    if global.json {
        return ui::print_json(&answer);
    }
    let rows: Vec<Vec<String>> = answer
        .operators
        .iter()
        .map(|o| {
            vec![
                o.id.to_string(),
                role_text(o).to_owned(),
                scope_text(o),
                o.supersedes
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_else(|| "-".into()),
                o.created_at.to_string(),
                o.created_by.clone(),
            ]
        })
        .collect();
    println!(
        "{}",
        ui::table(
            &["ID", "ROLE", "APPLICATIONS", "SUPERSEDES", "CREATED", "BY"],
            &rows
        )
    );
    if answer.scoped {
        ui::say(
            global.quiet,
            "(scoped: only this key's rotation lineage is shown)",
        );
    }
    Ok(())
}

async fn add(
    global: &GlobalArgs,
    client: &Client,
    id: &str,
    public_key: &Path,
    role: RoleArg,
    apps: &[String],
) -> Result<(), Failure> {
    let text = std::fs::read(public_key)
        .map_err(|e| Failure::Usage(anyhow!("cannot read {}: {e}", public_key.display())))?;
    let jwk: serde_json::Value = serde_json::from_slice(&text)
        .map_err(|e| Failure::Usage(anyhow!("{} is not a JWK: {e}", public_key.display())))?;
    let public = json!({"kty": jwk["kty"], "crv": jwk["crv"], "x": jwk["x"]});
    let role = match role {
        RoleArg::Admin => "admin",
        RoleArg::Operator => "operator",
    };
    let body = json!({"id": id, "publicKey": public, "role": role, "applications": apps});
    let answer: OperatorAnswer = client
        .call(Method::POST, "/v1/operators", Some(&body))
        .await?;
    if global.json {
        return ui::print_json(&answer);
    }
    let o = &answer.operator;
    println!("registered {} ({}; {})", o.id, role_text(o), scope_text(o));
    Ok(())
}

async fn remove(global: &GlobalArgs, client: &Client, id: &str) -> Result<(), Failure> {
    ui::confirm(&format!("remove operator key {id}"), global.yes)?;
    let answer: Removed = client
        .call(Method::DELETE, &format!("/v1/operators/{id}"), None::<&()>)
        .await?;
    if global.json {
        return ui::print_json(&answer);
    }
    println!("removed {}", answer.removed);
    Ok(())
}

/// The next id in a rotation: `op-admin` → `op-admin-r1` → `op-admin-r2`.
pub fn next_rotation_id(old: &str) -> String {
    let (base, n) = match old.rsplit_once("-r") {
        Some((base, n))
            if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && !base.is_empty() =>
        {
            (base, n.parse::<u64>().unwrap_or(0))
        }
        _ => (old, 0),
    };
    let suffix = format!("-r{}", n + 1);
    let base: String = base.chars().take(63 - suffix.len()).collect();
    format!("{}{suffix}", base.trim_end_matches('-'))
}

/// Rotation, safe to re-run after an interruption at any step: the new key
/// waits in `<file>.next` until the old key is gone, and each step first
/// checks whether it already happened.
async fn rotate(global: &GlobalArgs, client: &Client) -> Result<(), Failure> {
    let Some(Credential::Key {
        kid: old_id, path, ..
    }) = client.credential()
    else {
        return Err(Failure::Usage(anyhow!(
            "rotate needs a key file (--key, SCAFO_KEY or the config file), not a token"
        )));
    };
    let next_path = PathBuf::from(format!("{}.next", path.display()));
    let new = match SecretKey::read(&next_path) {
        Ok(key) => {
            ui::say(
                global.quiet,
                format!("resuming the rotation begun in {}", next_path.display()),
            );
            key
        }
        Err(crate::auth::KeyFileError::Read { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            let key = SecretKey::generate(Some(next_rotation_id(old_id)))
                .map_err(|e| Failure::Refused(anyhow!("{e}")))?;
            key.write_new(&next_path)
                .map_err(|e| Failure::Refused(e.into()))?;
            key
        }
        Err(e) => return Err(Failure::Refused(e.into())),
    };
    let new_id = new.kid().unwrap_or_default().to_owned();
    let public = new.public();
    let as_new = client.with_credential(Credential::from_key_file(&next_path)?);

    // 1. Register the new key as superseding the old (signed by the old).
    let registered = match as_new.get::<OperatorList>("/v1/operators").await {
        Ok(list) => Some(list),
        Err(failure) if client::is_status(&failure, reqwest::StatusCode::UNAUTHORIZED) => None,
        Err(failure) => return Err(failure),
    };
    if registered.is_none() {
        let body = json!({"id": new_id, "publicKey": public, "supersedes": old_id});
        let _: OperatorAnswer = client
            .call(Method::POST, "/v1/operators", Some(&body))
            .await?;
    }
    ui::say(
        global.quiet,
        format!("registered {new_id}, superseding {old_id}"),
    );

    // 2. Remove the old key (signed by the new), unless it is already gone.
    let list: OperatorList = match registered {
        Some(list) => list,
        None => as_new.get("/v1/operators").await?,
    };
    if list.operators.iter().any(|o| o.id.as_str() == old_id) {
        let _: Removed = as_new
            .call(
                Method::DELETE,
                &format!("/v1/operators/{old_id}"),
                None::<&()>,
            )
            .await?;
    }
    ui::say(global.quiet, format!("removed {old_id}"));

    // 3. The new key takes the key file's place.
    std::fs::rename(&next_path, path).map_err(|e| {
        Failure::Refused(anyhow!(
            "cannot move {} to {}: {e}",
            next_path.display(),
            path.display()
        ))
    })?;
    if global.json {
        return ui::print_json(&json!({"old": old_id, "new": new_id, "key": path}));
    }
    println!(
        "rotated {old_id} → {new_id}; {} now holds the new key",
        path.display()
    );
    Ok(())
}

async fn whoami(global: &GlobalArgs, client: &Client) -> Result<(), Failure> {
    let kid = client
        .credential()
        .and_then(Credential::kid)
        .ok_or_else(|| Failure::Usage(anyhow!("no operator key or token to speak for")))?;
    let list: OperatorList = client.get("/v1/operators").await?;
    let me = list
        .operators
        .into_iter()
        .find(|o| o.id.as_str() == kid)
        .ok_or_else(|| {
            Failure::Refused(anyhow!(
                "the node does not list {kid} among the keys it shows this key"
            ))
        })?;
    if global.json {
        return ui::print_json(&me);
    }
    let via = match client.credential() {
        Some(Credential::Key { path, .. }) => format!("key file {}", path.display()),
        _ => "token".to_owned(),
    };
    println!("{} ({}) scope: {}", me.id, role_text(&me), scope_text(&me));
    ui::say(global.quiet, format!("at {} via {via}", client.base()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::next_rotation_id;

    #[test]
    fn rotation_ids_count_up_and_stay_labels() {
        assert_eq!(next_rotation_id("op-admin"), "op-admin-r1");
        assert_eq!(next_rotation_id("op-admin-r1"), "op-admin-r2");
        assert_eq!(next_rotation_id("ci-r9"), "ci-r10");
        assert_eq!(next_rotation_id("x-r"), "x-r-r1");
        let long = next_rotation_id(&"a".repeat(63));
        assert!(long.len() <= 63 && crate::names::is_label(&long), "{long}");
    }
}
