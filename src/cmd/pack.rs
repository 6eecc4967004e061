//! Packing a project for `scafo deploy`: the wrangler config of the packed
//! copy edited with comments and layout preserved (`--env`, `--var`,
//! `--no-bundle`), then a deterministic gzip'd tar — sorted entries, zeroed
//! times and owners — of the files `.gitignore` and `.scafoignore` keep,
//! never `.git`.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::Value;

use crate::artifact::CONFIG_NAMES;

/// Keys `env.<name>` sections do not inherit from the top level (wrangler):
/// these, and every binding kind.
const NOT_INHERITED: &[&str] = &["vars", "define", "tail_consumers"];

fn inherited(key: &str) -> bool {
    !NOT_INHERITED.contains(&key) && !crate::celld::wrangler::UNSUPPORTED.contains(&key)
}

/// The project's wrangler config: which file, its text, its parsed value.
#[derive(Debug)]
pub struct Project {
    pub root: PathBuf,
    pub config_name: &'static str,
    pub config_text: String,
    pub config: Value,
}

/// How the packed copy's config is edited.
#[derive(Debug, Default)]
pub struct Edits<'a> {
    pub name: Option<&'a str>,
    pub env: Option<&'a str>,
    pub vars: Vec<(String, String)>,
    pub no_bundle: bool,
}

pub fn open(root: &Path) -> anyhow::Result<Project> {
    for name in CONFIG_NAMES {
        let path = root.join(name);
        if path.is_file() {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let config: Value = jsonc_parser::parse_to_serde_value(&text, &Default::default())
                .map_err(|e| anyhow!("{}: {e}", path.display()))?;
            if !config.is_object() {
                return Err(anyhow!("{} must hold a JSON object", path.display()));
            }
            return Ok(Project {
                root: root.to_owned(),
                config_name: name,
                config_text: text,
                config,
            });
        }
    }
    Err(anyhow!(
        "no wrangler.jsonc or wrangler.json in {}",
        root.display()
    ))
}

/// `KEY:VALUE`, split at the first `:` (wrangler's `--var`).
pub fn parse_var(text: &str) -> Result<(String, String), String> {
    match text.split_once(':') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        _ => Err(format!("--var {text:?}: expected KEY:VALUE")),
    }
}

fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

fn set(object: &CstObject, key: &str, value: CstInputValue) {
    match object.get(key) {
        Some(prop) => prop.set_value(value),
        None => {
            object.append(key, value);
        }
    }
}

/// The application name the deploy goes to, and the edited config text.
pub fn edit(project: &Project, edits: &Edits<'_>) -> anyhow::Result<(String, String)> {
    let base = match (edits.name, project.config.get("name")) {
        (Some(name), _) => name.to_owned(),
        (None, Some(Value::String(name))) => name.clone(),
        _ => {
            return Err(anyhow!(
                "{} names no application: add \"name\" or pass --name",
                project.config_name
            ));
        }
    };
    let name = match edits.env {
        Some(env) => format!("{base}-{env}"),
        None => base,
    };
    if !crate::names::is_label(&name) {
        return Err(anyhow!(
            "application name {name:?}: {}",
            crate::names::LABEL_RULE
        ));
    }
    let root = CstRootNode::parse(&project.config_text, &Default::default())
        .map_err(|e| anyhow!("{}: {e}", project.config_name))?;
    let object = root.object_value_or_set();
    if let Some(env) = edits.env {
        let section = project
            .config
            .get("env")
            .and_then(|e| e.get(env))
            .and_then(Value::as_object)
            .ok_or_else(|| anyhow!("{} has no env.{env} section", project.config_name))?;
        for prop in object.properties() {
            let Some(key) = prop.decoded_name() else {
                continue;
            };
            if !inherited(&key) && !section.contains_key(&key) {
                prop.remove();
            }
        }
        for (key, value) in section {
            set(&object, key, input(value));
        }
        if let Some(prop) = object.get("env") {
            prop.remove();
        }
    }
    if edits.name.is_some() || edits.env.is_some() {
        set(&object, "name", CstInputValue::String(name.clone()));
    }
    if !edits.vars.is_empty() {
        let vars = object.object_value_or_set("vars");
        for (key, value) in &edits.vars {
            set(&vars, key, CstInputValue::String(value.clone()));
        }
    }
    if edits.no_bundle {
        set(&object, "no_bundle", CstInputValue::Bool(true));
    }
    Ok((name, root.to_string()))
}

/// The files a deploy packs, sorted, relative to the root.
pub fn files(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let walk = ignore::WalkBuilder::new(root)
        .hidden(false)
        .git_ignore(true)
        .git_exclude(false)
        .git_global(false)
        .require_git(false)
        .parents(false)
        .add_custom_ignore_filename(".scafoignore")
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    for entry in walk {
        let entry = entry.map_err(|e| anyhow!("cannot walk {}: {e}", root.display()))?;
        let Some(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            eprintln!(
                "warning: skipping the symbolic link {}: artifacts hold regular files only",
                entry.path().display()
            );
            continue;
        }
        if kind.is_file()
            && let Ok(relative) = entry.path().strip_prefix(root)
        {
            files.push(relative.to_owned());
        }
    }
    files.sort();
    Ok(files)
}

