//! The `scafo` binary: parse the command line, run the command, and turn
//! its outcome into an exit code (0 ok, 1 refused, 2 usage, 3 unreachable).

use std::process::ExitCode;

use clap::Parser;
use scafo::cli::{Cli, Command};
use scafo::cmd::{self, Failure};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let global = &cli.global;
    let verbosity = if global.quiet {
        -1
    } else {
        global.verbose.min(2) as i8
    };
    let outcome = match &cli.command {
        Command::Sail(args) => cmd::sail::run(args, verbosity),
        Command::Apps(action) => cmd::apps::run(global, action),
        Command::Deploy(args) => cmd::deploy::run(global, args),
        Command::Ingress(action) => cmd::ingress::run(action, verbosity),
        Command::Operators(action) => cmd::operators::run(global, action),
        Command::Freeze(args) => cmd::freeze::run(global, args),
        Command::Completions { shell } => cmd::completions::run(*shell),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            match (&failure, global.json) {
                // Scripts get the node's problem document as it was.
                (Failure::Problem(problem), true) => {
                    eprintln!("{}", serde_json::to_string(problem).unwrap_or_default())
                }
                _ => eprintln!("{failure}"),
            }
            ExitCode::from(failure.exit_code())
        }
    }
}
