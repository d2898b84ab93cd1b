//! The server's embedding model, synced into the cache (`model/<id>/`) for the warm
//! embedder (`helix-net embedder` loads the newest complete one): `GET /v1/model` gives the
//! id and each file's size and sha256; a model already here is not fetched again; files are
//! downloaded into a temporary directory, checked, and the directory renamed into place.
//! A server without one answers 404 `no_model`. Nothing here fails a sync: a failure keeps
//! the model there was (its line says why).

use super::http::{Ctx, error_body, transport_reason};
use helix_embed::MODEL_FILES;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

/// Largest model file accepted.
const MAX_FILE_BYTES: u64 = 2 << 30;

#[derive(serde::Deserialize)]
struct Manifest {
    id: String,
    files: Vec<ManifestFile>,
}

#[derive(serde::Deserialize)]
struct ManifestFile {
    name: String,
    bytes: u64,
    sha256: String,
}

/// What syncing the model did.
#[derive(Debug, PartialEq, Eq)]
pub enum ModelSync {
    /// The server has none.
    None,
    /// The model with this id was here already.
    Present(String),
    /// The model with this id was downloaded.
    Fetched(String),
    /// Something failed; the old model (if any) stays.
    Failed(String),
}

impl ModelSync {
    /// A line for `helix sync`'s output, when there is something to say.
    pub fn line(&self) -> Option<String> {
        match self {
            ModelSync::Fetched(id) => Some(format!("embedding model {}: downloaded", short(id))),
            ModelSync::Failed(why) => Some(format!(
                "embedding model: not updated ({why}); searches use the words alone meanwhile"
            )),
            ModelSync::None | ModelSync::Present(_) => None,
        }
    }
}

fn to_hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn short(id: &str) -> &str {
    &id[..id.len().min(12)]
}

/// A model id that can name a directory: letters, digits, `-`, `_`, `.`, not leading `.`.
fn safe_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// Syncs the server's model into `root` (the cache's `model/`).
pub(super) fn sync_model(ctx: &Ctx<'_>, root: &Path) -> ModelSync {
    let base = ctx.server.trim_end_matches('/');
    let resp = match ctx.req(ctx.http.get(format!("{base}/v1/model"))).send() {
        Ok(r) => r,
        Err(e) => return ModelSync::Failed(transport_reason(&e)),
    };
    let status = resp.status();
    let body = resp.text().unwrap_or_default();
    if status == reqwest::StatusCode::NOT_FOUND {
        // `no_model`, or a server from before models: none either way.
        return ModelSync::None;
    }
    if !status.is_success() {
        let why = error_body(&body).map_or_else(|| status.to_string(), |(_, m)| m);
        return ModelSync::Failed(format!("GET /v1/model: {why}"));
    }
    let Ok(manifest) = serde_json::from_str::<Manifest>(&body) else {
        return ModelSync::Failed("GET /v1/model: not a model manifest".into());
    };
    if !safe_id(&manifest.id) {
        return ModelSync::Failed("GET /v1/model: an id that cannot name a directory".into());
    }
    let dest = root.join(&manifest.id);
    if MODEL_FILES.iter().all(|f| dest.join(f).is_file()) {
        return ModelSync::Present(manifest.id);
    }
    match fetch_files(ctx, base, root, &manifest) {
        Ok(()) => ModelSync::Fetched(manifest.id),
        Err(why) => ModelSync::Failed(why),
    }
}

