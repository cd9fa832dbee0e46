//! `allot bench dispatch`: the dispatch benchmark of `cargo bench -p
//! allot-engine --bench dispatch` in this binary, so that it can be run
//! on an installed allot. The scenario is the engine's own
//! (`allot_engine::bench_scenario`); each figure is the median of
//! `samples` passes, each on an engine made anew (its making not timed).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use allot_engine::bench_scenario::{Scale, loaded};
use allot_engine::{Decision, Engine, Event, Time};

/// One timed pass on an engine `setup` makes: its time, and how many
/// decisions it made.
fn timed(setup: &dyn Fn() -> Engine, at: Time) -> (Duration, usize) {
    let mut e = setup();
    let started = Instant::now();
    let decided = e.schedule(at).len();
    (started.elapsed(), decided)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

pub fn dispatch(scale: Scale, samples: usize) -> anyhow::Result<ExitCode> {
    if scale.users < 100 || scale.users % 100 != 0 {
        anyhow::bail!(
            "allot bench dispatch: --users {}: a multiple of 100 (10 divisions of 10 departments)",
            scale.users
        );
    }
    let samples = samples.max(1);
    println!(
        "{} pending jobs of {} users (a share tree 3 levels deep), {} hosts of {} slots; median of {samples}",
        scale.jobs,
        scale.users,
        scale.hosts,
        allot_engine::bench_scenario::SLOTS_PER_HOST
    );
    let made = Instant::now();
    let fresh = || loaded(scale);
    drop(fresh());
    println!("  making the engine (submitting the jobs):  {}", ms(made.elapsed()));
    let full: Vec<(Duration, usize)> = (0..samples).map(|_| timed(&fresh, Time(1))).collect();
    let started = full.first().map_or(0, |f| f.1);
    println!("  pass on an empty cluster ({started} starts):  {}", ms(median(full.iter().map(|f| f.0).collect())));
    let after_end = || {
        let mut e = loaded(scale);
        let first = e.schedule(Time(1));
        if let Some(Decision::Start { job, .. }) = first.first().cloned() {
            let _ = e.apply(Time(100), &Event::Finish { job, cpu_time: 99.0, exit: 0 });
        }
        e
    };
    let one: Vec<Duration> = (0..samples).map(|_| timed(&after_end, Time(100)).0).collect();
    println!("  pass after one job ends:  {}", ms(median(one)));
    let mut e = loaded(scale);
    e.schedule(Time(1));
    let idle: Vec<Duration> = (0..samples.max(5))
        .map(|k| {
            let started = Instant::now();
            e.schedule(Time(2 + k as u64));
            started.elapsed()
        })
        .collect();
    println!("  pass with nothing new:  {}", ms(median(idle)));
    Ok(ExitCode::SUCCESS)
}
