//! Celld: the runtime that runs an application's code on this node, on
//! workerd (DESIGN §10). It knows nothing of HTTP routes or the registry:
//! given an artifact it unpacks, reads the wrangler config, builds, writes
//! the workerd config and starts a supervised process on a port of
//! `celld.ports`, answering its own health at `/.well-known/celld/health`.

mod build;
mod capnp;
mod process;
pub mod wrangler;

use std::net::{IpAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU16, Ordering};

use crate::names::{AppName, DeployId};
use crate::registry::CelldInfo;

/// Why a release could not be run: a deploy-record code and a detail fit
/// to show the operator (trimmed, without this node's paths).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: &'static str,
    pub detail: String,
}

impl Failure {
    pub fn new(code: &'static str, detail: impl Into<String>) -> Self {
        Failure {
            code,
            detail: detail.into(),
        }
    }
}

/// The last 2 000 characters of a tool's output, with this node's work
/// paths taken out and blank lines dropped.
pub fn trim_output(text: &str, paths: &[&Path]) -> String {
    let mut text = text.to_owned();
    for path in paths {
        text = text
            .replace(&format!("{}/", path.display()), "")
            .replace(&path.display().to_string(), ".");
    }
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    let joined = lines.join("\n");
    let count = joined.chars().count();
    if count > 2000 {
        format!("…{}", joined.chars().skip(count - 2000).collect::<String>())
    } else {
        joined
    }
}

