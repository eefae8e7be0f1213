// Package client drives cuzk-daemon the way Curio's lib/cuzk client does (see
// daemon_test.go). The gRPC code in cuzkv1/ is generated from daemon/proto by
// scripts/gen-go-proto.sh; the tests run under daemon/tests/curio_client.rs, which makes the
// fixtures, builds the daemon and verifies every proof written here with filecoin-proofs.
package client
