//! The metrics endpoint (`[daemon] metrics` in `allot.toml`): pending and
//! running jobs per queue and user, slots in use, scheduling pass times,
//! served over HTTP by hyper and written in the OpenMetrics text format by
//! `prometheus-client` (which Prometheus scrapes; label values escaped by
//! it). The figures come from the dispatcher, so a scrape sees one
//! consistent state and never blocks scheduling for long.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};

use crate::serve::Input;
use crate::state::State;

/// The content type of the OpenMetrics text format.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Scrapes served at once: a scraper needs one or two; more held open
/// (anyone who reaches the port may connect) are closed at once, so that
/// they draw no more of allotd's descriptors.
const MAX_CONNECTIONS: usize = 32;

/// Answers scrapes until the daemon stops: one HTTP/1 connection a task,
/// its request head within 10 s, [`MAX_CONNECTIONS`] at once.
pub async fn serve(listener: TcpListener, tx: mpsc::Sender<Input>) {
    let permits = std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let mut backoff = crate::socket::Backoff::default();
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => {
                backoff.reset();
                stream
            }
            Err(e) => {
                backoff.after("metrics", &e).await;
                continue;
            }
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else { continue };
        let tx = tx.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(move |req| answer(req, tx.clone()));
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10))
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

/// `GET /metrics` gets the figures; anything else, 404.
async fn answer(req: Request<Incoming>, tx: mpsc::Sender<Input>) -> Result<Response<Full<Bytes>>, Infallible> {
    let reply = |status: StatusCode, kind: &str, body: String| {
        let mut response = Response::new(Full::new(Bytes::from(body)));
        *response.status_mut() = status;
        if let Ok(kind) = kind.parse() {
            response.headers_mut().insert(hyper::header::CONTENT_TYPE, kind);
        }
        Ok(response)
    };
    if req.method() != Method::GET || req.uri().path() != "/metrics" {
        return reply(StatusCode::NOT_FOUND, "text/plain; charset=utf-8", "allotd serves /metrics\n".into());
    }
    let (figures, answer) = oneshot::channel();
    let text = match tx.send(Input::Metrics(figures)).await {
        Ok(()) => answer.await.ok(),
        Err(_) => None,
    };
    match text {
        Some(text) => reply(StatusCode::OK, OPENMETRICS, text),
        None => reply(StatusCode::SERVICE_UNAVAILABLE, "text/plain; charset=utf-8", "allotd is stopping\n".into()),
    }
}

type Labels = Vec<(&'static str, String)>;

/// The figures, in the OpenMetrics text format.
pub fn render(state: &State) -> String {
    let mut registry = Registry::default();
    let jobs = Family::<Labels, Gauge>::default();
    registry.register("allot_jobs", "Unfinished jobs by queue, user and state", jobs.clone());
    let mut counted: BTreeMap<(&str, &str, &str), i64> = BTreeMap::new();
    let pending = state.engine.pending_jobs().map(|id| (id, "pending"));
    let running = state.book.running.iter().map(|&id| (id, "running"));
    for (id, what) in pending.chain(running) {
        let Some(j) = state.book.jobs.get(&id) else { continue };
        let queue = state.engine.job_queue(id).unwrap_or("");
        *counted.entry((queue, j.record.spec.user.as_str(), what)).or_default() += 1;
    }
    // Elements of arrays not made yet: pending, as the template is.
    for t in state.book.tails.values() {
        let Some(id) = t.unmade.first() else { continue };
        let queue = state.engine.job_queue(id).unwrap_or("");
        *counted.entry((queue, t.template.record.spec.user.as_str(), "pending")).or_default() += t.unmade.len() as i64;
    }
    for ((queue, user, what), n) in counted {
        let labels = vec![("queue", queue.to_string()), ("user", user.to_string()), ("state", what.to_string())];
        jobs.get_or_create(&labels).set(n);
    }
    let per_queue = Family::<Labels, Gauge>::default();
    registry.register("allot_queue_slots_used", "Job slots in use per queue", per_queue.clone());
    for (q, _, used, _) in state.engine.queues() {
        per_queue.get_or_create(&vec![("queue", q.name.clone())]).set(i64::from(used));
    }
    let gauge = |registry: &mut Registry, name: &str, help: &str, value: u64| {
        let g = Gauge::<i64>::default();
        g.set(i64::try_from(value).unwrap_or(i64::MAX));
        registry.register(name, help, g);
    };
    gauge(&mut registry, "allot_slots_used", "Job slots in use", state.engine.used_slots());
    gauge(&mut registry, "allot_slots_total", "Job slots of all hosts", state.engine.total_slots());
    let p = state.passes;
    let seconds = Counter::<f64, AtomicU64>::default();
    seconds.inc_by(p.total);
    registry.register("allot_scheduling_pass_seconds", "Time spent in scheduling passes", seconds);
    let passes = Counter::<u64>::default();
    passes.inc_by(p.count);
    registry.register("allot_scheduling_passes", "Scheduling passes", passes);
    let last = Gauge::<f64, AtomicU64>::default();
    last.set(p.last);
    registry.register("allot_scheduling_last_pass_seconds", "How long the last scheduling pass took", last);
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
    out
}

#[cfg(test)]
mod tests {
    /// Label values are escaped as the format wants, by the encoder.
    #[test]
    fn label_values_are_escaped() {
        use prometheus_client::metrics::family::Family;
        use prometheus_client::metrics::gauge::Gauge;
        let mut registry = prometheus_client::registry::Registry::default();
        let family = Family::<super::Labels, Gauge>::default();
        registry.register("allot_jobs", "x", family.clone());
        family.get_or_create(&vec![("queue", "a\"b\\c\nd".to_string())]).set(1);
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &registry).expect("text");
        assert!(out.contains(r#"allot_jobs{queue="a\"b\\c\nd"} 1"#), "{out}");
    }
}
