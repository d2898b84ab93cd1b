//! The state every handler shares: the configuration, the projects with their workers,
//! the credentials in force (swapped by a reload) and the metrics.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::config::Config;
use crate::metrics::Metrics;
use crate::project::{Project, StartError};
use crate::semantic::Model;
use crate::sys::{read, write};
use crate::usage::Usage;

/// Why the server could not start serving.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Project(#[from] StartError),
    /// Opening the projects panicked (a bug).
    #[error(transparent)]
    Panicked(#[from] tokio::task::JoinError),
    #[error(transparent)]
    Model(#[from] crate::semantic::ModelError),
    #[error("cannot install the SIGHUP handler: {0}")]
    Signal(std::io::Error),
}

/// Everything handlers share.
#[derive(Debug, Clone)]
pub struct AppState(Arc<Inner>);

#[derive(Debug)]
pub struct Inner {
    /// The configuration the server started with (listen address, limits, projects).
    pub config: Config,
    /// Where credentials come from: tokens, webhook secrets, `anonymous_loopback`. Starts as
    /// `config`; a reload (SIGHUP) replaces it without a restart.
    access: std::sync::RwLock<Arc<Config>>,
    pub projects: BTreeMap<String, Arc<Project>>,
    pub metrics: Arc<Metrics>,
    /// Usage reports and their summaries (`usage.redb`).
    pub usage: Arc<Usage>,
    /// The `[semantic]` model, loaded at start.
    pub model: Option<Arc<Model>>,
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl AppState {
    /// Opens every project (loading its last good artifact) and starts the workers.
    pub async fn start(config: Config) -> Result<AppState, ServeError> {
        tokio::task::spawn_blocking(move || {
            let metrics = Arc::new(Metrics::default());
            // A model the operator configured but that cannot be loaded stops the start:
            // serving lexically would hide the mistake.
            let model = match &config.semantic {
                Some(s) => {
                    let started = std::time::Instant::now();
                    let m = Model::load(s)?;
                    tracing::info!(model = %m.id(), dim = m.dim(), dir = %s.model.display(), ms = started.elapsed().as_millis() as u64, "loaded the semantic model");
                    Some(m)
                }
                None => None,
            };
            let projects: BTreeMap<String, Arc<Project>> = crate::project::start_all(
                &config.projects,
                &config.data_dir,
                config.keep_artifacts,
                &metrics,
                model.as_ref(),
            )?
            .into_iter()
            .map(|p| (p.name().to_string(), p))
            .collect();
            let usage = Arc::new(Usage::open(&config.data_dir, config.usage_retention_days));
            Ok(AppState(Arc::new(Inner {
                access: std::sync::RwLock::new(Arc::new(config.clone())),
                config,
                projects,
                metrics,
                usage,
                model,
            })))
        })
        .await?
    }

    /// The credentials in force: the start-up config's, or the last reload's.
    pub fn access(&self) -> Arc<Config> {
        read(&self.access).clone()
    }

    /// Takes tokens, webhook secrets and `anonymous_loopback` from `new` at once (a token
    /// added or revoked in the file works, or stops working, without a restart). Other
    /// changes need a restart; they are returned as warnings, one per project or setting.
    pub fn reload(&self, new: Config) -> Vec<String> {
        let mut warnings = Vec::new();
        let old = &self.config;
        for p in &new.projects {
            match old.project(&p.name) {
                None => warnings.push(format!(
                    "project {:?} is new: it is served after a restart",
                    p.name
                )),
                Some(o) => {
                    let mut same = o.clone();
                    same.tokens = p.tokens.clone();
                    same.webhook_secret = p.webhook_secret.clone();
                    if &same != p {
                        warnings.push(format!(
                            "project {:?}: changes other than tokens and webhook_secret apply after a restart",
                            p.name
                        ));
                    }
                }
            }
        }
        for o in &old.projects {
            if new.project(&o.name).is_none() {
                warnings.push(format!(
                    "project {:?} was removed: its tokens are revoked now, it is still served until a restart",
                    o.name
                ));
            }
        }
        if new.max_body_bytes != old.max_body_bytes
            || new.request_timeout_secs != old.request_timeout_secs
            || new.keep_artifacts != old.keep_artifacts
            || new.web != old.web
            || new.session_hours != old.session_hours
            || new.usage_retention_days != old.usage_retention_days
        {
            warnings.push(
                "limits, keep_artifacts, web, session_hours and usage_retention_days apply after a restart"
                    .into(),
            );
        }
        *write(&self.access) = Arc::new(new);
        warnings
    }

    /// Lets every worker finish its queued jobs, then stops it.
    pub async fn shutdown(&self) {
        let projects: Vec<Arc<Project>> = self.projects.values().cloned().collect();
        let _ = tokio::task::spawn_blocking(move || {
            for p in projects {
                p.shutdown();
            }
        })
        .await;
    }
}
