//! The `scafo` binary: parse the command line, run the command, and turn
//! its outcome into an exit code (0 ok, 1 refused, 2 usage, 3 unreachable).

use std::process::ExitCode;

use clap::Parser;
use scafo::cli::{Cli, Command};
use scafo::cmd;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let verbosity = if cli.quiet {
        -1
    } else {
        cli.verbose.min(2) as i8
    };
    let outcome = match &cli.command {
        Command::Sail(args) => cmd::sail::run(args, verbosity),
        Command::Completions { shell } => cmd::completions::run(*shell),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("error: {failure}");
            ExitCode::from(failure.exit_code())
        }
    }
}
