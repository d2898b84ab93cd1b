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
    /// Index bodies sent, by (project, form): count and bytes.
    transfers: Mutex<BTreeMap<(String, String), (u64, u64)>>,
    /// Usage reports by (project, outcome), and the rows counted per project.
    usage_reports: Mutex<BTreeMap<(String, String), u64>>,
    usage_rows: Mutex<BTreeMap<String, u64>>,
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

    /// An index body sent: `form` is `identity`, `zstd`, `gzip` or `patch`.
    pub fn transfer(&self, project: &str, form: &str, bytes: u64) {
        let mut m = lock(&self.transfers);
        let t = m
            .entry((project.to_string(), form.to_string()))
            .or_default();
        t.0 += 1;
        t.1 += bytes;
    }

    /// A usage report answered: `outcome` is `accepted` (with the `rows` counted),
    /// `duplicate` (a retry, nothing counted), `refused` (invalid, or `usage = false`) or
    /// `failed` (the store could not take it).
    pub fn usage_report(&self, project: &str, outcome: &str, rows: u64) {
        *lock(&self.usage_reports)
            .entry((project.to_string(), outcome.to_string()))
            .or_default() += 1;
        if rows > 0 {
            *lock(&self.usage_rows)
                .entry(project.to_string())
                .or_default() += rows;
        }
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut o = String::new();
        family(
            &mut o,
            "helix_http_requests_total",
            "counter",
            "HTTP requests by route, method and status.",
        );
        for ((route, method, status), n) in lock(&self.requests).iter() {
            let _ = writeln!(
                o,
                "helix_http_requests_total{{route=\"{}\",method=\"{}\",status=\"{status}\"}} {n}",
                esc(route),
                esc(method)
            );
        }
        family(
            &mut o,
            "helix_ingest_duration_seconds",
            "summary",
            "Time to fetch, parse and compile a project.",
        );
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
        per_project(
            &mut o,
            ("helix_ingest_last_duration_seconds", "gauge"),
            "Duration of the latest compile.",
            ingest.iter().map(|(p, s)| (p, s.last)),
        );
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
            let values = arts.iter().map(|(p, v)| (p, [v.0, v.1, v.2][idx]));
            per_project(&mut o, (name, "gauge"), help, values);
        }
        family(
            &mut o,
            "helix_writes_total",
            "counter",
            "Entry writes by outcome.",
        );
        for ((p, outcome), n) in lock(&self.writes).iter() {
            let _ = writeln!(
                o,
                "helix_writes_total{{project=\"{}\",outcome=\"{}\"}} {n}",
                esc(p),
                esc(outcome)
            );
        }
        per_project(
            &mut o,
            ("helix_fetch_errors_total", "counter"),
            "Failed upstream fetches.",
            lock(&self.fetch_errors).iter(),
        );
        let transfers = lock(&self.transfers).clone();
        for (name, help, bytes) in [
            (
                "helix_index_responses_total",
                "Index bodies sent (200), by form: identity, zstd, gzip or patch.",
                false,
            ),
            (
                "helix_index_response_bytes_total",
                "Bytes of index bodies sent, by form.",
                true,
            ),
        ] {
            family(&mut o, name, "counter", help);
            for ((p, form), (n, b)) in &transfers {
                let v = if bytes { b } else { n };
                let _ = writeln!(
                    o,
                    "{name}{{project=\"{}\",form=\"{}\"}} {v}",
                    esc(p),
                    esc(form)
                );
            }
        }
        family(
            &mut o,
            "helix_usage_reports_total",
            "counter",
            "Usage reports by outcome: accepted, duplicate, refused or failed.",
        );
        for ((p, outcome), n) in lock(&self.usage_reports).iter() {
            let _ = writeln!(
                o,
                "helix_usage_reports_total{{project=\"{}\",outcome=\"{}\"}} {n}",
                esc(p),
                esc(outcome)
            );
        }
        per_project(
            &mut o,
            ("helix_usage_rows_total", "counter"),
            "Usage rows counted (entry and day) from accepted reports.",
            lock(&self.usage_rows).iter(),
        );
        o
    }
}

