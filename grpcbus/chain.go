package grpcbus

import (
	"context"

	"google.golang.org/grpc"
)

// chainUnaryClient wraps invoker in interceptors, the first outermost.
// Interceptors are given a nil *grpc.ClientConn: there is none.
func chainUnaryClient(is []grpc.UnaryClientInterceptor, invoker grpc.UnaryInvoker) grpc.UnaryInvoker {
	for i := len(is) - 1; i >= 0; i-- {
		next, in := invoker, is[i]
		invoker = func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
			return in(ctx, method, req, reply, cc, next, opts...)
		}
	}
	return invoker
}

// chainStreamClient wraps streamer in interceptors, the first outermost.
func chainStreamClient(is []grpc.StreamClientInterceptor, streamer grpc.Streamer) grpc.Streamer {
	for i := len(is) - 1; i >= 0; i-- {
		next, in := streamer, is[i]
		streamer = func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			return in(ctx, desc, cc, method, next, opts...)
		}
	}
	return streamer
}

// chainUnaryServer folds interceptors into one, the first outermost; nil
// when there are none.
func chainUnaryServer(is []grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	if len(is) == 0 {
		return nil
	}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		h := handler
		for i := len(is) - 1; i > 0; i-- {
			next, in := h, is[i]
			h = func(ctx context.Context, req any) (any, error) { return in(ctx, req, info, next) }
		}
		return is[0](ctx, req, info, h)
	}
}

// chainStreamServer wraps handler in interceptors, the first outermost.
func chainStreamServer(is []grpc.StreamServerInterceptor, info *grpc.StreamServerInfo, handler grpc.StreamHandler) grpc.StreamHandler {
	for i := len(is) - 1; i >= 0; i-- {
		next, in := handler, is[i]
		handler = func(srv any, ss grpc.ServerStream) error { return in(srv, ss, info, next) }
	}
	return handler
}
