//! Compiles proto/cuzk/v1/proving.proto with protox (a protobuf compiler in Rust: the build
//! needs no protoc) and generates the tonic server from it.
fn main() {
    let proto = "proto/cuzk/v1/proving.proto";
    println!("cargo:rerun-if-changed={proto}");
    let fds = protox::compile([proto], ["proto"]).unwrap_or_else(|e| panic!("compiling {proto}: {e}"));
    tonic_build::configure()
        .build_client(false)
        .compile_fds(fds)
        .unwrap_or_else(|e| panic!("generating the gRPC server from {proto}: {e}"));
}
