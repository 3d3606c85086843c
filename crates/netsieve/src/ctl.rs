//! A control socket in Suricata's unix-socket protocol, for the commands that take one
//! (`scan --unix-socket`, `firewall --unix-socket`): the client sends `{"version": ...}`
//! and gets `{"return": "OK"}`, then sends commands as `{"command": NAME, "arguments":
//! {...}}`, one JSON object per line; each reply is one JSON object per line with
//! `return` ("OK" or "NOK") and `message`. So Suricata's own client, `suricatasc`, works
//! against netsieve unchanged. What the commands do is each command's [`Handler`].

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

/// The commands a socket answers.
pub trait Handler: Send + Sync + 'static {
    fn command(self: &Arc<Self>, cmd: &str, args: &Value) -> Value;
}

/// Listens at `path` (a stale socket file is replaced); each client is served on a
/// thread of its own.
pub fn listen<H: Handler>(path: &Path, h: Arc<H>) -> Result<(), String> {
    let listener = bind(path)?;
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let h = Arc::clone(&h);
            std::thread::spawn(move || serve(&h, conn));
        }
    });
    Ok(())
}

/// `command-list`, as Suricata answers it.
pub fn command_list(names: &[&str]) -> Value {
    ok(json!({"count": names.len(), "commands": names}))
}

/// `version`.
pub fn version() -> Value {
    ok(json!(format!("netsieve {}", env!("CARGO_PKG_VERSION"))))
}

/// Listens at `p`, replacing a socket file that no process listens on any more.
fn bind(p: &Path) -> Result<UnixListener, String> {
    if p.exists() && UnixStream::connect(p).is_err() {
        let _ = std::fs::remove_file(p);
    }
    UnixListener::bind(p).map_err(|e| format!("--unix-socket {}: {e}", p.display()))
}

/// One client: the version handshake, then commands until it hangs up.
fn serve<H: Handler>(sh: &Arc<H>, conn: UnixStream) {
    let Ok(w) = conn.try_clone() else { return };
    let mut w = w;
    let mut lines = BufReader::new(conn);
    let mut line = String::new();
    let mut greeted = false;
    loop {
        line.clear();
        // A line longer than this is not a command (rules are far shorter).
        match std::io::Read::take(&mut lines, 1 << 20).read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let reply = match serde_json::from_str::<Value>(line.trim()) {
            Err(e) => nok(format!("not JSON: {e}")),
            Ok(v) if !greeted => match v.get("version") {
                Some(_) => {
                    greeted = true;
                    json!({"return": "OK"})
                }
                None => nok("expected the version handshake first".into()),
            },
            Ok(v) => match v.get("command").and_then(Value::as_str) {
                Some(cmd) => sh.command(cmd, v.get("arguments").unwrap_or(&Value::Null)),
                None => nok("no command".into()),
            },
        };
        let mut text = reply.to_string();
        text.push('\n');
        if w.write_all(text.as_bytes()).is_err() {
            return;
        }
    }
}

pub fn ok(message: Value) -> Value {
    json!({"return": "OK", "message": message})
}

pub fn nok(message: String) -> Value {
    json!({"return": "NOK", "message": message})
}