/// Where Celld finds its binaries: configured, on PATH, or installed by
/// `install.sh` beside the scafo binary (`<prefix>/lib/scafo/node_modules/.bin`).
pub fn find_binary(name: &str, configured: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = configured {
        return Some(path.to_owned());
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let beside = std::env::current_exe().ok().and_then(|exe| {
        exe.parent()?
            .parent()
            .map(|prefix| prefix.join("lib/scafo/node_modules/.bin").join(name))
    });
    on_path.into_iter().chain(beside).find(|p| p.is_file())
}

#[derive(Debug)]
pub struct Celld {
    workerd: PathBuf,
    esbuild: Option<PathBuf>,
    version: String,
    root: PathBuf,
    bind: IpAddr,
    url_host: String,
    ports: (u16, u16),
    next_port: AtomicU16,
    artifact_limit: u64,
}

/// Where Celld runs, and its bounds.
#[derive(Debug, Clone)]
pub struct Settings {
    pub workerd: Option<PathBuf>,
    pub esbuild: Option<PathBuf>,
    /// `<state.dir>/celld`.
    pub root: PathBuf,
    /// The address application processes listen on.
    pub bind: IpAddr,
    /// The host other machines reach them at.
    pub url_host: String,
    pub ports: (u16, u16),
    pub artifact_limit: u64,
}

/// A release running on this node.
#[derive(Debug)]
pub struct Running {
    pub url: String,
    process: process::Process,
    dir: PathBuf,
}

impl Celld {
    /// Finds workerd and asks its version; `Err` says why there is no runtime.
    pub async fn discover(settings: Settings) -> Result<Celld, String> {
        let workerd = find_binary("workerd", settings.workerd.as_deref()).ok_or(
            "workerd not found (celld.workerd, PATH, or <prefix>/lib/scafo via install.sh)",
        )?;
        let output = tokio::process::Command::new(&workerd)
            .arg("--version")
            .output()
            .await
            .map_err(|e| format!("cannot run {}: {e}", workerd.display()))?;
        let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        if !output.status.success() || version.is_empty() {
            return Err(format!("{} --version failed", workerd.display()));
        }
        // Nothing runs yet: work directories left by an earlier run are stale.
        let _ = tokio::fs::remove_dir_all(&settings.root).await;
        let esbuild = find_binary("esbuild", settings.esbuild.as_deref());
        if esbuild.is_none() {
            tracing::warn!(
                "esbuild not found: only workers with relative imports (or no_bundle) can run"
            );
        }
        Ok(Celld {
            workerd,
            esbuild,
            version,
            root: settings.root,
            bind: settings.bind,
            url_host: settings.url_host,
            // Start somewhere random in the range, so nodes sharing a
            // machine rarely probe the same ports.
            next_port: AtomicU16::new(
                settings.ports.0
                    + (getrandom::u32().unwrap_or(0)
                        % (u32::from(settings.ports.1 - settings.ports.0) + 1))
                        as u16,
            ),
            ports: settings.ports,
            artifact_limit: settings.artifact_limit,
        })
    }

    pub fn info(&self) -> CelldInfo {
        CelldInfo {
            engine: "workerd".into(),
            version: self.version.clone(),
        }
    }

    /// A free port of `celld.ports`, searched from where the last one was found.
    fn port(&self) -> Result<u16, Failure> {
        let (first, last) = self.ports;
        let span = u32::from(last - first) + 1;
        let start = self.next_port.load(Ordering::Relaxed).clamp(first, last);
        for step in 0..span {
            let port = first + ((u32::from(start - first) + step) % span) as u16;
            if TcpListener::bind((self.bind, port)).is_ok() {
                let next = if port == last { first } else { port + 1 };
                self.next_port.store(next, Ordering::Relaxed);
                return Ok(port);
            }
        }
        Err(Failure::new(
            "celld-start",
            format!("no free port in celld.ports {first}-{last}"),
        ))
    }

    /// Unpacks, builds and starts one release; answers once it is healthy.
    pub async fn run(
        &self,
        app: &AppName,
        deploy: &DeployId,
        artifact: &Path,
    ) -> Result<Running, Failure> {
        // Each start gets its own directory: a stopping process of the same
        // release (draining) still owns the previous one.
        let dir = self.root.join(app.as_str()).join(format!(
            "{}-{}",
            deploy.hex(),
            &crate::registry::new_nonce()[..8]
        ));
        let outcome = self.run_in(app, deploy, artifact, &dir).await;
        if outcome.is_err() {
            let _ = tokio::fs::remove_dir_all(&dir).await;
        }
        outcome
    }

    async fn run_in(
        &self,
        app: &AppName,
        deploy: &DeployId,
        artifact: &Path,
        dir: &Path,
    ) -> Result<Running, Failure> {
        let dir = dir.to_owned();
        let src = dir.join("src");
        let _ = tokio::fs::remove_dir_all(&dir).await;
        let unpacked = {
            let (artifact, src, limit) = (artifact.to_owned(), src.clone(), self.artifact_limit);
            tokio::task::spawn_blocking(move || crate::artifact::unpack(&artifact, &src, limit))
                .await
                .map_err(|e| Failure::new("artifact-invalid", e.to_string()))?
                .map_err(|e| Failure::new("artifact-invalid", e.to_string()))?
        };
        let spec = wrangler::read(&src, unpacked.config)?;
        let modules = build::modules(self.esbuild.as_deref(), &dir, &src, &spec).await?;
        let write = |name: &str, text: &str| {
            std::fs::write(dir.join(name), text)
                .map_err(|e| Failure::new("celld-start", format!("cannot write {name}: {e}")))
        };
        write(capnp::ENTRY_FILE, capnp::ENTRY_JS)?;
        let expect =
            serde_json::json!({"ok": true, "application": app.as_str(), "deploy": deploy.as_str()});
        // Another process may take the port between the probe and workerd's
        // bind: then try the next free one.
        let mut attempt = 0;
        let (port, process) = loop {
            attempt += 1;
            let port = self.port()?;
            let config = capnp::render(&capnp::Config {
                address: match self.bind {
                    IpAddr::V6(ip) => format!("[{ip}]:{port}"),
                    IpAddr::V4(ip) => format!("{ip}:{port}"),
                },
                application: app.as_str(),
                deploy: deploy.as_str(),
                modules: modules.clone(),
                compatibility_date: &spec.compatibility_date,
                compatibility_flags: &spec.compatibility_flags,
                vars: &spec.vars,
            });
            write("config.capnp", &config)?;
            let local = match self.bind {
                IpAddr::V4(ip) if !ip.is_unspecified() => ip.to_string(),
                IpAddr::V6(ip) if !ip.is_unspecified() => format!("[{ip}]"),
                _ => "127.0.0.1".to_owned(),
            };
            let health = format!("http://{local}:{port}/.well-known/celld/health");
            match process::start(&self.workerd, &dir, health, expect.clone()).await {
                Ok(process) => break (port, process),
                Err(failure)
                    if attempt < 3 && failure.detail.contains("Address already in use") =>
                {
                    tracing::debug!(port, "port taken before workerd bound it; trying another");
                    let _ = std::fs::remove_file(dir.join("workerd.log"));
                }
                Err(failure) => return Err(failure),
            }
        };
        Ok(Running {
            url: format!("http://{}:{port}", self.url_host),
            process,
            dir,
        })
    }
}

impl Running {
    /// Stops the process and removes its work directory.
    pub async fn stop(self) {
        self.process.stop().await;
        let _ = tokio::fs::remove_dir_all(&self.dir).await;
    }
}
