//! `scafo sail`: resolve the configuration, set up logging, bind the API
//! address, and run the node until SIGINT or SIGTERM.

use anyhow::anyhow;
use tokio::signal::unix::{SignalKind, signal};

use super::Failure;
use crate::cli::SailArgs;
use crate::config::{self, LogFormat};

pub fn run(args: &SailArgs, verbosity: i8) -> Result<(), Failure> {
    let config =
        config::resolve(args, &config::process_env).map_err(|e| Failure::Usage(e.into()))?;
    init_logging(config.log_format, verbosity);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Refused(anyhow!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|e| {
                Failure::Refused(anyhow!(
                    "cannot listen on {} (api.listen): {e}",
                    config.listen
                ))
            })?;
        // Both handlers are installed here, before the node starts, so a
        // signal that arrives early still stops it cleanly.
        let watch = |kind: SignalKind, name: &str| {
            signal(kind).map_err(|e| Failure::Refused(anyhow!("cannot watch {name}: {e}")))
        };
        let mut terminate = watch(SignalKind::terminate(), "SIGTERM")?;
        let mut interrupt = watch(SignalKind::interrupt(), "SIGINT")?;
        let shutdown = async move {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
        };
        crate::node::run(config, listener, shutdown)
            .await
            .map_err(|e| Failure::Refused(e.into()))
    })
}

/// Logs go to stderr, as text or one JSON object a line. `SCAFO_LOG` (an
/// env-filter directive such as `debug` or `scafo=trace`) overrides -v/-q.
pub fn init_logging(format: LogFormat, verbosity: i8) {
    use tracing_subscriber::EnvFilter;
    let level = match verbosity {
        i8::MIN..=-1 => "warn",
        0 => "info",
        1 => "debug",
        _ => "trace",
    };
    let filter = std::env::var("SCAFO_LOG")
        .ok()
        .and_then(|directive| EnvFilter::try_new(directive).ok())
        .unwrap_or_else(|| {
            EnvFilter::new(format!(
                "{level},aws_config=warn,aws_smithy_runtime=warn,aws_sdk_s3=warn,hyper=warn"
            ))
        });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}
