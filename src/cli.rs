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

    #[command(flatten)]
    pub global: GlobalArgs,
}

/// Flags every command takes. The first three choose the node and the
/// credential of the client commands (`scafo sail` ignores them).
#[derive(Debug, Default, Args)]
pub struct GlobalArgs {
    /// Node API URL [env: SCAFO_URL] [default: http://127.0.0.1:7070]
    #[arg(long, global = true, value_name = "URL")]
    pub url: Option<String>,

    /// Operator key file: a JWK with "d" and "kid" [env: SCAFO_KEY]
    #[arg(long, global = true, value_name = "FILE", conflicts_with = "token")]
    pub key: Option<PathBuf>,

    /// A bearer token to send as it is, e.g. a CI OIDC token [env: SCAFO_TOKEN]
    #[arg(long, global = true, value_name = "TOKEN")]
    pub token: Option<String>,

    /// Print machine-readable JSON
    #[arg(long, global = true)]
    pub json: bool,

    /// Answer yes to confirmations (needed without a terminal)
    #[arg(short = 'y', long, global = true)]
    pub yes: bool,

    /// More output (-v debug, -vv trace)
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
    /// Deploy a project (a directory with a wrangler.jsonc) and follow it until live
    Deploy(DeployArgs),
    /// Inspect and manage applications
    #[command(subcommand)]
    Apps(AppsCommand),
    /// Helpers that run beside an ingress
    #[command(subcommand)]
    Ingress(IngressCommand),
    /// Manage operator keys: who may call the fleet's API
    #[command(subcommand)]
    Operators(OperatorsCommand),
    /// Stop deploy intake for the whole fleet (status, lift)
    #[command(args_conflicts_with_subcommands = true)]
    Freeze(FreezeArgs),
    /// Print a shell completion script
    Completions {
        /// The shell to complete for
        shell: Shell,
    },
}

#[derive(Debug, Args)]
pub struct DeployArgs {
    /// The project directory
    #[arg(default_value = ".", value_name = "DIR")]
    pub dir: PathBuf,

    /// The application name [default: "name" in the wrangler config]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Deploy the config's env.<ENV> section as the application <name>-<ENV>
    #[arg(long, value_name = "ENV")]
    pub env: Option<String>,

    /// Set a var in the packed copy's config (split at the first ':'; always a string); repeatable
    #[arg(long = "var", value_name = "KEY:VALUE")]
    pub vars: Vec<String>,

    /// Upload the modules as they are ("no_bundle": true in the packed copy)
    #[arg(long)]
    pub no_bundle: bool,

    /// A note recorded on the deploy
    #[arg(short, long, value_name = "TEXT")]
    pub message: Option<String>,

    /// Run only on nodes with this label; repeatable
    #[arg(long = "selector", value_name = "KEY=VALUE")]
    pub selector: Vec<String>,

    /// How many nodes run it: a number, or all
    #[arg(long, value_name = "N|all")]
    pub replicas: Option<String>,

    /// Return once the node accepted the deploy, without following it
    #[arg(long)]
    pub detach: bool,

    /// Authenticate as this GitHub Actions job: its OIDC ID token (the job needs `permissions: id-token: write`)
    #[arg(long)]
    pub oidc: bool,

