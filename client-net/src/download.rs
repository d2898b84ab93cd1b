//! Receiving an artifact within the sync limits (connect, stall, rate, total time, size):
//! the plain or zstd-coded artifact, or a patch applied to the cached one, always checked
//! against the content hash its ETag names before `cache::install_artifact` sees it.

use anyhow::{Context, Result, anyhow, bail};
use sha2::{Digest, Sha256};
use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// Media type of a patch (docs/http-api.md, delta sync); never an artifact's.
pub const PATCH_CONTENT_TYPE: &str = "application/vnd.helix.index-patch";

/// Downloads bigger than this get a progress bar (on a terminal).
const PROGRESS_BYTES: u64 = 4 << 20;

/// A transfer slower than this over a whole stall window is given up.
pub const MIN_BYTES_PER_SEC: u64 = 1024;

/// Bounds on a sync's network use: user config `[sync]`, each overridable by an environment
/// variable (for scripts and tests). A server that never answers, drip-feeds bytes or sends
/// more than any artifact could be costs a bounded time and disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetLimits {
    /// Connecting (TCP and TLS): `connect_timeout_secs`, `HELIX_CONNECT_TIMEOUT`.
    pub connect: Duration,
    /// No progress: waiting this long for the response head or for a read gives up, and so
    /// does receiving less than [`MIN_BYTES_PER_SEC`] over such a window:
    /// `stall_timeout_secs`, `HELIX_STALL_TIMEOUT`.
    pub stall: Duration,
    /// A whole download: `timeout_secs`, `HELIX_SYNC_TIMEOUT`.
    pub total: Duration,
    /// Largest artifact accepted: `max_artifact_bytes`, `HELIX_MAX_ARTIFACT_BYTES`.
    pub max_bytes: u64,
}

impl Default for NetLimits {
    fn default() -> NetLimits {
        NetLimits {
            connect: Duration::from_secs(5),
            stall: Duration::from_secs(15),
            total: Duration::from_secs(600),
            max_bytes: 2 << 30,
        }
    }
}

impl NetLimits {
    /// The user's limits: defaults, then `[sync]` of the user config, then the environment.
    pub fn load() -> Result<NetLimits> {
        let mut l = NetLimits::default();
        let user = helix_client::config::UserConfig::load()?;
        let s = &user.sync;
        let secs = |v: Option<u64>, d: Duration| v.map_or(d, Duration::from_secs);
        l.connect = secs(s.connect_timeout_secs, l.connect);
        l.stall = secs(s.stall_timeout_secs, l.stall);
        l.total = secs(s.timeout_secs, l.total);
        l.max_bytes = s.max_artifact_bytes.unwrap_or(l.max_bytes);
        let env = |name: &str| -> Result<Option<u64>> {
            match std::env::var(name) {
                Ok(v) if !v.trim().is_empty() => v
                    .trim()
                    .parse()
                    .map(Some)
                    .with_context(|| format!("{name}={v:?} is not a whole number")),
                _ => Ok(None),
            }
        };
        l.connect = secs(env("HELIX_CONNECT_TIMEOUT")?, l.connect);
        l.stall = secs(env("HELIX_STALL_TIMEOUT")?, l.stall);
        l.total = secs(env("HELIX_SYNC_TIMEOUT")?, l.total);
        l.max_bytes = env("HELIX_MAX_ARTIFACT_BYTES")?.unwrap_or(l.max_bytes);
        anyhow::ensure!(
            !l.connect.is_zero() && !l.stall.is_zero() && !l.total.is_zero() && l.max_bytes > 0,
            "sync limits must be at least 1 (connect, stall and total seconds; max_artifact_bytes)"
        );
        Ok(l)
    }

    /// The largest zstd window worth accepting: enough for any artifact within `max_bytes`.
    fn window_log_max(&self) -> u32 {
        (64 - self.max_bytes.max(1).saturating_sub(1).leading_zeros()).clamp(10, 31)
    }
}

/// How an artifact arrived, for the sync line and the benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Plain,
    Zstd,
    Patch,
}

/// What a download cost: its form and the bytes on the wire.
#[derive(Debug, Clone, Copy)]
pub struct Received {
    pub form: Form,
    pub wire: u64,
}

impl Received {
    /// `, 1.2 MB zstd` for the sync line.
    pub fn describe(&self) -> String {
        let form = match self.form {
            Form::Plain => "",
            Form::Zstd => " zstd",
            Form::Patch => " patch",
        };
        format!("{}{form}", size(self.wire))
    }
}

/// Bytes as people read them: `812 B`, `41 KB`, `1.2 MB`.
fn size(n: u64) -> String {
    match n {
        0..1_000 => format!("{n} B"),
        1_000..1_000_000 => format!("{} KB", n / 1_000),
        _ => format!("{:.1} MB", n as f64 / 1e6),
    }
}

/// The content hash (64 hex digits) an ETag names, strong or weak; `None` for other ETags.
pub fn etag_hash(etag: &str) -> Option<&str> {
    let h = etag
        .strip_prefix("W/")
        .unwrap_or(etag)
        .strip_prefix('"')?
        .strip_suffix('"')?;
    (h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit())).then_some(h)
}