/// The `# HELP` and `# TYPE` lines that open a metric family.
fn family(o: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(o, "# HELP {name} {help}");
    let _ = writeln!(o, "# TYPE {name} {kind}");
}

/// A metric family (name and kind) with one sample per project.
fn per_project<'a, V: std::fmt::Display>(
    o: &mut String,
    (name, kind): (&str, &str),
    help: &str,
    values: impl Iterator<Item = (&'a String, V)>,
) {
    family(o, name, kind, help);
    for (p, v) in values {
        let _ = writeln!(o, "{name}{{project=\"{}\"}} {v}", esc(p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exposition, byte for byte: scrapers and dashboards read these names and labels.
    #[test]
    fn renders_every_family_with_help_and_type() {
        let m = Metrics::default();
        m.request("/v1/projects/{project}/index", "GET", 304);
        m.ingest("kb", 0.5);
        m.ingest("kb", 0.25);
        m.artifact("kb", 1024, 10, 3);
        m.write("kb", "created", 2);
        m.write("kb", "rejected", 0);
        m.fetch_error("a\"b");
        m.transfer("kb", "patch", 100);
        m.transfer("kb", "patch", 20);
        m.usage_report("kb", "accepted", 3);
        m.usage_report("kb", "duplicate", 0);
        let expected = r#"# HELP helix_http_requests_total HTTP requests by route, method and status.
# TYPE helix_http_requests_total counter
helix_http_requests_total{route="/v1/projects/{project}/index",method="GET",status="304"} 1
# HELP helix_ingest_duration_seconds Time to fetch, parse and compile a project.
# TYPE helix_ingest_duration_seconds summary
helix_ingest_duration_seconds_sum{project="kb"} 0.75
helix_ingest_duration_seconds_count{project="kb"} 2
# HELP helix_ingest_last_duration_seconds Duration of the latest compile.
# TYPE helix_ingest_last_duration_seconds gauge
helix_ingest_last_duration_seconds{project="kb"} 0.25
# HELP helix_artifact_bytes Size of the served artifact.
# TYPE helix_artifact_bytes gauge
helix_artifact_bytes{project="kb"} 1024
# HELP helix_artifact_entries Entries in the served artifact.
# TYPE helix_artifact_entries gauge
helix_artifact_entries{project="kb"} 10
# HELP helix_artifact_generation Generation of the served artifact.
# TYPE helix_artifact_generation gauge
helix_artifact_generation{project="kb"} 3
# HELP helix_writes_total Entry writes by outcome.
# TYPE helix_writes_total counter
helix_writes_total{project="kb",outcome="created"} 2
helix_writes_total{project="kb",outcome="rejected"} 0
# HELP helix_fetch_errors_total Failed upstream fetches.
# TYPE helix_fetch_errors_total counter
helix_fetch_errors_total{project="a\"b"} 1
# HELP helix_index_responses_total Index bodies sent (200), by form: identity, zstd, gzip or patch.
# TYPE helix_index_responses_total counter
helix_index_responses_total{project="kb",form="patch"} 2
# HELP helix_index_response_bytes_total Bytes of index bodies sent, by form.
# TYPE helix_index_response_bytes_total counter
helix_index_response_bytes_total{project="kb",form="patch"} 120
# HELP helix_usage_reports_total Usage reports by outcome: accepted, duplicate, refused or failed.
# TYPE helix_usage_reports_total counter
helix_usage_reports_total{project="kb",outcome="accepted"} 1
helix_usage_reports_total{project="kb",outcome="duplicate"} 1
# HELP helix_usage_rows_total Usage rows counted (entry and day) from accepted reports.
# TYPE helix_usage_rows_total counter
helix_usage_rows_total{project="kb"} 3
"#;
        assert_eq!(m.render(), expected);
    }
}
