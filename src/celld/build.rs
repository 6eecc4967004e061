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
        ])
        .arg(format!("--outfile={}", work.join(BUNDLE).display()))
        .current_dir(src)
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(120), command.output())
        .await
        .map_err(|_| Failure::new("celld-build", "esbuild took longer than 120 s"))?
        .map_err(|e| Failure::new("celld-build", format!("cannot run esbuild: {e}")))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(Failure::new(
            "celld-build",
            trim_output(&stderr, &[work, src]),
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
