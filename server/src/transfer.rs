//! How an artifact travels: `Accept-Encoding` negotiation, the zstd and gzip codings of an
//! artifact and patches from a kept artifact to it, each computed once and cached with it.
//!
//! Compression runs on the blocking pool, at most [`workers`] at a time, so 304s and
//! cached answers never wait behind it; a request waits at most [`WAIT`] for a result and
//! is otherwise answered with the plain artifact while the work goes on for the next one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use tokio::sync::{OnceCell, Semaphore};
use zstd::zstd_safe::{CCtx, CParameter};

use crate::sys::lock;

/// Media type of a patch (docs/http-api.md, delta sync): never an artifact's.
pub const PATCH_CONTENT_TYPE: &str = "application/vnd.helix.index-patch";

/// The longest a request waits for a coding or a patch being computed.
pub const WAIT: Duration = Duration::from_secs(8);

/// zstd level of full artifacts and patches: zstd's default, by choice. They are computed
/// once, so a higher level would be affordable; what it would save has not been measured.
const LEVEL: i32 = 3;

/// `Content-Encoding: zstd` windows stay within 8 MiB (RFC 9659), which every decoder
/// accepts; long-distance matching still finds repeats within it.
const CODING_WINDOW_LOG: u32 = 23;

/// A content coding the index endpoint can send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Coding {
    Identity,
    Zstd,
    Gzip,
}

impl Coding {
    /// The `Content-Encoding` value; `None` for identity.
    pub fn header(self) -> Option<&'static str> {
        match self {
            Coding::Identity => None,
            Coding::Zstd => Some("zstd"),
            Coding::Gzip => Some("gzip"),
        }
    }
}

/// The coding to send for an `Accept-Encoding` header: zstd when acceptable, else gzip,
/// else none (identity is always sent rather than refusing with 406).
pub fn negotiate(accept: Option<&str>) -> Coding {
    let Some(accept) = accept else {
        return Coding::Identity;
    };
    let q_of = |name: &str| -> Option<f32> {
        let mut wildcard = None;
        for item in accept.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q=").or(p.trim().strip_prefix("Q=")))
                .find_map(|v| v.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            if coding == name || (name == "gzip" && coding == "x-gzip") {
                return Some(q);
            }
            if coding == "*" {
                wildcard = Some(q);
            }
        }
        wildcard
    };
    let ok = |q: Option<f32>| q.is_some_and(|q| q > 0.0);
    if ok(q_of("zstd")) {
        Coding::Zstd
    } else if ok(q_of("gzip")) {
        Coding::Gzip
    } else {
        Coding::Identity
    }
}

/// A value computed once, by whichever request asks first.
type Slot = Arc<OnceCell<Result<Bytes, String>>>;

/// What was computed for one artifact: its codings, and patches to it keyed by the content
/// hash of the artifact they start from. Dropped with the artifact.
#[derive(Debug, Default)]
pub struct Cache {
    zstd: Slot,
    gzip: Slot,
    patches: Mutex<HashMap<String, Slot>>,
}

/// Why no coded body or patch could be sent.
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error("still computing after {} s", WAIT.as_secs())]
    Waited,
    #[error("{0}")]
    Failed(String),
}

/// Compressions at once: half the cores (at least one), leaving the rest for requests.
fn workers() -> &'static Semaphore {
    static S: OnceLock<Semaphore> = OnceLock::new();
    S.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Semaphore::new(cores.div_ceil(2))
    })
}

