//! The Prometheus endpoint: `GET /metrics` (the engine's metrics, text format 0.0.4) and
//! `GET /status` (the engine's status JSON), plain HTTP on `metrics_listen`.

use std::sync::Arc;

use axum::http::header::CONTENT_TYPE;
use axum::routing::get;
use axum::Router;

use cuzk::engine::Engine;

pub fn router(engine: Arc<Engine>) -> Router {
    let status = engine.clone();
    Router::new()
        .route(
            "/metrics",
            get(move || {
                let engine = engine.clone();
                async move {
                    let text = tokio::task::spawn_blocking(move || engine.metrics_text()).await.unwrap_or_default();
                    ([(CONTENT_TYPE, "text/plain; version=0.0.4")], text)
                }
            }),
        )
        .route(
            "/status",
            get(move || {
                let engine = status.clone();
                async move {
                    let json = tokio::task::spawn_blocking(move || engine.status_json()).await.unwrap_or_default();
                    ([(CONTENT_TYPE, "application/json")], json)
                }
            }),
        )
}
