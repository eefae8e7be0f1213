//! A call whose `grpc-timeout` passes is answered DEADLINE_EXCEEDED, as the gRPC spec says.
//!
//! tonic's server enforces `grpc-timeout` itself but answers CANCELLED ("Timeout expired") when
//! it passes (tonic 0.13, `Status::try_from_error`). A client's own timer usually fires first,
//! but on a busy host the server's answer can arrive first, and the client then reports the
//! server's code: CI saw a `Prove` past its deadline come back CANCELLED. This layer sits inside
//! tonic's timer with the same deadline less a millisecond, armed before tonic's: tonic polls the
//! service before its own timer, so this answer always wins. Dropping the handler's future is
//! what cancels the job, as it was when tonic's timer dropped it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{HeaderMap, Request, Response};
use tower_service::Service;

/// The margin by which this layer's deadline precedes tonic's.
const AHEAD_OF_TONIC: Duration = Duration::from_millis(1);

/// Wraps the gRPC routes; see the module comment.
#[derive(Clone, Debug)]
pub struct DeadlineExceeded<S> {
    inner: S,
}

impl<S> DeadlineExceeded<S> {
    pub fn new(inner: S) -> Self {
        DeadlineExceeded { inner }
    }
}

impl<S, ReqBody> Service<Request<ReqBody>> for DeadlineExceeded<S>
where
    S: Service<Request<ReqBody>, Response = Response<tonic::body::Body>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        // Armed here, before tonic's timer (tonic arms its own after this call returns).
        let timer = grpc_timeout(req.headers()).map(|t| tokio::time::sleep(t.saturating_sub(AHEAD_OF_TONIC)));
        let call = self.inner.call(req);
        Box::pin(async move {
            let Some(timer) = timer else { return call.await };
            tokio::select! {
                biased;
                answer = call => answer,
                () = timer => Ok(tonic::Status::deadline_exceeded("the call's deadline (grpc-timeout) passed").into_http()),
            }
        })
    }
}

/// The request's `grpc-timeout` (gRPC over HTTP/2: up to 8 digits and a unit of H, M, S, m, u
/// or n). None when absent or malformed: tonic ignores a malformed one too.
fn grpc_timeout(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get("grpc-timeout")?.to_str().ok()?;
    let (digits, unit) = value.split_at(value.len().checked_sub(1)?);
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n * 3600),
        "M" => Duration::from_secs(n * 60),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;
    use std::future::{pending, ready};

    fn headers(timeout: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("grpc-timeout", timeout.parse().unwrap());
        h
    }

    #[test]
    fn parses_every_unit_and_refuses_malformed_values() {
        assert_eq!(grpc_timeout(&headers("2H")), Some(Duration::from_secs(7200)));
        assert_eq!(grpc_timeout(&headers("3M")), Some(Duration::from_secs(180)));
        assert_eq!(grpc_timeout(&headers("99999999S")), Some(Duration::from_secs(99_999_999)));
        assert_eq!(grpc_timeout(&headers("300m")), Some(Duration::from_millis(300)));
        assert_eq!(grpc_timeout(&headers("7u")), Some(Duration::from_micros(7)));
        assert_eq!(grpc_timeout(&headers("0n")), Some(Duration::ZERO));
        for bad in ["", "S", "m5", "123456789S", "-1S", "1.5S", "10s", "10"] {
            assert_eq!(grpc_timeout(&headers(bad)), None, "{bad:?}");
        }
        assert_eq!(grpc_timeout(&HeaderMap::new()), None);
    }

    /// A handler that never answers, behind a 20 ms deadline, gets DEADLINE_EXCEEDED (4); one
    /// that answers at once, or has no deadline, gets its own answer.
    #[tokio::test]
    async fn a_passed_deadline_is_deadline_exceeded() {
        let slow = Answers(|| Box::pin(pending()));
        let mut layer = DeadlineExceeded::new(slow);
        let mut req = Request::new(());
        *req.headers_mut() = headers("20m");
        let answer = layer.call(req).await.unwrap();
        assert_eq!(answer.headers()["grpc-status"], "4");
        assert!(answer.headers()["grpc-message"].to_str().unwrap().contains("deadline"));

        let quick = Answers(|| Box::pin(ready(Ok(tonic::Status::ok("").into_http()))));
        let mut layer = DeadlineExceeded::new(quick);
        let mut req = Request::new(());
        *req.headers_mut() = headers("20m");
        assert_eq!(layer.call(req).await.unwrap().headers()["grpc-status"], "0");
        assert_eq!(layer.call(Request::new(())).await.unwrap().headers()["grpc-status"], "0");
    }

    type Answer = Pin<Box<dyn Future<Output = Result<Response<tonic::body::Body>, Infallible>> + Send>>;

    /// A service answering every request with the function's answer.
    #[derive(Clone)]
    struct Answers(fn() -> Answer);

    impl Service<Request<()>> for Answers {
        type Response = Response<tonic::body::Body>;
        type Error = Infallible;
        type Future = Answer;
        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }
        fn call(&mut self, _: Request<()>) -> Answer {
            (self.0)()
        }
    }
}
