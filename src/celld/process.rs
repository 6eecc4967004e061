//! One supervised workerd process: started, watched for health, restarted
//! with backoff when it dies, and stopped with SIGTERM then SIGKILL after a
//! grace period (workerd waits on in-flight requests without limit).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::{Failure, trim_output};

/// How long a start may take to answer health.
const START_TIMEOUT: Duration = Duration::from_secs(20);
/// How long a stopping process may finish in-flight requests.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

#[derive(Debug)]
pub struct Process {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

#[derive(Debug, Clone)]
struct Launch {
    workerd: PathBuf,
    dir: PathBuf,
    log: PathBuf,
    health: String,
    /// What this release's health answers; anything else on the port is
    /// another process.
    expect: serde_json::Value,
}

impl Launch {
    fn spawn(&self) -> std::io::Result<Child> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)?;
        let mut command = Command::new(&self.workerd);
        command
            .arg("serve")
            .arg("config.capnp")
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .kill_on_drop(true);
        // A node that dies without stopping its applications must not leave
        // them running: the kernel kills workerd when scafo goes.
        #[allow(unsafe_code)]
        // SAFETY: between fork and exec only an async-signal-safe prctl runs.
        unsafe {
            command.pre_exec(|| {
                rustix::process::set_parent_process_death_signal(Some(
                    rustix::process::Signal::KILL,
                ))
                .map_err(std::io::Error::from)
            });
        }
        command.spawn()
    }

    /// Waits until health answers 200; fails if the process exits first.
    async fn healthy(&self, child: &mut Child) -> Result<(), Failure> {
        let client = reqwest::Client::new();
        let deadline = tokio::time::Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(Failure::new(
                    "celld-start",
                    format!("workerd exited ({status}): {}", self.log_tail()),
                ));
            }
            let answer = client
                .get(&self.health)
                .timeout(Duration::from_secs(2))
                .send()
                .await;
            if let Ok(answer) = answer
                && answer.status().is_success()
                && answer.json::<serde_json::Value>().await.ok().as_ref() == Some(&self.expect)
            {
                return Ok(());
            }
            if tokio::time::Instant::now() > deadline {
                return Err(Failure::new(
                    "celld-start",
                    format!(
                        "no healthy answer within {START_TIMEOUT:?}: {}",
                        self.log_tail()
                    ),
                ));
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        trim_output(&text, &[&self.dir])
    }
}

/// Starts workerd in `dir` and returns once it answers health.
/// Starts workerd in `dir` and returns once it answers health with
/// `expect` (`{"ok":true,"application":…,"deploy":…}`).
pub async fn start(
    workerd: &Path,
    dir: &Path,
    health: String,
    expect: serde_json::Value,
) -> Result<Process, Failure> {
    let launch = Launch {
        workerd: workerd.to_owned(),
        dir: dir.to_owned(),
        log: dir.join("workerd.log"),
        health,
        expect,
    };
    let mut child = launch
        .spawn()
        .map_err(|e| Failure::new("celld-start", format!("cannot start workerd: {e}")))?;
    if let Err(failure) = launch.healthy(&mut child).await {
        terminate(&mut child).await;
        return Err(failure);
    }
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(supervise(launch, child, stopped));
    Ok(Process { stop, task })
}

async fn supervise(launch: Launch, mut child: Child, mut stopped: watch::Receiver<bool>) {
    let mut backoff = Duration::from_millis(500);
    loop {
        let exited = tokio::select! {
            status = child.wait() => Some(status),
            _ = stopped.wait_for(|s| *s) => None,
        };
        let Some(status) = exited else {
            terminate(&mut child).await;
            return;
        };
        tracing::warn!(dir = %launch.dir.display(), ?status, "workerd exited; restarting in {backoff:?}");
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = stopped.wait_for(|s| *s) => return,
        }
        backoff = (backoff * 2).min(Duration::from_secs(30));
        match launch.spawn() {
            Ok(mut next) => {
                if launch.healthy(&mut next).await.is_ok() {
                    backoff = Duration::from_millis(500);
                }
                child = next;
            }
            Err(e) => tracing::warn!(error = %e, "cannot restart workerd"),
        }
    }
}

/// SIGTERM, then SIGKILL once the grace period is over.
async fn terminate(child: &mut Child) {
    if let Some(pid) = child
        .id()
        .and_then(|id| rustix::process::Pid::from_raw(id as i32))
    {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        if tokio::time::timeout(STOP_GRACE, child.wait()).await.is_ok() {
            return;
        }
    }
    let _ = child.kill().await;
}

impl Process {
    /// Stops the process and waits until it is gone.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}