/// Gets `cell`'s value, computing it with `work` on the blocking pool if nobody has; waits
/// at most [`WAIT`]. The computation runs in its own task, so a request that stops waiting
/// does not cancel it.
async fn once<F>(cell: Slot, what: &'static str, work: F) -> Result<Bytes, TransferError>
where
    F: FnOnce() -> Result<Vec<u8>, String> + Send + 'static,
{
    if let Some(v) = cell.get() {
        return v.clone().map_err(TransferError::Failed);
    }
    let task = tokio::spawn(async move {
        cell.get_or_init(|| async move {
            let Ok(_permit) = workers().acquire().await else {
                return Err("shutting down".to_string());
            };
            let started = Instant::now();
            let r = tokio::task::spawn_blocking(work)
                .await
                .map_err(|e| format!("{what} panicked: {e}"))
                .and_then(|r| r);
            match &r {
                Ok(b) => tracing::info!(
                    what,
                    bytes = b.len(),
                    ms = started.elapsed().as_millis() as u64,
                    "computed"
                ),
                Err(e) => tracing::warn!(what, error = %e, "could not compute"),
            }
            r.map(Bytes::from)
        })
        .await
        .clone()
    });
    match tokio::time::timeout(WAIT, task).await {
        Ok(Ok(r)) => r.map_err(TransferError::Failed),
        Ok(Err(e)) => Err(TransferError::Failed(format!("{what}: {e}"))),
        Err(_) => Err(TransferError::Waited),
    }
}

impl Cache {
    /// `bytes` in `coding`, computed on first use.
    pub async fn coded(&self, bytes: &Bytes, coding: Coding) -> Result<Bytes, TransferError> {
        let (cell, what) = match coding {
            Coding::Identity => return Ok(bytes.clone()),
            Coding::Zstd => (self.zstd.clone(), "zstd coding"),
            Coding::Gzip => (self.gzip.clone(), "gzip coding"),
        };
        let bytes = bytes.clone();
        once(cell, what, move || match coding {
            Coding::Zstd => zstd_coding(&bytes),
            _ => gzip_coding(&bytes),
        })
        .await
    }

    /// The patch from the artifact with content hash `from` to `bytes`, computed on first
    /// use; `load` reads the old artifact only then.
    pub async fn patch<L>(&self, bytes: &Bytes, from: &str, load: L) -> Result<Bytes, TransferError>
    where
        L: FnOnce() -> Result<Bytes, String> + Send + 'static,
    {
        let cell = lock(&self.patches)
            .entry(from.to_string())
            .or_default()
            .clone();
        let new = bytes.clone();
        once(cell, "patch", move || patch(Vec::from(load()?), &new)).await
    }
}

/// The zstd coding of an artifact, with a content checksum.
pub fn zstd_coding(bytes: &[u8]) -> Result<Vec<u8>, String> {
    compress(bytes, None, ceil_log2(bytes.len()).min(CODING_WINDOW_LOG))
}

/// The smallest `log` with `2^log >= n`, at least 10 (zstd's smallest window).
fn ceil_log2(n: usize) -> u32 {
    (64 - (n.max(1) as u64 - 1).leading_zeros()).max(10)
}

/// The gzip coding of an artifact (for plain HTTP tools; `helix` asks for zstd).
pub fn gzip_coding(bytes: &[u8]) -> Result<Vec<u8>, String> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(
        Vec::with_capacity(bytes.len() / 3),
        flate2::Compression::default(),
    );
    enc.write_all(bytes).map_err(|e| e.to_string())?;
    enc.finish().map_err(|e| e.to_string())
}

/// The patch from `old` to `new`: one zstd frame of `new`'s delta form compressed with
/// `old`'s delta form as its reference prefix (docs/http-api.md). The client decodes it
/// with the same prefix and turns the delta form back into the artifact.
pub fn patch(mut old: Vec<u8>, new: &[u8]) -> Result<Vec<u8>, String> {
    let mut new = new.to_vec();
    helix_index_format::delta::to_delta_form(&mut old);
    helix_index_format::delta::to_delta_form(&mut new);
    // The window spans the prefix and the new artifact, so any part of the old one can be
    // referred to.
    compress(&new, Some(&old), ceil_log2(old.len() + new.len()).min(31))
}

