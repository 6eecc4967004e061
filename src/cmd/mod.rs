//! One file per subcommand. Each answers `Result<(), Failure>`; `main`
//! turns a failure into its exit code in one place.

pub mod completions;
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
}

impl Failure {
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Refused(_) => 1,
            Failure::Usage(_) => 2,
            Failure::Unreachable(_) => 3,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (Failure::Refused(e) | Failure::Usage(e) | Failure::Unreachable(e)) = self;
        write!(f, "{e:#}")
    }
}
