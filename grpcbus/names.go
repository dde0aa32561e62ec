package grpcbus

import (
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/scope"
)

// User info keys of the events this package sends (append only: peers of
// other versions read them).
const (
	keyAction          = "action"
	keyWireFormat      = "grpc-wire-format"
	keyEndpoint        = "grpc-endpoint-address"
	keyEndpointFormat  = "grpc-endpoint-wire-format"
	keyStreamID        = "grpc-stream-id"
	keyInitialWindow   = "grpc-initial-window"
	keyPingTimeout     = "grpc-ping-timeout"
	keyCallID          = "grpc-call-id"
	keyTimeout         = "grpc-timeout"
	keyStatus          = "grpc-status"
	keyAck             = "grpc-ack"
	prefixHeader       = "__header__."
	prefixTrailer      = "__trailer__."
	rsbErrorKey        = "rsb:error?"
	methodFrame        = "FRAME"
	methodRequest      = "REQUEST"
	methodReply        = "REPLY"
	methodCancel       = "CANCEL"
	methodAck          = "ACK"
	wireSchemaRaw      = notification.SchemaBytes
	wireSchemaErrorMsg = notification.SchemaUTF8String
)

// serviceScope returns the service address of service (a full protobuf
// name such as pkg.Echo): dots become '-', which protobuf names never hold.
func serviceScope(prefix scope.Scope, service string) (scope.Scope, error) {
	sub, err := scope.Parse("/svc/" + strings.ReplaceAll(service, ".", "-"))
	if err != nil {
		return scope.Scope{}, err
	}
	return prefix.Concat(sub), nil
}

// splitMethod splits "/pkg.Service/Method" into its service and method.
func splitMethod(full string) (service, method string, ok bool) {
	rest, found := strings.CutPrefix(full, "/")
	if !found {
		return "", "", false
	}
	service, method, ok = strings.Cut(rest, "/")
	return service, method, ok && service != "" && method != "" && !strings.Contains(method, "/")
}

// putMetadata adds md to infos as prefix-named user infos, one per value.
// Keys are lower case, as gRPC metadata keys are.
func putMetadata(infos []notification.UserInfo, prefix string, md metadata.MD) []notification.UserInfo {
	for k, vs := range md {
		for _, v := range vs {
			infos = append(infos, notification.UserInfo{Key: prefix + k, Value: v})
		}
	}
	return infos
}

// takeMetadata collects the user infos named with prefix, at most
// maxHeaderKeys of them; nil when there are none.
func takeMetadata(infos []notification.UserInfo, prefix string) metadata.MD {
	var md metadata.MD
	n := 0
	for _, u := range infos {
		k, ok := strings.CutPrefix(u.Key, prefix)
		if !ok || k == "" {
			continue
		}
		if n++; n > maxHeaderKeys {
			break
		}
		if md == nil {
			md = metadata.MD{}
		}
		k = strings.ToLower(k)
		md[k] = append(md[k], u.Value)
	}
	return md
}

// userInfo returns the value of key in infos.
func userInfo(infos []notification.UserInfo, key string) (string, bool) {
	for _, u := range infos {
		if u.Key == key {
			return u.Value, true
		}
	}
	return "", false
}

// userInfoUint returns the unsigned number stored under key.
func userInfoUint(infos []notification.UserInfo, key string) (uint64, bool) {
	v, ok := userInfo(infos, key)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(v, 10, 64)
	return n, err == nil
}

// formatTimeout writes d as gRPC writes timeouts: at most eight digits and
// a unit (u, m, S, M).
func formatTimeout(d time.Duration) string {
	if d <= 0 {
		return "1n"
	}
	units := []struct {
		u string
		d time.Duration
	}{{"u", time.Microsecond}, {"m", time.Millisecond}, {"S", time.Second}, {"M", time.Minute}}
	for _, u := range units {
		if n := (d + u.d - 1) / u.d; n < 1e8 {
			return strconv.FormatInt(int64(n), 10) + u.u
		}
	}
	return "99999999M"
}

// parseTimeout reads a timeout written by formatTimeout (or any gRPC
// timeout); it caps the result at maxTimeout.
func parseTimeout(s string) (time.Duration, bool) {
	if len(s) < 2 || len(s) > 9 {
		return 0, false
	}
	n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	unit := map[byte]time.Duration{'n': time.Nanosecond, 'u': time.Microsecond, 'm': time.Millisecond,
		'S': time.Second, 'M': time.Minute, 'H': time.Hour}[s[len(s)-1]]
	if unit == 0 {
		return 0, false
	}
	d := time.Duration(n) * unit
	if d > maxTimeout || d/unit != time.Duration(n) {
		d = maxTimeout
	}
	return d, true
}
