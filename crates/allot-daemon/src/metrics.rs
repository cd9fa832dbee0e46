//! The Prometheus text endpoint (`[daemon] metrics` in `allot.toml`):
//! pending and running jobs per queue and user, slots in use, scheduling
//! pass times. The figures come from the dispatcher, so a scrape sees one
//! consistent state and never blocks scheduling for long.

use std::collections::BTreeMap;
use std::fmt::Write;

use allot_engine::JobId;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

use crate::serve::Input;
use crate::state::State;

/// Answers scrapes until the daemon stops.
pub async fn serve(listener: TcpListener, tx: mpsc::Sender<Input>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let tx = tx.clone();
        tokio::spawn(async move {
            let _ = scrape(stream, tx).await;
        });
    }
}

/// One HTTP exchange: `GET /metrics` gets the figures, anything else 404.
async fn scrape(mut stream: TcpStream, tx: mpsc::Sender<Input>) -> anyhow::Result<()> {
    let mut request = Vec::new();
    let mut buf = [0u8; 1024];
    let read = async {
        while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 8192 {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            request.extend_from_slice(&buf[..n]);
        }
        anyhow::Ok(())
    };
    tokio::time::timeout(std::time::Duration::from_secs(5), read).await??;
    let line = String::from_utf8_lossy(&request);
    let target = line.split_whitespace().nth(1).unwrap_or("");
    let (status, body) = if line.starts_with("GET ") && (target == "/metrics" || target.starts_with("/metrics?")) {
        let (reply, answer) = oneshot::channel();
        tx.send(Input::Metrics(reply)).await?;
        ("200 OK", answer.await?)
    } else {
        ("404 Not Found", "allotd serves /metrics\n".to_string())
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await?;
    Ok(())
}

/// A label value, escaped as the text format wants.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// The figures, in the Prometheus text format.
pub fn render(state: &State) -> String {
    let mut jobs: BTreeMap<(&str, &str, &str), u64> = BTreeMap::new();
    let pending = state.engine.pending_jobs().map(|id| (id, "pending"));
    let running = state.running.iter().map(|&id| (JobId(id), "running"));
    for (id, what) in pending.chain(running) {
        let Some(j) = state.jobs.get(&id.0) else { continue };
        let queue = state.engine.job_queue(id).unwrap_or("");
        *jobs.entry((queue, j.record.spec.user.as_str(), what)).or_default() += 1;
    }
    let mut out = String::new();
    let _ = writeln!(out, "# HELP allot_jobs Unfinished jobs by queue, user and state.\n# TYPE allot_jobs gauge");
    for ((queue, user, what), n) in jobs {
        let _ = writeln!(out, "allot_jobs{{queue=\"{}\",user=\"{}\",state=\"{what}\"}} {n}", label(queue), label(user));
    }
    let _ =
        writeln!(out, "# HELP allot_queue_slots_used Job slots in use per queue.\n# TYPE allot_queue_slots_used gauge");
    for (q, _, used, _) in state.engine.queues() {
        let _ = writeln!(out, "allot_queue_slots_used{{queue=\"{}\"}} {used}", label(&q.name));
    }
    let _ = writeln!(out, "# HELP allot_slots_used Job slots in use.\n# TYPE allot_slots_used gauge");
    let _ = writeln!(out, "allot_slots_used {}", state.engine.used_slots());
    let _ = writeln!(out, "# HELP allot_slots_total Job slots of all hosts.\n# TYPE allot_slots_total gauge");
    let _ = writeln!(out, "allot_slots_total {}", state.engine.total_slots());
    let p = state.passes;
    let _ = writeln!(
        out,
        "# HELP allot_scheduling_pass_seconds Time spent in scheduling passes.\n\
         # TYPE allot_scheduling_pass_seconds summary\n\
         allot_scheduling_pass_seconds_sum {}\nallot_scheduling_pass_seconds_count {}",
        p.total, p.count
    );
    let _ = writeln!(
        out,
        "# HELP allot_scheduling_last_pass_seconds How long the last scheduling pass took.\n\
         # TYPE allot_scheduling_last_pass_seconds gauge\nallot_scheduling_last_pass_seconds {}",
        p.last
    );
    out
}