fn compress(src: &[u8], prefix: Option<&[u8]>, window_log: u32) -> Result<Vec<u8>, String> {
    let e =
        |what: &str, code: usize| format!("zstd {what}: {}", zstd::zstd_safe::get_error_name(code));
    let mut c = CCtx::try_create().ok_or("zstd: out of memory")?;
    // Hash and chain tables large enough for the window (defaults suit small inputs).
    let table_log = window_log.saturating_sub(4).clamp(16, 24);
    for p in [
        CParameter::CompressionLevel(LEVEL),
        CParameter::ChecksumFlag(true),
        CParameter::ContentSizeFlag(true),
        CParameter::EnableLongDistanceMatching(true),
        CParameter::WindowLog(window_log),
        CParameter::HashLog(table_log),
        CParameter::ChainLog(table_log),
    ] {
        c.set_parameter(p).map_err(|code| e("parameter", code))?;
    }
    if let Some(p) = prefix {
        c.ref_prefix(p).map_err(|code| e("prefix", code))?;
    }
    c.set_pledged_src_size(Some(src.len() as u64))
        .map_err(|code| e("size", code))?;
    let mut out = Vec::with_capacity(zstd::zstd_safe::compress_bound(src.len()));
    c.compress2(&mut out, src)
        .map_err(|code| e("compression", code))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_prefers_zstd_then_gzip_and_honours_q_zero() {
        #[rustfmt::skip]
        let cases = [
            (None, Coding::Identity),
            (Some(""), Coding::Identity),
            (Some("zstd"), Coding::Zstd),
            (Some("gzip, deflate, br, zstd"), Coding::Zstd),
            (Some("gzip, deflate"), Coding::Gzip),
            (Some("x-gzip"), Coding::Gzip),
            (Some("zstd;q=0, gzip;q=0.5"), Coding::Gzip),
            (Some("ZSTD ; q=1.0"), Coding::Zstd),
            (Some("*"), Coding::Zstd),
            (Some("*;q=0"), Coding::Identity),
            (Some("br, identity"), Coding::Identity),
            (Some("gzip;q=0, *;q=0.1"), Coding::Zstd),
        ];
        for (h, want) in cases {
            assert_eq!(negotiate(h), want, "{h:?}");
        }
    }

    #[test]
    fn codings_decode_to_the_artifact() {
        let bytes: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let z = zstd_coding(&bytes).expect("zstd");
        assert!(z.len() < bytes.len() / 4);
        assert_eq!(zstd::decode_all(&z[..]).expect("decodes"), bytes);
        let g = gzip_coding(&bytes).expect("gzip");
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&g[..]), &mut out)
            .expect("gunzip");
        assert_eq!(out, bytes);
    }

    fn artifact(n: usize, generation: u64) -> Vec<u8> {
        let entries: Vec<helix_index_format::Entry> = (0..n)
            .map(|i| helix_index_format::Entry {
                id: format!("t{}/e{i:05}.md", i % 9),
                topic: format!("t{}", i % 9),
                title: format!("Entry {i}"),
                body: format!(
                    "entry {i} says w{} and w{} about v{}",
                    i % 97,
                    i % 31,
                    i * 7 % 1013
                ),
                ..Default::default()
            })
            .collect();
        let info = helix_index_format::BuildInfo {
            project: "p".into(),
            commit: format!("c{generation}"),
            generation,
            build_time: 0,
        };
        helix_index_format::build(&entries, &info).expect("build")
    }

    /// What a client does (client-net/src/download.rs): the old artifact's delta form as the
    /// prefix, then the inverse of the delta form.
    fn apply(old: &[u8], patch: &[u8], len: usize) -> Vec<u8> {
        let mut prefix = old.to_vec();
        helix_index_format::delta::to_delta_form(&mut prefix);
        let mut d = zstd::zstd_safe::DCtx::create();
        d.set_parameter(zstd::zstd_safe::DParameter::WindowLogMax(31))
            .expect("parameter");
        d.ref_prefix(&prefix).expect("prefix");
        let mut out = Vec::with_capacity(len);
        d.decompress(&mut out, patch).expect("decodes");
        helix_index_format::delta::from_delta_form(&mut out);
        out
    }

    #[test]
    fn a_patch_rebuilds_the_new_artifact_and_is_small() {
        let old = artifact(3000, 1);
        let new = artifact(3001, 2);
        let p = patch(old.clone(), &new).expect("patch");
        assert_eq!(apply(&old, &p, new.len()), new);
        let full = zstd_coding(&new).expect("zstd").len();
        assert!(p.len() * 10 < full, "patch {} vs zstd {full}", p.len());
        // Against any other prefix it does not decode to the artifact.
        let other = artifact(10, 7);
        let mut prefix = other.clone();
        helix_index_format::delta::to_delta_form(&mut prefix);
        let mut d = zstd::zstd_safe::DCtx::create();
        d.ref_prefix(&prefix).expect("prefix");
        let mut out = Vec::with_capacity(new.len());
        let r = d.decompress(&mut out, &p[..]);
        assert!(r.is_err() || out != new);
    }
}
