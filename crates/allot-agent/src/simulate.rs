//! A load generator that speaks the agents' protocol for many simulated
//! hosts at once (`allot-agent --simulate N`, see `bench/agents-load.sh`):
//! `host1` ... `hostN`, each over its own TLS connection with its own
//! certificate, saying hello, heartbeating, taking starts (a job "runs"
//! for `run_ms` and ends with exit 0) and acknowledgements. It measures
//! how long each start took from allotd's decision to its arrival here
//! (both clocks are this machine's), and prints the percentiles when it
//! is stopped (SIGTERM or SIGINT).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::wire::{self, FromAgent, Heartbeat, Hello, ToAgent};

/// Microseconds since the epoch.
pub fn now_us() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

pub struct Simulation {
    pub server: String,
    pub tls_dir: std::path::PathBuf,
    pub hosts: u32,
    pub heartbeat: Duration,
    pub run_ms: u64,
}

/// Runs the simulated hosts until SIGTERM or SIGINT; returns the report.
pub async fn simulate(sim: Simulation) -> Result<String, String> {
    let (tx, mut latencies) = mpsc::unbounded_channel::<u64>();
    let mut tasks = Vec::new();
    for k in 1..=sim.hosts {
        let host = format!("host{k}");
        let client = crate::tls::client_config(&sim.tls_dir, &host)?;
        // Heartbeats spread over the period, as real hosts' are.
        let phase = sim.heartbeat.mul_f64(f64::from(k) / f64::from(sim.hosts.max(1)));
        let (server, tx, beat, run_ms) = (sim.server.clone(), tx.clone(), sim.heartbeat, sim.run_ms);
        tasks.push(tokio::spawn(async move {
            loop {
                if let Err(e) = one_host(&server, &host, client.clone(), phase, beat, run_ms, &tx).await {
                    eprintln!("simulated {host}: {e}; again in 1 s");
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }));
    }
    drop(tx);
    let mut term =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).map_err(|e| e.to_string())?;
    let mut seen = Vec::new();
    loop {
        tokio::select! {
            Some(us) = latencies.recv() => seen.push(us),
            _ = term.recv() => break,
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    for t in tasks {
        t.abort();
    }
    seen.sort_unstable();
    let at = |q: f64| seen.get(((seen.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(0);
    Ok(format!(
        "{} simulated hosts: {} starts; from allotd's decision to the agent: median {:.2} ms, p95 {:.2} ms, max {:.2} ms",
        sim.hosts,
        seen.len(),
        at(0.5) as f64 / 1000.0,
        at(0.95) as f64 / 1000.0,
        seen.last().copied().unwrap_or(0) as f64 / 1000.0
    ))
}

async fn one_host(
    server: &str,
    host: &str,
    client: Arc<rustls::ClientConfig>,
    phase: Duration,
    beat: Duration,
    run_ms: u64,
    latencies: &mpsc::UnboundedSender<u64>,
) -> Result<(), String> {
    let tcp = tokio::net::TcpStream::connect(server).await.map_err(|e| e.to_string())?;
    let tls = tokio_rustls::TlsConnector::from(client)
        .connect(crate::tls::daemon_name(), tcp)
        .await
        .map_err(|e| e.to_string())?;
    let (mut r, mut w) = tokio::io::split(tls);
    let hello = Hello {
        version: wire::VERSION,
        host: host.to_string(),
        resources: crate::wire::Resources { ncpus: 2, maxmem: 4096, clock: crate::host::clock(), ..Default::default() },
        jobs: Vec::new(),
        tasks: Vec::new(),
    };
    wire::write(&mut w, &FromAgent::Hello(hello)).await.map_err(|e| e.to_string())?;
    let (out, mut outgoing) = mpsc::unbounded_channel::<FromAgent>();
    let writer = tokio::spawn(async move {
        while let Some(m) = outgoing.recv().await {
            if wire::write(&mut w, &m).await.is_err() {
                break;
            }
        }
    });
    let beats = {
        let out = out.clone();
        tokio::spawn(async move {
            tokio::time::sleep(phase).await;
            let mut every = tokio::time::interval(beat);
            loop {
                every.tick().await;
                let hb =
                    Heartbeat { load: crate::wire::Load::default(), usage: Vec::new(), clock: crate::host::clock() };
                if out.send(FromAgent::Heartbeat(hb)).is_err() {
                    break;
                }
            }
        })
    };
    let result = loop {
        let message = match wire::read::<ToAgent>(&mut r).await {
            Ok(m) => m,
            Err(e) => break Err(e.to_string()),
        };
        match message {
            ToAgent::Start { attempt, spec, decided_us, .. } => {
                if let Some(d) = decided_us {
                    let _ = latencies.send(now_us().saturating_sub(d));
                }
                let job = spec.job;
                let _ = out.send(FromAgent::Started { job, attempt });
                let out = out.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(run_ms)).await;
                    let report = allot_exec::ExitReport {
                        exit: 0,
                        cpu_time: 0.0,
                        max_rss_kb: 0,
                        ended_at: crate::host::clock(),
                        ..Default::default()
                    };
                    let _ = out.send(FromAgent::Ended { job, attempt, report });
                });
            }
            ToAgent::Refused { why } => break Err(format!("refused: {why}")),
            _ => {}
        }
    };
    beats.abort();
    writer.abort();
    result
}