/// Packs `files` (the config replaced by `config_text`) as gzip'd tar.
pub fn pack(project: &Project, files: &[PathBuf], config_text: &str) -> anyhow::Result<Vec<u8>> {
    let encoder = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(encoder);
    for relative in files {
        let is_config = relative == Path::new(project.config_name);
        let bytes = if is_config {
            config_text.as_bytes().to_vec()
        } else {
            std::fs::read(project.root.join(relative))
                .with_context(|| format!("cannot read {}", relative.display()))?
        };
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        tar.append_data(&mut header, relative, bytes.as_slice())
            .with_context(|| format!("cannot pack {}", relative.display()))?;
    }
    let mut encoder = tar.into_inner().context("cannot finish the archive")?;
    encoder.flush()?;
    Ok(encoder.finish()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(text: &str) -> Project {
        Project {
            root: PathBuf::from("/nonexistent"),
            config_name: "wrangler.jsonc",
            config_text: text.to_owned(),
            config: jsonc_parser::parse_to_serde_value(text, &Default::default())
                .unwrap_or(Value::Null),
        }
    }

    const CONFIG: &str = "{\n  // the shop\n  \"name\": \"shop\",\n  \"main\": \"src/index.js\",\n  \"vars\": { \"A\": \"1\", /* keep */ \"B\": \"2\" },\n  \"env\": {\n    \"staging\": { \"vars\": { \"A\": \"s\" }, \"routes\": [] },\n    \"bare\": {},\n  },\n}\n";

    #[test]
    fn vars_and_no_bundle_keep_comments() -> anyhow::Result<()> {
        let edits = Edits {
            vars: vec![("A".into(), "x:y".into()), ("C".into(), "3".into())],
            no_bundle: true,
            ..Edits::default()
        };
        let (name, text) = edit(&project(CONFIG), &edits)?;
        assert_eq!(name, "shop");
        assert!(
            text.contains("// the shop") && text.contains("/* keep */"),
            "{text}"
        );
        let value: Value = jsonc_parser::parse_to_serde_value(&text, &Default::default())?;
        assert_eq!(
            value["vars"],
            serde_json::json!({"A": "x:y", "B": "2", "C": "3"})
        );
        assert_eq!(value["no_bundle"], true);
        Ok(())
    }

    #[test]
    fn env_flattens_and_drops_what_is_not_inherited() -> anyhow::Result<()> {
        let (name, text) = edit(
            &project(CONFIG),
            &Edits {
                env: Some("staging"),
                ..Edits::default()
            },
        )?;
        assert_eq!(name, "shop-staging");
        let value: Value = jsonc_parser::parse_to_serde_value(&text, &Default::default())?;
        assert_eq!(value["name"], "shop-staging");
        assert_eq!(value["vars"], serde_json::json!({"A": "s"}));
        assert_eq!(value["main"], "src/index.js");
        assert!(value.get("env").is_none());
        let (_, bare) = edit(
            &project(CONFIG),
            &Edits {
                env: Some("bare"),
                ..Edits::default()
            },
        )?;
        let bare: Value = jsonc_parser::parse_to_serde_value(&bare, &Default::default())?;
        assert!(bare.get("vars").is_none(), "vars are not inherited");
        assert!(
            edit(
                &project(CONFIG),
                &Edits {
                    env: Some("prod"),
                    ..Edits::default()
                }
            )
            .is_err()
        );
        Ok(())
    }

    #[test]
    fn packs_deterministically_and_respects_ignore_files() -> anyhow::Result<()> {
        let dir = std::env::temp_dir().join(format!("scafo-pack-{}", crate::registry::new_nonce()));
        let write = |path: &str, text: &str| -> anyhow::Result<()> {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap_or(&dir))?;
            Ok(std::fs::write(path, text)?)
        };
        write(
            "wrangler.jsonc",
            "{ \"name\": \"shop\", \"main\": \"src/index.js\" }",
        )?;
        write("src/index.js", "export default {}")?;
        write("src/b.js", "export const b = 1")?;
        write(".gitignore", "dist/\n*.log\n")?;
        write(".scafoignore", "secrets.txt\n")?;
        write("dist/out.js", "built")?;
        write("debug.log", "noise")?;
        write("secrets.txt", "hunter2")?;
        write(".git/HEAD", "ref: refs/heads/main")?;
        write(".env.example", "KEY=")?;
        let project = open(&dir)?;
        let listed = files(&dir)?;
        let names: Vec<String> = listed.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(
            names,
            [
                ".env.example",
                ".gitignore",
                ".scafoignore",
                "src/b.js",
                "src/index.js",
                "wrangler.jsonc"
            ]
        );
        let first = pack(&project, &listed, &project.config_text)?;
        std::fs::write(dir.join("src/index.js"), "export default {}")?; // new mtime, same bytes
        let second = pack(&project, &files(&dir)?, &project.config_text)?;
        assert_eq!(first, second, "packing is deterministic");
        let inspected = crate::artifact::inspect_reader(first.as_slice(), u64::MAX)?;
        assert_eq!(inspected.config, "wrangler.jsonc");
        std::fs::remove_dir_all(&dir)?;
        Ok(())
    }

    #[test]
    fn vars_split_at_the_first_colon() {
        assert_eq!(
            parse_var("URL:http://x:1"),
            Ok(("URL".into(), "http://x:1".into()))
        );
        assert!(parse_var("nocolon").is_err());
        assert!(parse_var(":v").is_err());
    }
}
