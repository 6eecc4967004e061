//! `scafo completions <shell>`: prints the completion script.

use std::io::Write;

use clap_complete::Shell;

use super::Failure;

pub fn run(shell: Shell) -> Result<(), Failure> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut crate::cli::command(), "scafo", &mut out);
    std::io::stdout()
        .write_all(&out)
        .map_err(|e| Failure::Refused(e.into()))
}