fn header<'a>(resp: &'a reqwest::blocking::Response, name: &str) -> Option<&'a str> {
    resp.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Checks what a body decodes to as it arrives: the size the artifact's header declares
/// (as soon as its first bytes are there), the limit, `Content-Length` for a plain body;
/// hashes it and writes it to the temporary file.
struct ArtifactSink {
    file: std::fs::File,
    hasher: Sha256,
    got: u64,
    head: Vec<u8>,
    declared: Option<u64>,
    max: u64,
    /// The plain body's `Content-Length`, which must equal the declared size.
    plain_len: Option<u64>,
}

impl ArtifactSink {
    fn new(tmp: &Path, max: u64, plain_len: Option<u64>) -> Result<ArtifactSink> {
        Ok(ArtifactSink {
            file: std::fs::File::create(tmp)
                .with_context(|| format!("creating {}", tmp.display()))?,
            hasher: Sha256::new(),
            got: 0,
            head: Vec::with_capacity(helix_index_format::DECLARED_LEN_PREFIX),
            declared: None,
            max,
            plain_len,
        })
    }

    fn check(&mut self, buf: &[u8]) -> Result<(), String> {
        self.got += buf.len() as u64;
        let cap = self.declared.unwrap_or(self.max);
        if self.got > cap {
            return Err(match self.declared {
                Some(d) => format!("more bytes than the artifact declares ({d})"),
                None => format!("more than {cap} bytes (`max_artifact_bytes` in [sync])"),
            });
        }
        let prefix = helix_index_format::DECLARED_LEN_PREFIX;
        if self.declared.is_none() && self.head.len() < prefix {
            let want = prefix - self.head.len();
            self.head.extend_from_slice(&buf[..buf.len().min(want)]);
            if self.head.len() == prefix {
                let d = helix_index_format::declared_len(&self.head).map_err(|e| e.to_string())?;
                if d > self.max {
                    return Err(format!(
                        "the artifact declares {d} bytes, over the limit of {} (`max_artifact_bytes` in [sync])",
                        self.max
                    ));
                }
                if let Some(l) = self.plain_len.filter(|l| *l != d) {
                    return Err(format!(
                        "Content-Length {l} but the artifact declares {d} bytes"
                    ));
                }
                if self.got > d {
                    return Err(format!("more bytes than the artifact declares ({d})"));
                }
                self.declared = Some(d);
            }
        }
        Ok(())
    }

    /// Flushes to disk and checks the whole: length and, when the ETag names one, hash.
    fn finish(self, etag: Option<&str>) -> Result<()> {
        self.file.sync_all()?;
        match self.declared {
            Some(d) if self.got != d => {
                bail!("download rejected: truncated ({} of {d} bytes)", self.got)
            }
            None => bail!(
                "download rejected: truncated ({} bytes, not even an artifact header)",
                self.got
            ),
            _ => {}
        }
        let got = hex(&self.hasher.finalize());
        if let Some(want) = etag.and_then(etag_hash)
            && !want.eq_ignore_ascii_case(&got)
        {
            bail!("download rejected: its content hash {got} is not the ETag's {want}");
        }
        Ok(())
    }
}

impl Write for ArtifactSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.check(buf)
            .map_err(|e| std::io::Error::other(format!("download rejected: {e}")))?;
        self.hasher.update(buf);
        self.file.write_all(buf)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Streams `resp`'s body into `sink` within `limits`: the total deadline, a minimum rate
/// over every stall window, at most `cap` bytes on the wire. Returns the bytes received.
fn pump(
    resp: &mut reqwest::blocking::Response,
    limits: &NetLimits,
    cap: u64,
    progress: Option<&indicatif::ProgressBar>,
    sink: &mut dyn Write,
) -> Result<u64> {
    let started = Instant::now();
    let (mut window_start, mut window_got) = (started, 0u64);
    let mut got = 0u64;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match resp.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e)
                if e.kind() == std::io::ErrorKind::TimedOut
                    || e.to_string().contains("timed out") =>
            {
                bail!(
                    "download stalled: no data for {} s ({got} bytes received; `stall_timeout_secs` in [sync])",
                    limits.stall.as_secs()
                )
            }
            Err(e) => bail!("download interrupted after {got} bytes: {e}"),
        };
        got += n as u64;
        if got > cap {
            bail!("download rejected: more than {cap} bytes (`max_artifact_bytes` in [sync])");
        }
        sink.write_all(&buf[..n]).map_err(|e| anyhow!("{e}"))?;
        if let Some(pb) = progress {
            pb.inc(n as u64);
        }
        let now = Instant::now();
        if now.duration_since(started) > limits.total {
            bail!(
                "download took longer than {} s ({got} bytes received; `timeout_secs` in [sync])",
                limits.total.as_secs(),
            );
        }
        let window = now.duration_since(window_start);
        if window >= limits.stall {
            let rate = (got - window_got) / window.as_secs().max(1);
            if rate < MIN_BYTES_PER_SEC {
                bail!(
                    "download too slow: {} bytes in the last {} s (under {MIN_BYTES_PER_SEC} bytes/s)",
                    got - window_got,
                    window.as_secs()
                );
            }
            (window_start, window_got) = (now, got);
        }
    }
    Ok(got)
}

