// Package proto holds RSB's protocol messages as proto2 .proto files under
// rsb/protocol/, written from the RSB specification (Notification.event_id is
// field 108), and a test that the committed generated Go in rsbpb/ is what
// protoc and the pinned protoc-gen-go produce today.
//
// grpcbus/ holds the TransportFrame of gRPC streams on the bus (generated
// into grpcbuspb/) and a test service with the four gRPC call types
// (grpcbustestpb/, with stubs from the pinned protoc-gen-go-grpc); `make
// proto-check` keeps all generated code fresh.
package proto
