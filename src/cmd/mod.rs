//! One file per subcommand. Each answers `Result<(), Failure>`; `main`
//! turns a failure into its exit code in one place.

pub mod apps;
pub mod completions;
pub mod deploy;
pub mod freeze;
pub mod ingress;
pub mod operators;
pub mod pack;
pub mod sail;

use std::fmt;

/// Why a command failed, which decides the exit code (DESIGN §12).
#[derive(Debug)]
pub enum Failure {
    /// 1: refused or failed.
    Refused(anyhow::Error),
    /// 2: usage or configuration.
    Usage(anyhow::Error),
    /// 3: a node could not be reached or answered 5xx.
    Unreachable(anyhow::Error),
    /// The node refused with a problem document: 1, or 3 for a 5xx.
    Problem(Box<crate::wire::Problem>),
}

impl Failure {
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Refused(_) => 1,
            Failure::Usage(_) => 2,
            Failure::Unreachable(_) => 3,
            Failure::Problem(problem) if problem.status >= 500 => 3,
            Failure::Problem(_) => 1,
        }
    }
}

/// How a failure reads on stderr: `error[code]: title` then the detail for
/// a problem document, `error: …` for everything else.
impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Refused(e) | Failure::Usage(e) | Failure::Unreachable(e) => {
                write!(f, "error: {e:#}")
            }
            Failure::Problem(problem) => {
                write!(f, "error[{}]: {}", problem.code, problem.title)?;
                if let Some(detail) = &problem.detail {
                    write!(f, "\n  {detail}")?;
                }
                Ok(())
            }
        }
    }
}

/// Runs a client command's future on a small runtime.
pub fn block_on<T>(
    work: impl std::future::Future<Output = Result<T, Failure>>,
) -> Result<T, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Refused(anyhow::anyhow!("cannot start the async runtime: {e}")))?
        .block_on(work)
}