/// Receives a full artifact (plain, or `Content-Encoding: zstd`) into `tmp`. The caller
/// removes `tmp` on error.
pub fn full(
    resp: &mut reqwest::blocking::Response,
    tmp: &Path,
    limits: &NetLimits,
    project: &str,
    quiet: bool,
) -> Result<Received> {
    let len = resp.content_length();
    if let Some(l) = len
        && l > limits.max_bytes
    {
        bail!(
            "download rejected: the artifact is {l} bytes, over the limit of {} (`max_artifact_bytes` in [sync] of {})",
            limits.max_bytes,
            helix_client::paths::user_config_file().display()
        );
    }
    let etag = header(resp, "etag").map(str::to_string);
    let coding = header(resp, "content-encoding").map(|c| c.trim().to_ascii_lowercase());
    let zstd = match coding.as_deref() {
        None | Some("identity") => false,
        Some("zstd") => true,
        Some(other) => bail!("download rejected: unsupported Content-Encoding `{other}`"),
    };
    let show =
        !quiet && std::io::stderr().is_terminal() && len.is_some_and(|l| l >= PROGRESS_BYTES);
    let pb = show.then(|| {
        let pb = indicatif::ProgressBar::new(len.unwrap_or(0));
        pb.set_message(project.to_string());
        pb
    });
    let sink = ArtifactSink::new(tmp, limits.max_bytes, if zstd { None } else { len })?;
    let (wire, sink) = if zstd {
        let mut dec = zstd::stream::write::Decoder::new(sink)?;
        dec.window_log_max(limits.window_log_max())?;
        let wire = pump(resp, limits, limits.max_bytes, pb.as_ref(), &mut dec)?;
        let sink = dec.finish().map_err(|e| {
            anyhow!("download rejected: the zstd body is incomplete or damaged: {e}")
        })?;
        (wire, sink)
    } else {
        let mut sink = sink;
        let wire = pump(resp, limits, limits.max_bytes, pb.as_ref(), &mut sink)?;
        (wire, sink)
    };
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    sink.finish(etag.as_deref())?;
    Ok(Received {
        form: if zstd { Form::Zstd } else { Form::Plain },
        wire,
    })
}

/// Applies a patch response to the cached artifact `old`, whose content hash is
/// `old_hash`, into `tmp`: the old artifact's delta form is the zstd reference prefix, the
/// result's delta form is turned back into the artifact, whose hash must be the ETag's.
/// The caller removes `tmp` on error and then downloads the artifact in full.
pub fn patch(
    resp: &mut reqwest::blocking::Response,
    old: &Path,
    old_hash: &str,
    tmp: &Path,
    limits: &NetLimits,
) -> Result<Received> {
    let base = header(resp, "x-helix-patch-from").and_then(etag_hash);
    if base.is_none_or(|b| !b.eq_ignore_ascii_case(old_hash)) {
        bail!("the patch starts from {base:?}, not from the cached artifact {old_hash}");
    }
    let etag = header(resp, "etag").map(str::to_string);
    etag.as_deref()
        .and_then(etag_hash)
        .context("the patch's ETag names no artifact")?;
    let len: u64 = header(resp, "x-helix-artifact-length")
        .and_then(|v| v.trim().parse().ok())
        .context("the patch has no X-Helix-Artifact-Length")?;
    if len > limits.max_bytes {
        bail!(
            "the patched artifact would be {len} bytes, over the limit of {} (`max_artifact_bytes` in [sync])",
            limits.max_bytes
        );
    }
    let mut body = Vec::new();
    let wire = pump(resp, limits, limits.max_bytes, None, &mut body)?;
    let mut prefix = std::fs::read(old).with_context(|| format!("reading {}", old.display()))?;
    helix_index_format::delta::to_delta_form(&mut prefix);
    let mut d = zstd::zstd_safe::DCtx::try_create().context("zstd: out of memory")?;
    let zerr = |code| {
        anyhow!(
            "the patch does not apply: {}",
            zstd::zstd_safe::get_error_name(code)
        )
    };
    d.set_parameter(zstd::zstd_safe::DParameter::WindowLogMax(31))
        .map_err(zerr)?;
    d.ref_prefix(&prefix).map_err(zerr)?;
    let len = usize::try_from(len).context("artifact length")?;
    let mut out = Vec::with_capacity(len);
    d.decompress(&mut out, &body).map_err(zerr)?;
    drop(d);
    drop(prefix);
    if out.len() != len {
        bail!(
            "the patch gives {} bytes, not the {len} announced",
            out.len()
        );
    }
    helix_index_format::delta::from_delta_form(&mut out);
    let mut sink = ArtifactSink::new(tmp, limits.max_bytes, Some(len as u64))?;
    sink.write_all(&out).map_err(|e| anyhow!("{e}"))?;
    sink.finish(etag.as_deref())?;
    Ok(Received {
        form: Form::Patch,
        wire,
    })
}
