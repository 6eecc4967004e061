//! The command line, as clap definitions. `command()` also feeds the
//! generated completions and man pages, so they cannot drift from the parser.

use std::path::PathBuf;

use clap::{ArgAction, Args, CommandFactory, Parser, Subcommand};
use clap_complete::Shell;

#[derive(Debug, Parser)]
#[command(
    name = "scafo",
    version,
    about = "Self-hosted platform for Workers-style applications",
    long_about = "scafo runs Workers-style applications (projects with a wrangler.jsonc) on a fleet of \
ordinary servers. `scafo sail` runs a node; every node of a fleet shares one registry in an \
object-store bucket, so any node answers any call.",
    propagate_version = true,
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// More log output (-v debug, -vv trace)
    #[arg(short, long, action = ArgAction::Count, global = true)]
    pub verbose: u8,

    /// Only warnings and errors
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once, never moved around
pub enum Command {
    /// Run a node: the HTTP control API, heartbeats and the registry
    #[command(
        long_about = "Run a node: the HTTP control API, heartbeats and the registry.\n\n\
Configuration comes from defaults < the config file (TOML) < SCAFO_* environment variables < \
these flags, merged and validated once at start; see the README for every key. With nothing \
configured the node keeps its state in /var/lib/scafo (root) or $XDG_STATE_HOME/scafo, its \
registry in <state>/bucket, and listens on 127.0.0.1:7070."
    )]
    Sail(SailArgs),
    /// Print a shell completion script
    Completions {
        /// The shell to complete for
        shell: Shell,
    },
}

/// Flags of `scafo sail`; every one overrides the same key from the
/// environment and the config file.
#[derive(Debug, Default, Args)]
pub struct SailArgs {
    /// Config file (TOML) [env: SCAFO_CONFIG] [default: /etc/scafo/scafo.toml when it exists]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// This node's id: a DNS label unique in the fleet [key: node.id]
    #[arg(long, value_name = "ID")]
    pub node_id: Option<String>,

    /// API address; port 0 picks a free one [key: api.listen] [default: 127.0.0.1:7070]
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// URL other nodes and the ingress use to reach this API [key: node.advertise]
    #[arg(long, value_name = "URL")]
    pub advertise: Option<String>,

    /// Where the node keeps its key, ingress token and work files [key: state.dir]
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,

    /// The registry: s3://bucket[/prefix] or file:///path [key: registry.bucket]
    #[arg(long, value_name = "URL")]
    pub bucket: Option<String>,

    /// An admitted ingress token; repeat for several [key: ingress.token]
    #[arg(long = "ingress-token", value_name = "TOKEN")]
    pub ingress_token: Vec<String>,

    /// A node label selectors match, e.g. region=eu-west-1; repeatable [key: node.labels]
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub label: Vec<String>,

    /// Log format: text or json [key: log.format]
    #[arg(long, value_name = "FORMAT")]
    pub log_format: Option<String>,
}

/// The whole command definition, for completions and man pages.
pub fn command() -> clap::Command {
    Cli::command()
}

/// The files generated from these definitions and committed at the top of
/// the repository: completions for bash, zsh and fish, and one man page per
/// command. A test compares them with what this build generates.
pub fn generated_files() -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for (shell, name) in [
        (Shell::Bash, "completions/scafo.bash"),
        (Shell::Zsh, "completions/_scafo"),
        (Shell::Fish, "completions/scafo.fish"),
    ] {
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut command(), "scafo", &mut out);
        files.push((name.to_owned(), out));
    }
    let mut root = command();
    root.build();
    man_pages(&root, &mut files);
    files
}

fn man_pages(command: &clap::Command, files: &mut Vec<(String, Vec<u8>)>) {
    let name = command
        .get_display_name()
        .unwrap_or(command.get_name())
        .to_owned();
    let mut out = Vec::new();
    if clap_mangen::Man::new(command.clone())
        .render(&mut out)
        .is_ok()
    {
        files.push((format!("man/{name}.1"), out));
    }
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        man_pages(sub, files);
    }
}