    /// The audience of the ID token --oidc requests; the nodes' oidc.audience [default: scafo]
    #[arg(long, value_name = "AUD", requires = "oidc")]
    pub audience: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum AppsCommand {
    /// List the applications this key reaches
    List,
    /// Show one application's record
    Show { name: String },
    /// Stop serving an application and refuse its deploys (admin)
    Block { name: String },
    /// Restore a blocked application's prior state (admin)
    Unblock { name: String },
    /// Replace an application's labels; none clears them (admin)
    Labels {
        name: String,
        /// KEY=VALUE pairs
        #[arg(value_name = "KEY=VALUE")]
        labels: Vec<String>,
    },
    /// Stop serving an application; it is deleted once the grace period ends
    Retire { name: String },
    /// Undo a retirement during its grace period
    Unretire { name: String },
    /// Run an application only on nodes with these labels
    Selector {
        name: String,
        /// KEY=VALUE node labels to match
        #[arg(value_name = "KEY=VALUE", required_unless_present = "clear")]
        pairs: Vec<String>,
        /// Remove the selector: any node
        #[arg(long, conflicts_with = "pairs")]
        clear: bool,
    },
    /// How many nodes run an application: a number, or all
    Replicas {
        name: String,
        #[arg(value_name = "N|all")]
        replicas: String,
    },
    /// Custom domains
    #[command(subcommand)]
    Domains(DomainsCommand),
    /// Set which CI workloads may deploy it: --issuer/--subject pairs; none clears
    Trust {
        name: String,
        /// An OIDC issuer URL; pairs with the --subject after it
        #[arg(long = "issuer", value_name = "URL")]
        issuers: Vec<String>,
        /// A subject, exact or ending in *
        #[arg(long = "subject", value_name = "SUBJECT")]
        subjects: Vec<String>,
    },
    /// Delete an application, its claims, deploy records and artifacts
    Delete {
        name: String,
        /// Skip the retirement and grace requirement
        #[arg(long)]
        force: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum DomainsCommand {
    /// Claim a host for an application
    Add {
        name: String,
        host: String,
        /// Also claim the single label below the host (<env>.<host> for <name>-<env>)
        #[arg(long)]
        wildcard: bool,
    },
    /// Release a host
    Remove { name: String, host: String },
}

#[derive(Debug, Subcommand)]
pub enum IngressCommand {
    /// Answer Caddy's on-demand TLS permission asks from fleets' routing documents
    #[command(
        long_about = "Answer Caddy's on_demand_tls `permission http` asks. Polls each fleet's routing \
document (GET /v1/ingress/routes with that fleet's ingress token), keeps each fleet's last good \
document through errors, and answers GET ?domain=<name> with 200 only for a host some fleet's \
document names exactly (a route host or an API host), 403 otherwise. Give --fleet and \
--ingress-token-file once per fleet, in pairs."
    )]
    CaddyPermission {
        /// A fleet node's API URL; repeat for several fleets
        #[arg(long = "fleet", value_name = "URL", required = true)]
        fleets: Vec<String>,
        /// The file holding that fleet's ingress token (mode 0600); one per --fleet
        #[arg(long = "ingress-token-file", value_name = "FILE", required = true)]
        token_files: Vec<PathBuf>,
        /// Where Caddy asks
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7081")]
        listen: String,
        /// How often each fleet's document is fetched, in milliseconds
        #[arg(long, value_name = "MS", default_value_t = 2000)]
        interval_ms: u64,
    },
}

#[derive(Debug, Subcommand)]
pub enum OperatorsCommand {
    /// Create a key file (0600) and print its public JWK to hand to an admin
    Keygen {
        /// The operator id the key will be registered under [default: op-<random>]
        #[arg(long, value_name = "ID")]
        id: Option<String>,
        /// Where to write the key [default: $XDG_CONFIG_HOME/scafo/keys/<id>.jwk]
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// List operator keys (non-admins see their own rotation lineage)
    List,
    /// Register a key (a fresh grant within your own scope)
    Add {
        /// The new operator id
        #[arg(long, value_name = "ID")]
        id: String,
        /// The public JWK file `scafo operators keygen` printed
        #[arg(long, value_name = "FILE")]
        public_key: PathBuf,
        /// The key's tier
        #[arg(long, value_enum, default_value_t = RoleArg::Operator)]
        role: RoleArg,
        /// An application scope pattern: *, a name, or a prefix glob like shop-*; repeatable
        #[arg(long = "app", value_name = "PATTERN", required = true)]
        apps: Vec<String>,
    },
    /// Remove a key; it is refused from the next request on
    Remove {
        /// The operator id
        id: String,
    },
    /// Replace your key with a fresh one: register it, remove the old, swap the file
    #[command(
        long_about = "Replace your key with a fresh one. A new key is written beside the key file (<file>.next), registered as superseding the current key (signed by the current key), the current key is removed (signed by the new key), and the new key takes the key file's place. An interrupted rotation completes when run again."
    )]
    Rotate,
    /// Show which operator key this client uses, its tier and scope
    Whoami,
}

/// The tier of a key, as `operators add --role` spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RoleArg {
    Operator,
    Admin,
}

#[derive(Debug, Args)]
pub struct FreezeArgs {
    #[command(subcommand)]
    pub action: Option<FreezeCommand>,

    /// Why deploys are frozen, shown to whoever is refused one
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum FreezeCommand {
    /// Show whether deploys are frozen, since when, by whom and why
    Status,
    /// Lift the freeze: nodes take deploys again
    Lift,
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

    /// An API host name the routing document publishes for this fleet; repeatable [key: api.hosts]
    #[arg(long = "api-host", value_name = "HOST")]
    pub api_host: Vec<String>,

    /// A platform domain: applications answer at <name>.<domain>; repeatable [key: platform.domains] [default: localhost]
    #[arg(long = "platform-domain", value_name = "DOMAIN")]
    pub platform_domain: Vec<String>,

    /// Register this public JWK (or key file) as the first admin while the
    /// registry holds no operator; its kid is the operator id [key: bootstrap.admin]
    #[arg(long, value_name = "FILE")]
    pub bootstrap_admin: Option<PathBuf>,
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
