// Package grpcbustestpb holds the Go code generated from
// proto/grpcbus/test.proto: an Echo service with the four call types
// (unary, server, client and bidirectional streams) and its
// protoc-gen-go-grpc stubs, which the tests of package grpcbus use
// unchanged over the bus and over HTTP/2. Regenerate with `make proto`;
// never edit the .pb.go files.
package grpcbustestpb
