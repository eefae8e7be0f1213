//! Start the engine, listen, serve until SIGTERM / SIGINT, drain, stop.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, UnixListener};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;
use tokio_stream::wrappers::{TcpListenerStream, UnixListenerStream};
use tonic::transport::Server;

use cuzk::engine::Engine;

use crate::config::DaemonConfig;
use crate::deadline::DeadlineExceeded;
use crate::pb::proving_engine_server::ProvingEngineServer;
use crate::service::Service;

pub fn run(cfg: DaemonConfig) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .thread_name("cuzk-daemon-rt")
        .enable_all()
        .build()
        .map_err(|e| format!("starting the async runtime: {e}"))?;
    rt.block_on(serve(cfg))
}

async fn serve(cfg: DaemonConfig) -> Result<(), String> {
    let engine = Arc::new(Engine::new(cfg.engine.clone()).map_err(|e| format!("starting the engine: {e}"))?);
    log::info!("cuzk-daemon {} on engine backend {}", env!("CARGO_PKG_VERSION"), engine.backend_name());
    let draining = Arc::new(AtomicBool::new(false));
    let service = Arc::new(Service::new(engine.clone(), draining.clone()));
    let max = cfg.max_message_bytes();
    let grpc = || ProvingEngineServer::from_arc(service.clone()).max_decoding_message_size(max).max_encoding_message_size(max);
    let (stop_tx, stop_rx) = watch::channel(false);
    let deadlines = || tower_layer::layer_fn(DeadlineExceeded::new);
    let stopped = |mut rx: watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };

    let mut servers = Vec::new();
    if let Some(path) = &cfg.listen_unix {
        let listener = bind_unix(path, cfg.socket_mode()?)?;
        log::info!("serving cuzk.v1.ProvingEngine on unix://{}", path.display());
        let fut = Server::builder().layer(deadlines()).add_service(grpc()).serve_with_incoming_shutdown(UnixListenerStream::new(listener), stopped(stop_rx.clone()));
        servers.push(tokio::spawn(fut));
    }
    if let Some(addr) = cfg.listen_tcp {
        let listener = TcpListener::bind(addr).await.map_err(|e| format!("listen_tcp {addr}: {e}"))?;
        log::info!("serving cuzk.v1.ProvingEngine on {addr}");
        let fut = Server::builder().layer(deadlines()).add_service(grpc()).serve_with_incoming_shutdown(TcpListenerStream::new(listener), stopped(stop_rx.clone()));
        servers.push(tokio::spawn(fut));
    }
    let metrics = match cfg.metrics_listen {
        Some(addr) => {
            let listener = TcpListener::bind(addr).await.map_err(|e| format!("metrics_listen {addr}: {e}"))?;
            log::info!("serving /metrics and /status on http://{addr}");
            let app = crate::metrics_http::router(engine.clone());
            Some(tokio::spawn(async move { axum::serve(listener, app).with_graceful_shutdown(stopped(stop_rx)).await }))
        }
        None => None,
    };
    preload(&engine, &cfg.preload);

    let mut term = signal(SignalKind::terminate()).map_err(|e| format!("SIGTERM handler: {e}"))?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| format!("SIGINT handler: {e}"))?;
    tokio::select! {
        _ = term.recv() => log::info!("SIGTERM: draining"),
        _ = int.recv() => log::info!("SIGINT: draining"),
    }
    draining.store(true, Ordering::SeqCst);
    let grace = Duration::from_secs(cfg.drain_grace_secs);
    tokio::select! {
        ended = drain(&engine, grace) => if !ended {
            log::warn!("drain grace of {} s passed: cancelling the proofs still running", grace.as_secs());
        },
        _ = term.recv() => log::warn!("second SIGTERM: cancelling the proofs still running"),
        _ = int.recv() => log::warn!("second SIGINT: cancelling the proofs still running"),
    }
    // Whatever is left is cancelled (drain_on_free off): its Prove callers get CANCELLED.
    let e = engine.clone();
    tokio::task::spawn_blocking(move || e.shutdown()).await.map_err(|e| format!("engine shutdown: {e}"))?;
    let _ = stop_tx.send(true);
    for s in servers {
        match s.await {
            Ok(Err(e)) => log::warn!("gRPC server: {e}"),
            Err(e) => log::warn!("gRPC server task: {e}"),
            Ok(Ok(())) => {}
        }
    }
    if let Some(m) = metrics {
        let _ = m.await;
    }
    if let Some(path) = &cfg.listen_unix {
        let _ = std::fs::remove_file(path);
    }
    log::info!("cuzk-daemon stopped");
    Ok(())
}

/// Wait until every accepted job has ended, at most `grace`. true: all ended.
async fn drain(engine: &Arc<Engine>, grace: Duration) -> bool {
    let start = Instant::now();
    let mut said = Instant::now() - Duration::from_secs(60);
    loop {
        let e = engine.clone();
        let left: u64 = tokio::task::spawn_blocking(move || e.overview().kinds.iter().map(|k| k.queued + k.running).sum())
            .await
            .unwrap_or(0);
        if left == 0 {
            log::info!("drained: no proof left running");
            return true;
        }
        if start.elapsed() >= grace {
            return false;
        }
        if said.elapsed() >= Duration::from_secs(10) {
            log::info!("draining: {left} proof(s) still running ({:.0} s of {} s grace left)", (grace - start.elapsed()).as_secs_f64(), grace.as_secs());
            said = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Bind the unix socket: a stale socket file (no daemon answering on it) is replaced, a live
/// one is an error, so two daemons never share an address.
fn bind_unix(path: &Path, mode: u32) -> Result<UnixListener, String> {
    let what = |e: std::io::Error| format!("listen_unix {}: {e}", path.display());
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(what)?;
    }
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        use std::os::unix::fs::FileTypeExt;
        if !meta.file_type().is_socket() {
            return Err(format!("listen_unix {}: exists and is not a socket", path.display()));
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(format!("listen_unix {}: another process is serving on it", path.display()));
        }
        std::fs::remove_file(path).map_err(what)?;
    }
    let listener = UnixListener::bind(path).map_err(what)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(what)?;
    Ok(listener)
}

/// Load the configured SRSes in the background: serving starts at once, and a job of a circuit
/// still loading waits for that load (the engine serializes loads).
fn preload(engine: &Arc<Engine>, ids: &[String]) {
    if ids.is_empty() {
        return;
    }
    let (engine, ids) = (engine.clone(), ids.to_vec());
    std::thread::Builder::new()
        .name("cuzk-preload".into())
        .spawn(move || {
            for id in ids {
                let circuit = crate::circuits::parse(&id).expect("validated with the config");
                let t = Instant::now();
                match engine.srs_load(circuit, None) {
                    Ok(_) => log::info!("SRS {id} loaded in {:.1} s (preload)", t.elapsed().as_secs_f64()),
                    Err(e) => log::error!("SRS {id} not preloaded: {e}"),
                }
            }
        })
        .map(drop)
        .unwrap_or_else(|e| log::error!("preload thread: {e}"));
}