fn fetch_files(ctx: &Ctx<'_>, base: &str, root: &Path, m: &Manifest) -> Result<(), String> {
    for name in MODEL_FILES {
        if !m.files.iter().any(|f| f.name == name) {
            return Err(format!("the manifest lacks {name}"));
        }
    }
    std::fs::create_dir_all(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let tmp = root.join(format!(".tmp-{}-{}", short(&m.id), std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let result = (|| {
        for f in m
            .files
            .iter()
            .filter(|f| MODEL_FILES.contains(&f.name.as_str()))
        {
            if f.bytes > MAX_FILE_BYTES {
                return Err(format!("{} is {} bytes, over the limit", f.name, f.bytes));
            }
            let url = format!("{base}/v1/model/{}", f.name);
            let resp = ctx
                .req(ctx.http.get(url))
                .timeout(ctx.limits.total)
                .send()
                .map_err(|e| format!("{}: {}", f.name, transport_reason(&e)))?;
            if !resp.status().is_success() {
                return Err(format!("GET /v1/model/{}: {}", f.name, resp.status()));
            }
            let mut bytes = Vec::with_capacity(f.bytes.min(MAX_FILE_BYTES) as usize);
            resp.take(f.bytes + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| format!("{}: {e}", f.name))?;
            if bytes.len() as u64 != f.bytes
                || to_hex(&Sha256::digest(&bytes)) != f.sha256.to_ascii_lowercase()
            {
                return Err(format!("{} does not match the manifest", f.name));
            }
            helix_client::sys::write_atomic(&tmp.join(&f.name), &bytes)
                .map_err(|e| format!("{}: {e}", f.name))?;
        }
        let dest = root.join(&m.id);
        let _ = std::fs::remove_dir_all(&dest);
        std::fs::rename(&tmp, &dest).map_err(|e| format!("{}: {e}", dest.display()))
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::download::NetLimits;
    use std::io::{BufRead, BufReader, Write};

    /// A one-thread HTTP server answering `/v1/model` with `manifest` and each file of `dir`
    /// (`corrupt`: a byte changed), `requests` times.
    fn serve(manifest: String, dir: &Path, corrupt: bool, requests: usize) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let dir = dir.to_path_buf();
        std::thread::spawn(move || {
            for _ in 0..requests {
                let Ok((mut s, _)) = listener.accept() else {
                    return;
                };
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut line = String::new();
                r.read_line(&mut line).unwrap();
                let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                loop {
                    let mut h = String::new();
                    if r.read_line(&mut h).unwrap() <= 2 {
                        break;
                    }
                }
                let body = match path.strip_prefix("/v1/model/") {
                    Some(name) => {
                        let mut b = std::fs::read(dir.join(name)).unwrap();
                        if corrupt {
                            b[0] ^= 1;
                        }
                        b
                    }
                    None => manifest.clone().into_bytes(),
                };
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = s.write_all(&body);
            }
        });
        format!("http://{addr}")
    }

    fn manifest_of(dir: &Path) -> (String, String) {
        let mut bytes = Vec::new();
        let files: Vec<_> = MODEL_FILES
            .iter()
            .map(|n| {
                let b = std::fs::read(dir.join(n)).unwrap();
                bytes.push(b.clone());
                serde_json::json!({"name": n, "bytes": b.len(), "sha256": to_hex(&Sha256::digest(&b))})
            })
            .collect();
        let id = helix_embed::model_id(&bytes[0], &bytes[1], &bytes[2]);
        (
            serde_json::json!({"id": id, "dim": 32, "files": files}).to_string(),
            id,
        )
    }

    fn sync(server: &str, root: &Path) -> ModelSync {
        let limits = NetLimits::load().unwrap();
        let http = super::super::http_client(server, &limits, false).unwrap();
        let ctx = Ctx {
            http: &http,
            server,
            token: None,
            limits: &limits,
        };
        sync_model(&ctx, root)
    }

    #[test]
    fn a_model_is_fetched_verified_and_not_fetched_again() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        helix_embed::tiny::write_tiny_model(&src, 3).unwrap();
        let (manifest, id) = manifest_of(&src);
        let root = tmp.path().join("model");
        // A corrupt download leaves nothing behind.
        let server = serve(manifest.clone(), &src, true, 2);
        assert!(matches!(sync(&server, &root), ModelSync::Failed(_)));
        assert!(!root.join(&id).exists());
        assert_eq!(
            std::fs::read_dir(&root).unwrap().count(),
            0,
            "no temporary left"
        );
        let server = serve(manifest.clone(), &src, false, 4);
        assert_eq!(sync(&server, &root), ModelSync::Fetched(id.clone()));
        let loaded = helix_embed::Embedder::load(&root.join(&id)).unwrap();
        assert_eq!(loaded.id(), id);
        let server = serve(manifest, &src, false, 1);
        assert_eq!(sync(&server, &root), ModelSync::Present(id));
    }

    #[test]
    fn ids_that_name_a_directory() {
        assert!(safe_id(&"ab12".repeat(16)));
        for bad in ["", ".", "..", "../x", "a/b", ".hidden", "a b"] {
            assert!(!safe_id(bad), "{bad}");
        }
    }
}
