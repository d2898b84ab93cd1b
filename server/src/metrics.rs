//! Hand-written Prometheus text metrics: requests by route and status, ingest durations,
//! artifact sizes and entry counts, write outcomes, fetch failures.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

use crate::sys::lock;

/// Counters and gauges shared by the HTTP layer and the project workers.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    ingest: Mutex<BTreeMap<String, IngestStats>>,
    artifacts: Mutex<BTreeMap<String, (u64, u64, u64)>>,
    writes: Mutex<BTreeMap<(String, String), u64>>,
    fetch_errors: Mutex<BTreeMap<String, u64>>,
}

#[derive(Debug, Default, Clone, Copy)]
struct IngestStats {
    count: u64,
    sum: f64,
    last: f64,
}

/// Escapes a Prometheus label value.
fn esc(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

impl Metrics {
    pub fn request(&self, route: &str, method: &str, status: u16) {
        *lock(&self.requests)
            .entry((route.to_string(), method.to_string(), status))
            .or_default() += 1;
    }
    pub fn ingest(&self, project: &str, seconds: f64) {
        let mut m = lock(&self.ingest);
        let s = m.entry(project.to_string()).or_default();
        s.count += 1;
        s.sum += seconds;
        s.last = seconds;
    }
    pub fn artifact(&self, project: &str, bytes: u64, entries: u64, generation: u64) {
        lock(&self.artifacts).insert(project.to_string(), (bytes, entries, generation));
    }
    pub fn write(&self, project: &str, outcome: &str, n: u64) {
        *lock(&self.writes)
            .entry((project.to_string(), outcome.to_string()))
            .or_default() += n;
    }
    pub fn fetch_error(&self, project: &str) {
        *lock(&self.fetch_errors)
            .entry(project.to_string())
            .or_default() += 1;
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "# HELP helix_http_requests_total HTTP requests by route, method and status."
        );
        let _ = writeln!(o, "# TYPE helix_http_requests_total counter");
        for ((route, method, status), n) in lock(&self.requests).iter() {
            let _ = writeln!(
                o,
                "helix_http_requests_total{{route=\"{}\",method=\"{}\",status=\"{status}\"}} {n}",
                esc(route),
                esc(method)
            );
        }
        let _ = writeln!(
            o,
            "# HELP helix_ingest_duration_seconds Time to fetch, parse and compile a project."
        );
        let _ = writeln!(o, "# TYPE helix_ingest_duration_seconds summary");
        let ingest = lock(&self.ingest).clone();
        for (p, s) in &ingest {
            let p = esc(p);
            let _ = writeln!(
                o,
                "helix_ingest_duration_seconds_sum{{project=\"{p}\"}} {}",
                s.sum
            );
            let _ = writeln!(
                o,
                "helix_ingest_duration_seconds_count{{project=\"{p}\"}} {}",
                s.count
            );
        }
        let _ = writeln!(
            o,
            "# HELP helix_ingest_last_duration_seconds Duration of the latest compile."
        );
        let _ = writeln!(o, "# TYPE helix_ingest_last_duration_seconds gauge");
        for (p, s) in &ingest {
            let _ = writeln!(
                o,
                "helix_ingest_last_duration_seconds{{project=\"{}\"}} {}",
                esc(p),
                s.last
            );
        }
        let arts = lock(&self.artifacts).clone();
        for (name, help, idx) in [
            ("helix_artifact_bytes", "Size of the served artifact.", 0),
            (
                "helix_artifact_entries",
                "Entries in the served artifact.",
                1,
            ),
            (
                "helix_artifact_generation",
                "Generation of the served artifact.",
                2,
            ),
        ] {
            let _ = writeln!(o, "# HELP {name} {help}");
            let _ = writeln!(o, "# TYPE {name} gauge");
            for (p, v) in &arts {
                let val = [v.0, v.1, v.2][idx];
                let _ = writeln!(o, "{name}{{project=\"{}\"}} {val}", esc(p));
            }
        }
        let _ = writeln!(o, "# HELP helix_writes_total Entry writes by outcome.");
        let _ = writeln!(o, "# TYPE helix_writes_total counter");
        for ((p, outcome), n) in lock(&self.writes).iter() {
            let _ = writeln!(
                o,
                "helix_writes_total{{project=\"{}\",outcome=\"{}\"}} {n}",
                esc(p),
                esc(outcome)
            );
        }
        let _ = writeln!(
            o,
            "# HELP helix_fetch_errors_total Failed upstream fetches."
        );
        let _ = writeln!(o, "# TYPE helix_fetch_errors_total counter");
        for (p, n) in lock(&self.fetch_errors).iter() {
            let _ = writeln!(o, "helix_fetch_errors_total{{project=\"{}\"}} {n}", esc(p));
        }
        o
    }
}
