// Package grpcbuspb holds the Go code generated from
// proto/grpcbus/transport.proto: the TransportFrame that carries a gRPC
// stream's messages, windows, half-closes, headers, trailers, cancels and
// pings between two endpoints on the bus (package grpcbus). Regenerate
// with `make proto`; never edit the .pb.go files.
package grpcbuspb
