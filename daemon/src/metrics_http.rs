//! The Prometheus endpoint: `GET /metrics` (the engine's metrics, text format 0.0.4) and
//! `GET /status` (the engine's status JSON), plain HTTP on `metrics_listen`.

use std::sync::Arc;

use axum::http::header::CONTENT_TYPE;
use axum::routing::get;
use axum::Router;

use cuzk::engine::Engine;

pub fn router(engine: Arc<Engine>) -> Router {
    Router::new()
        .route("/metrics", text(engine.clone(), "text/plain; version=0.0.4", Engine::metrics_text))
        .route("/status", text(engine, "application/json", Engine::status_json))
}

/// A GET route answering `render(engine)` (on the blocking pool: it takes the engine's locks).
fn text(engine: Arc<Engine>, content_type: &'static str, render: fn(&Engine) -> String) -> axum::routing::MethodRouter {
    get(move || {
        let engine = engine.clone();
        async move {
            let body = tokio::task::spawn_blocking(move || render(&engine)).await.unwrap_or_default();
            ([(CONTENT_TYPE, content_type)], body)
        }
    })
}
