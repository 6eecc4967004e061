//! Turning a project into workerd modules: one esbuild bundle, or — with
//! `no_bundle`, or without esbuild when `main` imports only relative paths —
//! the project's own ES modules as they are.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::capnp::Module;
use super::wrangler::WorkerSpec;
use super::{Failure, trim_output};

const BUNDLE: &str = "bundle/worker.js";

pub async fn modules(
    esbuild: Option<&Path>,
    work: &Path,
    src: &Path,
    spec: &WorkerSpec,
) -> Result<Vec<Module>, Failure> {
    if !src.join(&spec.main).is_file() {
        return Err(Failure::new(
            "celld-build",
            format!("the main module {} is not in the artifact", spec.main),
        ));
    }
    if !spec.no_bundle {
        match esbuild {
            Some(esbuild) => return bundle(esbuild, work, src, spec).await,
            None => {
                let text = std::fs::read_to_string(src.join(&spec.main)).unwrap_or_default();
                let packages: Vec<String> = imports(&text)
                    .into_iter()
                    .filter(|s| !is_relative(s))
                    .collect();
                if !packages.is_empty() {
                    return Err(Failure::new(
                        "celld-build",
                        format!(
                            "{} imports {} and esbuild is not installed on this node: install esbuild, or set \"no_bundle\": true with modules the runtime can load as they are",
                            spec.main,
                            packages.join(", ")
                        ),
                    ));
                }
            }
        }
    }
    plain_modules(src, spec)
}

async fn bundle(
    esbuild: &Path,
    work: &Path,
    src: &Path,
    spec: &WorkerSpec,
) -> Result<Vec<Module>, Failure> {
    let meta = work.join("esbuild-meta.json");
    let mut command = tokio::process::Command::new(esbuild);
    command
        .arg(&spec.main)
        .args([
            "--bundle",
            "--format=esm",
            "--platform=neutral",
            "--target=es2022",
            "--conditions=workerd,worker,browser",
            "--main-fields=workerd,worker,browser,module,main",
            "--external:cloudflare:*",
            "--external:node:*",
            "--log-level=error",
            "--color=false",
        ])
        .arg(format!("--metafile={}", meta.display()))
        .arg(format!("--outfile={}", work.join(BUNDLE).display()))
        .current_dir(src)
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(120), command.output())
        .await
        .map_err(|_| Failure::new("celld-build", "esbuild took longer than 120 s"))?
        .map_err(|e| Failure::new("celld-build", format!("cannot run esbuild: {e}")))?;
    if !output.status.success() {
        // The messages, never esbuild's code frames: a frame could quote a
        // file the project had no business reading.
        let stderr = String::from_utf8_lossy(&output.stderr);
        let messages: String = stderr
            .lines()
            .filter(|line| !line.contains('│') && !line.contains('╵') && !line.contains('╷'))
            .collect::<Vec<_>>()
            .join("\n");
        return Err(Failure::new(
            "celld-build",
            trim_output(&messages, &[work, src]),
        ));
    }
    // Every input must come from the project itself: the bundle runs code
    // from an artifact, and must not carry files of this node into it.
    let inputs = std::fs::read(&meta)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .and_then(|meta| {
            meta.get("inputs")
                .and_then(|i| i.as_object())
                .map(|i| i.keys().cloned().collect::<Vec<_>>())
        })
        .ok_or_else(|| Failure::new("celld-build", "esbuild wrote no metafile"))?;
    let _ = std::fs::remove_file(&meta);
    if let Some(outside) = inputs.iter().find(|input| {
        let path = Path::new(input.as_str());
        path.is_absolute()
            || path
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
    }) {
        let _ = std::fs::remove_file(work.join(BUNDLE));
        return Err(Failure::new(
            "celld-build",
            format!(
                "the bundle imports {outside}, which is outside the project: only the artifact's own files can be bundled"
            ),
        ));
    }
    Ok(vec![Module {
        name: "worker.js".into(),
        file: BUNDLE.into(),
    }])
}

/// Every `.js`/`.mjs` file of the project as an ES module, `main` first.
fn plain_modules(src: &Path, spec: &WorkerSpec) -> Result<Vec<Module>, Failure> {
    let mut files = Vec::new();
    collect(src, src, &mut files)
        .map_err(|e| Failure::new("celld-build", format!("cannot read the project: {e}")))?;
    files.sort();
    let module = |relative: &str| Module {
        name: relative.to_owned(),
        file: format!("src/{relative}"),
    };
    let mut modules = vec![module(&spec.main)];
    modules.extend(files.iter().filter(|f| **f != spec.main).map(|f| module(f)));
    Ok(modules)
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path: PathBuf = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type()?.is_dir() {
            if name != "node_modules" && !name.starts_with('.') {
                collect(root, &path, out)?;
            }
        } else if (name.ends_with(".js") || name.ends_with(".mjs"))
            && let Ok(relative) = path.strip_prefix(root)
        {
            out.push(relative.to_string_lossy().into_owned());
        }
    }
    Ok(())
}

fn is_relative(specifier: &str) -> bool {
    specifier.starts_with("./") || specifier.starts_with("../")
}

/// The module specifiers a source imports (`from "x"`, `import "x"`,
/// `import("x")`): a scan good enough to tell packages from relative files.
fn imports(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    for marker in ["from", "import"] {
        let mut rest = source;
        while let Some(at) = rest.find(marker) {
            let after = rest[at + marker.len()..].trim_start();
            let after = after.strip_prefix('(').unwrap_or(after).trim_start();
            if let Some(quote) = after.chars().next().filter(|c| *c == '"' || *c == '\'')
                && let Some(end) = after[1..].find(quote)
            {
                found.push(after[1..1 + end].to_owned());
            }
            rest = &rest[at + marker.len()..];
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::imports;

    #[test]
    fn finds_static_and_dynamic_imports() {
        let found = imports(
            "import a from './a.js';\nimport { b } from \"hono\";\nimport './side.js';\nconst c = await import('../c.js');\nexport * from './d.js';",
        );
        assert_eq!(found, ["./a.js", "hono", "./d.js", "./side.js", "../c.js"]);
    }
}
